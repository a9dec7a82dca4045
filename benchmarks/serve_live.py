"""What the live page of a run (``arena serve RUN_FOLDER``) costs to look at.

    python benchmarks/serve_live.py [--matches 100000] [--distinct 200] [--append 100]

A run folder of ``--matches`` records is written to a temporary folder:
``--distinct`` matches played by the rules engine (tests/synth_records.py's
in-process policies, four bots at tables of 2 to 4), repeated under new match
ids. Timed: the page's first look (every record read and counted, as on
opening the page of a large run), then a look after ``--append`` more
records were appended (what each two-second refresh costs while a run
plays), each the median of ``--trials`` fresh readers; the first look's CPU
time beside its wall time (on a machine shared with other work the wall
time is mostly waiting for a core).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import orjson  # noqa: E402
import synth_records  # noqa: E402

from arena.engine.rules import Rules  # noqa: E402
from arena.serve.live import RunWatch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=100_000)
    ap.add_argument("--distinct", type=int, default=200)
    ap.add_argument("--append", type=int, default=100)
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(3)
    rules = Rules.preset("classic")
    names = list(synth_records.POLICIES)
    base = [
        synth_records.play(f"d-{i}", "classic", rules, rng.sample(names, rng.randint(2, 4)), rng.randrange(2**31))
        for i in range(args.distinct)
    ]
    lines = []
    for i in range(args.matches + args.append):
        rec = dict(base[i % len(base)])
        rec["match"] = f"m-{i:07d}"
        lines.append(orjson.dumps(rec).decode() + "\n")  # compact, as the store writes records
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        synth_records.write_run(folder, [], {"classic": rules.to_dict()}, status="running")
        (folder / "games.jsonl").write_text("".join(lines[: args.matches]))
        first, later, cpu = [], [], []
        for _ in range(args.trials):
            (folder / "games.jsonl").write_text("".join(lines[: args.matches]))
            watch = RunWatch(folder)
            t, c = time.perf_counter(), time.process_time()
            state = watch.snapshot()
            first.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            assert state["recorded"] == args.matches
            with open(folder / "games.jsonl", "a") as fh:
                fh.write("".join(lines[args.matches :]))
            t = time.perf_counter()
            state = watch.snapshot()
            later.append(time.perf_counter() - t)
            assert state["recorded"] == args.matches + args.append
    print(
        f"$ python benchmarks/serve_live.py --matches {args.matches} --distinct {args.distinct} "
        f"--append {args.append} --trials {args.trials}"
    )
    print(
        f"first look at {args.matches} records: median {statistics.median(first):.2f} s "
        f"(of {', '.join(f'{x:.2f}' for x in first)}), CPU {statistics.median(cpu):.2f} s; "
        f"a look after {args.append} more: "
        f"median {1000 * statistics.median(later):.1f} ms"
    )


if __name__ == "__main__":
    main()
