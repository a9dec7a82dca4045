"""The rules of Dudo as the referee enforces them (shared/RULES.md).

Pure and deterministic: no I/O, no global randomness. Dice are an input
(:func:`deal`), so the same dice and the same actions always give the same
match. States are immutable; every transition returns a new state.

Hot-path notes (the referee loop and the engine benchmark run through here):
bids are interned :class:`Bid` objects, the legal raises after a standing bid
are a slice of a cached, totally ordered tuple of every bid for the current
number of dice in play, and a state is a ``NamedTuple`` (cheap to build).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal, NamedTuple, Sequence, Union

from arena.errors import IllegalAction, InvalidAction, RulesError, StateError

FACES: Final = (1, 2, 3, 4, 5, 6)
_FACE_SET: Final = frozenset(FACES)
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 10

# ---------------------------------------------------------------------------
# Rule sets
# ---------------------------------------------------------------------------

OnesMode = Literal["convert", "rank_high", "plain"]
CalzaReward = Literal["regain", "bidder_loses"]
Penalty = Literal["one", "difference"]
Seating = Literal["roll", "fixed"]
First = Literal["roll", "seat0"]


@dataclass(frozen=True, slots=True)
class KeySpec:
    """What a rule key accepts, for validation and for ``arena rules``."""

    name: str
    kind: type
    default: Any
    meaning: str
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None

    def allowed(self) -> str:
        if self.kind is bool:
            return "true or false"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.high is None:
            return f"an integer >= {self.low}"
        return f"an integer from {self.low} to {self.high}"

    def check(self, value: object) -> Any:
        """Return ``value`` if allowed for this key, else raise :class:`RulesError`."""
        ok: bool
        if self.kind is bool:
            ok = isinstance(value, bool)
        elif self.kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
            if ok and self.low is not None and value < self.low:  # type: ignore[operator]
                ok = False
            if ok and self.high is not None and value > self.high:  # type: ignore[operator]
                ok = False
        else:
            ok = isinstance(value, str) and value in self.choices
        if not ok:
            raise RulesError(f"rule {self.name}: {value!r} is not allowed; use {self.allowed()}")
        return value


KEYS: Final[dict[str, KeySpec]] = {
    k.name: k
    for k in (
        KeySpec("dice", int, 5, "starting dice per player, also the most a player can hold", low=1, high=10),
        KeySpec("wild_ones", bool, True, "aces count as the bid face"),
        KeySpec("ones", str, "convert", "how bids on aces rank: halve/double (convert), "
                "above 6 at each quantity (rank_high), lowest face (plain)",
                choices=("convert", "rank_high", "plain")),
        KeySpec("open_on_ones", bool, False, "the opening bid may be on aces"),
        KeySpec("calza", bool, True, "the player to act may call calza (exactly)"),
        KeySpec("calza_reward", str, "regain", "right calza: caller regains a die, or the bidder loses one",
                choices=("regain", "bidder_loses")),
        KeySpec("calza_min_players", int, 3, "calza only while at least this many players are in", low=2),
        KeySpec("palifico", bool, True, "a player first left with one die opens a palifico round"),
        KeySpec("palifico_change_face", bool, False, "a one-die player may change face in palifico"),
        KeySpec("palifico_min_players", int, 3, "no palifico with fewer players left", low=2),
        KeySpec("penalty", str, "one", "dudo loser loses one die, or max(1, |q - count|) dice",
                choices=("one", "difference")),
        KeySpec("seating", str, "roll", "seats by a dice roll, or in the schedule's order",
                choices=("roll", "fixed")),
        KeySpec("first", str, "roll", "the opener of round 1: by a dice roll, or seat 0",
                choices=("roll", "seat0")),
        KeySpec("max_rounds", int, 1000, "safety cap on rounds; then rank by dice left", low=1),
    )
}

PRESETS: Final[dict[str, dict[str, Any]]] = {
    "classic": {},
    "lizumo": {"dice": 3, "calza": False, "palifico": False, "open_on_ones": False},
    "wikipedia": {"open_on_ones": True, "calza_min_players": 2, "palifico_min_players": 2},
    "neller": {"ones": "rank_high", "open_on_ones": True, "calza": False, "palifico": False},
    "plain": {"wild_ones": False, "ones": "plain", "calza": False, "palifico": False},
}

PRESET_MEANINGS: Final[dict[str, str]] = {
    "classic": "wild aces with conversion, calza (regain), palifico, no opening on aces",
    "lizumo": "3 dice, no calza, no palifico, no opening on aces (the Lizumo online rules)",
    "wikipedia": "classic, but opening on aces allowed, calza and palifico down to 2 players",
    "neller": "aces rank high, opening on aces, no calza, no palifico: the two-player research game",
    "plain": "aces not wild and the lowest face, no calza, no palifico: generic Liar's Dice",
}


@dataclass(frozen=True, slots=True)
class Rules:
    """A validated, immutable rule set: every key of RULES.md.

    Build one with :meth:`preset` (a preset plus overrides) or
    :meth:`from_dict`; the constructor validates every field too.
    """

    dice: int = 5
    wild_ones: bool = True
    ones: OnesMode = "convert"
    open_on_ones: bool = False
    calza: bool = True
    calza_reward: CalzaReward = "regain"
    calza_min_players: int = 3
    palifico: bool = True
    palifico_change_face: bool = False
    palifico_min_players: int = 3
    penalty: Penalty = "one"
    seating: Seating = "roll"
    first: First = "roll"
    max_rounds: int = 1000

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            KEYS[f.name].check(getattr(self, f.name))

    @classmethod
    def preset(cls, name: str = "classic", overrides: dict[str, Any] | None = None) -> "Rules":
        """The named preset of RULES.md with ``overrides`` applied on top."""
        if name not in PRESETS:
            raise RulesError(f"preset {name!r} does not exist; use one of {', '.join(PRESETS)}")
        merged = dict(PRESETS[name])
        merged.update(overrides or {})
        return cls.from_dict(merged)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Rules":
        """Rules from a mapping of keys (missing keys take the default)."""
        for key in data:
            if key not in KEYS:
                raise RulesError(f"rule {key!r} does not exist; the keys are {', '.join(KEYS)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """Every key with its value, in RULES.md order (the form records carry)."""
        return {name: getattr(self, name) for name in KEYS}

    def replace(self, **overrides: Any) -> "Rules":
        return self.from_dict({**self.to_dict(), **overrides})


def parse_value(key: str, text: str) -> Any:
    """Parse a command-line ``key=value`` value for rule ``key`` (``--set``)."""
    if key not in KEYS:
        raise RulesError(f"rule {key!r} does not exist; the keys are {', '.join(KEYS)}")
    spec = KEYS[key]
    low = text.strip().lower()
    if spec.kind is bool:
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise RulesError(f"rule {key}: {text!r} is not allowed; use {spec.allowed()}")
    if spec.kind is int:
        try:
            return spec.check(int(text))
        except ValueError:
            raise RulesError(f"rule {key}: {text!r} is not allowed; use {spec.allowed()}") from None
    return spec.check(text.strip())


# ---------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------


class Bid(NamedTuple):
    """At least ``quantity`` dice on the table show ``face``. Text form ``"5x3"``.

    A ``NamedTuple`` rather than a dataclass because bids are hashed and
    compared on the referee's hot path, and tuple hashing runs in C.
    """

    quantity: int
    face: int

    def __str__(self) -> str:
        return f"{self.quantity}x{self.face}"


@dataclass(frozen=True, slots=True)
class Dudo:
    """"I doubt": the standing bid is challenged. Text form ``"dudo"``."""

    def __str__(self) -> str:
        return "dudo"


@dataclass(frozen=True, slots=True)
class Calza:
    """"Exactly": the caller claims the standing bid is exactly right. Text ``"calza"``."""

    def __str__(self) -> str:
        return "calza"


Action = Union[Bid, Dudo, Calza]
DUDO: Final = Dudo()
CALZA: Final = Calza()
MAX_QUANTITY: Final = MAX_PLAYERS * 10


@lru_cache(maxsize=None)
def _bid(quantity: int, face: int) -> Bid:
    return Bid(quantity, face)


def bid(quantity: int, face: int) -> Bid:
    """The interned :class:`Bid` (equal to ``Bid(quantity, face)``, faster to compare)."""
    return _bid(quantity, face)


def parse_action(text: str) -> Action:
    """Parse the one text form of an action: ``"5x3"``, ``"dudo"`` or ``"calza"``."""
    t = text.strip().lower()
    if t == "dudo":
        return DUDO
    if t == "calza":
        return CALZA
    q, sep, f = t.partition("x")
    if sep and q.isdigit() and f.isdigit() and q.isascii() and f.isascii():
        quantity, face = int(q), int(f)
        if 1 <= face <= 6 and 1 <= quantity <= MAX_QUANTITY:
            return bid(quantity, face)
    raise InvalidAction(
        f"{text!r} is not an action; write QxF for a bid (e.g. '5x3': five 3s, "
        f"face 1-6), 'dudo' or 'calza'"
    )


# ---------------------------------------------------------------------------
# Bid order
# ---------------------------------------------------------------------------


def bid_key(b: Bid, ones: str) -> int:
    """Position of a bid in the total order of ``ones`` mode; a raise has a larger key.

    ``convert``: ``q`` aces rank as ``(2q, 7)``, which is exactly "halve to
    switch to aces (rounding up), double plus one to leave them".
    ``rank_high``: aces rank above 6 at the same quantity. ``plain``: 1 is the
    lowest face.
    """
    q, f = b.quantity, b.face
    if f == 1:
        if ones == "convert":
            return 16 * q + 7
        if ones == "rank_high":
            return 8 * q + 7
    return 8 * q + f


class _Ladder(NamedTuple):
    total: int  # dice in play
    bids: tuple[Bid, ...]  # every bid with quantity <= total, in increasing order
    index: dict[Bid, int]
    openers: tuple[Bid, ...]  # the bids allowed as an opening bid (no aces)


@lru_cache(maxsize=None)
def _ladder(ones: str, total: int) -> _Ladder:
    bids = sorted((bid(q, f) for q in range(1, total + 1) for f in FACES), key=lambda b: bid_key(b, ones))
    t = tuple(bids)
    return _Ladder(total, t, {b: i for i, b in enumerate(t)}, tuple(b for b in t if b.face != 1))


@lru_cache(maxsize=None)
def _column(face: int, total: int) -> tuple[Bid, ...]:
    """The bids on one face, 1..total: the palifico raises once the face is fixed."""
    return tuple(bid(q, face) for q in range(1, total + 1))


def count_matching(dice: Sequence[Sequence[int]], face: int, wild: bool) -> int:
    """How many dice show ``face``, aces included when ``wild`` (and face != 1)."""
    n = 0
    for hand in dice:
        n += hand.count(face)
        if wild:
            n += hand.count(1)
    return n


# ---------------------------------------------------------------------------
# Match state
# ---------------------------------------------------------------------------


class RoundResult(NamedTuple):
    """How a round ended: the call and its count, or the fault that voided it."""

    round: int
    opener: int
    palifico: bool
    dice: tuple[tuple[int, ...], ...]
    bids: tuple[tuple[int, Bid], ...]  # (seat, bid), oldest first
    call: tuple[int, str] | None  # (seat, "dudo" | "calza"); None when void
    count: int | None
    change: tuple[int, int] | None  # (seat, delta); delta 0 for a capped calza regain
    fault: int | None  # seat that faulted; the round is void


class State(NamedTuple):
    """An immutable match state.

    Phases: *deal* (``dice is None``: waiting for :func:`deal`), *bid*
    (``to_act`` is a seat), and *over* (``placements`` is set).
    """

    rules: Rules
    counts: tuple[int, ...]  # dice held per seat; 0 = out
    round: int  # the round being played, or about to be dealt (1-based)
    opener: int
    palifico: bool  # this round is palifico
    palifico_used: tuple[bool, ...]  # per seat: has had its palifico chance
    out: tuple[int, ...]  # seats in order of elimination (first out first)
    dice: tuple[tuple[int, ...], ...] | None
    history: tuple[tuple[int, Bid], ...]
    to_act: int  # -1 outside the bid phase
    top: int  # ladder index of the standing bid; -1 when none
    ladder: _Ladder  # every bid for the dice in play, in order (cached, shared)
    last: RoundResult | None  # the round resolved most recently
    placements: tuple[int, ...] | None

    @property
    def total(self) -> int:
        """Dice in play this round: the largest legal quantity."""
        return self.ladder.total

    @property
    def over(self) -> bool:
        return self.placements is not None

    @property
    def players(self) -> int:
        return len(self.counts)

    @property
    def alive(self) -> tuple[int, ...]:
        return tuple(s for s, c in enumerate(self.counts) if c)

    @property
    def standing(self) -> tuple[int, Bid] | None:
        return self.history[-1] if self.history else None


_new = tuple.__new__  # builds a State without NamedTuple's per-field overhead


def new_match(rules: Rules, players: int, opener: int = 0) -> State:
    """A match about to deal round 1, opened by ``opener`` (see :mod:`arena.dice` for rolls)."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise StateError(f"players: {players} is not allowed; Dudo Arena plays 2 to 10 players")
    if not 0 <= opener < players:
        raise StateError(f"opener: seat {opener} does not exist at a table of {players}")
    return State(rules, (rules.dice,) * players, 1, opener, False, (False,) * players, (),
                 None, (), -1, -1, _ladder(rules.ones, rules.dice * players), None, None)


