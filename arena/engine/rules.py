"""The rules of Dudo as the referee enforces them (docs/rules.md).

Pure and deterministic: no I/O, no global randomness. Dice are an input
(:func:`deal`), so the same dice and the same actions always give the same
match. States are immutable; every transition returns a new state.

Hot-path notes (the referee loop and benchmarks/engine.py run through here;
re-run the benchmark after changing ``new_match``, ``deal``, ``legal_actions``
or ``apply``): bids are interned :class:`Bid` objects; every bid for the dice
in play sits in a cached, totally ordered *ladder*, so the legal actions after
a standing bid are one slice of a cached tuple (raises, then the calls) and
the legal summary is one bisect per face; a state is a ``NamedTuple`` built
with ``tuple.__new__``; initial states are shared (they are immutable); a call
is judged inside :func:`apply`, and every round (called or void) ends in
:func:`_next_round`.
"""

from __future__ import annotations

import dataclasses
import itertools
from bisect import bisect_right as _bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Literal, NamedTuple

from mypy_extensions import mypyc_attr

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
VeteranFrom = Literal["own", "any"]


def _by_fields(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """``__reduce__`` of a frozen dataclass compiled as a native class (mypyc):
    rebuilt by its constructor from its fields, since a native frozen class
    cannot be restored field by field (a worker process or Ray gets actions
    and rule specs by pickle)."""
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)

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
        KeySpec(
            "ones",
            str,
            "convert",
            "how bids on aces rank: halve/double (convert), above 6 at each quantity (rank_high), lowest face (plain)",
            choices=("convert", "rank_high", "plain"),
        ),
        KeySpec("open_on_ones", bool, False, "the opening bid may be on aces"),
        KeySpec("calza", bool, True, "the player to act may call calza (exactly)"),
        KeySpec(
            "calza_reward",
            str,
            "regain",
            "right calza: caller regains a die, or the bidder loses one",
            choices=("regain", "bidder_loses"),
        ),
        KeySpec("calza_min_players", int, 3, "calza only while at least this many players are in", low=2),
        KeySpec("palifico", bool, True, "a player first left with one die opens a palifico round"),
        KeySpec("palifico_change_face", bool, False, "a one-die player may change face in palifico"),
        KeySpec("palifico_min_players", int, 3, "no palifico with fewer players left", low=2),
        KeySpec(
            "penalty",
            str,
            "one",
            "dudo loser loses one die, or max(1, |q - count|) dice",
            choices=("one", "difference"),
        ),
        KeySpec("seating", str, "roll", "seats by a dice roll, or in the schedule's order", choices=("roll", "fixed")),
        KeySpec("first", str, "roll", "the opener of round 1: by a dice roll, or seat 0", choices=("roll", "seat0")),
        KeySpec("max_rounds", int, 1000, "safety cap on rounds; then rank by dice left", low=1),
        # The variant keys (protocol 2) come last and are written out only
        # when not at their default (OPTIONAL_KEYS), so that a rule set without
        # them reads, records and messages exactly as it did before they existed.
        KeySpec(
            "dead_mans_calza",
            bool,
            False,
            "a player who is out may call calza once per match; right, they return to the match",
        ),
        KeySpec(
            "dead_mans_dice", int, 2, "the dice a right dead man's calza returns with (at most dice)", low=1, high=10
        ),
        KeySpec("veteran_palifico", bool, False, "a veteran of a palifico round may change face in a later one"),
        KeySpec(
            "veteran_from", str, "own", "a veteran survived their own palifico round, or any", choices=("own", "any")
        ),
    )
}

# Keys written out (to_dict: records, match_start, run configs) only when not at
# their default; a bot must declare it plays the variant a switch turns on
# (arena/botfile/supports.py, OPT_IN_KEYS).
OPTIONAL_KEYS: Final = ("dead_mans_calza", "dead_mans_dice", "veteran_palifico", "veteran_from")

# The keys that shape one round between two players (no calza, no palifico
# with two in): what a solved policy is keyed by (arena/solve/policy.py,
# arena/sdk/policy.py) and what arena exploit describes.
ROUND_KEYS: Final = ("wild_ones", "ones", "open_on_ones", "penalty")

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


