"""Per-decision overhead of a sandboxed Python bot, beside the floor.

    python benchmarks/protocol.py [--trials 15] [--decisions 2000] [--cpu 0]

Arrangements, measured in the same run with trials interleaved (so drift and
other load hit them alike), the parent pinned to one core and every child
inheriting that pinning (NOTES.md: the fastest arrangement here):

- floor: a bare child process echoing the ~200-byte JSON turn line over
  pipes (orjson on both sides, raw os.read/os.write): the least any
  process-per-bot design can cost;
- floor-stdlib: the same echo the way NOTES.md measured it (subprocess file
  objects, readline, the stdlib json): about 40-55 us there;
- sandboxed: BotProcess.request() to a trivial bot through arena.host, in
  the full sandbox (bwrap, cgroups, rlimits) on this machine, CPU time read
  from its cgroup on every request;
- off: the same without the sandbox (mode off), to show what the sandbox
  itself adds.

Reports the median microseconds per decision over trials and the ratio to
the floor (target: at most 2x). Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from arena.botfile import load_bot  # noqa: E402
from arena.process import BotProcess, TimeControl  # noqa: E402
from arena.rules import Rules  # noqa: E402
from arena.sandbox import SandboxLimits, describe_sandbox  # noqa: E402
from arena.wire import encode  # noqa: E402

TURN: dict[str, Any] = {
    "type": "turn", "match": "m-000042", "round": 7, "seat": 2,
    "dice": [1, 3, 3, 5], "counts": [5, 0, 4, 3], "palifico": False,
    "history": [[1, 3, 4], [3, 4, 4]],
    "legal": {"dudo": True, "calza": True,
              "min_quantity": {"1": 2, "2": 5, "3": 5, "4": 5, "5": 4, "6": 4}, "max_quantity": 12},
    "time_ms": 1000,
}
MATCH_START = {"type": "match_start", "match": "m-000042", "seat": 2, "players": 4,
               "names": ["a", "b", "c", "d"], "rules": Rules().to_dict(), "seed": 1}

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
    """NOTES.md's floor: Popen file objects, readline, the stdlib json."""

    def __init__(self) -> None:
        import json

        self.proc = subprocess.Popen([os.path.realpath(sys.executable), "-c", ECHO_STDLIB],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
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

        self.proc = subprocess.Popen([os.path.realpath(sys.executable), "-c", ECHO],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
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


def per_decision(request: Callable[[dict[str, Any]], Any], n: int) -> float:
    """Mean microseconds per round trip over n requests."""
    t = time.perf_counter()
    for _ in range(n):
        request(TURN)
    return (time.perf_counter() - t) / n * 1e6


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
    plain = BotProcess(load_bot(bot_file), SandboxLimits(mode="off"), clock)
    for bot in (boxed, plain):
        bot.start()
        bot.notify(MATCH_START)
    arrangements: dict[str, Callable[[dict[str, Any]], Any]] = {
        "floor": floor.request, "floor-stdlib": floor_stdlib.request,
        "sandboxed": boxed.request, "off": plain.request}
    for req in arrangements.values():  # warm up caches, JIT-free but still
        per_decision(req, 200)
    times: dict[str, list[float]] = {k: [] for k in arrangements}
    for _ in range(args.trials):
        for name, req in arrangements.items():
            times[name].append(per_decision(req, args.decisions))
    floor.close()
    floor_stdlib.close()
    boxed.close()
    plain.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"message: {len(encode(TURN))} bytes; pinned: {'core ' + str(args.cpu) if args.cpu >= 0 else 'no'}; "
          f"{args.trials} interleaved trials x {args.decisions} decisions")
    print(describe_sandbox(SandboxLimits()))
    print(f"{'arrangement':<12} {'median us':>10} {'min':>8} {'max':>8} {'x floor':>8}")
    for name, v in times.items():
        print(f"{name:<12} {med[name]:>10.1f} {min(v):>8.1f} {max(v):>8.1f} {med[name] / med['floor']:>8.2f}")
    for base in ("floor", "floor-stdlib"):
        ratio = med["sandboxed"] / med[base]
        print(f"sandboxed / {base} = {ratio:.2f} (target <= 2.00): {'OK' if ratio <= 2.0 else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