def deal(state: State, dice: Sequence[Sequence[int]]) -> State:
    """Start the round with the rolled dice (one list per seat; empty for seats out)."""
    if state.placements is not None:
        raise StateError("the match is over; there is no round to deal")
    if state.dice is not None:
        raise StateError(f"round {state.round} is already dealt")
    counts = state.counts
    if len(dice) != len(counts):
        raise StateError(f"deal: {len(dice)} hands for {len(counts)} seats")
    hands = tuple([h if type(h) is tuple else tuple(h) for h in dice])
    for h, c in zip(hands, counts):
        if len(h) != c or not _FACE_SET.issuperset(h):
            seat = next(i for i, (hh, cc) in enumerate(zip(hands, counts))
                        if len(hh) != cc or not _FACE_SET.issuperset(hh))
            raise StateError(f"deal: seat {seat} holds {c} dice, got {h!r} (faces are 1-6)")
    r, counts, rnd, opener, pal, used, out, _, _, _, _, ladder, last, _ = state
    return _new(State, (r, counts, rnd, opener, pal, used, out, hands, (), opener, -1, ladder, last, None))


def _next_in(counts: tuple[int, ...], seat: int) -> int:
    """The next seat clockwise after ``seat`` that still has dice."""
    n = len(counts)
    s = (seat + 1) % n
    while not counts[s]:
        s = (s + 1) % n
    return s


