"""What the system-call filter and the quota launcher cost a bot process.

    python benchmarks/sandbox_start.py [--trials 15] [--calls 200000] [--cpu 0]

Arrangements, measured in the same run with trials interleaved (so machine
load hits them alike), the parent pinned to one core and children inheriting
the pinning:

- start-up, to `ready`, of benchmarks/bots/trivial.py through arena.protocol.host:
  bare (bwrap, cgroups, rlimits: the sandbox without either), +filter
  (``--seccomp`` from a pipe), +launcher (``prlimit`` setting the per-user
  quotas inside the bot's user namespace, one more exec), full (both: what
  every bot gets);
- per system call: ``getppid()`` in a loop inside the sandbox, with and
  without the filter (the filter runs on every call a bot makes);
- the filter's one-time build with libseccomp, per referee process;
- the file view (arena/sandbox/view.py): start-up with every file read from
  the memory view (full, the default) against the host's files bound as
  before (host files), and the bot's memory at ``ready`` for both (the sum
  of Rss and Pss over the sandbox's processes; Pss shares each page among
  the processes that map it, so the view's pages shared by every bot count
  once per machine, not per bot); the view's size and build time, first and
  reused.

Reports medians and the ratio to the bare arrangement. Figures go to
docs/performance.md ("Sandbox start-up").
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import arena.sandbox.box as box  # noqa: E402
from arena.botfile.spec import load_bot  # noqa: E402
from arena.engine.rules import Rules  # noqa: E402
from arena.match.process import BotProcess, TimeControl  # noqa: E402
from arena.protocol.messages import match_start_message  # noqa: E402
from arena.sandbox import SandboxLimits, describe_sandbox, mounts, procfs, quotas, seccomp  # noqa: E402
from arena.sandbox import view as fileview  # noqa: E402

LOOP = HERE / "bots" / "syscall_loop.py"
TRIVIAL = HERE / "bots" / "trivial.py"
TURN = {
    "type": "turn",
    "match": "m-1",
    "round": 1,
    "seat": 0,
    "dice": [1, 2, 3, 4, 5],
    "counts": [5, 5],
    "palifico": False,
    "history": [],
    "legal": {"dudo": False, "calza": False, "min_quantity": {"2": 1}, "max_quantity": 10},
    "time_ms": 60000,
}


class Setting:
    """Turn the filter, the launcher and/or the memory view off for one start."""

    def __init__(self, filter_on: bool, launcher_on: bool, view_on: bool = True) -> None:
        self.filter_on, self.launcher_on, self.view_on = filter_on, launcher_on, view_on

    def __enter__(self) -> None:
        self.saved = (box.seccomp.unavailable, quotas.PRLIMIT, fileview.unavailable)
        if not self.filter_on:
            box.seccomp.unavailable = lambda: "off for the benchmark"  # type: ignore[assignment]
        if not self.launcher_on:
            quotas.PRLIMIT = ""
        if not self.view_on:
            fileview.unavailable = lambda: "off for the benchmark"  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        box.seccomp.unavailable, quotas.PRLIMIT, fileview.unavailable = self.saved  # type: ignore[assignment]


def _memory_kb(pid: int) -> tuple[int, int]:
    """(Rss, Pss) in KiB summed over ``pid`` and every process under it."""
    rss = pss = 0
    for p in procfs.proc_tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup", encoding="ascii") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


MEMORY: dict[str, list[tuple[int, int]]] = {}


def start_ms(setting: Setting, name: str = "") -> float:
    with setting:
        bot = BotProcess(load_bot(TRIVIAL), SandboxLimits(), TimeControl(hello_ms=30000))
        t = time.perf_counter()
        bot.start()
        ms = (time.perf_counter() - t) * 1000
        if name and bot.pid is not None:
            MEMORY.setdefault(name, []).append(_memory_kb(bot.pid))
        bot.close()
    return ms


def view_build() -> tuple[float, float, int]:
    """(ms to build the Python view from nothing, ms to find it again, its bytes),
    in a scratch folder of its own so that the machine's view is left alone."""
    import shutil
    import tempfile

    scratch = tempfile.mkdtemp(prefix="arena-view-bench-", dir="/dev/shm")
    saved = os.environ.get("ARENA_VIEW_ROOT")
    os.environ["ARENA_VIEW_ROOT"] = scratch
    try:
        fileview.python_view.cache_clear()
        t = time.perf_counter()
        v = mounts.python_view()
        first = (time.perf_counter() - t) * 1000
        fileview.python_view.cache_clear()  # a new referee process: the walk and key again, no copy
        t = time.perf_counter()
        mounts.python_view()
        again = (time.perf_counter() - t) * 1000
        return first, again, fileview.size(v)
    finally:
        fileview.python_view.cache_clear()
        if saved is None:
            del os.environ["ARENA_VIEW_ROOT"]
        else:
            os.environ["ARENA_VIEW_ROOT"] = saved
        shutil.rmtree(scratch, ignore_errors=True)


