"""The worker launches a table's bots together, and the run writes matches.parquet from memory.

A worker that needs several bot processes for a match launches them all before
any handshake, so they boot at the same time. Hostile or broken bots among them
(one that takes 30 s to import, one that exits as soon as a match starts, one
that forks until the kernel refuses, while being imported) must cost the match
no more than before: each is recorded with its fault, the others play on,
nothing is left running. matches.parquet, made at the end of a run from the
rows the workers sent with each record (and the rows of the records found on
resume), must equal the one made by reading the folder back.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import pyarrow.parquet as pq

from arena.botfile.spec import load_bot
from arena.engine.records import MatchRecord
from arena.engine.rules import Rules
from arena.match.process import TimeControl
from arena.running.config import load_config
from arena.running.observe import Finished
from arena.running.runner import run
from arena.running.schedule import build_schedule
from arena.running.store import iter_records, write_matches_parquet
from arena.running.worker import Worker
from arena.sandbox import SandboxLimits

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"


def test_a_table_with_broken_bots_is_launched_together_and_recorded(tmp_path: Path) -> None:
    names = ["steady.py", "slow_start.py", "quitter.yaml", "import_bomb.py", "steady.py"]
    entrants = [(f"{n.split('.')[0]}{i}", load_bot(BOTS / n)) for i, n in enumerate(names)]
    # hello_ms 3 s: slow_start (30 s) and import_bomb (never ready) time out on start.
    clock = TimeControl(budget_ms=500, wall_factor=4.0, hello_ms=3000, grace_ms=200)
    worker = Worker(entrants, SandboxLimits(memory_mb=256), clock)
    specs = build_schedule(
        seed=5,
        n_entrants=5,
        sizes=(5,),
        matches=2,
        fmt="round-robin",
        seating="rotate",
        variants={"classic": Rules.preset("classic").to_dict()},
    )
    try:
        for spec in specs[:2]:
            res = worker.play(spec)
            assert "error" not in res, res.get("error")
            rec = MatchRecord.from_json(res["line"])
            faulted = {rec.bots[f.seat] for f in rec.faults}
            # Every broken bot faulted, the steady ones did not.
            assert {"slow_start1", "quitter2", "import_bomb3"} <= faulted
            assert not faulted & {"steady0", "steady4"}
            assert res["rows"] and {row[0] for row in res["rows"]} == {spec.match}
            # What the run's observer is handed, made from the record in the worker's memory:
            # what the line says, faults and all.
            # (Less the replays a loaded machine may have caused: not in the line.)
            seen = dataclasses.replace(res["finished"], replays=())
            assert seen == Finished.from_line(res["line"]) and res["finished"].faults
        # The steady bots' processes were kept; the broken ones were not.
        live = {worker.labels[key[0]] for key, proc in worker.procs.items() if proc.alive}
        assert live == {"steady0", "steady4"}
    finally:
        worker.close()
    assert not worker.procs and not worker._launched  # noqa: SLF001 - nothing left launched


def test_matches_parquet_from_memory_equals_the_folder_read_back(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    out = tmp_path / "run"
    cfg.write_text(
        json.dumps(
            {
                "name": "pq",
                "seed": 11,
                "players": [3, 4],
                "workers": 2,
                "matches": 6,
                "bots": ["random", "probabilistic", "cautious", "bluffer"],
                "out": str(out),
                "variants": {"classic": {"preset": "classic"}, "two": {"dice": 2}},
            }
        )
    )

    def stop_early(done: int, total: int, elapsed: float) -> None:
        if done >= 5:
            raise KeyboardInterrupt

    first = run(load_config(cfg), progress=stop_early)
    assert first.status == "interrupted" and 5 <= first.played < 12
    # The resume: the records found on disk and the new ones, together.
    second = run(load_config(cfg))
    assert second.status == "complete" and second.skipped == first.played and second.played > 0
    from_memory = pq.read_table(out / "matches.parquet")
    write_matches_parquet(out)  # the rows made by reading the records back from games.jsonl
    read_back = pq.read_table(out / "matches.parquet")
    assert from_memory.num_rows == sum(len(r.bots) for r in iter_records(out))
    assert from_memory.equals(read_back)


def test_a_bot_that_spins_when_closed_costs_the_others_nothing_at_the_end(tmp_path: Path) -> None:
    """A worker's bots are released together at the end of a run, then closed
    one by one: the close_spinner (which spins on its last match_end, read only
    then) is killed after its grace, and the honest bots on the same core still
    write their last words and exit, filed under their last match."""
    names = ["close_spinner.py", "match_logger.py", "match_logger.py"]
    entrants = [(f"{n.split('.')[0]}{i}", load_bot(BOTS / n)) for i, n in enumerate(names)]
    clock = TimeControl(budget_ms=500, hello_ms=10_000, grace_ms=300)
    worker = Worker(entrants, SandboxLimits(memory_mb=256), clock)
    spec = build_schedule(
        seed=9,
        n_entrants=3,
        sizes=(3,),
        matches=1,
        fmt="round-robin",
        seating="rotate",
        variants={"classic": Rules.preset("classic").to_dict()},
    )[0]
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})  # the worker and its bots on one core, as a local worker runs
    try:
        res = worker.play(spec)
        assert "error" not in res, res.get("error")
        assert not MatchRecord.from_json(res["line"]).faults
        pids = [proc.pid for proc in worker.procs.values()]
    finally:
        t0 = time.monotonic()
        drained = worker.drain()
        took = time.monotonic() - t0
        os.sched_setaffinity(0, cores)
    last = {label: data.decode() for label, _match, _note, data, _lost in drained}
    for label in ("match_logger1", "match_logger2"):
        assert f"end {spec.match} after" in last.get(label, ""), last
    assert took < 3 * clock.grace_ms / 1000 + 2.0  # the spinner's grace once, not the others' waits on top
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