_RESOLVED: dict[tuple[Any, ...], Rules] = {}  # Rules.from_dict's mappings seen (validated), bounded
_RESOLVED_MAX: Final = 256


# Not a native class when compiled (arena/compiled.py): a native one checks each
# field's type as it is set, before __post_init__ can say which key is wrong
# (``calza: 1`` would be a TypeError instead of a RulesError naming the key).
@mypyc_attr(native_class=False)
@dataclass(frozen=True, slots=True)
class Rules:
    """A validated, immutable rule set: every key of docs/rules.md.

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
    dead_mans_calza: bool = False
    dead_mans_dice: int = 2
    veteran_palifico: bool = False
    veteran_from: VeteranFrom = "own"

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            KEYS[f.name].check(getattr(self, f.name))

    @classmethod
    def preset(cls, name: str = "classic", overrides: dict[str, Any] | None = None) -> Rules:
        """The named preset (docs/rules.md, Presets) with ``overrides`` applied on top."""
        if name not in PRESETS:
            raise RulesError(f"preset {name!r} does not exist; use one of {', '.join(PRESETS)}")
        merged = dict(PRESETS[name])
        merged.update(overrides or {})
        return cls.from_dict(merged)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rules from a mapping of keys (missing keys take the default).

        A mapping seen before (same keys in the same order, same values of the
        same types) gives the same instance without validating it again: the
        referee resolves its match's rules, and a bot its ``match_start``'s,
        once per match, and a run has a handful of rule sets.
        """
        # The types too: 1 == True and 5 == 5.0, but only one of each pair is valid.
        memo = (cls, tuple(data.items()), tuple(map(type, data.values())))
        try:
            known = _RESOLVED.get(memo)
        except TypeError:  # an unhashable value, which no key takes: validated (and refused) below
            known, hashable = None, False
        else:
            hashable = True
        if known is not None:
            return known
        for key, value in data.items():
            if key not in KEYS:
                raise RulesError(f"rule {key!r} (set to {value!r}) does not exist; the keys are {', '.join(KEYS)}")
        rules = cls(**data)
        if hashable:
            if len(_RESOLVED) >= _RESOLVED_MAX:  # a process that has made many (a test suite): start over
                _RESOLVED.clear()
            _RESOLVED[memo] = rules
        return rules

    def to_dict(self) -> dict[str, Any]:
        """Every key with its value, in the rule book's order (docs/rules.md, Keys; the form records carry),
        but the variant keys (``OPTIONAL_KEYS``) only where they are not at their default."""
        out = {name: getattr(self, name) for name in KEYS}
        for name in OPTIONAL_KEYS:
            if out[name] == KEYS[name].default:
                del out[name]
        return out

    def replace(self, **overrides: Any) -> Rules:
        return self.from_dict({**self.to_dict(), **overrides})


def parse_value(key: str, text: str) -> Any:
    """Parse a command-line ``key=value`` value for rule ``key`` (``--set``)."""
    if key not in KEYS:
        raise RulesError(f"rule {key!r} (set to {text!r}) does not exist; the keys are {', '.join(KEYS)}")
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


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """Rule overrides from ``--set KEY=VALUE`` items (each value parsed for its key)."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise RulesError(f"--set {item!r}: write KEY=VALUE, e.g. --set dice=3")
        out[key.strip()] = parse_value(key.strip(), value)
    return out


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
    """ "I doubt": the standing bid is challenged. Text form ``"dudo"``."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)

    def __str__(self) -> str:
        return "dudo"


@dataclass(frozen=True, slots=True)
class Calza:
    """ "Exactly": the caller claims the standing bid is exactly right. Text ``"calza"``."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)

    def __str__(self) -> str:
        return "calza"


@dataclass(frozen=True, slots=True)
class Pass:
    """A player who is out lets a bid go by without a dead man's calza
    (``dead_mans_calza``). Text ``"pass"``."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)

    def __str__(self) -> str:
        return "pass"


