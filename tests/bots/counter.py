"""On its first turn, forks sleeping children until the kernel refuses, then
reports how many it got (and ends them)."""

import os
import signal
import time


def act(turn):
    children = []
    while len(children) < 1000:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return {"action": "dudo", "forked": len(children)}
