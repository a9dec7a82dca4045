"""Per-decision overhead of a sandboxed Python bot, beside the floor.

    python benchmarks/protocol.py [--trials 15] [--decisions 2000] [--cpu 0]

Arrangements, measured in the same run with trials interleaved (so drift and
other load hit them alike), the parent pinned to one core and every child
inheriting that pinning (the fastest arrangement measured here):

- floor: a bare child process echoing the ~200-byte JSON turn line over
  pipes (orjson on both sides, raw os.read/os.write): the least any
  process-per-bot design can cost;
- floor-stdlib: the same echo the plain way (subprocess file objects,
  readline, the stdlib json): about 40-55 us on the machines measured;
- sandboxed: BotProcess.request() to a trivial bot through arena.protocol.host, in
  the full sandbox (bwrap, cgroups, rlimits) on this machine, as `arena run`
  runs bots: thawed before the turn is written, frozen after the reply is
  read (the cgroup freezer this machine offers), CPU time read from its
  cgroup once per decision;
- unfrozen: the same bot and sandbox with freezing switched off (the
  difference is what freezing costs);
- v1-freezer: the same with ARENA_CGROUP_PREFER=v1 (no cgroup v2: the v1
  freezer and cpuacct), where the machine has them;
- off: the same without the sandbox (mode off), to show what the sandbox
  itself adds.

The sandboxed arrangement includes the seccomp filter: its per-decision cost
is whatever its system calls add on the hot path (a filter runs on every call
the bot makes). A "seccomp-off" arrangement beside "unfrozen" would isolate
it, in the place marked below.

Reports, per decision, the median wall-clock microseconds over trials, the
median of the per-trial ratios to the floor (target for sandboxed: at most
2x), the CPU microseconds (this process's and the bot's: what moves least
with load) and this process's context switches (a freeze wakes the bot once
more per decision, to stop it).
Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from arena.botfile.spec import load_bot  # noqa: E402
from arena.engine.rules import Rules  # noqa: E402
from arena.match.process import BotProcess, TimeControl  # noqa: E402
from arena.protocol.wire import encode  # noqa: E402
from arena.sandbox import SandboxLimits, available, cgroups, describe_sandbox  # noqa: E402

TURN: dict[str, Any] = {
    "type": "turn",
    "match": "m-000042",
    "round": 7,
    "seat": 2,
    "dice": [1, 3, 3, 5],
    "counts": [5, 0, 4, 3],
    "palifico": False,
    "history": [[1, 3, 4], [3, 4, 4]],
    "legal": {
        "dudo": True,
        "calza": True,
        "min_quantity": {"1": 2, "2": 5, "3": 5, "4": 5, "5": 4, "6": 4},
        "max_quantity": 12,
    },
    "time_ms": 1000,
}
MATCH_START = {
    "type": "match_start",
    "match": "m-000042",
    "seat": 2,
    "players": 4,
    "names": ["a", "b", "c", "d"],
    "rules": Rules().to_dict(),
    "seed": 1,
}

ECHO = r"""
import os, orjson
buf = b""
while True:
    i = buf.find(b"\n")
    if i < 0:
        data = os.read(0, 65536)
        if not data:
            break
        buf += data
        continue
    line, buf = buf[:i], buf[i + 1:]
    out = orjson.dumps(orjson.loads(line), option=orjson.OPT_APPEND_NEWLINE)
    os.write(1, out)
"""


ECHO_STDLIB = r"""
import json, sys
for line in sys.stdin:
    sys.stdout.write(json.dumps(json.loads(line)) + "\n")
    sys.stdout.flush()
