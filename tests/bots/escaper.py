"""Leaves daemons behind on its first turn: each a grandchild in a session of
its own (double fork, setsid), reparented away from the bot's process tree, so
nothing but the bot's cgroup still holds it. Replies with their pids (as the
bot sees them)."""

import os
import time

escaped: list[int] = []


def _daemon() -> int:
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.close(w)
            while True:
                time.sleep(3600)
        os.write(w, str(pid).encode())
        os._exit(0)
    os.close(w)
    pid = int(os.read(r, 32))
    os.close(r)
    os.wait()  # the middle process has exited: the daemon is nobody's child in the bot's tree now
    return pid


def act(turn):
    if not escaped:
        escaped.extend(_daemon() for _ in range(3))
    if turn.legal.dudo:
        return {"action": "dudo", "escaped": escaped}
    bid = next(turn.legal.bids())
    return {"action": "bid", "quantity": bid.quantity, "face": bid.face, "escaped": escaped}
