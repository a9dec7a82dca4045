"""How long the analysis of a finished run takes, on run folders shaped like the default configs.

    python benchmarks/analysis.py [--data DIR] [--trials 1] [--write-docs]

Two run folders are built once (kept in ``--data``, default
``/tmp/arena-bench-analysis``, and reused while the configs are unchanged),
with the bots, table sizes, variants and match counts of configs/league.yaml
(3,600 matches) and configs/variants.yaml (2,800 matches). The matches are
played by the real rules engine with simple in-process policies standing in
for the bots (tests/synth_records.py): the analysis sees the same records a
run writes, without an hour of sandboxed play.

Then, per folder, the five targets of fast analysis:

- end of run: what ``arena run`` does after its last match (close the run
  folder, which writes matches.parquet and the analysis tables from the rows
  the workers sent with each record, and print the Elo table from them):
  target 2 s;
- ``arena ratings RUN``: target 3 s;  ``arena stats RUN``: target 5 s;
  ``arena report RUN``: target 10 s (each the command as a user types it,
  interpreter start included);
- progress: whether a command that took over a second printed progress.

Each is measured beside a baseline taken just before it in the same trial
(parsing games.jsonl with ``json.loads``, line by line: the least any reader
of the records could do), so the ratio says how the command compares with
that whatever the machine's load. ``--write-docs`` puts the table in
docs/performance.md with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import synth_records as S  # noqa: E402

from arena.engine import rules as R  # noqa: E402
from arena.engine.records import MatchRecord  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _markdown import replace_section  # noqa: E402

# The stand-in policies for the league's bots (names as in bots/).
POLICY_OF = {
    "random": "random",
    "bluffer": "reckless",
    "calza": "cautious",
    "cautious": "cautious",
    "probabilistic": "sharp",
    "node_probabilistic": "sharp",
    "equilibrium": "sharp",
}
TARGETS = {"end of run": 2.0, "arena ratings": 3.0, "arena stats": 5.0, "arena report": 10.0}


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "configs" / f"{name}.yaml").read_text())
    return data


def build(folder: Path, name: str, seed: int = 15) -> Path:
    """A run folder shaped like configs/NAME.yaml (cached: rebuilt only if the config changed)."""
    cfg = _config(name)
    stamp = json.dumps({"config": cfg, "policies": POLICY_OF, "seed": seed}, sort_keys=True)
    if (folder / "stamp.json").is_file() and (folder / "stamp.json").read_text() == stamp:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(seed)
    bots = sorted(POLICY_OF)
    records, resolved = [], {}
    for variant, spec in cfg["variants"].items():
        spec = dict(spec)
        rules = R.Rules.preset(spec.pop("preset", "classic"), spec)
        resolved[variant] = rules.to_dict()
        for _ in range(int(cfg["matches"])):
            k = rng.choice(cfg["players"])
            table = rng.sample(bots, k)
            fault = (rng.randrange(k), 3, "timeout") if rng.random() < 0.01 else None
            records.append(
                S.play(f"m-{len(records):06d}", variant, rules, table, rng.randrange(2**63), fault, policy_of=POLICY_OF)
            )
        print(f"  {name}: {variant}: {len(records)} matches", file=sys.stderr, flush=True)
    S.write_run(folder, records, resolved, name=name)
    (folder / "stamp.json").write_text(stamp)
    return folder


def _baseline(folder: Path) -> float:
    t = time.perf_counter()
    with open(folder / "games.jsonl", "rb") as fh:
        for line in fh:
            json.loads(line)
    return time.perf_counter() - t


def _end_of_run(folder: Path, records: list[MatchRecord]) -> tuple[float, float, bool]:
    from arena.analysis.commands import end_of_run_text
    from arena.running.store import write_matches_parquet, write_tables
    from arena.running.tablefiles import record_tables
    from arena.running.tables import parquet_rows

    # What each worker sends with its record's line, made as it plays (not timed: the store is handed it).
    sent = [(parquet_rows([rec]), record_tables(rec)) for rec in records]
    t, c = time.perf_counter(), time.process_time()
    # What RunStore.close does with it, then the Elo table `arena run` prints.
    rows = sorted((row for got, _ in sent for row in got), key=lambda row: str(row[0]))
    write_matches_parquet(folder, rows)
    write_tables(folder, [part for _, part in sent if part is not None])
    end_of_run_text(folder)
    return time.perf_counter() - t, time.process_time() - c, False


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _cli(args: list[str]) -> tuple[float, float, bool]:
    t, c = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "arena.apps.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    seconds, cpu = time.perf_counter() - t, _children_cpu() - c
    if done.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed:\n{done.stderr}")
    return seconds, cpu, "%" in done.stderr


def measure(folder: Path, trials: int, out: Path) -> list[tuple[str, float, float, float, bool]]:
    from arena.running.store import read_records

    records = read_records(folder).records
    rows: dict[str, list[tuple[float, float, float, bool]]] = {k: [] for k in TARGETS}
    for _ in range(trials):
        for target in TARGETS:
            base = _baseline(folder)
            if target == "end of run":
                seconds, cpu, shown = _end_of_run(folder, records)
            elif target == "arena report":
                seconds, cpu, shown = _cli(["report", str(folder), "-o", str(out / f"{folder.name}.html")])
            else:
                seconds, cpu, shown = _cli([target.split()[1], str(folder), "--no-write"])
            rows[target].append((seconds, cpu, base, shown))
    return [
        (
            t,
            statistics.median(x[0] for x in r),
            statistics.median(x[1] for x in r),
            statistics.median(x[2] for x in r),
            r[-1][3],
        )
        for t, r in rows.items()
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("/tmp/arena-bench-analysis"))
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--write-docs", action="store_true", help="Write the table into docs/performance.md.")
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    lines = [
        "| run folder | step | wall s | CPU s | target s | baseline s | wall / baseline | progress shown |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    load_before = os.getloadavg()
    for name in ("league", "variants"):
        folder = build(args.data / name, name)
        matches = sum(1 for _ in open(folder / "games.jsonl", "rb"))
        for target, seconds, cpu, base, shown in measure(folder, args.trials, args.data):
            ok = "met" if seconds <= TARGETS[target] else "missed"
            progress = (
                "n/a (under 1 s)"
                if seconds < 1
                else "yes"
                if shown
                else "n/a (in-process; `arena run` shows it past 1 s)"
                if target == "end of run"
                else "no"
            )
            lines.append(
                f"| {name} ({matches:,} matches) | {target} | {seconds:.2f} | {cpu:.2f} | "
                f"{TARGETS[target]:.0f} ({ok}) | {base:.2f} | {seconds / base:.1f} | {progress} |"
            )
    load_after = os.getloadavg()
    load = f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} cores"
    table = "\n".join(lines)
    print(table)
    print(load)
    if args.write_docs:
        text = (
            "## Analysis of a finished run\n\n"
            "`python benchmarks/analysis.py --write-docs`: run folders shaped like configs/league.yaml and "
            "configs/variants.yaml (matches played by the rules engine with stand-in policies), each step "
            "as a user runs it. Baseline: parsing games.jsonl with `json.loads`, measured just before each "
            "step; the ratio is the step's wall time over it. CPU s is the step's own CPU time (user + "
            "system), which a loaded machine inflates less than wall time. Median of "
            f"{args.trials} trial(s); {load}. Figures taken on a loaded machine are indicative only.\n\n"
            + table
            + "\n\n"
            "Where the time goes: every command is a new interpreter importing numpy, pandas, pyarrow and "
            "scipy.optimize (the rating fit; scipy.stats is no longer imported: the few quantiles it gave "
            "come from the same scipy.special functions), about a second of CPU. `arena ratings` and the "
            "end of a run read only matches.parquet and fit each variant once, the bootstrap resamples in "
            "batches whose gradient runs on rankings grouped by length. The end of a run also writes "
            "tables/ (every match, seat, round, bid and fault), from the rows each worker derived from its "
            "record while it played: the store only sorts, concatenates and writes them. `arena stats` "
            "and `arena report` read those tables (a few hundredths of a second) instead of parsing every "
            "record and tabulating every bid in Python, and a variant's bootstrap intervals are one matrix "
            "product; the report's figures are then the largest part of what is left. Where the wall time "
            "misses a target while the CPU time meets it, the machine's load is the difference: the "
            "commands run on one core (but for numpy's matrix products).\n"
        )
        replace_section(ROOT / "docs" / "performance.md", "## Analysis of a finished run", text)


if __name__ == "__main__":
    main()
