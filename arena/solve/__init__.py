"""Equilibrium play for small two-player games: counterfactual regret minimisation
over the project's own rules engine (docs/solver.md).

- :mod:`arena.solve.game`: one round as arrays (hands, bid ladder, the tree of
  bid histories, the payoff of every call), built from :mod:`arena.engine.rules`;
- :mod:`arena.solve.cfr`: CFR+ over a round, exact best responses, exploitability;
- :mod:`arena.solve.abstract`: rounds too large for the exact tree, in an
  imperfect-recall abstraction (the last bids remembered), by fixed-strategy
  iteration CFR with CFR+ updates;
- :mod:`arena.solve.fullbr`: the exact best response over a round's full tree
  (bitmask-indexed histories) that certifies an abstract strategy;
- :mod:`arena.solve.match`: a whole match, bottom-up over the dice counts;
- :mod:`arena.solve.policy`: the policy file (the average strategy) and its keys.

Pure computation (numpy): no I/O but the policy file, no bots.
"""
