"""The benchmark's system-call bot: on a turn, calls getppid() $ARENA_BENCH_CALLS
times and answers with the nanoseconds per call."""

import os
import time


def act(turn):
    n = int(os.environ["ARENA_BENCH_CALLS"])
    getppid = os.getppid
    t = time.perf_counter_ns()
    for _ in range(n):
        getppid()
    return {"action": "dudo", "ns_per_call": (time.perf_counter_ns() - t) / n}
