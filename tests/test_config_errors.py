"""Config errors name where the value came from (the file and key, or the
``--set`` flag), suggest the key or bot meant, and show values as YAML, not
Python reprs."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.running.config import load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


BASE = "name: c\nbots: [random, cautious]\nplayers: 2\nmatches: 4\nvariants:\n  classic: {preset: classic}\n"


def message(path: Path, *sets: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, sets)
    return str(info.value)


def test_a_bad_value_from_set_names_the_flag_not_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, BASE)
    assert message(path, "matches=-5") == "--set 'matches=-5': matches: -5 is not allowed; use an integer >= 1"
    # The same value in the file names the file.
    assert (
        message(write(tmp_path, BASE.replace("matches: 4", "matches: -5")))
        == f"{path}: matches: -5 is not allowed; use an integer >= 1"
    )


def test_a_dotted_set_names_the_flag(tmp_path: Path) -> None:
    msg = message(write(tmp_path, BASE), "time.budget_mss=5")
    assert msg.startswith("--set 'time.budget_mss=5': time.budget_mss: unknown key (did you mean budget_ms?)")


def test_misspelt_keys_get_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("matches:", "matchs:"))
    assert message(path).startswith(f"{path}: matchs: unknown key (did you mean matches?); the keys are name,")
    assert "'playres' is not a config key (did you mean players?)" in message(write(tmp_path, BASE), "playres=3")
    path = write(tmp_path, BASE.replace("{preset: classic}", "{preset: classic, dicee: 3}"))
    assert "variants.classic.dicee: unknown rule key (did you mean dice?)" in message(path)
    assert "format: 'leage' is not allowed (did you mean league?)" in message(write(tmp_path, BASE), "format=leage")


def test_misspelt_bot_names_get_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("cautious", "cautous"))
    assert message(path) == (
        f"{path}: bots: 'cautous' is neither a file nor a bot in ./bots or the built-in bots (did you mean cautious?)"
    )
    assert message(write(tmp_path, BASE), "bots=[randm, cautious]").startswith(
        "--set 'bots=[randm, cautious]': bots: 'randm' is neither"
    )


def test_no_python_reprs_in_messages(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "format: gauntlet\n")
    msg = message(path)
    assert "None" not in msg
    assert msg == (
        f"{path}: gauntlet: format gauntlet needs the bot that plays every table: add "
        f"`gauntlet: BOT`, one of random, cautious"
    )
    assert (
        message(write(tmp_path, BASE), "matches=")
        == "--set 'matches=': matches: an empty value is not allowed; use an integer >= 1"
    )
    assert "true is not allowed" in message(write(tmp_path, BASE), "matches=true")
