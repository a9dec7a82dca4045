"""Attack: the machine-wide counters in /proc as a channel between sandboxes.

A bot that forks N times during its turn moves the fork count in
/proc/stat (``processes``) by N, and a partner reading it at its own turn
gets N: a few bits per turn, with no lock, file or socket shared. The same
goes for the task counts in /proc/loadavg and free memory in /proc/meminfo.
On each turn this bot reads those counters, forks 300 times (and holds 64 MB
for a moment), reads them again, and answers with what it saw in extra reply
fields (the protocol says unknown fields are ignored), with the CPU count
glibc finds (which it reads from /proc/stat's cpu lines when /sys is absent).
"""

import os

from arena.sdk import Bot


def counters() -> dict[str, str]:
    with open("/proc/stat") as f:
        forks = next(line.split()[1] for line in f if line.startswith("processes "))
    with open("/proc/loadavg") as f:
        tasks = f.read().split()[3]  # running/total
    with open("/proc/meminfo") as f:
        free = next(line.split()[1] for line in f if line.startswith("MemFree:"))
    return {"forks": forks, "tasks": tasks, "free": free}


class Counters(Bot):
    def act(self, turn):
        before = counters()
        for _ in range(300):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        hold = bytearray(64 << 20)  # zero-filled: resident
        hold[::4096] = b"x" * len(hold[::4096])
        after = counters()
        del hold
        action = (
            {"action": "dudo"}
            if turn.legal.dudo
            else {"action": "bid", "face": 2, "quantity": turn.legal.min_quantity.get(2, 1)}
        )
        return {**action, "before": before, "after": after, "cpus": os.cpu_count()}
