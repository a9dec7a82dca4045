"""A league that grows: a bot dropped into bots/ and the same command plays
only its matches, the old records byte-identical; a changed bot enters under a
new label, a removed one keeps its records; the grown league's ratings agree
with a league that had every bot from the start."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.analysis.commands import rate_run
from arena.running.store import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]


def league(folder: Path, bots: list[str], matches: int) -> Path:
    (folder / "bots").mkdir(parents=True, exist_ok=True)
    for name in bots:
        shutil.copy(ROOT / "bots" / f"{name}.py", folder / "bots" / f"{name}.py")
    cfg = folder / "league.yaml"
    cfg.write_text(
        json.dumps({"name": "lg", "seed": 11, "bots": ["bots/*.py"], "players": [3], "matches": matches, "workers": 2})
    )
    return cfg


def arena(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=folder, capture_output=True, text=True, timeout=900)


def test_a_new_bot_plays_only_its_matches_and_the_old_records_stay_byte_identical(tmp_path: Path) -> None:
    cfg = league(tmp_path, ["random", "probabilistic", "cautious"], 18)
    first = arena(tmp_path, "run", str(cfg))
    assert first.returncode == 0, first.stderr
    games = tmp_path / "results" / "lg" / "games.jsonl"
    before = games.read_bytes()
    old_ids = {r.match for r in read_records(games.parent).records}
    shutil.copy(ROOT / "bots" / "bluffer.py", tmp_path / "bots" / "bluffer.py")
    second = arena(tmp_path, "run", str(cfg))
    assert second.returncode == 0, second.stderr
    assert "league: adding bluffer" in second.stderr
    after = games.read_bytes()
    assert after.startswith(before)  # nothing rewritten, nothing replayed
    new = [r for r in read_records(games.parent).records if r.match not in old_ids]
    assert new and all("bluffer" in r.bots for r in new)
    assert len(new) == 18  # as many tables as each bot of the first run sat at
    assert "bluffer" in second.stdout and "random" in second.stdout  # one table rates them all
    # Again: complete, said so, nothing played.
    third = arena(tmp_path, "run", str(cfg))
    assert "already complete" in third.stderr and games.read_bytes() == after

    # Files beside a bot are not the bot (a `cautious.yaml` config and a `cautious.out` log
    # re-entered it as cautious@6465f8ab): nothing changes, nothing is played.
    (tmp_path / "bots" / "cautious.out").write_text("the author's log\n")
    (tmp_path / "bots" / "cautious.yaml").write_text("threshold: 0.3\n")
    beside = arena(tmp_path, "run", str(cfg))
    assert "already complete" in beside.stderr and games.read_bytes() == after, beside.stderr
    (tmp_path / "bots" / "cautious.yaml").unlink()

    # A changed bot enters under LABEL@SHA8; its old version's records stay under its label, and the
    # message names the file that changed.
    (tmp_path / "bots" / "cautious.py").write_text((ROOT / "bots" / "cautious.py").read_text() + "\n# v2\n")
    changed = arena(tmp_path, "run", str(cfg))
    assert changed.returncode == 0, changed.stderr
    assert "league: cautious changed (cautious.py (changed))" in changed.stderr
    assert games.read_bytes().startswith(after)
    labels = {b for r in read_records(games.parent).records for b in r.bots}
    renamed = [x for x in labels if x.startswith("cautious@")]
    assert len(renamed) == 1 and "cautious" in labels
    # The same command again knows that version by its new label: nothing to play.
    again = arena(tmp_path, "run", str(cfg))
    assert "already complete" in again.stderr, again.stderr
    # A removed bot: its records are kept (and rated), its unplayed matches dropped; the user is told.
    (tmp_path / "bots" / "random.py").unlink()
    removed = arena(tmp_path, "run", str(cfg))
    assert removed.returncode == 0, removed.stderr
    assert "league: random is no longer in the config: its recorded matches are kept" in removed.stderr
    assert "random" in removed.stdout
    meta = json.loads((games.parent / "run.json").read_text())
    # Retired: random, and the first version of cautious (its records, its sha256).
    assert sorted(b["name"] for b in meta["retired"]) == ["cautious", "random"]
    assert {b["sha256"] for b in meta["retired"] if b["name"] == "cautious"} != {
        b["sha256"] for b in meta["bots"] if b["name"].startswith("cautious@")
    }


@pytest.mark.slow
def test_a_grown_league_rates_like_one_with_every_bot_from_the_start(tmp_path: Path) -> None:
    grown, full = tmp_path / "grown", tmp_path / "full"
    cfg = league(grown, ["random", "probabilistic", "cautious"], 90)
    assert arena(grown, "run", str(cfg)).returncode == 0
    shutil.copy(ROOT / "bots" / "bluffer.py", grown / "bots" / "bluffer.py")
    assert arena(grown, "run", str(cfg)).returncode == 0
    cfg_full = league(full, ["random", "probabilistic", "cautious", "bluffer"], 120)
    assert arena(full, "run", str(cfg_full)).returncode == 0
    a = rate_run(grown / "results" / "lg", write=False).table
    b = rate_run(full / "results" / "lg", write=False).table
    a, b = (t[t["variant"] == "all"].set_index("bot") for t in (a, b))
    for bot in ["random", "probabilistic", "cautious", "bluffer"]:
        # Two independent estimates of one rating: their 95% intervals overlap.
        # (Records are a pure function of config and seed: this is no flake.)
        assert max(a.loc[bot, "elo_low"], b.loc[bot, "elo_low"]) <= min(
            a.loc[bot, "elo_high"], b.loc[bot, "elo_high"]
        ), (bot, a, b)


def test_a_format_that_does_not_grow_names_the_files_of_a_changed_bot(tmp_path: Path) -> None:
    cfg = league(tmp_path, ["random", "probabilistic", "cautious"], 4)
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "format": "round-robin"}))
    (tmp_path / "bots" / "random").mkdir()
    (tmp_path / "bots" / "random" / "table.txt").write_text("1")
    assert arena(tmp_path, "run", str(cfg)).returncode == 0
    (tmp_path / "bots" / "random" / "table.txt").write_text("2")
    refused = arena(tmp_path, "run", str(cfg))
    assert refused.returncode != 0
    assert "bots: random: random/table.txt (changed)" in refused.stderr, refused.stderr