def _in_or_next(counts: tuple[int, ...], seat: int) -> int:
    return seat if counts[seat] else _next_in(counts, seat)


def _palifico_raises(state: State) -> tuple[Bid, ...]:
    """Legal bids in a palifico round: any opening bid, then more of the same face.

    With ``palifico_change_face`` a player holding one die may also change face,
    with the ordinary (plain) order since aces are not wild.
    """
    total = state.total
    if not state.history:
        return _ladder("plain", total).bids
    standing = state.history[-1][1]
    if state.rules.palifico_change_face and state.counts[state.to_act] == 1:
        ladder = _ladder("plain", total)
        return ladder.bids[ladder.index[standing] + 1:]
    return _column(standing.face, total)[standing.quantity:]


def legal_bids(state: State) -> tuple[Bid, ...]:
    """Every bid the player to act may make now, lowest first."""
    if state.to_act < 0 or state.dice is None:
        return ()
    if state.palifico:
        return _palifico_raises(state)
    if state.top < 0:
        return state.ladder.bids if state.rules.open_on_ones else state.ladder.openers
    return state.ladder.bids[state.top + 1:]


def calza_allowed(state: State) -> bool:
    r = state.rules
    if not (r.calza and state.history and state.to_act >= 0):
        return False
    alive = 0
    for c in state.counts:
        if c:
            alive += 1
    return alive >= r.calza_min_players


