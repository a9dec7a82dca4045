"""The referee plays whole matches with players behind the protocol interface,
turns faults into data and leaves records that replay cleanly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.errors import BotCrashed, BotTimeout, ProtocolError
from arena.match.inprocess import InProcessTransport
from arena.engine.records import MatchSpec, canonical, derive_seed
from arena.match.referee import play_match
from arena.protocol.loader import load_python_bot
from arena.engine.replay import ReplayMismatch, check
from arena.engine.rules import PRESETS, Rules

BOTS = Path(__file__).resolve().parent.parent / "bots"


def spec(variant: str = "classic", n: int = 4, index: int = 0, **overrides: Any) -> MatchSpec:
    rules = Rules.preset(variant, overrides).to_dict()
    return MatchSpec(index=index, match=f"m-{index:06d}", variant=variant, rules=rules,
                     entrants=tuple(range(n)), seed=derive_seed("t", index), dice_seed=derive_seed("d", index),
                     table=index, rotation=0)


def players(names: list[str]) -> list[InProcessTransport]:
    return [InProcessTransport(load_python_bot(BOTS / f"{n}.py"), n) for n in names]


class Scripted:
    """A player that misbehaves in a chosen way at its k-th turn."""

    def __init__(self, fail_at: int, how: str) -> None:
        self.fail_at, self.how, self.turns = fail_at, how, 0
        self.messages: list[dict[str, Any]] = []

    def notify(self, msg: dict[str, Any]) -> None:
        self.messages.append(msg)

    def request(self, msg: dict[str, Any]) -> tuple[dict[str, Any], float]:
        self.messages.append(msg)
        self.turns += 1
        legal = msg["legal"]
        if self.turns >= self.fail_at:
            if self.how == "timeout":
                raise BotTimeout("no reply in 1000 ms")
            if self.how == "crash":
                raise BotCrashed("the process exited with status 1")
            if self.how == "unasked":
                raise ProtocolError("wrote before being asked: 'hello?'", "unasked")
            if self.how == "malformed":
                return {"action": "bid", "quantity": True, "face": 3}, 0.0
            if self.how == "illegal":
                return {"action": "bid", "quantity": legal["max_quantity"] + 1, "face": 2}, 0.0
        if legal["dudo"]:
            return {"action": "dudo"}, 0.001
        face, q = next(iter(legal["min_quantity"].items()))
        return {"action": "bid", "quantity": q, "face": int(face)}, 0.001


@pytest.mark.parametrize("variant", sorted(PRESETS))
@pytest.mark.parametrize("n", [2, 3, 6])
def test_matches_replay_cleanly_under_every_preset(variant: str, n: int) -> None:
    names = ["random", "probabilistic", "cautious", "bluffer", "calza", "random"][:n]
    for i in range(3):
        out = play_match(spec(variant, n, i), players(names), names, 1000)
        rec = out.record
        assert out.faulted == set()
        assert sorted(rec["placements"]) == list(range(1, n + 1))
        assert rec["rounds_played"] == len(rec["rounds"]) > 0
        check(rec)  # every rule re-checked from the record alone


def test_same_spec_gives_the_same_record() -> None:
    names = ["probabilistic", "random", "bluffer", "calza"]
    a = play_match(spec(index=7), players(names), names, 1000).record
    b = play_match(spec(index=7), players(names), names, 1000).record
    assert canonical(a) == canonical(b)
    c = play_match(spec(index=8), players(names), names, 1000).record
    assert canonical(a) != canonical(c)


@pytest.mark.parametrize("how,kind", [("timeout", "timeout"), ("crash", "crash"), ("unasked", "unasked"),
                                      ("malformed", "malformed"), ("illegal", "illegal")])
def test_a_fault_puts_the_player_out_and_voids_the_round(how: str, kind: str) -> None:
    bad = Scripted(fail_at=2, how=how)
    others = players(["random", "probabilistic", "cautious"])
    out = play_match(spec(n=4, seating="fixed", first="seat0"), [bad, *others], ["bad", "r", "p", "c"], 1000)
    rec = out.record
    assert out.faulted == {0}
    assert [f["kind"] for f in rec["faults"]] == [kind] and rec["faults"][0]["seat"] == 0
    void = [r for r in rec["rounds"] if "fault" in r]
    assert len(void) == 1 and void[0]["fault"]["kind"] == kind and void[0]["fault"]["detail"]
    assert "count" not in void[0] and "change" not in void[0]
    assert rec["placements"][0] == 4  # out at once, below everyone still in
    check(rec)
    # Nothing more is sent to a faulted player after its fault.
    assert bad.messages[-1]["type"] == "turn"


def test_turn_messages_carry_only_the_players_own_dice() -> None:
    spy = Scripted(fail_at=10**9, how="")
    names = ["spy", "random", "cautious"]
    rec = play_match(spec(n=3, seating="fixed"), [spy, *players(names[1:])], names, 1000).record
    turns = [m for m in spy.messages if m["type"] == "turn"]
    assert turns
    by_round = {r["round"]: r["dice"] for r in rec["rounds"]}
    for m in turns:
        assert m["dice"] == sorted(by_round[m["round"]][0])
        assert set(m) == {"type", "match", "round", "seat", "dice", "counts", "palifico", "history", "legal",
                          "time_ms"}
    starts = [m for m in spy.messages if m["type"] == "match_start"]
    assert len(starts) == 1 and starts[0]["seed"] != rec["seed"]


def test_replay_catches_a_tampered_record() -> None:
    names = ["probabilistic", "random", "cautious"]
    rec = play_match(spec(n=3), players(names), names, 1000).record
    bad = {**rec, "placements": list(reversed(rec["placements"]))}
    with pytest.raises(ReplayMismatch):
        check(bad)
    rounds = [dict(r) for r in rec["rounds"]]
    rounds[0] = {**rounds[0], "dice": [[(d % 6) + 1 for d in h] for h in rounds[0]["dice"]]}
    with pytest.raises(ReplayMismatch, match="dice"):
        check({**rec, "rounds": rounds})
