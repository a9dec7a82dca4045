"""`arena export` writes what outside raters read, and an outside rater agrees
with ours: choix (a pip-installable Plackett-Luce fitter, the model of
docs/ratings.md) reads the `rankings` export of a real run, and each bot's
Elo from its fit lies within our 95% interval, and ours within the interval
of choix's own fits bootstrapped over the same matches."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.running.store import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    cfg = folder / "c.yaml"
    cfg.write_text(
        json.dumps(
            {
                "name": "x",
                "bots": ["random", "probabilistic", "cautious", "bluffer"],
                "players": 4,
                "matches": 120,
                "seed": 12345678901,
                "variants": {"classic": {"preset": "classic"}},
            }
        )
    )
    proc = arena("run", str(cfg), "--out", "run", "--no-live", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return folder / "run"


def test_the_three_formats_hold_every_match(run: Path) -> None:
    records = sorted(read_records(run).records, key=lambda r: r.match)
    rankings = [
        json.loads(line) for line in arena("export", str(run), "--format", "rankings", cwd=run).stdout.splitlines()
    ]
    assert [r["match"] for r in rankings] == [r.match for r in records]
    for line, rec in zip(rankings, records):
        assert line["ranking"] == [rec.bots[s] for s in sorted(range(len(rec.bots)), key=lambda s: rec.placements[s])]
    rows = list(csv.DictReader(io.StringIO(arena("export", str(run), "--format", "pairwise", cwd=run).stdout)))
    assert len(rows) == 6 * len(records)  # every two of four bots
    first = rankings[0]["ranking"]
    assert (rows[0]["winner"], rows[0]["loser"]) == (first[0], first[1])
    pgn = arena("export", str(run), "--format", "pgn", "-o", str(run.parent / "games.pgn"), cwd=run)
    assert pgn.returncode == 0 and pgn.stderr.strip() == str(run.parent / "games.pgn")
    text = (run.parent / "games.pgn").read_text()
    assert text.count("[Result ") == len(rows)
    # The colours say nothing of who won: both results occur.
    assert text.count('[Result "1-0"]') and text.count('[Result "0-1"]')


def test_choix_reads_the_rankings_and_agrees_with_our_ratings(run: Path) -> None:
    choix = pytest.importorskip("choix")  # the `test` extra installs it
    lines = arena("export", str(run), "--format", "rankings", cwd=run).stdout.splitlines()
    rankings = [json.loads(line)["ranking"] for line in lines]
    bots = sorted({b for r in rankings for b in r})
    index = {b: i for i, b in enumerate(bots)}
    data = [tuple(index[b] for b in r) for r in rankings]
    per_nat = 400 / math.log(10)

    def elo(sample: list[tuple[int, ...]]) -> np.ndarray:
        theta = choix.ilsr_rankings(len(bots), sample, alpha=1e-4, max_iter=1000)
        e = theta * per_nat
        return 1500 + e - e.mean()

    theirs = elo(data)
    rng = np.random.default_rng(0)
    boot = np.array([elo([data[i] for i in rng.integers(0, len(data), len(data))]) for _ in range(200)])
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    ours = {
        r["bot"]: r
        for r in json.loads(arena("ratings", str(run), "--json", "--no-write", cwd=run).stdout)["ratings"]
        if r["variant"] == "all"
    }
    for b, i in index.items():
        assert ours[b]["elo_low"] <= theirs[i] <= ours[b]["elo_high"], (b, theirs[i], ours[b])
        assert low[i] <= ours[b]["elo"] <= high[i], (b, ours[b]["elo"], low[i], high[i])
    # The same order of strength, and the spread is real (not all bots at 1500).
    assert sorted(bots, key=lambda b: -ours[b]["elo"]) == sorted(bots, key=lambda b: -theirs[index[b]])
    assert theirs.max() - theirs.min() > 100


def test_a_folder_that_is_not_a_run_is_one_error(tmp_path: Path) -> None:
    proc = arena("export", str(tmp_path), "--format", "pgn", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == (
        f"Error: {tmp_path}: not a run folder (no run.json or games.jsonl); name the folder "
        f"`arena run` wrote, e.g. results/league\n"
    )


# PGN as Ordo and BayesElo read it (docs/ratings.md, Exporting results).

STR = ("Event", "Site", "Date", "Round", "White", "Black", "Result")


def read_pgn(text: str) -> list[dict[str, str]]:
    """A strict reader of the PGN export format as those tools rely on it: every
    game is the Seven Tag Roster in its order, each tag alone on its line, an
    empty line, and the game termination equal to the Result tag."""
    games = []
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        tags = {}
        for name in STR:
            line = lines[i]
            assert line.startswith(f'[{name} "') and line.endswith('"]'), (name, line)
            tags[name] = line[len(name) + 3 : -2]
            i += 1
        assert lines[i] == "" and lines[i + 1] == tags["Result"], lines[i : i + 2]
        assert tags["Result"] in ("1-0", "0-1") and tags["Date"] == "????.??.??"
        games.append(tags)
        i += 3  # the empty line between games (or the text's final newline)
    assert i >= len(lines) - 1, "text after the last game"
    return games


@pytest.fixture(scope="module")
def heads_up(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export-hu")
    cfg = folder / "hu.yaml"
    cfg.write_text(
        json.dumps(
            {
                "name": "hu",
                "bots": ["probabilistic", "cautious", "bluffer", "calza"],
                "players": 2,
                "matches": 600,
                "seed": 424242,
                "variants": {"classic": {"preset": "classic"}},
            }
        )
    )
    proc = arena("run", str(cfg), "--out", "run", "--no-live", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return folder / "run"


def test_pgn_is_the_seven_tag_roster_with_seat_colours(heads_up: Path) -> None:
    records = {r.match: r for r in read_records(heads_up).records}
    games = read_pgn(arena("export", str(heads_up), "--format", "pgn", cwd=heads_up).stdout)
    assert len(games) == len(records) == 600
    for g in games:
        rec = records[g["Event"]]
        assert (g["White"], g["Black"]) == rec.bots  # White is the bot in seat 0
        winner = rec.bots[rec.placements.index(1)]
        assert g["Result"] == ("1-0" if winner == g["White"] else "0-1")
        assert g["Round"] == rec.variant


def _ordo() -> str | None:
    import shutil

    return os.environ.get("ORDO") or shutil.which("ordo")


@pytest.mark.skipif(_ordo() is None, reason="no ordo binary on the PATH or in $ORDO (github.com/michiguel/Ordo)")
def test_ordo_reads_the_pgn_and_agrees_with_our_ratings(heads_up: Path, tmp_path: Path) -> None:
    pgn = tmp_path / "hu.pgn"
    assert arena("export", str(heads_up), "--format", "pgn", "-o", str(pgn), cwd=tmp_path).returncode == 0
    out = tmp_path / "ordo.csv"
    ordo = subprocess.run(
        [str(_ordo()), "-q", "-p", str(pgn), "-a", "1500", "-z", "200.24", "-s", "300", "-c", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ordo.returncode == 0, ordo.stderr
    theirs = {row["PLAYER"]: row for row in csv.DictReader(io.StringIO(out.read_text()))}
    ours = {
        r["bot"]: r
        for r in json.loads(arena("ratings", str(heads_up), "--json", "--no-write", cwd=heads_up).stdout)["ratings"]
        if r["variant"] == "all"
    }
    assert set(theirs) == set(ours)
    for bot, row in theirs.items():
        rating, error = float(row["RATING"]), float(row["ERROR"])
        assert abs(rating - ours[bot]["elo"]) <= error, (bot, rating, error, ours[bot]["elo"])
        assert int(row["PLAYED"]) == ours[bot]["matches"]