def legal_actions(state: State) -> tuple[Action, ...]:
    """Every action the player to act may take now (bids lowest first, then calls)."""
    if state.palifico or state.to_act < 0:
        bids = legal_bids(state)
    elif state.top < 0:
        # Opening bid (the fast paths mirror legal_bids, which the tests pin).
        return state.ladder.bids if state.rules.open_on_ones else state.ladder.openers
    else:
        bids = state.ladder.bids[state.top + 1:]
    if not state.history:
        return bids
    if calza_allowed(state):
        return bids + (DUDO, CALZA)
    return bids + (DUDO,)


class LegalSummary(NamedTuple):
    """The compact legal-move summary a ``turn`` message carries (PROTOCOL.md)."""

    dudo: bool
    calza: bool
    min_quantity: dict[int, int]  # face -> smallest legal quantity; absent = may not bid
    max_quantity: int


def legal_summary(state: State) -> LegalSummary:
    """``dudo``, ``calza``, the smallest legal quantity per face and ``max_quantity``.

    Exact, because for every face the legal quantities run from the minimum up
    to the dice in play (the order is monotone in quantity for a fixed face).
    """
    mins: dict[int, int] = {}
    for b in legal_bids(state):
        if b.face not in mins:
            mins[b.face] = b.quantity
    return LegalSummary(bool(state.history), calza_allowed(state), dict(sorted(mins.items())), state.total)


