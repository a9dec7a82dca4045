"""The referee plays whole matches with players behind the protocol interface,
turns faults into data and leaves records that replay cleanly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.engine.records import EndReason, MatchSpec, canonical, derive_seed
from arena.engine.replay import ReplayMismatch, check
from arena.engine.rules import PRESETS, Rules
from arena.errors import BotCrashed, BotTimeout, ProtocolError
from arena.match.inprocess import InProcessTransport
from arena.match.referee import play_match
from arena.protocol.loader import load_python_bot

BOTS = Path(__file__).resolve().parent.parent / "bots"


def spec(variant: str = "classic", n: int = 4, index: int = 0, **overrides: Any) -> MatchSpec:
    rules = Rules.preset(variant, overrides).to_dict()
    return MatchSpec(
        index=index,
        match=f"m-{index:06d}",
        variant=variant,
        rules=rules,
        entrants=tuple(range(n)),
        seed=derive_seed("t", index),
        dice_seed=derive_seed("d", index),
        table=index,
        rotation=0,
    )


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
        assert sorted(rec.placements) == list(range(1, n + 1))
        assert rec.rounds_played == len(rec.rounds) > 0
        assert rec.end is EndReason.ELIMINATION
        check(rec)  # every rule re-checked from the record alone


def test_same_spec_gives_the_same_record() -> None:
    names = ["probabilistic", "random", "bluffer", "calza"]
    a = play_match(spec(index=7), players(names), names, 1000).record
    b = play_match(spec(index=7), players(names), names, 1000).record
    assert canonical(a) == canonical(b)
    c = play_match(spec(index=8), players(names), names, 1000).record
    assert canonical(a) != canonical(c)


@pytest.mark.parametrize(
    "how,kind",
    [
        ("timeout", "timeout"),
        ("crash", "crash"),
        ("unasked", "unasked"),
        ("malformed", "malformed"),
        ("illegal", "illegal"),
    ],
)
def test_a_fault_puts_the_player_out_and_voids_the_round(how: str, kind: str) -> None:
    bad = Scripted(fail_at=2, how=how)
    others = players(["random", "probabilistic", "cautious"])
    out = play_match(spec(n=4, seating="fixed", first="seat0"), [bad, *others], ["bad", "r", "p", "c"], 1000)
    rec = out.record
    assert out.faulted == {0}
    assert [f.kind for f in rec.faults] == [kind] and rec.faults[0].seat == 0
    void = [r for r in rec.rounds if r.fault is not None]
    assert len(void) == 1 and void[0].fault is not None and void[0].fault.kind == kind and void[0].fault.detail
    assert void[0].count is None and void[0].change is None
    line = rec.to_dict()["rounds"][void[0].round - 1]
    assert line["fault"] == {"seat": 0, "kind": kind, "detail": void[0].fault.detail} and "count" not in line
    assert rec.placements[0] == 4  # out at once, below everyone still in
    check(rec)
    # Nothing more is sent to a faulted player after its fault.
    assert bad.messages[-1]["type"] == "turn"


def test_turn_messages_carry_only_the_players_own_dice() -> None:
    spy = Scripted(fail_at=10**9, how="")
    names = ["spy", "random", "cautious"]
    rec = play_match(spec(n=3, seating="fixed"), [spy, *players(names[1:])], names, 1000).record
    turns = [m for m in spy.messages if m["type"] == "turn"]
    assert turns
    by_round = {r.round: r.dice for r in rec.rounds}
    for m in turns:
        assert m["dice"] == sorted(by_round[m["round"]][0])
        assert set(m) == {"type", "match", "round", "seat", "dice", "counts", "palifico", "history", "legal", "time_ms"}
    starts = [m for m in spy.messages if m["type"] == "match_start"]
    assert len(starts) == 1 and starts[0]["seed"] != rec.seed


def test_replay_catches_a_tampered_record() -> None:
    names = ["probabilistic", "random", "cautious"]
    rec = play_match(spec(n=3), players(names), names, 1000).record
    with pytest.raises(ReplayMismatch):
        check(replace(rec, placements=tuple(reversed(rec.placements))))
    rounds = list(rec.rounds)
    rounds[0] = replace(rounds[0], dice=tuple(tuple((d % 6) + 1 for d in h) for h in rounds[0].dice))
    with pytest.raises(ReplayMismatch, match="dice"):
        check(replace(rec, rounds=tuple(rounds)))
    with pytest.raises(ReplayMismatch, match="ended by max_rounds, the rules give elimination"):
        check(replace(rec, end=EndReason.MAX_ROUNDS))


# --- the referee's fault handling, line by line, through a mock transport ---------------

from mock_transport import MockTransport  # noqa: E402

from arena.errors import BotFault  # noqa: E402
from arena.match.referee import MatchOutcome  # noqa: E402
from arena.protocol.messages import hello_message  # noqa: E402
from arena.sdk import Bot, Turn  # noqa: E402

OPEN = '{"action": "bid", "quantity": 1, "face": 2}'  # always legal to open with (face 2, one die)


class Raiser(Bot):
    """Never calls: the smallest legal raise, so the turn comes back to seat 0."""

    def act(self, turn: Turn) -> Any:
        return next(turn.legal.bids())


class Doubter(Bot):
    def act(self, turn: Turn) -> Any:
        return "dudo" if turn.legal.dudo else next(turn.legal.bids())


def seat0(mock: MockTransport, others: list[type[Bot]], preset: str = "classic", **overrides: Any) -> MatchOutcome:
    """``mock`` at seat 0, which opens round 1; ``others`` after it, in-process."""
    rest = [InProcessTransport(cls, cls.__name__.lower()) for cls in others]
    names = ["mock", *(p.name for p in rest)]
    out = play_match(spec(preset, len(names), seating="fixed", first="seat0", **overrides), [mock, *rest], names, 1000)
    mock.assert_done()
    return out


def only_fault(out: MatchOutcome) -> tuple[int, int, str, str]:
    """(round, seat, kind, detail) of the match's one fault; its round is void and the
    faulting seat placed last."""
    rec = out.record
    assert len(rec.faults) == 1, rec.faults
    f = rec.faults[0]
    void = [r for r in rec.rounds if r.void]
    assert [r.round for r in void] == [f.round] and void[0].count is None
    assert rec.placements[f.seat] == len(rec.placements)
    check(rec)
    return f.round, f.seat, f.kind, f.detail


@pytest.mark.parametrize(
    "answer, fault, kind, words",
    [
        ((), BotTimeout("bot mock sent no reply within the wall-clock cap"), "timeout", "wall-clock cap"),
        ((), BotCrashed("bot mock exited with status 1; stderr ends: boom"), "crash", "stderr ends: boom"),
        (("I raise to five threes",), None, "malformed", "not JSON"),
        (('{"action": "bid", "quantity": true, "face": 2}',), None, "malformed", "must be a JSON integer"),
        (('{"action": "bid", "quantity": 1, "face": 2, "x": NaN}',), None, "malformed", "not JSON"),
        (("\ufeff" + OPEN,), None, "malformed", "not UTF-8"),
        (('{"a": ' + "[" * 40 + "]" * 40 + "}",), None, "malformed", "nested more than"),
        (('["bid", 1, 2]',), None, "malformed", "not a JSON object"),
        (('{"action": "raise"}',), None, "malformed", "expected"),
        (('{"action": "dudo"}',), None, "illegal", "dudo"),
        (('{"action": "bid", "quantity": ' + "9" * 100 + ', "face": 2}',), None, "illegal", "quantity"),
        (('{"action": "bid", "quantity": 1, "face": 7}',), None, "illegal", "face"),
    ],
    ids=[
        "timeout",
        "crash",
        "not-json",
        "true-quantity",
        "nan",
        "bom",
        "deep",
        "array",
        "unknown-action",
        "dudo-opening",
        "huge-quantity",
        "face-7",
    ],
)
def test_each_fault_at_a_turn_puts_the_player_out_and_voids_the_round(
    answer: tuple[str, ...], fault: BotFault | None, kind: str, words: str
) -> None:
    mock = MockTransport().expect({"type": "match_start", "seat": 0, "players": 3})
    mock.expect({"type": "turn", "seat": 0, "round": 1, "history": []}, answer, fault=fault)
    out = seat0(mock, [Doubter, Doubter])
    rnd, seat, got, detail = only_fault(out)
    assert (rnd, seat, got) == (1, 0, kind) and words in detail, detail
    assert out.faulted == {0}
    assert [m["type"] for m in mock.sent] == ["match_start", "turn"]  # nothing after the fault


def test_a_line_written_unasked_is_a_fault_at_the_next_turn() -> None:
    mock = MockTransport().expect({"type": "match_start"}, ['{"note": "thinking..."}'])
    mock.expect({"type": "turn"}, [OPEN])
    _, _, kind, detail = only_fault(seat0(mock, [Doubter]))
    assert kind == "unasked" and "thinking..." in detail


def test_a_second_line_after_a_reply_is_unasked_at_the_next_turn() -> None:
    mock = MockTransport().expect({"type": "match_start"})
    mock.expect({"type": "turn", "history": []}, [OPEN, '{"action": "dudo"}'])
    mock.expect({"type": "turn", "history": [[0, 1, 2], [1, 1, 1]]})  # Raiser raised 1x2 to one ace
    rnd, _, kind, detail = only_fault(seat0(mock, [Raiser]))
    assert (rnd, kind) == (1, "unasked") and "dudo" in detail


def test_a_fault_noticed_while_notifying_is_charged_at_the_next_turn() -> None:
    mock = MockTransport().expect({"type": "match_start"}, fault=BotCrashed("bot mock exited with status 3"))
    mock.expect({"type": "turn"})
    _, _, kind, detail = only_fault(seat0(mock, [Doubter, Doubter]))
    assert kind == "crash" and "status 3" in detail


def test_a_healthy_player_gets_every_message_in_order_and_nothing_else() -> None:
    """Two players, one die each: round 1 decides the match."""
    mock = MockTransport().expect(
        {
            "type": "match_start",
            "seat": 0,
            "players": 2,
            "names": ["mock", "doubter"],
            "rules": Rules.preset("neller", {"seating": "fixed", "first": "seat0", "dice": 1}).to_dict(),
        }
    )
    mock.expect(
        {"type": "turn", "round": 1, "seat": 0, "counts": [1, 1], "history": [], "time_ms": 1000},
        ['{"action": "bid", "quantity": 1, "face": 2, "comment": "ignored"}'],
        cpu=0.25,
    )
    mock.expect({"type": "round_end", "round": 1, "bid": [0, 1, 2], "call": {"seat": 1, "kind": "dudo"}})
    mock.expect({"type": "match_end"})
    out = seat0(mock, [Doubter], "neller", dice=1)
    rec = out.record
    assert out.faulted == set() and not rec.faults and rec.think[0] == 0.25
    end = mock.sent[2]
    dice = [list(h) for h in rec.rounds[0].dice]
    assert end["dice"] == dice and end["counts"] == [int(rec.placements[0] == 1), int(rec.placements[1] == 1)]
    assert mock.sent[3] == {"type": "match_end", "match": rec.match, "placements": list(rec.placements)}
    assert mock.sent[1]["dice"] == dice[0]  # its own die, and no one else's


def test_the_mock_checks_the_handshake_as_a_process_does() -> None:
    ok = MockTransport().expect(hello_message(), ['{"type": "ready", "name": "m", "version": "1.0", "x": 1}'])
    assert ok.start() == {"type": "ready", "name": "m", "version": "1.0"}
    for line, words in [
        ('{"type": "ready"}', "'name'"),
        ('{"type": "ready", "name": "m", "version": 2}', "'version'"),
        ('{"type": "hi"}', '"hi"'),
        ("ready", "not JSON"),
    ]:
        with pytest.raises(ProtocolError) as err:
            MockTransport().expect(hello_message(), [line]).start()
        assert err.value.kind == "malformed" and words in err.value.detail