Action = Bid | Dudo | Calza | Pass
DUDO: Final = Dudo()
CALZA: Final = Calza()
PASS: Final = Pass()
MAX_QUANTITY: Final = MAX_PLAYERS * 10


@cache
def _bid(quantity: int, face: int) -> Bid:
    return Bid(quantity, face)


def bid(quantity: int, face: int) -> Bid:
    """The interned :class:`Bid` (equal to ``Bid(quantity, face)``, faster to compare)."""
    return _bid(quantity, face)


def parse_action(text: object) -> Action:
    """Parse the one text form of an action: ``"5x3"``, ``"dudo"``, ``"calza"`` or ``"pass"``."""
    if type(text) is not str:
        raise InvalidAction(f"{text!r} is not an action; an action is text such as '5x3', 'dudo' or 'calza'")
    t = text.strip().lower()
    if t == "dudo":
        return DUDO
    if t == "calza":
        return CALZA
    if t == "pass":
        return PASS
    q, sep, f = t.partition("x")
    if sep and q.isdigit() and f.isdigit() and q.isascii() and f.isascii():
        quantity, face = int(q), int(f)
        if 1 <= face <= 6 and 1 <= quantity <= MAX_QUANTITY:
            return bid(quantity, face)
    raise InvalidAction(
        f"{text!r} is not an action; write QxF for a bid (e.g. '5x3': five 3s, "
        f"face 1-6), 'dudo', 'calza' or (a player who is out) 'pass'"
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
    rank: dict[Bid, int]  # a bid -> its position in `bids`
    openers: tuple[Bid, ...]  # the bids allowed as an opening bid (no aces)
    with_dudo: tuple[Action, ...]  # bids + (DUDO,): legal actions are one slice of it
    with_calls: tuple[Action, ...]  # bids + (DUDO, CALZA)
    # positions[f][q - 1]: where bid (q, f) sits; increasing in q in every mode,
    # so the smallest legal quantity of a face is one bisect away (legal_summary).
    positions: tuple[tuple[int, ...], ...]


def _build_ladder(ones: str, total: int) -> _Ladder:
    bids = tuple(sorted((bid(q, f) for q in range(1, total + 1) for f in FACES), key=lambda b: bid_key(b, ones)))
    index = {b: i for i, b in enumerate(bids)}
    positions = ((),) + tuple(tuple(index[bid(q, f)] for q in range(1, total + 1)) for f in FACES)
    return _Ladder(
        total, bids, index, tuple(b for b in bids if b.face != 1), bids + (DUDO,), bids + (DUDO, CALZA), positions
    )


class _LadderCache(dict[int, _Ladder]):
    """total -> ladder for one ``ones`` mode, built on first use (a dict lookup is
    cheaper than an ``lru_cache`` call on the hot path)."""

    def __init__(self, ones: str) -> None:
        super().__init__()
        self.ones = ones

    def __missing__(self, total: int) -> _Ladder:
        ladder = self[total] = _build_ladder(self.ones, total)
        return ladder


_LADDERS: Final[dict[str, _LadderCache]] = {m: _LadderCache(m) for m in ("convert", "rank_high", "plain")}


def _ladder(ones: str, total: int) -> _Ladder:
    """Every bid for ``total`` dice in play, in the order of ``ones`` mode (cached)."""
    return _LADDERS[ones][total]


@cache
def _column(face: int, total: int) -> tuple[Bid, ...]:
    """The bids on one face, 1..total: the palifico raises once the face is fixed."""
    return tuple(bid(q, face) for q in range(1, total + 1))


def aces_wild(rules: Rules, palifico: bool) -> bool:
    """Whether aces count as the bid's face this round: wild aces, and not a
    palifico round. The one statement of the rule; everything that counts a
    round's dice (the engine, the run's tables, the viewer, the SDK, the
    browser table) asks here."""
    return rules.wild_ones and not palifico


def aces_count_as(rules: Rules, palifico: bool, face: int) -> bool:
    """Whether aces add to the count of ``face`` this round: :func:`aces_wild`,
    and ``face`` is not aces themselves (what :func:`count_matching` takes)."""
    return face != 1 and rules.wild_ones and not palifico


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
    count: int | None  # type: ignore[assignment]  # the record's name; shadows tuple.count
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
    top: int  # ladder index of the standing bid; -1 when none (always -1 in palifico)
    ladder: _Ladder  # every bid for the dice in play, in order (cached, shared)
    last: RoundResult | None  # the round resolved most recently
    placements: tuple[int, ...] | None
    spent: tuple[bool, ...]  # per seat: may no longer make a dead man's calza (made one, or faulted)
    veterans: tuple[bool, ...]  # per seat: has survived a palifico round (veteran_palifico)

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


# The hot path builds states and results with tuple.__new__ and unpacks them
# positionally: a NamedTuple's own constructor costs several times as much.
_new = tuple.__new__
_chain = itertools.chain.from_iterable


# Initial states by (id(rules), players, opener). A state is immutable, so one
# can be shared; the cache holds its Rules, so an id cannot be reused while its
# entry lives, and the ``is`` check below guards it all the same.
_INITIAL: dict[tuple[int, Any, Any], State] = {}


def new_match(rules: Rules, players: int, opener: int = 0) -> State:
    """A match about to deal round 1, opened by ``opener`` (see :mod:`arena.engine.dice` for rolls)."""
    try:
        state = _INITIAL[(id(rules), players, opener)]
        if state[0] is rules:
            return state
    except (KeyError, TypeError):
        pass
    if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise StateError(f"players: {players!r} is not allowed; Dudo Arena plays 2 to 10 players")
    if type(opener) is not int or not 0 <= opener < players:
        raise StateError(f"opener: seat {opener!r} does not exist at a table of {players}")
    if not isinstance(rules, Rules):
        raise StateError(f"rules: {rules!r} is not a Rules (use Rules.preset)")
    n = rules.dice
    no = (False,) * players
    state = _new(
        State,
        (
            rules,
            (n,) * players,
            1,
            opener,
            False,
            no,
            (),
            None,
            (),
            -1,
            -1,
            _LADDERS[rules.ones][n * players],
            None,
            None,
            no,
            no,
        ),
    )
    if len(_INITIAL) >= 1024:  # bounded: a long run may build many Rules objects
        _INITIAL.clear()
    _INITIAL[(id(rules), players, opener)] = state
    return state


def deal(state: State, dice: Sequence[Sequence[int]]) -> State:
    """Start the round with the rolled dice (one list per seat; empty for seats out)."""
    r, counts, rnd, opener, pal, used, out, old, _, _, _, ladder, last, places, spent, vets = state
    if places is not None:
        raise StateError("the match is over; there is no round to deal")
    if old is not None:
        raise StateError(f"round {rnd} is already dealt")
    hands = tuple(map(tuple, dice))  # tuple(t) is t for a tuple: no copy
    if tuple(map(len, hands)) != counts or not _FACE_SET.issuperset(_chain(hands)):
        _bad_deal(counts, hands)
    return _new(State, (r, counts, rnd, opener, pal, used, out, hands, (), opener, -1, ladder, last, None, spent, vets))


def _bad_deal(counts: tuple[int, ...], hands: tuple[tuple[Any, ...], ...]) -> None:
    if len(hands) != len(counts):
        raise StateError(f"deal: {len(hands)} hands for {len(counts)} seats")
    for seat, (h, c) in enumerate(zip(hands, counts)):
        if len(h) != c or not _FACE_SET.issuperset(h):
            raise StateError(f"deal: seat {seat} holds {c} dice, got {h!r} (faces are 1-6)")


def _may_change_face(state: State) -> bool:
    """The player to act may change face in this palifico round: one die and
    ``palifico_change_face``, or a veteran under ``veteran_palifico``."""
    r, seat = state.rules, state.to_act
    return (r.palifico_change_face and state.counts[seat] == 1) or (r.veteran_palifico and state.veterans[seat])


def _dead_turn(state: State) -> bool:
    """A player who is out is asked for a dead man's calza (``dead_mans_calza``)."""
    return state.to_act >= 0 and not state.counts[state.to_act]


def _palifico_raises(state: State) -> tuple[Bid, ...]:
    """Legal bids in a palifico round: any opening bid, then more of the same face.

    With ``palifico_change_face`` a player holding one die (with
    ``veteran_palifico`` a veteran) may also change face, with the ordinary
    (plain) order since aces are not wild.
    """
    total = state.total
    if not state.history:
        return _LADDERS["plain"][total].bids
    standing = state.history[-1][1]
    if _may_change_face(state):
        ladder = _LADDERS["plain"][total]
        return ladder.bids[ladder.rank[standing] + 1 :]
    return _column(standing.face, total)[standing.quantity :]


def legal_bids(state: State) -> tuple[Bid, ...]:
    """Every bid the player to act may make now, lowest first."""
    if state.to_act < 0 or state.dice is None or not state.counts[state.to_act]:
        return ()
    if state.palifico:
        return _palifico_raises(state)
    if state.top < 0:
        return state.ladder.bids if state.rules.open_on_ones else state.ladder.openers
    return state.ladder.bids[state.top + 1 :]


def calza_allowed(state: State) -> bool:
    """Calza may be called now: enabled, after a bid, with enough players in
    (or a dead man's calza: a player who is out is asked only while they may make one)."""
    r = state.rules
    if _dead_turn(state):
        return bool(state.history)
    # Every seat out appears once in ``out``, so the players in are n - len(out).
    return (
        r.calza
        and bool(state.history)
        and state.to_act >= 0
        and len(state.counts) - len(state.out) >= r.calza_min_players
    )


def legal_actions(state: State) -> tuple[Action, ...]:
    """Every action the player to act may take now (bids lowest first, then calls)."""
    seat = state.to_act
    if seat >= 0 and not state.counts[seat]:  # a dead man's turn: calza or let the bid go
        return _DEAD_ACTIONS
    top = state.top
    if top >= 0:
        # A standing bid in an ordinary round (palifico rounds keep top at -1):
        # the raises and the calls are one slice of a cached tuple.
        r = state.rules
        if r.calza and len(state.counts) - len(state.out) >= r.calza_min_players:
            return state.ladder.with_calls[top + 1 :]
        return state.ladder.with_dudo[top + 1 :]
    if state.palifico or state.to_act < 0:
        bids = legal_bids(state)
        if not state.history:
            return bids
        if calza_allowed(state):
            return bids + (DUDO, CALZA)
        return bids + (DUDO,)
    # The opening bid.
    return state.ladder.bids if state.rules.open_on_ones else state.ladder.openers


class LegalSummary(NamedTuple):
    """The compact legal-move summary a ``turn`` message carries (docs/protocol.md)."""

    dudo: bool
    calza: bool
    min_quantity: dict[int, int]  # face -> smallest legal quantity; absent = may not bid
    max_quantity: int
    may_pass: bool  # a dead man's turn: calza or pass, nothing else


def legal_summary(state: State) -> LegalSummary:
    """``dudo``, ``calza``, the smallest legal quantity per face and ``max_quantity``.

    Exact, because for every face the legal quantities run from the minimum up
    to the dice in play (the order is monotone in quantity for a fixed face).
    Computed per face by bisecting the face's ladder positions, not by listing
    the legal bids (a ``turn`` message carries it on every decision).
    """
    total = state.total
    mins: dict[int, int] = {}
    if _dead_turn(state):
        return LegalSummary(False, bool(state.history), mins, total, True)
    if state.to_act >= 0 and state.dice is not None:
        hist = state.history
        if state.palifico:
            ladder, top = _LADDERS["plain"][total], -1
            if hist:
                standing = hist[-1][1]
                if _may_change_face(state):
                    top = ladder.rank[standing]
                else:
                    ladder = None  # type: ignore[assignment]  # the face is fixed
                    if standing.quantity < total:
                        mins[standing.face] = standing.quantity + 1
        else:
            ladder, top = state.ladder, state.top
        if ladder is not None:
            skip_aces = top < 0 and not state.palifico and not state.rules.open_on_ones
            positions = ladder.positions
            for f in FACES:
                k = _bisect_right(positions[f], top)  # f's bids at or below the standing bid
                if k < total and not (f == 1 and skip_aces):
                    mins[f] = k + 1
    return LegalSummary(bool(state.history), calza_allowed(state), mins, total, False)


def why_illegal(state: State, action: object) -> str | None:
    """``None`` if ``action`` is legal now, else the reason in words (anything
    but a :class:`Bid`, ``DUDO`` or ``CALZA`` is no action: typed ``object``, as
    checked here, so that compiled code takes it too)."""
    if state.placements is not None:
        return "the match is over"
    if state.dice is None or state.to_act < 0:
        return "the round has not been dealt"
    if _dead_turn(state):
        if isinstance(action, (Calza, Pass)):
            return None
        return "a player who is out may only call calza (dead man's calza) or pass"
    if isinstance(action, Pass):
        return "only a player who is out passes (dead man's calza); a player in bids or calls"
    if isinstance(action, Bid):
        q, f = action.quantity, action.face
        if not (type(q) is int and type(f) is int) or f not in FACES:
            return "a bid is a whole quantity and a face from 1 to 6"
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
        if state.palifico and f != standing.face and not _may_change_face(state):
            return f"in a palifico round the face is fixed at {standing.face}; raise the quantity"
        if r.ones == "convert" and f == 1 and standing.face != 1 and not state.palifico:
            return f"switching to aces after {standing} needs at least {(standing.quantity + 1) // 2} aces"
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


def _refuse(state: State, action: object) -> None:
    """Raise the right error for an action ``apply`` cannot take."""
    if type(action) is Bid and not (type(action[0]) is int and type(action[1]) is int):
        raise InvalidAction(f"bid {action!r}: quantity and face must be integers")
    raise IllegalAction(action, why_illegal(state, action) or "not allowed")


def apply(state: State, action: object) -> State:
    """The state after the player to act takes ``action``; raises :class:`IllegalAction`
    (anything but an action included: see :func:`why_illegal`)."""
    r, counts, rnd, opener, pal, used, out, dice, hist, seat, top, ladder, last, _, spent, vets = state
    if seat < 0:
        raise IllegalAction(action, why_illegal(state, action) or "no player is to act")
    if not counts[seat]:
        return _dead_man(state, action)
    if type(action) is Bid:
        if pal:
            if action not in _palifico_raises(state):
                _refuse(state, action)
            idx = -1
        else:
            idx = ladder.rank.get(action, -1)
            if idx <= top or (top < 0 and not r.open_on_ones and action[1] == 1):
                _refuse(state, action)
        b = ladder.bids[idx] if idx >= 0 else action
        if b is not action:
            # Equal to a legal bid but not the interned one: keep only exact ints.
            if type(action[0]) is not int or type(action[1]) is not int:
                _refuse(state, action)
        # The next seat still in, clockwise.
        n = len(counts)
        nxt = seat + 1
        if nxt == n:
            nxt = 0
        while not counts[nxt]:
            nxt += 1
            if nxt == n:
                nxt = 0
        if r.dead_mans_calza:  # the players who are out may call it first
            nxt = _asker(counts, spent, seat, seat, nxt)
        return _new(
            State,
            (
                r,
                counts,
                rnd,
                opener,
                pal,
                used,
                out,
                dice,
                hist + ((seat, b),),
                nxt,
                idx,
                ladder,
                last,
                None,
                spent,
                vets,
            ),
        )
    # A call: judge the standing bid; _next_round sets up the next round.
    if not hist:
        _refuse(state, action)
    if type(action) is Dudo:
        kind = "dudo"
    elif type(action) is Calza and calza_allowed(state):
        kind = "calza"
    else:
        _refuse(state, action)
    bidder, (q, f) = hist[-1]
    count = 0
    if aces_count_as(r, pal, f):
        for hand in dice:  # type: ignore[union-attr]
            count += hand.count(f) + hand.count(1)
    else:
        for hand in dice:  # type: ignore[union-attr]
            count += hand.count(f)
    caller = seat
    if kind == "dudo":
        seat = bidder if count < q else caller
        was = counts[seat]
        if r.penalty == "one":
            now = was - 1
        else:
            now = was - min(max(1, abs(q - count)), was)
    elif count == q:
        if r.calza_reward == "regain":
            was = counts[seat]
            now = was + 1 if was < r.dice else was
        else:
            seat = bidder
            was = counts[seat]
            now = was - 1
    else:
        was = counts[seat]
        now = was - 1
    delta = now - was
    result = _new(RoundResult, (rnd, opener, pal, dice, hist, (caller, kind), count, (seat, delta), None))
    return _next_round(r, counts, rnd, opener, used, out, ladder, seat, now, ladder.total + delta, result, spent, vets)


_DEAD_ACTIONS: Final[tuple[Action, ...]] = (CALZA, PASS)


def _next_in(counts: tuple[int, ...], seat: int) -> int:
    """The next seat after ``seat``, clockwise, that holds dice."""
    n = len(counts)
    nxt = seat + 1 if seat + 1 < n else 0
    while not counts[nxt]:
        nxt = nxt + 1 if nxt + 1 < n else 0
    return nxt


def _asker(counts: tuple[int, ...], spent: tuple[bool, ...], bidder: int, after: int, live: int) -> int:
    """Who acts on ``bidder``'s bid after seat ``after``: the next player who is
    out and may still make a dead man's calza, clockwise before the bidder comes
    round again, else ``live`` (the next player still in after the bidder)."""
    n = len(counts)
    s = after + 1 if after + 1 < n else 0
    while s != bidder:
        if not counts[s] and not spent[s]:
            return s
        s = s + 1 if s + 1 < n else 0
    return live


def _dead_man(state: State, action: object) -> State:
    """A player who is out answers a bid: ``pass`` or a dead man's calza, which
    ends the round: right, they return with ``dead_mans_dice`` dice (at most
    ``dice``) and open the next round; wrong, no die moves, the call is spent,
    and the next player still in after them opens."""
    r, counts, rnd, opener, pal, used, out, dice, hist, seat, top, ladder, last, _, spent, vets = state
    if type(action) is Pass:
        bidder = hist[-1][0]
        nxt = _asker(counts, spent, bidder, seat, _next_in(counts, bidder))
        return _new(
            State, (r, counts, rnd, opener, pal, used, out, dice, hist, nxt, top, ladder, last, None, spent, vets)
        )
    if type(action) is not Calza or not hist:
        _refuse(state, action)
    q, f = hist[-1][1]
    count = count_matching(dice, f, aces_count_as(r, pal, f))  # type: ignore[arg-type]  # dealt
    now = min(r.dead_mans_dice, r.dice) if count == q else 0
    result = RoundResult(rnd, opener, pal, dice, hist, (seat, "calza"), count, (seat, now), None)  # type: ignore[arg-type]
    spent = spent[:seat] + (True,) + spent[seat + 1 :]
    return _next_round(r, counts, rnd, opener, used, out, ladder, seat, now, ladder.total + now, result, spent, vets)


def fault(state: State, seat: int) -> State:
    """``seat`` faulted: it is out at once, the round is void, the next seat in opens.

    A player who is out and faults when asked for a dead man's calza holds no
    dice in the round, so nothing is voided: its call is spent and the round
    goes on with the next player asked (a player out cannot stop a round)."""
    if state.placements is not None:
        raise StateError("the match is over")
    if state.dice is None:
        raise StateError("a fault voids the round in progress; deal the round first")
    if (
        type(seat) is not int or not (0 <= seat < len(state.counts)) or not (state.counts[seat] or seat == state.to_act)
    ):  # a player who is out faults only when asked
        raise StateError(f"seat {seat!r} is not in the match")
    r, counts, rnd, opener, pal, used, out, dice, hist, _, top, ladder, last, _, spent, vets = state
    # A seat that faulted is out for good: no dead man's calza either.
    spent = spent[:seat] + (True,) + spent[seat + 1 :]
    if not counts[seat]:
        bidder = hist[-1][0]
        nxt = _asker(counts, spent, bidder, seat, _next_in(counts, bidder))
        return _new(
            State, (r, counts, rnd, opener, pal, used, out, dice, hist, nxt, top, ladder, last, None, spent, vets)
        )
    result = RoundResult(state.round, state.opener, state.palifico, state.dice, state.history, None, None, None, seat)
    return _next_round(
        r, counts, rnd, opener, used, out, ladder, seat, 0, ladder.total - counts[seat], result, spent, vets
    )


def _next_round(
    r: Rules,
    before: tuple[int, ...],
    rnd: int,
    last_opener: int,
    used: tuple[bool, ...],
    out: tuple[int, ...],
    ladder: _Ladder,
    seat: int,
    now: int,
    total: int,
    result: RoundResult,
    spent: tuple[bool, ...],
    vets: tuple[bool, ...],
) -> State:
    """The state after round ``rnd`` (opened by ``last_opener``; ``before``, ``used``,
    ``out`` and ``ladder`` as the round's state had them): ``seat`` now holds
    ``now`` dice, ``total`` are in play. The fields come unpacked, as the
    callers already hold them (a call ends a round on the hot path)."""
    was = before[seat]
    counts = before if now == was else before[:seat] + (now,) + before[seat + 1 :]
    n = len(counts)
    if not now:
        if was:
            out = out + (seat,)
    elif not was:  # back by a dead man's calza: no longer placed
        out = tuple(s for s in out if s != seat)
    alive = n - len(out)
    palifico = False
    if now == 1 and was > 1 and not used[seat]:
        # The first time a player is left with one die (by any loss) is its only chance.
        used = used[:seat] + (True,) + used[seat + 1 :]
        palifico = r.palifico and alive >= r.palifico_min_players
    opener = seat
    if not now:
        opener = seat + 1 if seat + 1 < n else 0
        while not counts[opener]:
            opener = opener + 1 if opener + 1 < n else 0
    placements = None
    if alive <= 1 or rnd >= r.max_rounds:
        placements = _placements(counts, out, last_opener)
    if total != ladder.total:
        ladder = _LADDERS[r.ones][total]
    if r.veteran_palifico and result.palifico and result.fault is None:
        vets = _veterans(r.veteran_from, before, counts, last_opener, vets)
    return _new(
        State,
        (r, counts, rnd + 1, opener, palifico, used, out, None, (), -1, -1, ladder, result, placements, spent, vets),
    )


def _veterans(
    which: str, before: tuple[int, ...], after: tuple[int, ...], opener: int, vets: tuple[bool, ...]
) -> tuple[bool, ...]:
    """``vets`` after a palifico round decided by a call: its palifico player (the
    opener) if still in (``own``), or everyone who played it and is still in (``any``)."""
    if which == "own":
        if after[opener] and not vets[opener]:
            return vets[:opener] + (True,) + vets[opener + 1 :]
        return vets
    return tuple(v or bool(b and a) for v, b, a in zip(vets, before, after))


_SOLE: dict[tuple[int, ...], tuple[int, ...]] = {}  # out (one survivor left) -> placements


def _placements(counts: tuple[int, ...], out: tuple[int, ...], last_opener: int) -> tuple[int, ...]:
    """Place per seat: survivors by dice left (ties by seat order from the last
    opener), then the eliminated, later out is better."""
    n = len(counts)
    if len(out) == n - 1:  # the usual end: one survivor, and ``out`` says it all
        places = _SOLE.get(out)
        if places is not None:
            return places
    place_list = [1] * n
    place = n
    for s in out:  # the first out places last
        place_list[s] = place
        place -= 1
    if place > 1:  # several survivors: the match hit max_rounds
        survivors = [s for s, c in enumerate(counts) if c]
        survivors.sort(key=lambda s: (-counts[s], (s - last_opener) % n))
        for i, s in enumerate(survivors):
            place_list[s] = i + 1
        return tuple(place_list)
    places = tuple(place_list)
    if len(_SOLE) < 4096:
        _SOLE[out] = places
    return places


def winner(state: State) -> int | None:
    """The seat placed first, once the match is over."""
    if state.placements is None:
        return None
    return state.placements.index(1)