"""


class FloorStdlib:
    """The plain floor: Popen file objects, readline, the stdlib json."""

    def __init__(self) -> None:
        import json

        self.proc = subprocess.Popen(
            [os.path.realpath(sys.executable), "-c", ECHO_STDLIB],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.json = json

    def request(self, msg: dict[str, Any]) -> Any:
        self.proc.stdin.write(self.json.dumps(msg) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return self.json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait()


class Floor:
    """A bare echo child over pipes, orjson and raw reads: the lowest floor."""

    def __init__(self) -> None:
        import orjson

        self.proc = subprocess.Popen(
            [os.path.realpath(sys.executable), "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.loads = orjson.loads
        self.dumps = orjson.dumps
        self.opt = orjson.OPT_APPEND_NEWLINE

    def request(self, msg: dict[str, Any]) -> Any:
        os.write(self.proc.stdin.fileno(), self.dumps(msg, option=self.opt))  # type: ignore[union-attr]
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        buf = os.read(fd, 65536)
        while not buf.endswith(b"\n"):
            buf += os.read(fd, 65536)
        return self.loads(buf)

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait()


def per_decision(
    request: Callable[[dict[str, Any]], Any], n: int, child_cpu: Callable[[], int] | None = None
) -> tuple[float, float]:
    """(wall, CPU) microseconds per round trip over n requests. CPU is this
    process's plus the bot's (its whole cgroup or process), so it leaves out
    the time spent waiting for a core that others' work had: the figure that
    moves least with machine load."""
    c0 = child_cpu() if child_cpu else 0
    s0 = switches()
    p0 = time.process_time_ns()
    t = time.perf_counter()
    for _ in range(n):
        request(TURN)
    wall = (time.perf_counter() - t) / n * 1e6
    cpu = (time.process_time_ns() - p0 + ((child_cpu() - c0) if child_cpu else 0)) / n / 1000
    SWITCHES.append((switches() - s0) / n)
    return wall, cpu


SWITCHES: list[float] = []  # this process's context switches per decision, trial by trial


def switches() -> int:
    """This process's context switches so far (voluntary + involuntary): each
    one a trip through the scheduler, a load-independent part of the cost."""
    n = 0
    with open("/proc/self/status") as f:
        for line in f:
            if "ctxt_switches" in line:
                n += int(line.split()[1])
    return n


def schedstat(pid: int) -> Callable[[], int]:
    """A process's time on a CPU so far, in ns (``/proc/<pid>/schedstat``)."""

    def read() -> int:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0])

    return read


def never_frozen(bot: BotProcess) -> None:
    """Switch freezing off for a started bot: thawed now, and never frozen again.

    BotProcess writes its cgroup's freeze file itself on the per-decision
    path (the sandbox's turn files), not through ``Sandbox.freeze``, so it is
    the descriptor that must go; replacing the sandbox's methods alone left
    this arm frozen like the sandboxed one (until 2026-12-05: "freezing
    costs 0.1 us" was the two arms measuring the same thing)."""
    box = bot._box
    assert box is not None
    box.thaw()  # it was frozen after ready; from now on it never is
    box.freeze = box.thaw = lambda: None  # type: ignore[method-assign]
    bot._freeze_fd = -1
    bot._frozen = bot._freezable = False


