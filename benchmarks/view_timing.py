"""Whether a bot's read or name lookup tells what another sandbox did before.

    python benchmarks/view_timing.py [--trials 6] [--n 120]

Each trial starts tests/bots/cache_timer.py twice, each time in a sandbox of
its own, as two processes of one bot would be (the two plays of a paired
deal): the first marks every even candidate (reads one byte of a page of a
rarely read file, looks up a missing name), the second times one-byte reads
and lookups of every candidate, marked and unmarked interleaved. Two
arrangements, trials interleaved so machine load hits both alike:

- ``view``: what every Python bot now gets, its files served from the
  memory view (arena/sandbox/view.py);
- ``view, none marked``: the same without the marking sandbox: the share
  a probe's order and layout give by themselves (what "no information" looks
  like on this machine);
- ``host files``: the host's files bound as before (the view switched off),
  the control: the file's pages are dropped from the page cache before each
  trial, as a rarely read file's would be.

The file read is the bot's own ``cache_timer/blob.bin`` (24 MiB of random
bytes in a scratch copy of the bot), which no other process keeps warm; the
names looked up are missing names in the system's library folder.

Prints, per arrangement, the median read and lookup time of marked and
unmarked candidates and how often a marked candidate was faster than the
unmarked one beside it (0.5: the timing says nothing; 1.0: every bit read).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from arena.botfile.spec import BotSpec, load_bot  # noqa: E402
from arena.match.process import BotProcess, TimeControl  # noqa: E402
from arena.sandbox import SandboxLimits, describe_sandbox  # noqa: E402
from arena.sandbox import view as fileview  # noqa: E402

BOT = HERE.parent / "tests" / "bots" / "cache_timer.py"


def run_once(spec: BotSpec, setting: str) -> str:
    """Start the bot with ``ARENA_CACHE_TIMER=setting`` (it works at import),
    and return its stderr."""
    bot = BotProcess(
        dataclasses.replace(spec, env={"ARENA_CACHE_TIMER": setting}), SandboxLimits(), TimeControl(hello_ms=60000)
    )
    try:
        bot.start()
    finally:
        bot.close()
    return bot.stderr_tail()


def drop_pages(path: str) -> None:
    """Drop a host file's pages from the page cache (the cold start of a rarely read file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def trial(spec: BotSpec, view_on: bool, n: int, host_file: str, mark: bool = True) -> dict[str, list[list[int]]]:
    saved = fileview.unavailable
    if not view_on:
        fileview.unavailable = lambda: "off for the benchmark"  # type: ignore[assignment]
        drop_pages(host_file)
    try:
        tag = f"{os.getpid()}-{time.monotonic_ns()}"
        if mark:
            run_once(spec, f"mark:{tag}:{n}")
        err = run_once(spec, f"probe:{tag}:{n}")
    finally:
        fileview.unavailable = saved  # type: ignore[assignment]
    line = next((x for x in err.splitlines() if x.startswith("{")), None)
    if line is None:
        raise SystemExit(f"the probe wrote no result; its stderr: {err[-2000:]}")
    out: dict[str, list[list[int]]] = json.loads(line)
    return out


def faster_share(marked: list[int], unmarked: list[int]) -> float:
    """How often a marked candidate was faster than the unmarked one beside it."""
    pairs = list(zip(marked, unmarked))
    return sum(m < u for m, u in pairs) / len(pairs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=6)
    ap.add_argument("--n", type=int, default=120, help="candidates per trial (half marked)")
    args = ap.parse_args()
    if fileview.unavailable() is not None:
        raise SystemExit(f"no memory view on this machine: {fileview.unavailable()}")
    scratch = Path(tempfile.mkdtemp(prefix="arena-view-timing-"))
    shutil.copy(BOT, scratch / BOT.name)
    (scratch / BOT.stem).mkdir()
    host_file = str(scratch / BOT.stem / "blob.bin")
    Path(host_file).write_bytes(os.urandom(24 << 20))
    spec = load_bot(scratch / BOT.name)
    results: dict[str, dict[str, list[list[int]]]] = {
        "view": {"read": [[], []], "lookup": [[], []]},
        "view, none marked": {"read": [[], []], "lookup": [[], []]},
        "host files": {"read": [[], []], "lookup": [[], []]},
    }
    for _ in range(args.trials):
        for name in results:
            got = trial(spec, name != "host files", args.n, host_file, mark=name != "view, none marked")
            for what in ("read", "lookup"):
                for k in (0, 1):
                    results[name][what][k].extend(got[what][k])
    shutil.rmtree(scratch, ignore_errors=True)
    print(describe_sandbox(SandboxLimits()))
    print(f"{args.trials} interleaved trials of {args.n} candidates; load average {os.getloadavg()[0]:.1f}")
    print(f"{'arrangement':<18} {'probe':<7} {'marked ns':>10} {'unmarked ns':>12} {'marked faster':>14}")
    for name, r in results.items():
        for what in ("read", "lookup"):
            marked, unmarked = r[what]
            print(
                f"{name:<18} {what:<7} {statistics.median(marked):>10.0f} {statistics.median(unmarked):>12.0f} "
                f"{faster_share(marked, unmarked):>14.2f}"
            )


if __name__ == "__main__":
    main()
