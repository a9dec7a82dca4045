"""Tries to read each path in $ARENA_TEST_PATHS (the run config, other bots,
the project tree) and reports which it could open."""

import os


def act(turn):
    seen = []
    for path in os.environ["ARENA_TEST_PATHS"].split(":"):
        try:
            with open(path, "rb") as f:
                f.read(1)
            seen.append(path)
        except OSError:
            pass
    return {"action": "dudo", "readable": seen}