def syscall_ns(setting: Setting, calls: int) -> float:
    with setting:
        spec = dataclasses.replace(load_bot(LOOP), env={"ARENA_BENCH_CALLS": str(calls)})
        bot = BotProcess(spec, SandboxLimits(), TimeControl(budget_ms=60000, hello_ms=30000))
        bot.start()
        bot.notify(match_start_message("m-1", 0, ["a", "b"], Rules.preset().to_dict(), 1))
        reply = bot.request(TURN)[0]
        bot.close()
    return float(reply["ns_per_call"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=15)
    ap.add_argument("--calls", type=int, default=200000, help="getppid() calls per trial")
    ap.add_argument("--cpu", type=int, default=0, help="core to pin to (-1: do not pin)")
    args = ap.parse_args()
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    box._warned.add("off for the benchmark")  # the degraded-mode warning, said once, not measured
    t = time.perf_counter()
    prog = seccomp._build()
    build_ms = (time.perf_counter() - t) * 1000
    seccomp.program()
    view_first, view_again, view_bytes = view_build()
    starts: dict[str, Setting] = {
        "bare": Setting(False, False),
        "+filter": Setting(True, False),
        "+launcher": Setting(False, True),
        "full": Setting(True, True),
        "host files": Setting(True, True, view_on=False),
    }
    calls: dict[str, Setting] = {"no filter": Setting(False, True), "filter": Setting(True, True)}
    for s in starts.values():
        start_ms(s)  # warm: page cache, the interpreter's files
    st: dict[str, list[float]] = {k: [] for k in starts}
    sc: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(args.trials):
        for name, s in starts.items():
            st[name].append(start_ms(s, name))
        for name, s in calls.items():
            sc[name].append(syscall_ns(s, args.calls))
    print(describe_sandbox(SandboxLimits()))
    print(
        f"pinned: {'core ' + str(args.cpu) if args.cpu >= 0 else 'no'}; {args.trials} interleaved trials; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"filter: {len(seccomp.DENY)} rules, {len(prog) // 8} BPF instructions, built in {build_ms:.1f} ms "
        f"(once per referee process)"
    )
    print(
        f"file view: {view_bytes / 1e6:.0f} MB, built in {view_first:.0f} ms, found again "
        f"in {view_again:.0f} ms (a new referee process)"
    )
    med = {k: statistics.median(v) for k, v in st.items()}
    print(f"{'start-up to ready':<18} {'median ms':>10} {'min':>7} {'max':>7} {'x bare':>7} {'+ms':>6}")
    for name, v in st.items():
        print(
            f"{name:<18} {med[name]:>10.1f} {min(v):>7.1f} {max(v):>7.1f} {med[name] / med['bare']:>7.2f} "
            f"{med[name] - med['bare']:>6.1f}"
        )
    print(f"{'memory at ready':<18} {'Rss MB':>10} {'Pss MB':>7}")
    for name in ("full", "host files"):
        rows = MEMORY.get(name, [])
        if rows:
            print(
                f"{name:<18} {statistics.median(r[0] for r in rows) / 1024:>10.1f} "
                f"{statistics.median(r[1] for r in rows) / 1024:>7.1f}"
            )
    cmed = {k: statistics.median(v) for k, v in sc.items()}
    print(f"{'getppid() in a loop':<18} {'median ns':>10} {'min':>7} {'max':>7} {'x none':>7} {'+ns':>6}")
    for name, v in sc.items():
        print(
            f"{name:<18} {cmed[name]:>10.1f} {min(v):>7.1f} {max(v):>7.1f} "
            f"{cmed[name] / cmed['no filter']:>7.2f} {cmed[name] - cmed['no filter']:>6.1f}"
        )


if __name__ == "__main__":
    main()
