"""Each extension point reads one registry, and each derived rule is stated
once: the backends are the modules of ``arena/running/backends/`` (the
config's ``backend`` key, ``arena run --backend`` and the runner name the same
ones); the aces' wildness and the round keys live in the engine; the Elo
scale and the 95% z in ``arena/elo.py``."""

from __future__ import annotations

import math
import re
import statistics
import sys
from pathlib import Path

import click
import pytest

from arena import elo
from arena.apps.cli import main
from arena.engine.rules import KEYS, ROUND_KEYS, Rules, aces_count_as, aces_wild, count_matching
from arena.errors import ConfigError, RunError
from arena.running import backends
from arena.running.config import load_config

CONFIG = "name: c\nbots: [random, cautious]\nplayers: 2\nmatches: 2\nvariants:\n  classic: {preset: classic}\n"


def test_the_backends_are_the_modules_of_their_package() -> None:
    folder = Path(backends.__file__).parent
    modules = sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))
    assert backends.names() == tuple(modules)
    assert "local" in modules
    for name in backends.names():
        assert callable(backends.load(name).make), f"backend {name} has no make(config)"


def test_config_cli_and_runner_offer_the_same_backends(tmp_path: Path) -> None:
    run = main.commands["run"]
    option = next(p for p in run.params if p.name == "backend")
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == backends.names()
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + "backend: lokal\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, ())
    assert str(info.value) == (
        f"{path}: backend: 'lokal' is not allowed (did you mean local?); use one of {', '.join(backends.names())}"
    )


def test_an_unknown_backend_is_one_clear_error() -> None:
    with pytest.raises(RunError, match="no backend 'nope'; use one of local"):
        backends.load("nope")


def test_ray_missing_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner's old check wrapped only the import of the backend's module,
    # which does not import Ray: a missing Ray surfaced as a bare ModuleNotFoundError.
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + "backend: ray\n")
    config = load_config(path, ())
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(RunError, match=r"backend ray needs Ray: pip install '\.\[ray\]'"):
        backends.make(config)


# -- derived rules: the aces' wildness and the round keys, stated once -----------

ARENA = Path(__file__).resolve().parent.parent / "arena"


def sources() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ARENA.parent)), p.read_text()) for p in sorted(ARENA.rglob("*.py"))]


def test_aces_wildness_is_derived_in_the_engine_only() -> None:
    # wild_ones read and combined with palifico or the face anywhere else is a
    # second statement of the rule, which would drift from the engine's.
    pattern = re.compile(r"wild_ones\s+and\b|\band\s+[\w.]*wild_ones\b")
    again = [
        f"{name}:{n}"
        for name, text in sources()
        if name != "arena/engine/rules.py"
        for n, line in enumerate(text.splitlines(), 1)
        if pattern.search(line)
    ]
    assert again == [], "aces' wildness derived outside arena/engine/rules.py (use aces_wild / aces_count_as)"


@pytest.mark.parametrize("wild_ones", [True, False])
@pytest.mark.parametrize("palifico", [True, False])
def test_the_engine_counts_a_call_as_aces_count_as_says(wild_ones: bool, palifico: bool) -> None:
    rules = Rules.preset("classic", {"wild_ones": wild_ones})
    dice = ((1, 1, 2, 3, 4), (1, 2, 2, 6, 6))
    for face in range(1, 7):
        counts = aces_count_as(rules, palifico, face)
        assert counts == (face != 1 and wild_ones and not palifico)
        assert aces_wild(rules, palifico) == (wild_ones and not palifico)
        expected = sum(h.count(face) + (h.count(1) if counts else 0) for h in dice)
        assert count_matching(dice, face, counts) == expected


def test_one_list_of_round_keys() -> None:
    from arena.exploit import measure
    from arena.sdk import policy as sdk_policy
    from arena.solve import policy as solve_policy

    assert sdk_policy.ROUND_KEYS is ROUND_KEYS and solve_policy.ROUND_KEYS is ROUND_KEYS
    assert set(ROUND_KEYS) <= set(KEYS)
    described = measure._describe(Rules.preset("neller"))
    assert described == "two players, dice=5, wild_ones=true, ones=rank_high, open_on_ones=true, penalty=one"


def test_a_rule_keys_values_are_listed_in_the_engine_only() -> None:
    # arena check's fuzzer draws them from KEYS: a value added to a key is fuzzed too.
    listed = {k.name: "(" + ", ".join(f'"{c}"' for c in k.choices) + ")" for k in KEYS.values() if len(k.choices) >= 2}
    again = [
        f"{name}: {key}"
        for name, text in sources()
        if name != "arena/engine/rules.py"
        for key, lit in listed.items()
        if lit in text
    ]
    assert again == []


# -- the Elo scale and the 95% z, in arena/elo.py ------------------------------


def test_elo_and_score_convert_both_ways() -> None:
    assert elo.score_of_elo(0.0) == 0.5
    assert elo.score_of_elo(400.0) == pytest.approx(10 / 11)
    for d in (-600.0, -35.5, 0.0, 12.25, 800.0):
        assert elo.elo_of_score(elo.score_of_elo(d)) == pytest.approx(d, abs=1e-6)
    assert elo.elo_of_score(1.0) == pytest.approx(-400 * math.log10(1e-9), rel=1e-6)  # clamped, finite
    assert elo.Z95 == pytest.approx(statistics.NormalDist().inv_cdf(0.975), abs=1e-15)
    assert elo.ELO_PER_NAT == pytest.approx(400 / math.log(10))


def test_every_user_of_the_scale_uses_the_one_module() -> None:
    from arena.analysis import ratings
    from arena.running import sprt

    assert sprt.score_of_elo is elo.score_of_elo and sprt.elo_of_score is elo.elo_of_score
    assert ratings.ELO_PER_NAT is elo.ELO_PER_NAT
    literal = re.compile(r"\b1\.96\b|\b1\.9599|/\s*400\.0\b|\b400\.0\s*\*\s*math\.log10")
    again = [
        f"{name}:{n}"
        for name, text in sources()
        if name != "arena/elo.py"
        for n, line in enumerate(text.splitlines(), 1)
        if literal.search(line)
    ]
    assert again == [], "the Elo scale or the 95% z written outside arena/elo.py"
