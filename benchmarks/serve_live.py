"""What the live page of a run (``arena serve RUN_FOLDER``) and its match list cost to look at.

    python benchmarks/serve_live.py [--matches 100000] [--distinct 200] [--append 100]

A run folder of ``--matches`` records is written to a temporary folder:
``--distinct`` matches played by the rules engine (tests/synth_records.py's
in-process policies, four bots at tables of 2 to 4), repeated under new match
ids. Timed: the page's first look (every record read and counted, as on
opening the page of a large run; the Elo fit it starts runs in a thread of
its own and is timed apart, to when its table is ready), then a look after ``--append`` more
records were appended (what each two-second refresh costs while a run
plays), each the median of ``--trials`` fresh readers; the first look's CPU
time beside its wall time (on a machine shared with other work the wall
time is mostly waiting for a core).

Then the folder as a finished run leaves it, with its tables
(``tables/*.parquet``, made from the same records): timed, each with a
fresh reader, the match list's first page (what ``/api/matches`` answers
when the page opens: the tables read, no record parsed), a filtered page
(one bot's matches), and the record of the last match (what the viewer
opens), each the median of ``--trials``; and the list asked for over HTTP
from a server just started on the folder (what opening ``/matches`` waits for).
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

from arena.engine.records import MatchRecord  # noqa: E402
from arena.engine.rules import Rules  # noqa: E402
from arena.running.store import write_tables  # noqa: E402
from arena.running.tablefiles import RecordTables, arrow_tables, record_tables  # noqa: E402
from arena.serve.live import RunWatch  # noqa: E402


def _renamed(part: RecordTables, match: str) -> RecordTables:
    """A record's table rows under another match id (the same play)."""

    def rows(rs: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        return [(match, *r[1:]) for r in rs]

    return RecordTables(
        match, part.variant, (match, *part.matches[1:]), rows(part.seats), part.rounds, part.actions, rows(part.faults)
    )


def tables_timing(folder: Path, base: list[dict[str, object]], n: int, trials: int) -> str:
    """The match list of the finished run: its tables written, then timed."""
    parts = [record_tables(MatchRecord.from_json(orjson.dumps(rec))) for rec in base]
    assert all(p is not None for p in parts)
    write_tables(folder, arrow=arrow_tables([_renamed(parts[i % len(parts)], f"m-{i:07d}") for i in range(n)]))  # type: ignore[arg-type]
    bot = str(base[0]["bots"][0])  # type: ignore[index]
    first, filtered, record = [], [], []
    for _ in range(trials):
        watch = RunWatch(folder)
        t = time.perf_counter()
        page = watch.matches()
        first.append(time.perf_counter() - t)
        assert page["recorded"] == n and len(page["rows"]) == 50, page["recorded"]
        t = time.perf_counter()
        some = watch.matches(bot=bot, page=3)
        filtered.append(time.perf_counter() - t)
        assert some["total"] > 0
        t = time.perf_counter()
        rec = watch.record(f"m-{n - 1:07d}")
        record.append(time.perf_counter() - t)
        assert rec is not None
    http = [_over_http(folder) for _ in range(trials)]
    med = statistics.median
    return (
        f"the match list of {n} matches from the run's tables: first page median {med(first):.2f} s "
        f"(of {', '.join(f'{x:.2f}' for x in first)}); one bot's matches, page 4: "
        f"{1000 * med(filtered):.0f} ms; the last match's record: {1000 * med(record):.0f} ms; "
        f"through a fresh arena serve, GET /api/matches: median {med(http):.2f} s "
        f"(of {', '.join(f'{x:.2f}' for x in http)})"
    )


def _over_http(folder: Path) -> float:
    """Seconds from asking a freshly started server for the match list to its answer."""
    import socket
    import threading
    import urllib.request

    import uvicorn

    from arena.serve.app import ServeOptions, make_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    with tempfile.TemporaryDirectory() as out:
        app = make_app(ServeOptions(port=port, run=folder, out=Path(out) / "tables"))
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.01)
        try:
            t = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/matches", timeout=60) as resp:
                assert len(orjson.loads(resp.read())["rows"]) == 50
            return time.perf_counter() - t
        finally:
            server.should_exit = True
            thread.join(10)


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
        first, later, cpu, fits = [], [], [], []
        for _ in range(args.trials):
            (folder / "games.jsonl").write_text("".join(lines[: args.matches]))
            watch = RunWatch(folder)
            t, c = time.perf_counter(), time.thread_time()
            state = watch.snapshot()  # the page's answer; the Elo fit starts in a thread of its own
            first.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - c)
            assert state["recorded"] == args.matches
            while watch._fitting:  # the fit's own time, apart (the page shows it at its next look)
                time.sleep(0.01)
            fits.append(time.perf_counter() - t)
            with open(folder / "games.jsonl", "a") as fh:
                fh.write("".join(lines[args.matches :]))
            t = time.perf_counter()
            state = watch.snapshot()
            later.append(time.perf_counter() - t)
            assert state["recorded"] == args.matches + args.append
        (folder / "games.jsonl").write_text("".join(lines[: args.matches]))
        listed = tables_timing(folder, base, args.matches, args.trials)
    print(
        f"$ python benchmarks/serve_live.py --matches {args.matches} --distinct {args.distinct} "
        f"--append {args.append} --trials {args.trials}"
    )
    print(
        f"first look at {args.matches} records: median {statistics.median(first):.2f} s "
        f"(of {', '.join(f'{x:.2f}' for x in first)}), CPU {statistics.median(cpu):.2f} s; "
        f"its Elo table ready (in the background) after {statistics.median(fits):.2f} s; "
        f"a look after {args.append} more: "
        f"median {1000 * statistics.median(later):.1f} ms"
    )
    print(listed)


if __name__ == "__main__":
    main()
