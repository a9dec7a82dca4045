"""Burns half its time budget of CPU on every turn, then bids."""

import time


def act(turn):
    end = time.process_time() + turn.time_ms / 2000
    n = 0
    while time.process_time() < end:
        n += 1
    return "dudo" if turn.legal.dudo else next(turn.legal.bids())
