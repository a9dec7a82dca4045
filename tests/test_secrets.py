"""Nothing a bot receives derives a secret: tests/bots/derive.py runs the
project's own seed derivation on everything match_start gives it, in
``arena play``, ``arena check`` and ``arena run``, and must never reproduce
its own hand. Each case first shows the attack working where the key is
guessable, so the zeros mean something."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.apps.check import check_bot, run_check
from arena.apps.play import HumanPlayer, PlaySetup, play_human
from arena.botfile.spec import BotSpec, load_bot
from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Action, Rules
from arena.match.process import BotProcess, TimeControl
from arena.match.referee import play_match
from arena.protocol.loader import load_python_bot
from arena.sandbox import SandboxLimits
from arena.sdk import Turn

ROOT = Path(__file__).resolve().parent.parent
DERIVE = ROOT / "tests" / "bots" / "derive.py"
CLOCK = TimeControl(budget_ms=1000, wall_factor=4.0)
LIMITS = SandboxLimits(memory_mb=256)


def derive_spec(honest: bool = False) -> BotSpec:
    spec = load_bot(DERIVE)
    return dataclasses.replace(spec, env={**spec.env, "DERIVE_HONEST": "1"} if honest else spec.env)


class ScriptedHuman(HumanPlayer):
    """A 'human' at the keyboard who plays the probabilistic strategy."""

    def __init__(self) -> None:
        super().__init__(io.StringIO(), io.StringIO())
        self.brain = load_python_bot(ROOT / "bots" / "probabilistic.py")()

    def _read_action(self, turn: Turn) -> Action:
        return self.brain.act(turn)  # type: ignore[return-value]


def test_control_the_old_play_match_id_gave_every_hand_away() -> None:
    """The attack is real: with the match id of old (``play-<seed>``), the bot derives its hand."""
    seed = 123456
    spec = MatchSpec(
        index=0,
        match=f"play-{seed}",
        variant="classic",
        rules=Rules.preset("classic").to_dict(),
        entrants=(0, 1),
        seed=derive_seed("play", seed, "match"),
        dice_seed=derive_seed("play", seed, "dice"),
        table=0,
        rotation=0,
    )
    bots = [
        BotProcess(derive_spec(), LIMITS, CLOCK),
        BotProcess(load_bot(ROOT / "bots" / "probabilistic.py"), LIMITS, CLOCK),
    ]
    try:
        for b in bots:
            b.start()
        play_match(spec, bots, ["derive", "probabilistic"], CLOCK.budget_ms)
        assert "DERIVED play-123456 " in bots[0].stderr_tail()
    finally:
        for b in bots:
            b.close()


@contextlib.contextmanager
def derive_logs() -> Iterator[list[str]]:
    """Collect the derive bot's stderr from every process it had, as each closes."""
    logs: list[str] = []
    real_close = BotProcess.close

    def close(self: BotProcess) -> None:
        real_close(self)
        if self.spec.name == "derive":
            logs.append(self.stderr_tail())

    BotProcess.close = close  # type: ignore[method-assign]
    try:
        yield logs
    finally:
        BotProcess.close = real_close  # type: ignore[method-assign]


def _play(seed: int, honest: bool) -> tuple[list[int], str]:
    setup = PlaySetup(
        rules=Rules.preset("classic"),
        bots=(("derive", derive_spec(honest)), ("cautious", load_bot(ROOT / "bots" / "cautious.py"))),
        seed=seed,
        time=CLOCK,
        sandbox=LIMITS,
    )
    with derive_logs() as logs:
        outcome = play_human(setup, ScriptedHuman())
    assert str(seed) not in outcome.record.match
    return list(outcome.record.placements), "".join(logs)


@pytest.mark.slow
def test_arena_play_gives_the_bots_nothing_to_derive_the_dice_from() -> None:
    seeds = [secrets.randbits(63) for _ in range(24)]
    cheat_places, honest_places = [], []
    for seed in seeds:
        places, log = _play(seed, honest=False)
        assert "DERIVED" not in log and "TRIED play-" in log, log[-500:]
        cheat_places.append(places)
        honest_places.append(_play(seed, honest=True)[0])
    # Never derived, so it played exactly as its honest twin: same dice, same seeds, same placements.
    assert cheat_places == honest_places
    wins = sum(p[1] == 1 for p in cheat_places)  # seat order: human, derive, cautious
    assert wins == sum(p[1] == 1 for p in honest_places)


def test_arena_check_with_its_default_secret_seed_gives_nothing_away() -> None:
    with derive_logs() as logs:  # the control: the old default seed, 0, is guessable
        run_check(lambda: BotProcess(derive_spec(), LIMITS, CLOCK), turns=150, seed=0, repeat=False)
    assert "DERIVED check-" in "".join(logs)
    with derive_logs() as logs:
        report = check_bot(str(DERIVE), turns=150)
    assert report.seed >= 2**32 and f"--seed {report.seed}" in report.render()
    assert "DERIVED" not in "".join(logs) and "TRIED check-" in "".join(logs)


def _run(tmp_path: Path, seed: int | None) -> str:
    bots = tmp_path / f"bots{seed}"
    bots.mkdir()
    (bots / "derive.py").write_text(DERIVE.read_text())
    cfg: dict[str, Any] = {
        "name": "d",
        "bots": [str(bots / "derive.py"), "probabilistic", "cautious"],
        "players": 3,
        "matches": 6,
        "workers": 1,
    }
    if seed is not None:
        cfg["seed"] = seed
    path = tmp_path / f"d{seed}.yaml"
    path.write_text(json.dumps(cfg))
    out = tmp_path / f"out{seed}"
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    if seed is not None and seed < 2**32:
        assert "can be guessed" in r.stderr  # the run warns about a small explicit seed
    return "\n".join(p.read_text(errors="replace") for p in (out / "bots").rglob("*") if p.is_file())


def test_a_run_with_its_secret_seed_gives_nothing_away(tmp_path: Path) -> None:
    assert "DERIVED m-" in _run(tmp_path, 3)  # a small explicit seed can be guessed (and the run says so)
    log = _run(tmp_path, None)
    assert "TRIED m-" in log and "DERIVED" not in log
