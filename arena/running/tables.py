"""The tables of a run, derived from its match records in one place.

One row (a plain tuple, columns as named below) per match, per match and seat,
per round, per action and per fault. ``matches.parquet`` is the seat table
with the columns of docs/records.md (every seat column but ``first``), written by
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
from arena.engine.rules import Bid, aces_count_as, count_matching

MATCH_COLUMNS = (
    "match",
    "variant",
    "line",
    "seed",
    "players",
    "first",
    "first_bot",
    "winner",
    "winner_bot",
    "rounds_played",
    "decisions",
    "palifico_rounds",
    "faults",
    "end",
    "seconds",
)
SEAT_COLUMNS = (
    "match",
    "variant",
    "seat",
    "bot",
    "place",
    "players",
    "first",
    "rounds",
    "dice_left",
    "out_round",
    "fault",
    "seconds",
    "held",
)
ROUND_COLUMNS = (
    "match",
    "variant",
    "round",
    "opener",
    "palifico",
    "players",
    "dice_in_play",
    "bids",
    "decisions",
    "call",
    "caller",
    "bidder",
    "quantity",
    "face",
    "count",
    "change_seat",
    "delta",
    "call_right",
    "bid_true",
    "fault_seat",
    "fault_kind",
)
ACTION_COLUMNS = ("match", "variant", "round", "index", "seat", "bot", "action", "quantity", "face", "true")
FAULT_COLUMNS = ("match", "variant", "seat", "bot", "round", "kind", "detail")

# matches.parquet (docs/records.md: one row per match and seat) and its arrow types.
PARQUET_TYPES = (
    ("match", "string"),
    ("variant", "string"),
    ("seat", "int16"),
    ("bot", "string"),
    ("place", "int16"),
    ("players", "int16"),
    ("rounds", "int32"),
    ("dice_left", "int16"),
    ("out_round", "int32"),
    ("fault", "string"),
    ("seconds", "float64"),
)
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
    first fault, ``seconds`` its thinking time, ``held`` a bit mask of the
    numbers of dice the seat held at the start of a round (bit k: k dice)."""
    left, out_round = outcome if outcome is not None else rec.outcome()
    n = len(rec.bots)
    kind: list[str | None] = [None] * n
    for f in rec.faults:
        if kind[f.seat] is None:
            kind[f.seat] = f.kind.value
    think: Sequence[float | None] = rec.think if rec.think is not None else (None,) * n
    held = [0] * n
    for rnd in rec.rounds:
        for s, hand in enumerate(rnd.dice):
            if hand:
                held[s] |= 1 << len(hand)
    mid, variant, first, played = rec.match, rec.variant, rec.first, rec.rounds_played
    return [
        (
            mid,
            variant,
            s,
            rec.bots[s],
            rec.placements[s],
            n,
            first == s,
            played,
            left[s],
            out_round[s],
            kind[s],
            think[s],
            held[s],
        )
        for s in range(n)
    ]


def parquet_rows(records: Iterable[MatchRecord]) -> list[Row]:
    """matches.parquet's rows (PARQUET_TYPES' columns), sorted by match and seat."""
    ordered = sorted(records, key=lambda rec: rec.match)  # each record's rows come in seat order
    return [tuple(row[i] for i in _PARQUET_AT) for rec in ordered for row in seat_rows(rec)]


# An action's row without match, variant and bot: (round, index, seat, action, quantity, face, true).
PlayedAction = tuple[int, int, int, str, int | None, int | None, bool | None]


def play_rows(rec: MatchRecord) -> tuple[list[Row], list[PlayedAction], int, int]:
    """The record's round and action rows without the columns that name the
    match (ROUND_COLUMNS[2:]; ACTION_COLUMNS but match, variant and bot), its
    decisions and its palifico rounds: what :func:`tables` prefixes, and what
    a worker encodes as they are (:func:`arena.running.tablefiles.record_tables`)."""
    rounds: list[Row] = []
    actions: list[PlayedAction] = []
    decisions = palifico_rounds = 0
    rules = rec.rules
    for rnd in rec.rounds:
        r = rnd.round
        bids = 0
        # Whether each bid was true when made: the round's count of its face (all hands are recorded).
        counts: dict[int, int] = {}
        standing: tuple[int, Bid] | None = None
        call: str | None = None
        caller: int | None = None
        for index, (seat, action) in enumerate(rnd.actions):
            if type(action) is Bid:
                bids += 1
                standing = (seat, action)
                face = action.face
                if face not in counts:
                    counts[face] = count_matching(rnd.dice, face, aces_count_as(rules, rnd.palifico, face))
                actions.append((r, index, seat, "bid", action.quantity, face, counts[face] >= action.quantity))
            else:
                call, caller = str(action), seat
                actions.append((r, index, seat, call, None, None, None))
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
        players = in_play = 0
        for hand in rnd.dice:
            if hand:
                players += 1
                in_play += len(hand)
        rounds.append(
            (
                r,
                rnd.opener,
                rnd.palifico,
                players,
                in_play,
                bids,
                len(rnd.actions),
                None if void else call,
                None if void else caller,
                standing[0] if standing is not None else None,
                quantity,
                standing[1].face if standing is not None else None,
                count,
                change.seat if change is not None else None,
                change.delta if change is not None else None,
                call_right,
                bid_true,
                fault.seat if fault is not None else None,
                fault.kind.value if fault is not None else None,
            )
        )
    return rounds, actions, decisions, palifico_rounds


def fault_rows(rec: MatchRecord) -> list[Row]:
    bots = rec.bots
    return [(rec.match, rec.variant, f.seat, bots[f.seat], f.round, f.kind.value, f.detail) for f in rec.faults]


def match_row(rec: MatchRecord, line: int, decisions: int, palifico_rounds: int) -> Row:
    bots, first, winner = rec.bots, rec.first, rec.winner
    return (
        rec.match,
        rec.variant,
        line,
        rec.seed,
        len(bots),
        first,
        bots[first],
        winner,
        bots[winner] if winner is not None else None,
        rec.rounds_played,
        decisions,
        palifico_rounds,
        len(rec.faults),
        rec.end.value,
        rec.seconds,
    )


def tables(records: Iterable[MatchRecord]) -> Tables:
    """Every table's rows; ``line`` is each record's position in ``records``."""
    out = Tables()
    for line, rec in enumerate(records):
        mid, variant, bots = rec.match, rec.variant, rec.bots
        rounds, actions, decisions, palifico_rounds = play_rows(rec)
        out.rounds += [(mid, variant, *row) for row in rounds]
        out.actions += [(mid, variant, r, i, s, bots[s], a, q, f, t) for r, i, s, a, q, f, t in actions]
        out.faults += fault_rows(rec)
        out.seats += seat_rows(rec)
        out.matches.append(match_row(rec, line, decisions, palifico_rounds))
    return out
