"""Forks repeatedly on its first turn; every child sleeps, then forks again."""

import os
import time


def act(turn):
    while True:
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
        except OSError:
            time.sleep(0.001)  # the process cap said no; try again
