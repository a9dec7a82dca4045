"""The game, pure: rules and variants, the keyed dice, exact odds, seeds, match
specs and records, and the replay that re-checks a record. No I/O, no
processes; imports nothing of Dudo Arena above this layer."""
