"""Tries to write a file at each path in $ARENA_TEST_PATHS (":"-separated:
the project tree, its own folder, the folder of the arena package); reports."""

import os


def act(turn):
    results = []
    for path in os.environ["ARENA_TEST_PATHS"].split(":"):
        try:
            with open(path, "w") as f:
                f.write("escaped")
            results.append(f"{path}: written")
        except OSError as exc:
            results.append(f"{path}: {exc.strerror}")
    with open("scratch.txt", "w") as f:  # its own working folder is writable
        f.write("mine")
    return {"action": "dudo", "writes": results}
