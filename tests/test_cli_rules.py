"""``arena rules``: the key and preset listing, and a resolved rule set."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from arena.apps.cli import main
from arena.engine.rules import KEYS, PRESET_MEANINGS, PRESETS, Rules


@pytest.fixture
def run():  # type: ignore[no-untyped-def]
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(main, ["rules", *args], catch_exceptions=False)

    return invoke


def test_lists_every_key_and_preset(run) -> None:  # type: ignore[no-untyped-def]
    result = run()
    assert result.exit_code == 0
    lines = result.output.splitlines()
    for name, spec in KEYS.items():
        line = next(ln for ln in lines if ln.split() and ln.split()[0] == name)
        assert spec.allowed() in line and spec.meaning in line
        default = str(spec.default).lower() if isinstance(spec.default, bool) else str(spec.default)
        assert line.split()[1] == default
    for name, meaning in PRESET_MEANINGS.items():
        assert any(ln.split()[:1] == [name] and meaning in ln for ln in lines)
    assert set(PRESET_MEANINGS) == set(PRESETS)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_prints_the_resolved_preset(run, preset: str) -> None:  # type: ignore[no-untyped-def]
    result = run(preset)
    assert result.exit_code == 0
    printed = yaml.safe_load(result.output)
    assert list(printed) == list(KEYS)  # every key, in the rule book's order
    assert Rules.from_dict(printed) == Rules.preset(preset)


def test_overrides(run) -> None:  # type: ignore[no-untyped-def]
    result = run("lizumo", "--set", "dice=4", "--set", "calza=true", "--set", "penalty=difference")
    assert result.exit_code == 0
    printed = yaml.safe_load(result.output)
    assert Rules.from_dict(printed) == Rules.preset("lizumo", {"dice": 4, "calza": True, "penalty": "difference"})
    assert "calza: true" in result.output.splitlines()


@pytest.mark.parametrize(
    "args,words",
    [
        (["perudo"], ["'perudo'", "classic", "neller"]),
        (["classic", "--set", "dice=11"], ["dice", "11", "an integer from 1 to 10"]),
        (["classic", "--set", "dice=three"], ["dice", "three", "an integer from 1 to 10"]),
        (["classic", "--set", "wild_ones=maybe"], ["wild_ones", "maybe", "true or false"]),
        (["classic", "--set", "ones=high"], ["ones", "high", "convert, rank_high, plain"]),
        (["classic", "--set", "dices=3"], ["'dices'", "dice", "max_rounds"]),
        (["classic", "--set", "dice"], ["KEY=VALUE"]),
        (["--set", "dice=3"], ["PRESET"]),
    ],
)
def test_errors_are_one_clear_line(run, args: list[str], words: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = run(*args)
    assert result.exit_code != 0
    out = result.output.strip()
    assert out.startswith("Error:") and len(out.splitlines()) == 1, out
    for w in words:
        assert w in out, (w, out)
    assert "Traceback" not in out
