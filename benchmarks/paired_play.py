"""Paired play against unpaired play: matches/s of a variants run and of the same bots, table sizes
and number of matches under one variant, with the memory peak of each.

    python benchmarks/paired_play.py [--config configs/variants.yaml] [--matches N] [--variants K]
                                     [--trials 2] [--workers W] [--write docs/performance.md]

Paired: the config as it is (every variant plays the same tables with the same
dice: each deal is played once per variant, and no bot process may play a deal
twice, so each entrant needs a process per play of a deal). Unpaired: the same
config with only its first variant and ``matches`` times the number of
variants, so both play as many matches (``--variants K``: the config's first
K variants only, for a short check), on tables drawn alike. The two are
alternated ``--trials`` times (the first of each pair alternating too), so
both see the same machine load; each run plays into a fresh temporary folder
with a fixed seed, as `arena run` plays it (sandboxed bots, the local
backend).

Reported per arrangement: wall time of the run, matches/s (median of the
trials), the peak memory of the run's processes (the sum of the proportional
set sizes, PSS, of every process under this one: workers, sandboxes, bots;
sampled every 0.2 s) and the most bot sandboxes alive at once; and the median
of the per-trial ratios of paired to unpaired matches/s.

``--profile``: where the workers' time goes, per arrangement (the first
trial's): the seconds they spent in each step of a bot process's life
(``launch``: its sandbox made; ``boot``: a forked bot's fork asked for;
``start``: the handshake; ``request``: its turns; ``close``), summed over the
workers, each step's calls counted (``BotProcess`` methods wrapped in the
workers, which the pool forks from this process; not with compiled modules).

``--compare-fresh``: each trial also plays both arrangements with every bot
process started anew (``ARENA_NO_ZYGOTE``: no zygote, arena/sandbox/zygote.py),
interleaved with the others, so the two ways of starting a Python bot are
compared on the same machine load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.running.config import load_config  # noqa: E402
from arena.running.runner import run  # noqa: E402


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc (pid namespaces nest inside ours: all are seen)."""
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _comm(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().strip()
    except OSError:
        return b""


class MemoryPeak:
    """Samples, in a thread, the PSS summed over this process's descendants and
    the sandboxes (outermost ``bwrap`` processes) among them; keeps the peaks."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.peak_kb = 0
        self.peak_boxes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> MemoryPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        root = os.getpid()
        while not self._stop.wait(self.every):
            kids = _children()
            total, boxes, todo = 0, 0, [(root, False)]
            while todo:
                pid, inside = todo.pop()
                total += _pss_kb(pid)
                box = _comm(pid) == b"bwrap"
                boxes += box and not inside
                todo += [(k, inside or box) for k in kids.get(pid, ())]
            self.peak_kb = max(self.peak_kb, total)
            self.peak_boxes = max(self.peak_boxes, boxes)


_STEPS = ("launch", "boot", "start", "request", "close")


def profile_steps(folder: Path) -> None:
    """Wrap :class:`BotProcess`'s steps so that each worker appends, per call,
    the step and its wall time to a file of its own in ``folder``."""
    from arena.match.process import BotProcess

    for name in _STEPS:
        step = getattr(BotProcess, name)

        def timed(self: object, *a: object, _step: object = step, _name: str = name, **k: object) -> object:
            t0 = time.perf_counter()
            try:
                return _step(self, *a, **k)  # type: ignore[operator]
            finally:
                with open(folder / str(os.getpid()), "a") as f:
                    f.write(f"{_name} {time.perf_counter() - t0:.6f}\n")

        setattr(BotProcess, name, timed)


def read_steps(folder: Path) -> dict[str, tuple[int, float]]:
    """(calls, seconds) per step over every worker's file; the files are then removed."""
    out = dict.fromkeys(_STEPS, (0, 0.0))
    for path in folder.iterdir():
        for line in path.read_text().splitlines():
            name, secs = line.split()
            n, total = out[name]
            out[name] = (n + 1, total + float(secs))
        path.unlink()
    return out


def timed_run(
    config: str,
    out: Path,
    workers: int | None,
    matches: int,
    seed: int,
    variants: dict[str, dict[str, object]],
    fresh: bool = False,
) -> tuple[float, int, MemoryPeak]:
    if fresh:
        os.environ["ARENA_NO_ZYGOTE"] = "1"  # read by the workers, forked from this process
    else:
        os.environ.pop("ARENA_NO_ZYGOTE", None)
    cfg = load_config(config, (), workers=workers, matches=matches, seed=seed, out=str(out), variants=variants)
    with MemoryPeak() as mem:
        t0 = time.perf_counter()
        result = run(cfg)
        wall = time.perf_counter() - t0
    if result.status != "complete":
        raise SystemExit(f"run did not complete: {result.status} {result.error}")
    return wall, result.played, mem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/variants.yaml")
    ap.add_argument("--matches", type=int, default=None, help="matches per variant (default: the config's)")
    ap.add_argument("--variants", type=int, default=None, help="only the config's first K variants")
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--workers", type=int, default=None, help="default: the config's")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--write", help="update the '## Paired play' section of this markdown file")
    ap.add_argument("--compare-fresh", action="store_true", help="also every bot process started anew, interleaved")
    ap.add_argument("--profile", action="store_true", help="the workers' seconds in each step of a bot process")
    args = ap.parse_args()
    os.chdir(ROOT)
    cores = len(os.sched_getaffinity(0))

    base = load_config(args.config, ())
    per_variant = args.matches or base.matches
    variants = {k: dict(v) for k, v in list(base.variants.items())[: args.variants or len(base.variants)]}
    first = next(iter(variants))
    one = {first: variants[first]}
    n_variants = len(variants)

    modes = ["forked", "fresh"] if args.compare_fresh else ["forked"]
    runs: dict[tuple[str, str], list[tuple[float, int, MemoryPeak]]] = {
        (m, k): [] for m in modes for k in ("paired", "single")
    }
    ratios: dict[str, list[float]] = {m: [] for m in modes}
    steps: dict[tuple[str, str], dict[str, tuple[int, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.profile:
            (Path(tmp) / "steps").mkdir()
            profile_steps(Path(tmp) / "steps")
        for t in range(args.trials):
            order = [(m, k) for m in modes for k in ("paired", "single")]
            shift = t % len(order)
            order = order[shift:] + order[:shift]  # who goes first turns from trial to trial
            got = {}
            for mode, kind in order:
                n = per_variant if kind == "paired" else per_variant * n_variants
                got[mode, kind] = timed_run(
                    args.config,
                    Path(tmp) / f"{mode}-{kind}{t}",
                    args.workers,
                    n,
                    args.seed,
                    variants if kind == "paired" else one,
                    fresh=mode == "fresh",
                )
                runs[mode, kind].append(got[mode, kind])
                if args.profile:
                    taken = read_steps(Path(tmp) / "steps")
                    steps.setdefault((mode, kind), taken)  # the first trial's
            for mode in modes:
                (wp, np_, mp), (ws, ns, ms) = got[mode, "paired"], got[mode, "single"]
                ratios[mode].append((np_ / wp) / (ns / ws))
                print(
                    f"trial {t + 1} ({mode}): paired {np_} matches in {wp:.1f} s ({np_ / wp:.1f}/s, peak "
                    f"{mp.peak_kb / 1024:.0f} MB, {mp.peak_boxes} sandboxes); one variant {ns} in {ws:.1f} s "
                    f"({ns / ws:.1f}/s, peak {ms.peak_kb / 1024:.0f} MB, {ms.peak_boxes} sandboxes); "
                    f"ratio {ratios[mode][-1]:.2f}",
                    file=sys.stderr,
                    flush=True,
                )

    def med(rows: list[tuple[float, int, MemoryPeak]]) -> tuple[float, int, float, int]:
        wall, n, _ = sorted(rows, key=lambda r: r[0])[len(rows) // 2]
        return wall, n, max(r[2].peak_kb for r in rows) / 1024, max(r[2].peak_boxes for r in rows)

    cmd = (
        f"python benchmarks/paired_play.py --config {args.config} --trials {args.trials}"
        + (f" --matches {args.matches}" if args.matches else "")
        + (f" --workers {args.workers}" if args.workers else "")
        + (f" --variants {args.variants}" if args.variants else "")
        + (" --compare-fresh" if args.compare_fresh else "")
        + (" --profile" if args.profile else "")
    )
    lines = [
        "## Paired play",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {cores} cores, Python {platform.python_version()}, "
        f"with `{cmd}`; load average {os.getloadavg()[0]:.1f} at the end.",
        "",
    ]
    names = {"forked": "Python bots forked from the zygote", "fresh": "every bot process started anew"}
    for mode in modes:
        pw, pn, pmem, pbox = med(runs[mode, "paired"])
        sw, sn, smem, sbox = med(runs[mode, "single"])
        lines += [
            f"| {names[mode]} | {n_variants} variants, paired deals | one variant ({first}) |",
            "|---|---|---|",
            f"| matches played | {pn} | {sn} |",
            f"| wall time (median of {args.trials}) | {pw:.1f} s | {sw:.1f} s |",
            f"| matches/s | {pn / pw:.1f} | {sn / sw:.1f} |",
            f"| memory peak, PSS of every process of the run (max of the trials) | {pmem:.0f} MB | {smem:.0f} MB |",
            f"| bot sandboxes alive at once, at most | {pbox} | {sbox} |",
            "",
            f"{names[mode].capitalize()}: paired matches/s as a share of unpaired (median of per-trial ratios): "
            f"**{statistics.median(ratios[mode]):.2f}** (trials: {', '.join(f'{r:.2f}' for r in ratios[mode])}). "
            "Target: 0.8 or more.",
            "",
        ]
    if steps:
        lines += [
            "Seconds the workers spent in each step of a bot process's life (first trial; calls in brackets):",
            "",
            "| step | " + " | ".join(f"{m}, {k}" for m, k in steps) + " |",
            "|---|" + "---|" * len(steps),
        ]
        for name in _STEPS:
            lines.append(f"| {name} | " + " | ".join(f"{v[name][1]:.1f} ({v[name][0]})" for v in steps.values()) + " |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.write:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _markdown import replace_section  # noqa: E402

        replace_section(Path(args.write), "## Paired play", text)


if __name__ == "__main__":
    main()
