"""A bot's declaration of what it can play: parsing, errors, matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.botfile.supports import Supports
from arena.engine.rules import Rules
from arena.errors import ConfigError


def test_python_bot_declares_by_a_literal_read_without_importing(tmp_path: Path) -> None:
    bot = tmp_path / "two.py"
    # Importing this file would raise: the declaration must come from its syntax tree alone.
    bot.write_text(
        "raise SystemExit('imported on the host')\nSUPPORTS = {'players': [2], 'dice': '1-2', 'presets': ['neller']}\n"
    )
    sup = load_bot(bot).supports
    assert sup.players == {2} and sup.dice == {1, 2} and sup.presets == ("neller",)
    neller1 = Rules.preset("neller", {"dice": 1}).to_dict()
    assert sup.why_not(neller1, 2) is None
    assert "supports.players" in (sup.why_not(neller1, 3) or "")
    assert "supports.presets" in (sup.why_not(Rules.preset("classic", {"dice": 1}).to_dict(), 2) or "")
    assert "supports.dice" in (sup.why_not(Rules.preset("neller").to_dict(), 2) or "")


def test_preset_match_ignores_only_the_administrative_keys() -> None:
    sup = Supports.from_data({"presets": ["classic"]}, "x")
    assert (
        sup.why_not(
            Rules.preset("classic", {"dice": 3, "seating": "fixed", "first": "seat0", "max_rounds": 50}).to_dict(), 4
        )
        is None
    )
    assert sup.why_not(Rules.preset("classic", {"calza_reward": "bidder_loses"}).to_dict(), 4) is not None


def test_manifest_declaration_and_rule_values(tmp_path: Path) -> None:
    m = tmp_path / "nocalza.yaml"
    m.write_text("command: [/bin/true]\nsupports: {rules: {calza: false}, players: '2-3'}\n")
    sup = load_bot(m).supports
    assert sup.players == {2, 3}
    assert sup.why_not(Rules.preset("lizumo").to_dict(), 3) is None
    assert "supports.rules.calza" in (sup.why_not(Rules.preset("classic").to_dict(), 3) or "")
    assert sup.to_data() == {"players": [2, 3], "rules": {"calza": [False]}}


def test_no_declaration_means_anything(tmp_path: Path) -> None:
    bot = tmp_path / "any.py"
    bot.write_text("def act(turn):\n    return 'dudo'\n")
    sup = load_bot(bot).supports
    assert not sup.restricted and sup.why_not(Rules.preset("plain", {"dice": 10}).to_dict(), 10) is None


@pytest.mark.parametrize(
    "data,words",
    [
        ({"players": [1]}, "supports.players: 1 is not an integer from 2 to 10"),
        ({"players": "two"}, "supports.players"),
        ({"dice": [0]}, "supports.dice: 0"),
        ({"presets": ["chess"]}, "'chess' is not a preset"),
        ({"rules": {"aces": [True]}}, "'aces' is not a rule key"),
        ({"rules": {"ones": ["sideways"]}}, "supports.rules.ones"),
        ({"tables": [2]}, "unknown key 'tables'"),
        ([2], "expected a mapping"),
    ],
)
def test_bad_declarations_name_the_key(tmp_path: Path, data: object, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        Supports.from_data(data, f"bot manifest {str(tmp_path / 'b.yaml')!r}: supports")
    assert words in str(err.value) and "b.yaml" in str(err.value)


def test_a_python_declaration_that_is_not_a_literal_is_refused(tmp_path: Path) -> None:
    bot = tmp_path / "computed.py"
    bot.write_text("SUPPORTS = {'players': list(range(2, 4))}\n")
    with pytest.raises(ConfigError) as err:
        load_bot(bot)
    assert "SUPPORTS must be a literal" in str(err.value) and "line 1" in str(err.value)