def why_illegal(state: State, action: Action) -> str | None:
    """``None`` if ``action`` is legal now, else the reason in words."""
    if state.placements is not None:
        return "the match is over"
    if state.dice is None or state.to_act < 0:
        return "the round has not been dealt"
    if isinstance(action, Bid):
        q, f = action.quantity, action.face
        if not (isinstance(q, int) and isinstance(f, int)) or f not in FACES:
            return "a bid is a quantity and a face from 1 to 6"
        if q < 1 or q > state.total:
            return f"the quantity must be from 1 to {state.total}, the dice in play"
        if action in legal_bids(state):
            return None
        r = state.rules
        if not state.history:
            if f == 1 and not r.open_on_ones and not state.palifico:
                return "the opening bid may not be on aces (open_on_ones is false)"
            return "not a legal opening bid"
        standing = state.history[-1][1]
        if state.palifico and f != standing.face and not (
            r.palifico_change_face and state.counts[state.to_act] == 1
        ):
            return f"in a palifico round the face is fixed at {standing.face}; raise the quantity"
        if r.ones == "convert" and f == 1 and standing.face != 1 and not state.palifico:
            return (f"switching to aces after {standing} needs at least "
                    f"{(standing.quantity + 1) // 2} aces")
        if r.ones == "convert" and standing.face == 1 and f != 1 and not state.palifico:
            return f"leaving aces after {standing} needs at least {2 * standing.quantity + 1} dice"
        return f"not higher than the standing bid {standing}"
    if isinstance(action, Dudo):
        return None if state.history else "nobody may call before the first bid"
    if isinstance(action, Calza):
        if not state.history:
            return "nobody may call before the first bid"
        if not state.rules.calza:
            return "calza is not played under these rules"
        if not calza_allowed(state):
            return f"calza needs at least {state.rules.calza_min_players} players in"
        return None
    return f"{action!r} is not an action"


def apply(state: State, action: Action) -> State:
    """The state after the player to act takes ``action``; raises :class:`IllegalAction`."""
    seat = state.to_act
    if seat < 0 or state.dice is None:
        raise IllegalAction(action, why_illegal(state, action) or "no player is to act")
    if type(action) is Bid:
        if type(action.quantity) is not int or type(action.face) is not int:
            raise InvalidAction(f"bid {action!r}: quantity and face must be integers")
        r, counts, rnd, opener, pal, used, out, dice, hist, _, top, ladder, last, _ = state
        if pal:
            if action not in _palifico_raises(state):
                raise IllegalAction(action, why_illegal(state, action) or "not allowed")
            idx = -1
        else:
            idx = ladder.index.get(action, -1)
            if idx <= top or (top < 0 and action.face == 1 and not r.open_on_ones):
                raise IllegalAction(action, why_illegal(state, action) or "not allowed")
        return _new(State, (r, counts, rnd, opener, pal, used, out, dice, hist + ((seat, action),),
                            _next_in(counts, seat), idx, ladder, last, None))
    kind = "dudo" if type(action) is Dudo else "calza" if type(action) is Calza else ""
    if not state.history or (kind == "calza" and not calza_allowed(state)) or not kind:
        raise IllegalAction(action, why_illegal(state, action) or "not an action")
    return _resolve(state, seat, kind)


