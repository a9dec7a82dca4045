"""Bots that declare what they can play are seated only where they can play.

The declarations come from real bot files in tests/bots/: ``two_seater.py``
(a ``SUPPORTS`` literal) and ``two_seater_sh.yaml`` (a manifest's
``supports:``), both of which crash on purpose if ever seated at a larger table.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.botfile.supports import Supports
from arena.engine.rules import Rules
from arena.errors import ConfigError
from arena.running.config import load_config
from arena.running.schedule import build_schedule, seat_plan
from arena.running.store import iter_records

ROOT = Path(__file__).resolve().parent.parent
TWO_PY = str(ROOT / "tests" / "bots" / "two_seater.py")
TWO_SH = str(ROOT / "tests" / "bots" / "two_seater_sh.yaml")
CLASSIC = Rules.preset("classic").to_dict()
LIZUMO = Rules.preset("lizumo").to_dict()


def write_config(folder: Path, **cfg: object) -> Path:
    data = {
        "name": "seating",
        "seed": 5,
        "matches": 30,
        "players": [2, 3, 4],
        "bots": [TWO_PY, TWO_SH, "random", "probabilistic", "cautious", "calza"],
    }
    data.update(cfg)
    path = folder / "c.yaml"
    path.write_text(json.dumps(data))
    return path


# --- the schedule, pure ---------------------------------------------------------


@pytest.mark.parametrize("fmt,hero", [("league", None), ("round-robin", None), ("gauntlet", 1)])
@pytest.mark.parametrize("seating", ["roll", "rotate"])
def test_without_declarations_the_schedule_is_exactly_the_old_one(fmt: str, hero: int | None, seating: str) -> None:
    variants = {"classic": CLASSIC, "lizumo": LIZUMO}
    args = dict(
        seed=3, n_entrants=6, sizes=(2, 3, 4), matches=60, fmt=fmt, seating=seating, variants=variants, gauntlet=hero
    )
    before = build_schedule(**args)  # type: ignore[arg-type]
    labels = [f"b{i}" for i in range(6)]
    plan = seat_plan(labels, [Supports()] * 6, (2, 3, 4), variants, fmt, hero)
    assert build_schedule(**args, seatable=plan) == before  # type: ignore[arg-type]
    # A declaration that allows every table of the run changes nothing either.
    wide = [Supports.from_data({"players": "2-4", "presets": ["classic", "lizumo"]}, "x")] * 6
    assert build_schedule(**args, seatable=seat_plan(labels, wide, (2, 3, 4), variants, fmt, hero)) == before  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt,hero", [("league", None), ("round-robin", None), ("gauntlet", 2)])
def test_a_two_player_bot_is_scheduled_only_at_two_player_tables(fmt: str, hero: int | None) -> None:
    labels = ["two", "other_two", "a", "b", "c", "d"]
    sups = [Supports.from_data({"players": [2]}, "x")] * 2 + [Supports()] * 4
    plan = seat_plan(labels, sups, (2, 3, 4), {"classic": CLASSIC}, fmt, hero)
    assert plan == {2: (0, 1, 2, 3, 4, 5), 3: (2, 3, 4, 5), 4: (2, 3, 4, 5)}
    specs = build_schedule(
        seed=1,
        n_entrants=6,
        sizes=(2, 3, 4),
        matches=90,
        fmt=fmt,
        seating="roll",
        variants={"classic": CLASSIC},
        gauntlet=hero,
        seatable=plan,
    )
    assert {len(s.entrants) for s in specs} == {2, 3, 4}
    for s in specs:
        if 0 in s.entrants or 1 in s.entrants:
            assert len(s.entrants) == 2, s
    assert any(0 in s.entrants for s in specs) and any(1 in s.entrants for s in specs)
    if hero is not None:
        assert all(hero in s.entrants for s in specs)


def test_the_run_config_is_refused_when_it_needs_an_unsupported_seat(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write_config(tmp_path, players=[3, 4]))
    text = str(err.value)
    assert "c.yaml" in text and "'two_seater'" in text and "table size 3" in text
    assert "supports.players" in text and "cannot be seated at any table" in text


def test_too_few_entrants_for_a_size_is_refused_naming_who_cannot(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write_config(tmp_path, players=[2, 3], bots=[TWO_PY, TWO_SH, "random", "random"]))
    text = str(err.value)
    assert "a table of 3 needs 3 entrants that support it, only 2 do ('random', 'random#2')" in text
    assert "'two_seater_sh': table size 3: it plays only 2 players (supports.players), not 3" in text


def test_a_gauntlet_hero_that_cannot_play_a_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write_config(tmp_path, format="gauntlet", gauntlet="two_seater"))
    assert "gauntlet: 'two_seater' sits at every table, but cannot play table size 3" in str(err.value)


def test_a_preset_restriction_under_two_variants(tmp_path: Path) -> None:
    bot = tmp_path / "classic_only.py"
    bot.write_text("SUPPORTS = {'presets': ['classic']}\n\ndef act(turn):\n    return 'dudo'\n")
    two = {"classic": {"preset": "classic"}, "lizumo": {"preset": "lizumo"}}
    with pytest.raises(ConfigError) as err:
        load_config(write_config(tmp_path, bots=[str(bot), "random", "cautious"], players=[3], variants=two))
    text = str(err.value)
    assert "'classic_only'" in text and "variant 'lizumo'" in text and "supports.presets" in text
    # The starting dice are not part of a preset: classic with 3 dice is still classic.
    ok = load_config(
        write_config(
            tmp_path,
            bots=[str(bot), "random", "cautious"],
            players=[3],
            variants={"classic": {}, "short": {"preset": "classic", "dice": 3}},
        )
    )
    assert [e.label for e in ok.entrants][0] == "classic_only"


# --- a real run ----------------------------------------------------------------------


def test_a_real_league_never_seats_the_two_player_bots_at_larger_tables(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(cfg), "--workers", "2", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    records = list(iter_records(out))
    assert len(records) == 30
    restricted = {"two_seater", "two_seater_sh"}
    for rec in records:
        if restricted & set(rec.bots):
            assert len(rec.bots) == 2, rec.match
        assert not rec.faults, rec.faults  # either bot crashes if seated at a larger table
    assert {len(rec.bots) for rec in records} == {2, 3, 4}
    played = Counter(b for rec in records for b in rec.bots)
    assert played["two_seater"] > 0 and played["two_seater_sh"] > 0
    meta = json.loads((out / "run.json").read_text())
    bots = {b["name"]: b for b in meta["bots"]}
    assert bots["two_seater"]["supports"] == {"players": [2]} and bots["two_seater"]["table_sizes"] == [2]
    assert bots["two_seater_sh"]["supports"] == {"players": [2]}
    # random declares only the protocol 2 variants (opt-in rule keys): every table size
    assert "players" not in bots["random"]["supports"] and bots["random"]["table_sizes"] == [2, 3, 4]


def test_arena_run_refuses_before_any_match(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, players=[4])
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(cfg), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert "'two_seater'" in r.stderr and "table size 4" in r.stderr and "supports.players" in r.stderr
    assert not out.exists()
