"""A fork bomb while it is being imported: every process forks until the
kernel says no, then keeps retrying (sleeping in between, so it holds every
process slot it got without burning CPU). It never gets as far as `ready`."""

import os
import time

while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.05)


def act(turn):  # never reached
    return "dudo"