def _resolve(state: State, caller: int, kind: str) -> State:
    r, counts0, rnd, opener, pal, _, _, dice, hist, _, _, _, _, _ = state
    bidder, (q, f) = hist[-1]
    # Aces count as the bid face when wild, except on aces and in palifico.
    count = count_matching(dice, f, r.wild_ones and f != 1 and not pal)  # type: ignore[arg-type]
    counts = list(counts0)
    if kind == "dudo":
        seat = bidder if count < q else caller
        delta = -1
        if r.penalty == "difference":
            delta = -min(max(1, abs(q - count)), counts[seat])
    elif count == q:
        if r.calza_reward == "regain":
            seat = caller
            delta = 1 if counts[caller] < r.dice else 0
        else:
            seat, delta = bidder, -1
    else:
        seat, delta = caller, -1
    counts[seat] += delta
    result = _new(RoundResult, (rnd, opener, pal, dice, hist, (caller, kind), count, (seat, delta), None))
    return _next_round(state, tuple(counts), seat, result)


def fault(state: State, seat: int) -> State:
    """``seat`` faulted: it is out at once, the round is void, the next seat in opens."""
    if state.placements is not None:
        raise StateError("the match is over")
    if state.dice is None:
        raise StateError("a fault voids the round in progress; deal the round first")
    if not (0 <= seat < len(state.counts)) or not state.counts[seat]:
        raise StateError(f"seat {seat} is not in the match")
    counts = list(state.counts)
    counts[seat] = 0
    result = RoundResult(state.round, state.opener, state.palifico, state.dice, state.history,
                         None, None, None, seat)
    return _next_round(state, tuple(counts), seat, result)


def _next_round(state: State, counts: tuple[int, ...], seat: int, result: RoundResult) -> State:
    r, before, rnd, last_opener, _, used, out, _, _, _, _, _, _, _ = state
    if not counts[seat] and before[seat]:
        out = out + (seat,)
    alive = len(counts) - len(out)
    palifico = False
    if counts[seat] == 1 and before[seat] > 1 and not used[seat]:
        # The first time a player is left with one die (by any loss) is its only chance.
        used = used[:seat] + (True,) + used[seat + 1:]
        palifico = r.palifico and alive >= r.palifico_min_players
    placements = None
    if alive <= 1 or rnd >= r.max_rounds:
        placements = _placements(counts, out, last_opener)
        opener = seat if not counts[seat] and alive == 0 else _in_or_next(counts, seat)
    else:
        opener = _in_or_next(counts, seat)
    return _new(State, (r, counts, rnd + 1, opener, palifico, used, out, None, (), -1, -1,
                        _ladder(r.ones, sum(counts)), result, placements))


def _placements(counts: tuple[int, ...], out: tuple[int, ...], last_opener: int) -> tuple[int, ...]:
    """Place per seat: survivors by dice left (ties by seat order from the last
    opener), then the eliminated, later out is better."""
    n = len(counts)
    survivors = [s for s, c in enumerate(counts) if c]
    if len(survivors) > 1:
        survivors.sort(key=lambda s: (-counts[s], (s - last_opener) % n))
    places = [0] * n
    place = 0
    for s in survivors:
        place += 1
        places[s] = place
    for s in reversed(out):
        place += 1
        places[s] = place
    return tuple(places)


def winner(state: State) -> int | None:
    """The seat placed first, once the match is over."""
    if state.placements is None:
        return None
    return state.placements.index(1)
