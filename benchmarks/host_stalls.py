"""Host stalls under a loaded machine: honest bots never charged, records as a quiet run's.

    python benchmarks/host_stalls.py [--matches 1000] [--budget-ms 1000] [--workers 2]
                                     [--mix busy,run,tests,cold] [--busy 6] [--seed 33]

Plays ``bayes``, ``equilibrium`` and ``tests/bots/cpu_half.py`` (a bot that
burns half its CPU budget every turn) at three-player tables, ``--matches``
of them with a fixed seed, twice: first beside a load mix like the one stalls were seen in, then
with the mix stopped (the reference). The mix, each part in a session of its
own (``setsid``): ``busy`` loops (``--busy`` of them), a second sandboxed
``arena run`` (``run``), the project's sandbox tests of cgroups in a loop
(``tests``), and a reader of large cold files after dropping the page cache
(``cold``, root only). Reported: the load average over the loaded run, the
faults charged to the bots (all three are honest: the goal is 0), the
``arena`` faults left in the records, the matches replayed after a host
stall and what held the bots up, and whether every record equals the
reference's (``canonical``: everything but timings).

The issue's full test is the default (1,000 matches, the default time
control); it takes a long time on two cores. A scaled-down version:
``--matches 200 --budget-ms 200``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.engine.records import canonical  # noqa: E402
from arena.running.store import read_records  # noqa: E402
from arena.sandbox import die_with_parent  # noqa: E402

MIXES = ("busy", "run", "tests", "cold")
PY = sys.executable


def config(folder: Path, matches: int, budget_ms: int, workers: int, seed: int) -> Path:
    path = folder / "stalls.yaml"
    path.write_text(
        json.dumps(
            {  # JSON is YAML
                "name": "stalls",
                "bots": [
                    str(ROOT / "bots/bayes.py"),
                    str(ROOT / "bots/equilibrium.py"),
                    str(ROOT / "tests/bots/cpu_half.py"),
                ],
                "players": 3,
                "matches": matches,
                "format": "round-robin",
                "seating": "roll",
                "variants": {"classic": {"preset": "classic"}},
                "seed": seed,
                "workers": workers,
                "time": {"budget_ms": budget_ms, "wall_factor": 5},
            }
        )
    )
    return path


def big_files(limit: int = 6) -> list[str]:
    """Large files to read cold: the biggest shared libraries and packages found."""
    found: list[tuple[int, str]] = []
    for top in ("/usr/lib", "/work/main/.venv/lib" if Path("/work/main/.venv/lib").exists() else "/usr/share"):
        for dirpath, _, files in os.walk(top):
            for name in files:
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if st.st_size > 20 << 20 and not os.path.islink(p):
                    found.append((st.st_size, p))
    return [p for _, p in sorted(found, reverse=True)[:limit]]


def start_mix(parts: set[str], busy: int, folder: Path) -> list[subprocess.Popen[bytes]]:
    procs: list[subprocess.Popen[bytes]] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def spawn(argv: list[str]) -> None:
        # Each part ends with this script, even killed outright (the parent-death signal).
        procs.append(
            subprocess.Popen(
                argv,
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=lambda: die_with_parent(signal.SIGKILL),
            )
        )

    if "busy" in parts:
        for _ in range(busy):
            spawn([PY, "-c", "while True: pass"])
    if "run" in parts:
        spawn(
            [
                "sh",
                "-c",
                f"while :; do {PY} -m arena run configs/quick.yaml --set matches=400 "
                f"--workers 2 --out {folder}/other --new --no-live >/dev/null 2>&1; done",
            ]
        )
    if "tests" in parts:
        spawn(
            [
                "sh",
                "-c",
                f"while :; do {PY} -m pytest -q -p no:cacheprovider -m sandbox "
                f"tests/test_cgroups.py >/dev/null 2>&1; done",
            ]
        )
    if "cold" in parts and os.geteuid() == 0:
        files = " ".join(big_files())
        if files:
            spawn(["sh", "-c", f"while :; do echo 1 > /proc/sys/vm/drop_caches; cat {files} > /dev/null; done"])
    return procs


def stop_mix(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)  # its own session: the loop and what it started
        except ProcessLookupError:
            pass
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def play(cfg: Path, out: Path) -> tuple[float, dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [PY, "-m", "arena", "run", str(cfg), "--out", str(out), "--no-live"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"arena run failed:\n{proc.stderr[-3000:]}")
    return wall, json.loads((out / "run.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--budget-ms", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mix", default=",".join(MIXES), help=f"parts of the load mix, of {', '.join(MIXES)}")
    ap.add_argument("--busy", type=int, default=6, help="busy loops in the mix")
    ap.add_argument("--seed", type=int, default=33)
    args = ap.parse_args()
    parts = {p for p in args.mix.split(",") if p}
    if parts - set(MIXES):
        raise SystemExit(f"--mix: unknown parts {sorted(parts - set(MIXES))}; choose from {', '.join(MIXES)}")
    if "cold" in parts and os.geteuid() != 0:
        print("note: the cold-file reader needs root (drop_caches); left out")
    for sig in (signal.SIGTERM, signal.SIGHUP):  # stopped: the mix is stopped too (finally, below)
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    folder = Path(tempfile.mkdtemp(prefix="host-stalls-"))
    try:
        cfg = config(folder, args.matches, args.budget_ms, args.workers, args.seed)
        loads: list[float] = []
        done = threading.Event()

        def sample() -> None:
            while not done.wait(1.0):
                loads.append(float(Path("/proc/loadavg").read_text().split()[0]))

        mix = start_mix(parts, args.busy, folder)
        sampler = threading.Thread(target=sample, daemon=True)
        try:
            time.sleep(3 if mix else 0)  # the mix up to speed
            sampler.start()
            loaded_wall, loaded_meta = play(cfg, folder / "loaded")
        finally:
            done.set()
            stop_mix(mix)
        quiet_wall, quiet_meta = play(cfg, folder / "quiet")

        loaded = {r.match: r for r in read_records(folder / "loaded").records}
        quiet = {r.match: r for r in read_records(folder / "quiet").records}
        charged: Counter[str] = Counter()
        admin: Counter[str] = Counter()
        examples: list[str] = []
        for recs, into in ((loaded.values(), "loaded"), (quiet.values(), "quiet")):
            for r in recs:
                for f in r.faults:
                    (admin if f.kind == "arena" else charged)[f"{into} {r.bots[f.seat]} {f.kind}"] += 1
                    if f.kind != "arena" and len(examples) < 5:
                        examples.append(f"  {into} {r.match}: {f.detail}")
        differ = sorted(
            m
            for m in loaded.keys() | quiet.keys()
            if m not in loaded or m not in quiet or canonical(loaded[m]) != canonical(quiet[m])
        )
        print(
            f"$ python benchmarks/host_stalls.py --matches {args.matches} --budget-ms {args.budget_ms} "
            f"--workers {args.workers} --mix {','.join(sorted(parts))} --busy {args.busy} --seed {args.seed}"
        )
        if loads:
            print(
                f"load average (1 min) during the loaded run: mean {statistics.mean(loads):.1f}, "
                f"max {max(loads):.1f} on {os.cpu_count()} cores"
            )
        print(
            f"loaded run: {len(loaded)} matches in {loaded_wall:.0f} s; quiet run: {len(quiet)} in {quiet_wall:.0f} s"
        )
        for name, meta in (("loaded", loaded_meta), ("quiet", quiet_meta)):
            rep = meta.get("replays") or {}
            print(
                f"{name}: {rep.get('matches', 0)} matches replayed after a host stall, by bot {rep.get('by_bot', {})}"
            )
            for note in list(rep.get("first", []))[:5]:
                print(f"  {note['match']} {note['bot']}: {note['detail'][:400]}")
        print(f"faults charged to the (honest) bots: {sum(charged.values())} {dict(charged)}")
        print("\n".join(examples))
        print(f"arena faults left in the records (past the replay caps): {sum(admin.values())} {dict(admin)}")
        print(
            f"records identical to the quiet run's: {'yes' if not differ else 'NO'} "
            f"({len(differ)} of {len(loaded | quiet)} differ{': ' + ', '.join(differ[:5]) if differ else ''})"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