def check_arms(boxed: BotProcess, unfrozen: BotProcess) -> None:
    """The two arms differ by freezing alone: after its last reply the
    sandboxed bot is frozen (where this machine can freeze) and the unfrozen
    one is not; else the difference printed would mean nothing."""
    a, b = boxed._box, unfrozen._box
    assert a is not None and b is not None
    if b.frozen():
        raise SystemExit("the unfrozen arm was frozen: its figures would be the sandboxed arm's")
    if a.can_freeze:
        deadline = time.monotonic() + 1.0  # a freeze completes once each task reaches its trap
        while not a.frozen():
            if time.monotonic() > deadline:
                raise SystemExit("the sandboxed arm was not frozen after its reply")
            time.sleep(0.001)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=15)
    ap.add_argument("--decisions", type=int, default=2000, help="round trips per trial")
    ap.add_argument("--cpu", type=int, default=0, help="core to pin to (-1: do not pin)")
    args = ap.parse_args()
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})  # children inherit it
    bot_file = HERE / "bots" / "trivial.py"
    clock = TimeControl(budget_ms=1000)
    floor = Floor()
    floor_stdlib = FloorStdlib()
    boxed = BotProcess(load_bot(bot_file), SandboxLimits(), clock)
    unfrozen = BotProcess(load_bot(bot_file), SandboxLimits(), clock)
    plain = BotProcess(load_bot(bot_file), SandboxLimits(mode="off"), clock)
    bots = [boxed, unfrozen, plain]
    arrangements: dict[str, Callable[[dict[str, Any]], Any]] = {
        "floor": floor.request,
        "floor-stdlib": floor_stdlib.request,
        "sandboxed": boxed.request,
        "unfrozen": unfrozen.request,
    }
    # (seccomp: a "seccomp-off" arrangement would go here: a BotProcess with
    # the filter switched off, beside "unfrozen".)
    if cgroups.plan(available().cgroups, available().unified, "v1").freeze == "v1":
        v1 = BotProcess(load_bot(bot_file), SandboxLimits(), clock)
        os.environ[cgroups.PREFER_ENV] = "v1"  # read when its sandbox is made, in start()
        try:
            v1.start()
        finally:
            del os.environ[cgroups.PREFER_ENV]
        v1.notify(MATCH_START)
        arrangements["v1-freezer"] = v1.request
    arrangements["off"] = plain.request
    for bot in bots:
        bot.start()
        bot.notify(MATCH_START)
    if "v1-freezer" in arrangements:
        bots.append(v1)
    never_frozen(unfrozen)
    cpu_of: dict[str, Callable[[], int]] = {
        "floor": schedstat(floor.proc.pid),
        "floor-stdlib": schedstat(floor_stdlib.proc.pid),
    }
    for name, bot in (("sandboxed", boxed), ("unfrozen", unfrozen), ("v1-freezer", bots[-1]), ("off", plain)):
        if name in arrangements:
            assert bot._box is not None and bot.pid is not None
            cpu_of[name] = bot._box.cpu_ns if bot._box.cgroups.has("cpu") else schedstat(bot.pid)
    for req in arrangements.values():  # warm up caches, JIT-free but still
        per_decision(req, 200)
    times: dict[str, list[float]] = {k: [] for k in arrangements}
    cpus: dict[str, list[float]] = {k: [] for k in arrangements}
    sw: dict[str, list[float]] = {k: [] for k in arrangements}
    for _ in range(args.trials):
        for name, req in arrangements.items():
            wall, cpu = per_decision(req, args.decisions, cpu_of[name])
            times[name].append(wall)
            cpus[name].append(cpu)
            sw[name].append(SWITCHES[-1])
    check_arms(boxed, unfrozen)
    floor.close()
    floor_stdlib.close()
    for bot in bots:
        bot.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median(t / f for t, f in zip(v, times["floor"])) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpus.items()}
    cratio = {k: statistics.median(t / f for t, f in zip(v, cpus["floor"])) for k, v in cpus.items()}
    print(
        f"message: {len(encode(TURN))} bytes; pinned: {'core ' + str(args.cpu) if args.cpu >= 0 else 'no'}; "
        f"{args.trials} interleaved trials x {args.decisions} decisions; load average "
        f"{os.getloadavg()[0]:.1f} (figures under load are indicative)"
    )
    print(describe_sandbox(SandboxLimits()))
    print(
        f"{'arrangement':<12} {'median us':>10} {'min':>8} {'max':>8} {'x floor':>8}   "
        f"{'CPU us':>7} {'x floor':>8}   {'switches':>8}"
    )
    for name, v in times.items():
        print(
            f"{name:<12} {med[name]:>10.1f} {min(v):>8.1f} {max(v):>8.1f} {ratio[name]:>8.2f}   "
            f"{cmed[name]:>7.1f} {cratio[name]:>8.2f}   {statistics.median(sw[name]):>8.2f}"
        )
    print(
        f"freezing costs {med['sandboxed'] - med['unfrozen']:.1f} us per decision of wall time, "
        f"{cmed['sandboxed'] - cmed['unfrozen']:.1f} us of CPU (sandboxed - unfrozen)"
    )
    r = ratio["sandboxed"]
    print(
        f"sandboxed / floor = {r:.2f} wall, {cratio['sandboxed']:.2f} CPU (medians of per-trial ratios; "
        f"target <= 2.00): {'OK' if r <= 2.0 else 'OVER TARGET'}"
    )


if __name__ == "__main__":
    main()
