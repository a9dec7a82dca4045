"""What saying why a bot failed costs the referee, by what the bot wrote.

    python benchmarks/crash_diagnosis.py [--trials 15]

When a bot crashes or answers hello wrongly, the referee reads what it kept
of the bot's stderr (its first 4 KiB and its last ``stderr_tail`` bytes, 16
KiB by default) and, for a wrong hello, the line itself (up to 64 KiB), and
looks for a cause (arena/match/diagnose.py). That text is the bot's to shape.
Each shape below is diagnosed as the referee does (the causes and the
stderr excerpt), trials interleaved, and reported as the referee's CPU per
crash (median) and as a ratio to an ordinary Python traceback measured in
the same run:

- traceback: a bot's ordinary crash (the baseline);
- 20 KiB of newlines: tests/bots/newline_crash.py (0.5-0.9 s before the fix);
- 4 + 16 + 64 KiB: bare newlines in the head and tail and a 64 KiB line of
  spaces instead of ready (tests/bots/newline_hello.yaml: 12.7 s before);
- the worst of the patterns tests/test_diagnose.py fills that bound with.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from arena.match import diagnose  # noqa: E402

HEAD, TAIL, LINE = 4096, 16384, 65536
TRACEBACK = (
    'Traceback (most recent call last):\n  File "/bots/b.py", line 12, in act\n    raise ValueError("x")\n'
    "ValueError: x\n"
)
PATTERNS = [
    "\n",
    " \n",
    "\r",
    'File "',
    ' File "x", line 1\n',
    "bwrap: execvp ",
    "Caused by: x\n",
    "\tat a.b(C.java:1)\n",
    'Exception in thread "',
    "Traceback (most recent call last):\n",
]


def fill(piece: str, size: int) -> str:
    return (piece * (size // len(piece) + 1))[:size]


def shapes() -> dict[str, tuple[str, str, str]]:
    """name -> (head, tail, extra): what the referee holds when it diagnoses."""
    out = {
        "traceback": (TRACEBACK, TRACEBACK, ""),
        "20 KiB of newlines": (fill("\n", HEAD), fill("\n", TAIL), ""),
        "4 + 16 + 64 KiB": (fill("\n", HEAD), fill("\n", TAIL), fill(" ", LINE)),
    }
    for p in PATTERNS:
        out[f"pattern {p!r}"] = (fill(p, HEAD), fill(p, TAIL), fill(p, LINE))
    return out


def diagnose_once(head: str, tail: str, extra: str) -> float:
    start = time.process_time()
    diagnose.causes(
        head + "\n" + tail + "\n" + extra,
        own=lambda p: p.startswith("/bots/"),
        program="python3",
        processes=16,
        max_processes=256,
        memory_mb=512,
        pids_capped=False,
    )
    diagnose.excerpt(head, tail, False)
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=15)
    args = ap.parse_args()
    cases = shapes()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.trials):
        for name, parts in cases.items():  # interleaved: load hits every shape alike
            times[name].append(diagnose_once(*parts))
    base = statistics.median(times["traceback"])
    print(f"referee CPU to diagnose one crash, median of {args.trials} interleaved trials")
    print(f"{'what the bot wrote':<42} {'ms':>8} {'ratio to a traceback':>22}")
    worst = ("", 0.0)
    for name, ts in times.items():
        m = statistics.median(ts)
        if name.startswith("pattern") and m > worst[1]:
            worst = (name, m)
        print(f"{name:<42} {m * 1000:8.2f} {m / base if base else float('inf'):22.1f}")
    print(f"worst pattern: {worst[0]} at {worst[1] * 1000:.2f} ms")


if __name__ == "__main__":
    main()
