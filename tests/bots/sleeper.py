"""Sleeps ten times its time budget, then answers (too late): using no CPU,
only the wall-clock cap catches it."""

import time


def act(turn):
    time.sleep(turn.time_ms * 10 / 1000)
    return "dudo"
