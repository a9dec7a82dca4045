"""The tables of a run, derived from its match records in one place.

One row (a plain tuple, columns as named below) per match, per match and seat,
per round, per action and per fault. ``matches.parquet`` is the seat table
with RESULTS.md's columns (every seat column but ``first``), written by
:mod:`arena.running.store`; :mod:`arena.analysis.results` makes pandas
DataFrames of all five, and its docstring says what each column means. Plain
Python: the run layer has no pandas.

Missing values are ``None`` (a seat still in has no ``out_round``, a void
round no ``count``); a time a record does not carry (``think``, ``seconds``)
is ``None`` too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from arena.engine.records import MatchRecord, SeatOutcome
from arena.engine.rules import Bid

MATCH_COLUMNS = (
    "match", "variant", "line", "seed", "players", "first", "first_bot", "winner",
    "winner_bot", "rounds_played", "decisions", "palifico_rounds", "faults", "end", "seconds",
)
SEAT_COLUMNS = (
    "match", "variant", "seat", "bot", "place", "players", "first", "rounds",
    "dice_left", "out_round", "fault", "seconds",
)
ROUND_COLUMNS = (
    "match", "variant", "round", "opener", "palifico", "players", "dice_in_play", "bids",
    "decisions", "call", "caller", "bidder", "quantity", "face", "count", "change_seat",
    "delta", "call_right", "bid_true", "fault_seat", "fault_kind",
)
ACTION_COLUMNS = ("match", "variant", "round", "index", "seat", "bot", "action", "quantity", "face")
FAULT_COLUMNS = ("match", "variant", "seat", "bot", "round", "kind", "detail")

# matches.parquet (RESULTS.md: one row per match and seat) and its arrow types.
PARQUET_TYPES = (("match", "string"), ("variant", "string"), ("seat", "int16"), ("bot", "string"),
                 ("place", "int16"), ("players", "int16"), ("rounds", "int32"), ("dice_left", "int16"),
                 ("out_round", "int32"), ("fault", "string"), ("seconds", "float64"))
_PARQUET_AT = tuple(SEAT_COLUMNS.index(name) for name, _ in PARQUET_TYPES)

Row = tuple[object, ...]


@dataclass
class Tables:
    """The five tables' rows, records in the order given."""

    matches: list[Row] = field(default_factory=list)
    seats: list[Row] = field(default_factory=list)
    rounds: list[Row] = field(default_factory=list)
    actions: list[Row] = field(default_factory=list)
    faults: list[Row] = field(default_factory=list)


def seat_rows(rec: MatchRecord, outcome: SeatOutcome | None = None) -> list[Row]:
    """One row per seat (SEAT_COLUMNS): ``fault`` is the kind of the seat's
    first fault, ``seconds`` its thinking time."""
    left, out_round = outcome if outcome is not None else rec.outcome()
    n = len(rec.bots)
    kind: list[str | None] = [None] * n
    for f in rec.faults:
        if kind[f.seat] is None:
            kind[f.seat] = f.kind.value
    think: Sequence[float | None] = rec.think if rec.think is not None else (None,) * n
    mid, variant, first, played = rec.match, rec.variant, rec.first, rec.rounds_played
    return [(mid, variant, s, rec.bots[s], rec.placements[s], n, first == s, played, left[s], out_round[s],
             kind[s], think[s]) for s in range(n)]


def parquet_rows(records: Iterable[MatchRecord]) -> list[Row]:
    """matches.parquet's rows (PARQUET_TYPES' columns), sorted by match and seat."""
    ordered = sorted(records, key=lambda rec: rec.match)  # each record's rows come in seat order
    return [tuple(row[i] for i in _PARQUET_AT) for rec in ordered for row in seat_rows(rec)]


def tables(records: Iterable[MatchRecord]) -> Tables:
    """Every table's rows; ``line`` is each record's position in ``records``."""
    out = Tables()
    matches, rounds, actions, faults = out.matches, out.rounds, out.actions, out.faults
    for line, rec in enumerate(records):
        mid, variant, bots = rec.match, rec.variant, rec.bots
        decisions = palifico_rounds = 0
        for rnd in rec.rounds:
            r = rnd.round
            bids = 0
            standing: tuple[int, Bid] | None = None
            call: str | None = None
            caller: int | None = None
            for index, (seat, action) in enumerate(rnd.actions):
                if type(action) is Bid:
                    bids += 1
                    standing = (seat, action)
                    actions.append((mid, variant, r, index, seat, bots[seat], "bid", action.quantity, action.face))
                else:
                    call, caller = str(action), seat
                    actions.append((mid, variant, r, index, seat, bots[seat], call, None, None))
            decisions += len(rnd.actions)
            palifico_rounds += rnd.palifico
            count, change, fault = rnd.count, rnd.change, rnd.fault
            quantity = standing[1].quantity if standing is not None else None
            call_right: bool | None = None
            bid_true: bool | None = None
            if fault is None and call is not None and count is not None and quantity is not None:
                bid_true = count >= quantity
                call_right = count < quantity if call == "dudo" else count == quantity
            void = fault is not None
            rounds.append((
                mid, variant, r, rnd.opener, rnd.palifico, sum(1 for h in rnd.dice if h),
                sum(len(h) for h in rnd.dice), bids, len(rnd.actions),
                None if void else call, None if void else caller,
                standing[0] if standing is not None else None, quantity,
                standing[1].face if standing is not None else None, count,
                change.seat if change is not None else None, change.delta if change is not None else None,
                call_right, bid_true,
                fault.seat if fault is not None else None, fault.kind.value if fault is not None else None,
            ))
        for f in rec.faults:
            faults.append((mid, variant, f.seat, bots[f.seat], f.round, f.kind.value, f.detail))
        out.seats += seat_rows(rec)
        first, winner = rec.first, rec.winner
        matches.append((
            mid, variant, line, rec.seed, len(bots), first, bots[first], winner,
            bots[winner] if winner is not None else None, rec.rounds_played, decisions, palifico_rounds,
            len(rec.faults), rec.end.value, rec.seconds,
        ))
    return out
