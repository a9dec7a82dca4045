"""What a Python bot author imports: typed views of the game, actions, odds.

A bot file ``bots/<name>.py`` defines either a subclass of :class:`Bot`::

    from arena.sdk import Bot, Turn, Bid, DUDO

    class Cautious(Bot):
        def act(self, turn: Turn):
            ...
            return DUDO

or a plain function ``act(turn: Turn) -> Action``. The project's bot host
(:mod:`arena.protocol.host`) imports the file inside the sandbox and speaks the player
protocol for it; a fresh :class:`Bot` instance plays each match, with
``self.rng`` seeded from the match's ``seed``, so a bot that draws only on
``self.rng`` (or ``turn.rng``) plays the same match the same way every time.

No process, no referee here: just data and arithmetic. The protocol's
messages become these types in :mod:`arena.protocol.parse`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from arena.engine.odds import (
    BidLike,
    expected_count,
    face_probability,
    matching,
    p_at_least,
    p_exactly,
    probability,
    probability_exact,
)
from arena.engine.rules import (
    CALZA,
    DUDO,
    PASS,
    Action,
    Bid,
    Calza,
    Dudo,
    Pass,
    Rules,
    aces_wild,
    bid,
    parse_action,
)

__all__ = [
    "Action",
    "Bid",
    "Bot",
    "CALZA",
    "Calza",
    "DUDO",
    "Dudo",
    "Legal",
    "MatchInfo",
    "PASS",
    "Pass",
    "RoundEnd",
    "Turn",
    "bid",
    "dead_mans_call",
    "parse_action",
    # the odds helpers (arena.engine.odds)
    "expected_count",
    "face_probability",
    "matching",
    "p_at_least",
    "p_exactly",
    "probability",
    "probability_exact",
]

Reply = Action | str  # an action, or its text form ("5x3", "dudo", "calza", "pass")


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """The start of a match (``match_start``): who sits where and under which rules."""

    match: str
    seat: int
    players: int
    names: tuple[str, ...]
    rules: Rules
    seed: int


@dataclass(frozen=True, slots=True)
class Legal:
    """What may be done now: ``turn.legal``. ``may_pass`` (``pass`` in the
    message) marks a dead man's turn: you are out, and may call calza (if
    ``calza``) or pass, nothing else (docs/rules.md, Dead man's calza)."""

    dudo: bool
    calza: bool
    min_quantity: Mapping[int, int]  # face -> smallest legal quantity; absent: may not bid
    max_quantity: int
    may_pass: bool = False

    def can_bid(self, quantity: int, face: int) -> bool:
        low = self.min_quantity.get(face)
        return low is not None and low <= quantity <= self.max_quantity

    def is_legal(self, action: Action) -> bool:
        if isinstance(action, Bid):
            return self.can_bid(action.quantity, action.face)
        if isinstance(action, Dudo):
            return self.dudo
        if isinstance(action, Pass):
            return self.may_pass
        return isinstance(action, Calza) and self.calza

    def bids(self) -> Iterator[Bid]:
        """Every legal bid, face by face, lowest quantity first."""
        for face, low in sorted(self.min_quantity.items()):
            for q in range(low, self.max_quantity + 1):
                yield bid(q, face)

    def actions(self) -> list[Action]:
        """Every legal action: the bids, then dudo, calza and pass where allowed."""
        out: list[Action] = list(self.bids())
        if self.dudo:
            out.append(DUDO)
        if self.calza:
            out.append(CALZA)
        if self.may_pass:
            out.append(PASS)
        return out


@dataclass(frozen=True, slots=True)
class Turn:
    """Your turn (``turn``): your dice, everyone's dice counts, this round's bids."""

    match: MatchInfo
    round: int
    seat: int
    dice: tuple[int, ...]  # your own dice, sorted
    counts: tuple[int, ...]  # dice held by each seat (0 = out)
    palifico: bool
    history: tuple[tuple[int, Bid], ...]  # this round's bids, oldest first
    legal: Legal
    time_ms: int
    rng: random.Random = field(compare=False, repr=False)

    @property
    def rules(self) -> Rules:
        return self.match.rules

    @property
    def dead(self) -> bool:
        """You are out and asked for a dead man's calza: ``CALZA`` or ``PASS`` (``legal.may_pass``)."""
        return self.legal.may_pass

    @property
    def standing(self) -> Bid | None:
        """The bid on the table (the last one), or ``None`` when you open."""
        return self.history[-1][1] if self.history else None

    @property
    def total(self) -> int:
        """Dice in play."""
        return sum(self.counts)

    @property
    def unseen(self) -> int:
        """Dice in play that are not yours."""
        return sum(self.counts) - len(self.dice)

    @property
    def wild(self) -> bool:
        """Aces count as the bid face this round (not in palifico, not on aces)."""
        return aces_wild(self.match.rules, self.palifico)

    # --- the odds (arena.engine.odds) for this turn: your dice, the unseen dice, this round's wilds ---

    def probability(self, b: BidLike) -> float:
        """The chance that bid ``b`` (``Bid``, ``(q, f)`` or ``"5x3"``) is true, given your dice."""
        return probability(b, self.dice, self.unseen, wild=self.wild)

    def p_exact(self, b: BidLike) -> float:
        """The chance that bid ``b`` is exactly right: what a calza on it would win."""
        return probability_exact(b, self.dice, self.unseen, wild=self.wild)

    def expected(self, face: int) -> float:
        """The expected number of dice on the table counting for ``face``."""
        return expected_count(face, self.dice, self.unseen, wild=self.wild)

    def mine(self, face: int) -> int:
        """How many of your own dice count for ``face`` this round (wild aces included)."""
        return matching(face, self.dice, self.wild)

    def best_raise(self, probability: Callable[[Bid], float] | None = None) -> tuple[Bid | None, float]:
        """The legal bid most likely to be true (the smallest legal quantity of
        the best face; ties go to the higher face), with its probability;
        ``(None, 0.0)`` when no bid is legal (dudo always is then).
        ``probability`` replaces :meth:`probability` (a bot's own model)."""
        chance = probability or self.probability
        best: Bid | None = None
        p_best = -1.0
        for face, low in self.legal.min_quantity.items():
            b = bid(low, face)
            p = chance(b)
            if p > p_best or (p == p_best and best is not None and face > best.face):
                best, p_best = b, p
        return best, max(p_best, 0.0)


@dataclass(frozen=True, slots=True)
class RoundEnd:
    """How a round ended (``round_end``): every die shown, the whole bidding, the call and its result."""

    round: int
    dice: tuple[tuple[int, ...], ...]
    counts: tuple[int, ...]
    bid: tuple[int, Bid] | None  # (bidder seat, standing bid); None for a void round
    call: tuple[int, str] | None  # (caller seat, "dudo" | "calza")
    count: int | None
    change: tuple[int, int] | None  # (seat, delta)
    fault: tuple[int, str] | None  # (seat, kind) when the round was void
    history: tuple[tuple[int, Bid], ...] = ()  # every bid of the round, (seat, bid), oldest first
    palifico: bool = False  # the round was a palifico round


def dead_mans_call(turn: Turn, confident: float = 0.4, last_chance: float = 0.15) -> Action:
    """A sound answer to a dead man's turn (``turn.dead``): ``CALZA`` or ``PASS``.

    The call is free but made once, so it is worth making on a bid that is
    exact with a good chance, and on a fair one when no later chance may come.
    With no dice of one's own, the chance is binomial over every die in play
    (``turn.p_exact``); it peaks near 0.44 with two or three dice in play and
    falls towards 0.25 with ten, so waiting for ``confident`` (0.4) waits for
    the end game, where a return matters most. The match can end with this
    round when only two players are in and one holds a single die: then any
    bid exact with ``last_chance`` is called.
    """
    standing = turn.standing
    if standing is None or not turn.legal.calza:
        return PASS
    p = turn.p_exact(standing)
    alive = [c for c in turn.counts if c]
    last = len(alive) <= 2 and min(alive) == 1
    return CALZA if p >= confident or (last and p >= last_chance) else PASS


class Bot:
    """Base class for a Python bot. Override :meth:`act`; the rest is optional.

    A fresh instance plays each match: keep per-match memory on ``self``.
    ``self.match`` and ``self.rng`` are set before :meth:`start` is called.
    """

    match: MatchInfo
    rng: random.Random

    def start(self, match: MatchInfo) -> None:
        """The match begins (after ``self.match`` and ``self.rng`` are set)."""

    def act(self, turn: Turn) -> Reply:
        """Your move: a :class:`Bid`, ``DUDO``, ``CALZA``, ``PASS`` (a dead man's turn), or their text form."""
        raise NotImplementedError("a bot must define act(turn)")

    def round_end(self, result: RoundEnd) -> None:
        """A round ended; every die is shown in ``result.dice``."""

    def match_end(self, placements: Sequence[int]) -> None:
        """The match ended; ``placements[s]`` is seat s's place (1 = winner)."""
