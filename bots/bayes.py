"""Bayes: inference over the opponents' hands from their bids, learned opponent models, search.

Where a solved policy covers the state, it plays that; everywhere else it
reasons about what each opponent holds and how each opponent plays.

1. **Solved rounds.** In a two-player round that ``arena solve`` has solved
   (the CFR+ policy files in this bot's data folder ``bots/bayes/``, copied
   from ``bots/equilibrium/``: every round with at most 2 dice each, 1-1,
   1-2 and 2-2, of ``neller``, ``plain`` with wild aces, or two-player
   ``classic``; read by ``arena.sdk.policy.SolvedPolicies``), it looks up its information set
   and draws the action from the solved probabilities with ``self.rng``. The
   mixing is what makes it unexploitable there; no opponent model overrides it.

2. **How players play (the opponent model).** A player's policy is modelled
   in four parts, each a point of a fixed grid: the face of a raise (a softmax
   over legal faces of the player's own chance that the face's smallest bid is
   true, temperature ``beta``), its quantity (the smallest legal one with
   probability ``pi``, else a discretised normal around the player's expected
   count minus ``delta``), dudo (a sigmoid of a threshold minus the chance the
   standing bid is true and a weight times the chance of its best raise) and
   calza (a sigmoid of the chance the bid is exact). Each part may "read the
   bids" (``kappa``: each other player who bid a face is taken to hold one of
   it, as ``calza`` and ``equilibrium`` do). Every part is a noisy policy
   (a share ``eps`` of uniform play), so no action rules a hand out.

3. **Who plays how (learning from shown hands).** Every die is shown at
   ``round_end``, so each opponent's decisions of the round can be scored
   exactly under every grid point; each opponent keeps a log-posterior over
   each grid and plays, in our reckoning, its most probable point. The prior is
   the population of bots seen in earlier runs: ``tools/fit_bayes.py`` scores
   every decision of every bot of a run folder and writes ``bots/bayes/params.json``
   (a mixture of the bots' posteriors, each weighted as a few decisions, so a
   new opponent starts as "one of those, not yet known which" and a few rounds
   of its own hands decide). Nothing is kept between matches.

4. **What they hold (the belief).** For each opponent, a posterior over its
   hand: every multiset of its dice (up to 6 dice, 462 hands; a seeded sample
   of 360 above), weighted by the multinomial prior, then by Bayes' rule for
   each bid it makes: the model's chance of that face and quantity, times its
   chance of not calling the bid it topped (which depends on its hand's best
   raise too). Hands matter only through the dice counting for each face.

5. **What to do.** Values are in dice: losing one of ours is -1, another
   player losing one is worth ``OTHER_LOSS`` (1 heads-up), a right calza
   regains one. Dudo and calza are valued on the exact distribution of the
   other dice for the face (the opponents' posterior marginals convolved).
   Each candidate raise (per legal face, the smallest three quantities) is
   valued one step deep: the next player's answer under its model, summed
   exactly over its posterior (its dice for the face and for its best other
   face); when it raises, the round is followed player by player (each later
   player calls or raises by about ``CHAIN_STEP``) back to us. Heads-up, the
   best few raises are searched one level deeper over consistent deals: the
   opponent's hand drawn from its posterior, its answer from the model,
   deals grouped by the raise it would make (all that we would see), and
   against each raise the better of doubting it and raising again.
   Palifico (face fixed, aces not wild) and calza follow from the rules the
   legal-move tables give; the referee's ``legal`` is the last word, and an
   internal error falls back to the plain odds for that decision (counted in
   ``FALLBACKS``; the tests require none).

How it is computed: with numpy arrays (numpy is a dependency of the arena,
so the bot host's site-packages has it). A hand posterior is an array over the
hands; a bid's likelihood is looked up for every hand at once from small
(face, k) tables; every candidate raise is valued at once over (candidate, the
next player's dice for the face, for its best other face), and the heads-up
search over (deal, raise face, quantity); a shown decision is scored under a
whole grid at once. What depends only on the table's size, the rules and a
model's grid point (chance rows, the quantity model's tables, the candidates
and their legal answers, a scored decision's log-likelihoods) is kept from
decision to decision and match to match, in bounded tables: a process plays
many matches. None of it changes what is computed, only how often.

Deterministic per match seed: every draw (sampled hands, the deal sample, the
policy's mixing) comes from ``self.rng``; the kept tables hold only functions
of their keys, so what a process played before does not change a decision. A
decision takes about a millisecond of CPU (see docs/bots.md) against a budget
of ``time_ms``; the duel search scales its width with ``time_ms``. It
plays any table, the protocol 2 variants too (``SUPPORTS``; a dead man's turn
is :func:`arena.sdk.dead_mans_call`'s; a veteran's change of face in a
palifico round is a bid its model does not score).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from typing import Any, TypeVar

# numpy (a dependency of the arena, so in the site-packages the bot host sees) does the
# per-hand and per-grid-point arithmetic in arrays. One BLAS thread: OpenBLAS would otherwise
# start a thread per core at import, inside the sandbox's process allowance, for nothing here.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

from arena.sdk import CALZA, DUDO, Action, Bid, Bot, MatchInfo, RoundEnd, Turn, bid, dead_mans_call  # noqa: E402
from arena.sdk.policy import SolvedPolicies  # noqa: E402

SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

FACES = (1, 2, 3, 4, 5, 6)

K = TypeVar("K")
V = TypeVar("V")


class Kept(dict[K, V]):
    """A table kept from decision to decision and match to match, of at most ``limit`` entries: a
    full table starts over. What it holds are functions of their keys, so forgetting costs time,
    never a different decision. Looked up with the dict's own ``get`` (a hit costs what it did);
    filled with :meth:`put`."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


P_ONE = 1.0 / 6.0
P_WILD = 1.0 / 3.0

# ---------------------------------------------------------------------------
# Binomial tables: tail[n][k] = P(Bin(n, p) >= k), pmf[n][k] = P(Bin(n, p) = k)
# ---------------------------------------------------------------------------


class _Binom:
    def __init__(self, p: float) -> None:
        self.p = p
        self.pmf: list[list[float]] = []
        self.tail: list[list[float]] = []
        self.pmf_np: dict[int, np.ndarray] = {}

    def _grow(self, n: int) -> None:
        p, q = self.p, 1.0 - self.p
        while len(self.pmf) <= n:
            m = len(self.pmf)
            row = [math.comb(m, k) * p**k * q ** (m - k) for k in range(m + 1)]
            tail = [0.0] * (m + 2)
            acc = 0.0
            for k in range(m, -1, -1):
                acc += row[k]
                tail[k] = min(1.0, acc)
            self.pmf.append(row)
            self.tail.append(tail)

    def tail_row(self, n: int) -> list[float]:
        if n >= len(self.tail):
            self._grow(n)
        return self.tail[n]

    def pmf_row(self, n: int) -> list[float]:
        if n >= len(self.pmf):
            self._grow(n)
        return self.pmf[n]

    def pmf_array(self, n: int) -> np.ndarray:
        got = self.pmf_np.get(n)
        if got is None:
            got = self.pmf_np[n] = np.array(self.pmf_row(n))
        return got


BINOM = {P_ONE: _Binom(P_ONE), P_WILD: _Binom(P_WILD)}


def p_true_naive(n_unseen: int, p: float, need: int) -> float:
    """P(at least ``need`` of ``n_unseen`` fair dice match), ``p`` the per-die chance."""
    if need <= 0:
        return 1.0
    if need > n_unseen:
        return 0.0
    return BINOM[p].tail_row(n_unseen)[need]


def face_p(face: int, wild: bool) -> float:
    return P_WILD if wild and face != 1 else P_ONE


# ---------------------------------------------------------------------------
# Hands: every multiset of n dice as a count vector, with its prior weight
# ---------------------------------------------------------------------------


class _Hands:
    """Hands of ``n`` dice: count vectors, multinomial prior, matching counts per face."""

    __slots__ = ("n", "counts", "prior", "kwild", "kplain", "_arrays", "_prior")

    def __init__(self, n: int, counts: list[tuple[int, ...]], prior: list[float]) -> None:
        self.n = n
        self.counts = counts
        self.prior = prior
        # k[f - 1]: dice counting for face f (aces included for f != 1 when wild)
        self.kwild = [(c[0],) + tuple(c[0] + c[i] for i in range(1, 6)) for c in counts]
        self.kplain = [tuple(c) for c in counts]
        self._arrays: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._prior: np.ndarray | None = None

    def weights(self) -> np.ndarray:
        """The prior as a fresh array (a belief multiplies its own copy)."""
        if self._prior is None:
            self._prior = np.array(self.prior)
        return self._prior.copy()

    def arrays(self, wild: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, cell, flat): K[i, f - 1] the dice of hand i counting for face f; cell[(f - 1) H + i]
        the hand's cell of :meth:`HandBelief.joint`'s six tables, raveled ((f - 1) (n + 1)^2 +
        k (n + 1) + m, k its dice for f, m for its best other face; H hands); flat[i, f - 1] = (f - 1) (n + 1) + K[i, f - 1], where
        a (6, n + 1) table per face and k, raveled, holds hand i's entry for face f. Made once per
        hand set, kept with it."""
        got = self._arrays.get(wild)
        if got is None:
            kv = self.kwild if wild else self.kplain
            others = range(1, 6) if wild else range(6)
            side = self.n + 1
            cell = np.zeros((6, len(kv)), dtype=np.int64)
            for i, k in enumerate(kv):
                t1 = t2 = -1
                f1 = -1
                for g in others:
                    x = k[g]
                    if x > t1:
                        t2, t1, f1 = t1, x, g
                    elif x > t2:
                        t2 = x
                for f in range(6):
                    cell[f, i] = k[f] * side + (t2 if f == f1 else t1)
            K = np.array(kv, dtype=np.int64).reshape(len(kv), 6)
            cell += (side * side * np.arange(6))[:, None]  # face f's table at f (n + 1)^2, raveled
            got = self._arrays[wild] = (K, cell.ravel(), K + side * np.arange(6))
        return got


def _compositions(n: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(n,)]
    out = []
    for first in range(n, -1, -1):
        for rest in _compositions(n - first, parts - 1):
            out.append((first,) + rest)
    return out


_EXACT_HANDS: dict[int, _Hands] = {}
MAX_EXACT_DICE = 6  # 462 hands; above this a seeded sample of hands stands in for the enumeration
SAMPLED_HANDS = 360


def exact_hands(n: int) -> _Hands:
    h = _EXACT_HANDS.get(n)
    if h is None:
        counts = _compositions(n, 6)
        norm = 6.0**n
        fact = math.factorial(n)
        prior = []
        for c in counts:
            m = fact
            for x in c:
                m //= math.factorial(x)
            prior.append(m / norm)
        h = _EXACT_HANDS[n] = _Hands(n, counts, prior)
    return h


def sampled_hands(n: int, rng: Any) -> _Hands:
    counts = []
    for _ in range(SAMPLED_HANDS):
        c = [0] * 6
        for _ in range(n):
            c[rng.randrange(6)] += 1
        counts.append(tuple(c))
    w = 1.0 / SAMPLED_HANDS
    return _Hands(n, counts, [w] * SAMPLED_HANDS)


# ---------------------------------------------------------------------------
# The bid order (to rebuild what each opponent could bid at each point)
# ---------------------------------------------------------------------------


def bid_key(q: int, f: int, ones: str) -> int:
    if f == 1:
        if ones == "convert":
            return 16 * q + 7
        if ones == "rank_high":
            return 8 * q + 7
    return 8 * q + f


def min_quantity(q: int, f: int, face: int, ones: str) -> int:
    """Smallest quantity of ``face`` that outranks (q, f) in order ``ones``."""
    k = bid_key(q, f, ones)
    if face == 1:
        if ones == "convert":
            return (k - 7) // 16 + 1
        if ones == "rank_high":
            return (k - 7) // 8 + 1
        return (k - 1) // 8 + 1
    return (k - face) // 8 + 1


def legal_mins(rules: Any, standing: Bid | None, total: int, palifico: bool, one_die: bool) -> dict[int, int]:
    """face -> smallest legal quantity for a player to act (absent: face not biddable)."""
    out: dict[int, int] = {}
    if palifico:
        if standing is None:
            return {f: 1 for f in FACES}
        if not (rules.palifico_change_face and one_die):
            if standing.quantity < total:
                out[standing.face] = standing.quantity + 1
            return out
        ones = "plain"
    else:
        ones = rules.ones
        if standing is None:
            return {f: 1 for f in FACES if f != 1 or rules.open_on_ones}
    for f in FACES:
        m = min_quantity(standing.quantity, standing.face, f, ones)
        if m <= total:
            out[f] = m
    return out


# ---------------------------------------------------------------------------
# The opponent model: how a player with a given hand acts
# ---------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


_CREDITED: Kept[tuple[int, float, int, int, float], float] = Kept(200000)


def p_seen(unseen: int, p: float, need: int, credited: int, kappa: float) -> float:
    """P(at least ``need`` of ``unseen`` dice match) when ``credited`` of them are each taken
    to match with probability ``kappa`` (a player who reads bids: a bidder of the face holds
    one) and the rest with ``p``; ``kappa`` 0 means no credit (the naive odds)."""
    if need <= 0:
        return 1.0
    if need > unseen:
        return 0.0
    if not kappa or not credited:
        return BINOM[p].tail_row(unseen)[need]
    key = (unseen, p, need, credited, kappa)
    got = _CREDITED.get(key)
    if got is None:
        c = min(credited, unseen)
        rest = BINOM[p].tail_row(unseen - c)
        got = 0.0
        for j in range(c + 1):
            r = need - j
            t = 1.0 if r <= 0 else (rest[r] if r <= unseen - c else 0.0)
            got += math.comb(c, j) * kappa**j * (1.0 - kappa) ** (c - j) * t
        _CREDITED.put(key, got)
    return got


# Rows over a need (the dice still needed for a bid), padded so that any need an array of
# them can hold is an index: row[PAD + need]. No clipping, one lookup per array.
PAD = 128
_SEEN_ROWS: dict[tuple[int, float, int, float], np.ndarray] = {}
_EXACT_ROWS: dict[tuple[int, float], np.ndarray] = {}


def seen_row(unseen: int, p: float, credited: int, kappa: float) -> np.ndarray:
    """``row[PAD + need]`` = :func:`p_seen` (1 at or below need 0, 0 above ``unseen``). Kept
    across decisions and matches: the arguments take few values."""
    if not kappa or not credited:
        credited, kappa = 0, 0.0
    key = (unseen, p, credited, kappa)
    row = _SEEN_ROWS.get(key)
    if row is None:
        row = np.zeros(unseen + 1 + 2 * PAD)
        row[:PAD] = 1.0
        row[PAD : PAD + unseen + 1] = [p_seen(unseen, p, need, credited, kappa) for need in range(unseen + 1)]
        _SEEN_ROWS[key] = row
    return row


_SEEN_LISTS: dict[tuple[int, float, int, float], list[float]] = {}


def seen_list(unseen: int, p: float, credited: int, kappa: float) -> list[float]:
    """:func:`seen_row` as a list, for lookups one at a time (a list index is much cheaper than an
    array's)."""
    if not kappa or not credited:
        credited, kappa = 0, 0.0
    key = (unseen, p, credited, kappa)
    got = _SEEN_LISTS.get(key)
    if got is None:
        got = _SEEN_LISTS[key] = seen_row(unseen, p, credited, kappa).tolist()
    return got


_SEEN6: Kept[tuple[Any, ...], np.ndarray] = Kept(1000)  # each about 14 kB


def seen_rows6(unseen: int, wild: bool, credit: tuple[int, ...], kappa: float) -> np.ndarray:
    """The six faces' :func:`seen_row` stacked (row f - 1), kept (bounded)."""
    key = (unseen, wild, credit, kappa)
    got = _SEEN6.get(key)
    if got is None:
        got = _SEEN6.put(key, np.array([seen_row(unseen, face_p(f, wild), credit[f - 1], kappa) for f in FACES]))
    return got


_SEEN_BY_KAPPA: Kept[tuple[int, float, int], list[tuple[float, ...]]] = Kept(400)  # each about 40 kB


def seen_by_kappa(unseen: int, p: float, credited: int) -> list[tuple[float, ...]]:
    """``out[PAD + need]``: :func:`seen_list` at that need for each of ``KAPPAS``, kept."""
    key = (unseen, p, credited)
    got = _SEEN_BY_KAPPA.get(key)
    if got is None:
        got = _SEEN_BY_KAPPA.put(key, list(zip(*(seen_list(unseen, p, credited, c) for c in KAPPAS))))
    return got


def exact_row(unseen: int, p: float) -> np.ndarray:
    """``row[PAD + need]`` = :func:`exact_p` (0 outside 0..unseen)."""
    key = (unseen, p)
    row = _EXACT_ROWS.get(key)
    if row is None:
        row = np.zeros(unseen + 1 + 2 * PAD)
        row[PAD : PAD + unseen + 1] = BINOM[p].pmf_array(unseen)
        _EXACT_ROWS[key] = row
    return row


def padded(dists: np.ndarray, tails: bool) -> np.ndarray:
    """Per face (rows of ``dists``, distributions of a count): ``out[f, PAD + need]`` = P(count >= need)
    (1 at or below 0, as :func:`tail`), or with ``tails`` false P(count = need)."""
    faces, n = dists.shape
    # rows of one width whatever the count's range (up to 64 dice): an index into them, kept with
    # the candidates, then serves every table size
    out = np.zeros((faces, max(n, 64) + 2 * PAD))
    if tails:
        out[:, :PAD] = 1.0
        out[:, PAD : PAD + n] = np.minimum(1.0, np.cumsum(dists[:, ::-1], axis=1)[:, ::-1])
        out[:, PAD] = 1.0
    else:
        out[:, PAD : PAD + n] = dists
    return out


_CONV: dict[tuple[int, int], np.ndarray] = {}


def convolve6(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row by row (one per face), the distribution of the sum of two independent counts: every
    product a[f, i] b[f, j] added into cell (f, i + j) by one bincount."""
    la, lb = a.shape[1], b.shape[1]
    if la == 1:
        out: np.ndarray = b * a
        return out
    size = la + lb - 1
    cells = _CONV.get((la, lb))
    if cells is None:
        cells = _CONV[(la, lb)] = (
            np.add.outer(np.arange(la), np.arange(lb)).ravel() + size * np.arange(6)[:, None]
        ).ravel()
    products = a[:, :, None] * b[:, None, :]
    return np.bincount(cells, weights=products.ravel(), minlength=6 * size).reshape(6, size)


_KS = np.arange(64)  # 0..63: the dice of one hand, sliced to n + 1
_G6 = np.arange(6)
_C_ROWS = np.arange(64)  # row indices of a stack of per-candidate tables
_NOT_ACES = _G6 != 0
_BIG = 1 << 30
_BY_FACE: dict[tuple[str, int, bool], np.ndarray] = {}


def by_face(kind: str, n: int, wild: bool) -> np.ndarray:
    """Per face (rows 0-5), kept: ``"naive"`` the :func:`seen_row` of ``n`` unseen dice with no
    credit, ``"exact"`` the :func:`exact_row` of ``n`` dice, ``"pmf"`` the binomial pmf of ``n`` dice
    (a hand of ``n`` dice before any bid)."""
    key = (kind, n, wild)
    got = _BY_FACE.get(key)
    if got is None:
        if kind == "naive":
            rows = [seen_row(n, face_p(f, wild), 0, 0.0) for f in FACES]
        elif kind == "exact":
            rows = [exact_row(n, face_p(f, wild)) for f in FACES]
        else:
            rows = [BINOM[face_p(f, wild)].pmf_array(n) for f in FACES]
        got = _BY_FACE[key] = np.stack(rows)
    return got


def sigmoid_np(x: np.ndarray) -> np.ndarray:
    # the models' slopes and thresholds keep |x| under 100: exp cannot overflow
    out: np.ndarray = 1.0 / (1.0 + np.exp(-x))
    return out


class Context:
    """What a player faced at one point of a round (public information only): ``mins`` are its
    smallest legal quantities per face, ``credit[f - 1]`` the other players who had bid face f."""

    __slots__ = ("seat", "n", "total", "wild", "palifico", "standing", "mins", "calza", "credit")

    def __init__(
        self,
        seat: int,
        n: int,
        total: int,
        wild: bool,
        palifico: bool,
        standing: Bid | None,
        mins: dict[int, int],
        calza: bool,
        credit: tuple[int, ...],
    ) -> None:
        self.seat, self.n, self.total, self.wild, self.palifico = seat, n, total, wild, palifico
        self.standing, self.mins, self.calza, self.credit = standing, mins, calza, credit


def calza_allowed(rules: Any, counts: Sequence[int]) -> bool:
    return bool(rules.calza) and sum(1 for c in counts if c) >= rules.calza_min_players


def credit_of(seat: int, before: Sequence[tuple[int, Bid]]) -> tuple[int, ...]:
    """Per face, the other players who have bid it (each counted once)."""
    seen: list[set[int]] = [set(), set(), set(), set(), set(), set()]
    for s, b in before:
        if s != seat:
            seen[b.face - 1].add(s)
    return tuple(len(x) for x in seen)


def context(
    rules: Any,
    seat: int,
    before: Sequence[tuple[int, Bid]],
    counts: Sequence[int],
    palifico: bool,
    wild: bool,
    mins: dict[int, int] | None = None,
) -> Context:
    """What ``seat`` faces after the bids ``before`` (empty: it opens the round); ``mins``, if
    given, are :func:`legal_mins` for it (the bot keeps them)."""
    standing = before[-1][1] if before else None
    total = sum(counts)
    if mins is None:
        mins = legal_mins(rules, standing, total, palifico, counts[seat] == 1)
    return Context(
        seat,
        counts[seat],
        total,
        wild,
        palifico,
        standing,
        mins,
        standing is not None and calza_allowed(rules, counts),
        credit_of(seat, before),
    )


def face_feature(ctx: Context, face: int, k: int, kappa: float) -> float:
    """How well a hand with ``k`` dice counting for ``face`` supports bidding it here: its
    chance, as the player would reckon it, that the face's smallest legal bid (or its table
    average, if higher) is true."""
    p = face_p(face, ctx.wild)
    ref = max(ctx.mins[face], int(ctx.total * p + 0.5))
    return seen_list(ctx.total - ctx.n, p, ctx.credit[face - 1], kappa)[PAD + ref - k]


def face_row(ctx: Context, face: int, kappa: float) -> np.ndarray:
    """:func:`face_feature` for k = 0..n, as an array."""
    p = face_p(face, ctx.wild)
    ref = max(ctx.mins[face], int(ctx.total * p + 0.5))
    unseen = ctx.total - ctx.n
    return seen_row(unseen, p, ctx.credit[face - 1], kappa)[PAD + ref - _KS[: ctx.n + 1]]


def raise_tables(ctx: Context, kappa: float) -> list[tuple[int, np.ndarray]]:
    """For each legal face: (face index, the player's chance its smallest raise is true, per k)."""
    unseen = ctx.total - ctx.n
    ks = _KS[: ctx.n + 1]
    return [
        (f - 1, seen_row(unseen, face_p(f, ctx.wild), ctx.credit[f - 1], kappa)[PAD + low - ks])
        for f, low in ctx.mins.items()
    ]


def face_tables(ctx: Context, kappa: float, reference: bool) -> np.ndarray:
    """(6, n + 1): for each legal face f (row f - 1; zero rows for the others), over k = 0..n,
    :func:`face_feature` (``reference``) or the chance that its smallest raise is true (the rows
    of :func:`raise_tables`). Kept: the table's size, the legal faces and the credits recur."""
    key = (ctx.total, ctx.n, ctx.wild, tuple(ctx.mins.items()), ctx.credit, kappa, reference)
    got = _FACE_TABLES.get(key)
    if got is None:
        got = _FACE_TABLES.put(key, _make_face_tables(ctx, kappa, reference))
    return got


_FACE_TABLES: Kept[tuple[Any, ...], np.ndarray] = Kept(20000)


def _make_face_tables(ctx: Context, kappa: float, reference: bool) -> np.ndarray:
    n = ctx.n
    unseen = ctx.total - n
    out = [[0.0] * (n + 1)] * 6
    for f, low in ctx.mins.items():
        p = face_p(f, ctx.wild)
        if reference:
            low = max(low, int(ctx.total * p + 0.5))
        i = PAD + low
        out[f - 1] = seen_list(unseen, p, ctx.credit[f - 1], kappa)[i - n : i + 1][::-1]  # need low - k
    return np.array(out)


def best_raise_of(ctx: Context, kappa: float, kv: Sequence[int]) -> float:
    """:func:`best_raise_p` of :func:`raise_tables` for one hand ``kv``, without the tables."""
    unseen = ctx.total - ctx.n
    best = 0.0
    for f, low in ctx.mins.items():
        x = seen_list(unseen, face_p(f, ctx.wild), ctx.credit[f - 1], kappa)[PAD + low - kv[f - 1]]
        if x > best:
            best = x
    return best


def best_raises_by_kappa(ctx: Context, kv: Sequence[int]) -> list[float]:
    """:func:`best_raise_of` for each of ``KAPPAS``, in one pass over the faces."""
    unseen = ctx.total - ctx.n
    b0 = b1 = b2 = 0.0
    for f, low in ctx.mins.items():
        x0, x1, x2 = seen_by_kappa(unseen, face_p(f, ctx.wild), ctx.credit[f - 1])[PAD + low - kv[f - 1]]
        if x0 > b0:
            b0 = x0
        if x1 > b1:
            b1 = x1
        if x2 > b2:
            b2 = x2
    return [b0, b1, b2]


def best_raise_p(tables: list[tuple[int, np.ndarray]], kv: Sequence[int]) -> float:
    best = 0.0
    for fi, row in tables:
        x = float(row[kv[fi]])
        if x > best:
            best = x
    return best


def exact_p(unseen: int, p: float, need: int) -> float:
    if need < 0 or need > unseen:
        return 0.0
    return BINOM[p].pmf_row(unseen)[need]


class Model:
    """One opponent's policy, each part a point of its own grid:

    - calza: P(calza) = eps/2 + (1 - eps) sigmoid(a (p_exact - t)), where calza is allowed;
    - dudo (given no calza): P = eps/2 + (1 - eps) sigmoid(a (t - p_standing - w p_raise)),
      p_raise its chance that its best smallest raise is true: players doubt bids that look
      false to them, and also bids they cannot top safely;
    - face of a raise: softmax of beta x face_feature over the legal faces, mixed with eps uniform;
    - quantity: with probability pi (raises only) the smallest legal one, else a discretised
      normal around its own expected count for the face minus delta, mixed with eps uniform.

    The face and dudo parts reckon chances as the player would: with ``kappa`` > 0 it reads
    bids, taking each other bidder of a face to hold one with probability kappa.
    """

    __slots__ = (
        "beta",
        "eps_face",
        "face_kappa",
        "pi_min",
        "delta",
        "sigma",
        "eps_q",
        "dudo_t",
        "dudo_w",
        "dudo_a",
        "dudo_kappa",
        "eps_dudo",
        "calza_t",
        "calza_a",
        "eps_calza",
    )

    def __init__(
        self, face: Sequence[float], qty: Sequence[float], dudo: Sequence[float], calza: Sequence[float]
    ) -> None:
        self.beta, self.eps_face, self.face_kappa = face
        self.pi_min, self.delta, self.sigma, self.eps_q = qty
        self.dudo_t, self.dudo_w, self.dudo_a, self.dudo_kappa = dudo
        self.eps_dudo = DUDO_EPS
        self.calza_t, self.calza_a, self.eps_calza = calza

    def p_dudo(self, p_standing: float, p_raise: float) -> float:
        e = self.eps_dudo
        return 0.5 * e + (1.0 - e) * _sigmoid(self.dudo_a * (self.dudo_t - p_standing - self.dudo_w * p_raise))

    def p_calza(self, p_exact: float) -> float:
        e = self.eps_calza
        return 0.5 * e + (1.0 - e) * _sigmoid(self.calza_a * (p_exact - self.calza_t))

    def p_dudo_np(self, p_standing: np.ndarray, p_raise: np.ndarray) -> np.ndarray:
        e = self.eps_dudo
        return 0.5 * e + (1.0 - e) * sigmoid_np(self.dudo_a * (self.dudo_t - p_standing - self.dudo_w * p_raise))

    def p_calza_np(self, p_exact: np.ndarray) -> np.ndarray:
        e = self.eps_calza
        return 0.5 * e + (1.0 - e) * sigmoid_np(self.calza_a * (p_exact - self.calza_t))


_LEGAL: dict[tuple[int, ...], np.ndarray] = {}


def _legal_mask(mins: dict[int, int]) -> np.ndarray:
    key = tuple(mins)
    got = _LEGAL.get(key)
    if got is None:
        got = _LEGAL[key] = np.array([1.0 if f in mins else 0.0 for f in FACES])
    return got


_QTABLES: Kept[tuple[Any, ...], np.ndarray] = Kept(4000)


def q_table(
    ctx: Context,
    face: int,
    qty: int,
    pi_min: float,
    delta: float,
    sigma: float,
    eps_q: float,
) -> np.ndarray:
    """P(quantity ``qty`` | face ``face`` chosen, k of the player's dice count for it), k = 0..n.
    Kept, for every quantity at once: the other arguments recur."""
    lo = ctx.mins[face]
    key = (lo, ctx.total, ctx.n, face_p(face, ctx.wild), ctx.standing is not None, pi_min, delta, sigma, eps_q)
    got = _QTABLES.get(key)
    if got is None:
        got = _QTABLES.put(key, _make_q_table(ctx, face, pi_min, delta, sigma, eps_q))
    out: np.ndarray = got[:, qty - lo]
    return out


def _make_q_table(ctx: Context, face: int, pi_min: float, delta: float, sigma: float, eps_q: float) -> np.ndarray:
    """(k, quantity - lo) over every legal quantity lo..total of ``face``."""
    lo, hi = ctx.mins[face], ctx.total
    width = hi - lo + 1
    mu = (ctx.total - ctx.n) * face_p(face, ctx.wild) - delta + np.arange(ctx.n + 1)
    inv = 1.0 / (2.0 * sigma * sigma)
    atom = pi_min if ctx.standing is not None else 0.0
    qs = np.arange(lo, hi + 1)
    z = np.exp(-((qs[None, :] - mu[:, None]) ** 2) * inv).sum(axis=1)[:, None]
    g = np.where(z > 0, np.exp(-((qs[None, :] - mu[:, None]) ** 2) * inv) / np.where(z > 0, z, 1.0), 1.0 / width)
    lowest = np.zeros(width)
    lowest[0] = 1.0
    pm = atom * lowest + (1.0 - atom) * g
    out: np.ndarray = (1.0 - eps_q) * pm + eps_q / width
    return out


# ---------------------------------------------------------------------------
# Parameters: the grids and the population prior (fitted by tools/fit_bayes.py)
# ---------------------------------------------------------------------------

KAPPAS = (0.0, 0.6, 0.9)
FACE_GRID = [
    (b, e, c) for b in (-15.0, -6.0, -2.0, 0.0, 2.0, 6.0, 15.0, 40.0, 100.0) for e in (0.03, 0.15, 0.5) for c in KAPPAS
]
QTY_GRID = [
    (pm, d, s, e)
    for pm in (0.05, 0.4, 0.8, 0.97, 0.995)
    for d in (-1.0, 0.0, 1.0, 2.0)
    for s in (0.5, 1.2, 2.5)
    for e in (0.05, 0.3)
]
DUDO_T = (-0.2, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
DUDO_W = (-1.0, -0.6, -0.3, 0.0, 0.3, 0.6)
DUDO_A = (6.0, 30.0)
DUDO_EPS = 0.03
DUDO_GRID = [(t, w, a, c) for t in DUDO_T for w in DUDO_W for a in DUDO_A for c in KAPPAS]
CALZA_GRID = [(t, a, e) for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 2.0) for a in (8.0, 30.0) for e in (0.005, 0.05)]
PARTS = (("face", FACE_GRID), ("qty", QTY_GRID), ("dudo", DUDO_GRID), ("calza", CALZA_GRID))

# log(eps/2 + (1 - eps) sigmoid(z)) tabulated in steps of 1/_STEP: scoring the dudo grid at
# every round end is hundreds of these per decision seen
_STEP = 20
_ZMAX = 40
_LOGSIG = [
    math.log(0.5 * DUDO_EPS + (1.0 - DUDO_EPS) * _sigmoid(i / _STEP - _ZMAX)) for i in range(2 * _ZMAX * _STEP + 1)
]
_LOGSIG_TOP = len(_LOGSIG) - 1


def _log_p_dudo(z: float) -> float:
    i = int((z + _ZMAX) * _STEP + 0.5)
    return _LOGSIG[0 if i < 0 else (_LOGSIG_TOP if i > _LOGSIG_TOP else i)]


def _load_params() -> tuple[dict[str, list[float]], str]:
    """The fitted log-prior of every grid (bots/bayes/params.json) and a tag for the version
    string; a flat prior, tagged so, if the file is missing or does not fit the grids."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bayes", "params.json")
    flat = {name: [0.0] * len(grid) for name, grid in PARTS}
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        data = json.loads(raw)
        prior = {name: [float(x) for x in data["prior"][name]] for name, _ in PARTS}
    except (OSError, ValueError, KeyError, TypeError):
        return flat, "flat prior (no params.json)"
    if any(len(prior[name]) != len(grid) for name, grid in PARTS):
        return flat, "flat prior (params.json does not fit the grids)"
    return prior, "params " + hashlib.sha256(raw).hexdigest()[:12]


PRIOR, PRIOR_SOURCE = _load_params()
__version__ = f"1.0, {PRIOR_SOURCE}"  # sent in ready: a run records which fitted prior played


# The grids as arrays, so that a shown decision is scored under every point of a grid at once
_BETAS = np.array(sorted({g[0] for g in FACE_GRID}))
_FACE_BI = np.array([int(np.searchsorted(_BETAS, g[0])) for g in FACE_GRID])
_FACE_E = np.array([g[1] for g in FACE_GRID])
_FACE_CI = np.array([KAPPAS.index(g[2]) for g in FACE_GRID])
_DS = sorted({(g[1], g[2]) for g in QTY_GRID})
_DS_D = np.array([d for d, _ in _DS])
_DS_INV = np.array([1.0 / (2.0 * s * s) for _, s in _DS])
_QTY_DSI = np.array([_DS.index((g[1], g[2])) for g in QTY_GRID])
_QTY_PM = np.array([g[0] for g in QTY_GRID])
_QTY_E = np.array([g[3] for g in QTY_GRID])
_DUDO_T = np.array([g[0] for g in DUDO_GRID])
_DUDO_W = np.array([g[1] for g in DUDO_GRID])
_DUDO_A = np.array([g[2] for g in DUDO_GRID])
_DUDO_CI = np.array([KAPPAS.index(g[3]) for g in DUDO_GRID])
_CALZA_T = np.array([g[0] for g in CALZA_GRID])
_CALZA_A = np.array([g[1] for g in CALZA_GRID])
_CALZA_E = np.array([g[2] for g in CALZA_GRID])
_LOGSIG_NP = np.array(_LOGSIG)


# A shown decision's log-likelihood under every point of a grid depends on a few numbers (the
# player's chances as it reckoned them, the quantity's place): the arrays are kept by those
# numbers, which recur from round to round and match to match. Bounded: a full cache starts over.
_SCORES_MAX = {"face": 8192, "qty": 8192, "dudo": 4096, "calza": 2048}  # about 35 MB at most
_FACE_SCORES: Kept[tuple[Any, ...], np.ndarray] = Kept(_SCORES_MAX["face"])
_QTY_SCORES: Kept[tuple[Any, ...], np.ndarray] = Kept(_SCORES_MAX["qty"])
_DUDO_SCORES: Kept[tuple[Any, ...], np.ndarray] = Kept(_SCORES_MAX["dudo"])
_CALZA_SCORES: Kept[tuple[Any, ...], np.ndarray] = Kept(_SCORES_MAX["calza"])


def _scores(cache: Kept[tuple[Any, ...], np.ndarray], key: tuple[Any, ...], make: Any) -> np.ndarray:
    got = cache.get(key)
    if got is None:
        got = cache.put(key, make(*key))
    return got


def _face_scores(chosen: int, *feats: tuple[float, float, float]) -> np.ndarray:
    """The face part: a softmax over the legal faces of beta x face_feature (``feats``: per face,
    its face_feature for each of ``KAPPAS``), the face at ``chosen`` picked."""
    f = np.array(list(zip(*feats)))  # (kappa, face)
    z = np.exp(_BETAS[:, None, None] * (f[None, :, :] - 1.0)).sum(axis=2)  # beta x kappa
    num = np.exp(_BETAS[:, None] * (f[None, :, chosen] - 1.0))
    share = (num / z)[_FACE_BI, _FACE_CI]
    out: np.ndarray = np.log((1.0 - _FACE_E) * share + _FACE_E / len(feats))
    return out


def _qty_scores(lo: int, total: int, n: int, p: float, k: int, qty: int, atom_on: bool) -> np.ndarray:
    """The quantity part: ``qty`` of ``lo``..``total`` bid with ``k`` dice for the face."""
    width = total - lo + 1
    mu = (total - n) * p + k - _DS_D  # per (delta, sigma)
    qs = np.arange(lo, total + 1)
    z = np.exp(-((qs[None, :] - mu[:, None]) ** 2) * _DS_INV[:, None]).sum(axis=1)
    g = np.exp(-((qty - mu) ** 2) * _DS_INV)
    g = np.where(z > 0, g / np.where(z > 0, z, 1.0), 1.0 / width)[_QTY_DSI]
    if atom_on:
        g = _QTY_PM * (1.0 if qty == lo else 0.0) + (1.0 - _QTY_PM) * g
    out: np.ndarray = np.log((1.0 - _QTY_E) * g + _QTY_E / width)
    return out


def _calza_scores(x: float, called: bool) -> np.ndarray:
    """The calza part, ``x`` the chance that the standing bid is exact."""
    pz = 0.5 * _CALZA_E + (1.0 - _CALZA_E) * sigmoid_np(_CALZA_A * (x - _CALZA_T))
    out: np.ndarray = np.log(pz if called else 1.0 - pz)
    return out


def _dudo_scores(called: bool, *chances: float) -> np.ndarray:
    """The dudo part: ``chances`` are the standing bid's chance, then the best raise's, per kappa."""
    ps = np.array(chances[:3])[_DUDO_CI]
    pr = np.array(chances[3:])[_DUDO_CI]
    sign = 1.0 if called else -1.0  # log(1 - sigmoid(z)) with eps is the table at -z
    # the table's index as int() would take it (truncated towards zero), then clamped
    j = ((sign * _DUDO_A * (_DUDO_T - ps - _DUDO_W * pr) + _ZMAX) * _STEP + 0.5).astype(np.int64)
    out: np.ndarray = _LOGSIG_NP[np.clip(j, 0, _LOGSIG_TOP)]
    return out


class Profile:
    """What a match has shown of one opponent: the log-posterior of every grid point,
    part by part (the parts' likelihoods factorise, so each is fitted on its own)."""

    def __init__(self, prior: dict[str, list[float]] | None = None) -> None:
        prior = PRIOR if prior is None else prior
        self.logp = {name: np.array(prior[name], dtype=float) for name, _ in PARTS}
        self.model = self.best()

    def best(self) -> Model:
        """The most probable point of each grid (the first of equals)."""
        return Model(*(grid[int(self.logp[name].argmax())] for name, grid in PARTS))

    def observe_bid(self, ctx: Context, kv: Sequence[int], b: Bid) -> None:
        """A shown hand (``kv``: dice counting per face) bid ``b`` in ``ctx``."""
        if ctx.standing is not None:
            self.observe_call(ctx, kv, None)
        faces = list(ctx.mins)
        if len(faces) > 1:
            unseen = ctx.total - ctx.n
            # keyed by what the score depends on, the face_feature of each legal face per kappa (many
            # hands and tables share them: a hand with enough dice for a face has 1 whatever else)
            feats = []
            for f in faces:
                p = face_p(f, ctx.wild)
                feats.append(
                    seen_by_kappa(unseen, p, ctx.credit[f - 1])[
                        PAD + max(ctx.mins[f], int(ctx.total * p + 0.5)) - kv[f - 1]
                    ]
                )
            self.logp["face"] += _scores(_FACE_SCORES, (faces.index(b.face), *feats), _face_scores)
        atom_on = ctx.standing is not None
        key = (ctx.mins[b.face], ctx.total, ctx.n, face_p(b.face, ctx.wild), kv[b.face - 1], b.quantity, atom_on)
        self.logp["qty"] += _scores(_QTY_SCORES, key, _qty_scores)

    def observe_call(self, ctx: Context, kv: Sequence[int], call: str | None) -> None:
        """A shown hand facing ``ctx.standing`` called ``call`` ("dudo", "calza"; None: it raised)."""
        s = ctx.standing
        assert s is not None
        p = face_p(s.face, ctx.wild)
        unseen = ctx.total - ctx.n
        k = kv[s.face - 1]
        if ctx.calza:
            self.logp["calza"] += _scores(
                _CALZA_SCORES, (exact_p(unseen, p, s.quantity - k), call == "calza"), _calza_scores
            )
        if call == "calza":
            return
        key = (
            call == "dudo",
            *seen_by_kappa(unseen, p, ctx.credit[s.face - 1])[PAD + s.quantity - k],
            *best_raises_by_kappa(ctx, kv),
        )
        self.logp["dudo"] += _scores(_DUDO_SCORES, key, _dudo_scores)

    def refresh(self) -> None:
        self.model = self.best()


# ---------------------------------------------------------------------------
# Beliefs within a round: a posterior over each opponent's hand
# ---------------------------------------------------------------------------


_REPEAT6: dict[int, np.ndarray] = {}
_TILE6: dict[int, np.ndarray] = {}


def _repeat6(n: int) -> np.ndarray:
    """Indices that take a hand array to ``np.repeat(w, 6)`` (0 0 0 0 0 0 1 1 ...), kept per size."""
    got = _REPEAT6.get(n)
    if got is None:
        got = _REPEAT6[n] = np.repeat(np.arange(n), 6)
    return got


def _tile6(n: int) -> np.ndarray:
    """Indices that take a hand array to ``np.tile(w, 6)`` (0 1 ... n - 1 0 1 ...), kept per size."""
    got = _TILE6.get(n)
    if got is None:
        got = _TILE6[n] = np.tile(np.arange(n), 6)
    return got


class HandBelief:
    """The posterior over one opponent's hand this round, updated bid by bid."""

    __slots__ = ("hands", "kv", "K", "cell", "flat", "w", "informed", "_marg", "_joint", "wild")

    def __init__(self, hands: _Hands, wild: bool) -> None:
        self.hands = hands
        self.wild = wild
        self.kv = hands.kwild if wild else hands.kplain
        self.K, self.cell, self.flat = hands.arrays(wild)
        self.w = hands.weights()
        self.informed = False  # no bid seen yet: the marginals are plain binomials
        self._marg: np.ndarray | None = None
        self._joint: np.ndarray | None = None

    def update(self, model: Model, ctx: Context, b: Bid) -> None:
        """Bayes' rule for one bid: weight each hand by the model's chance of that bid."""
        n = ctx.n
        fi = b.face - 1
        faces = [f - 1 for f in ctx.mins]
        nf = len(faces)
        K = self.K
        like = q_table(ctx, b.face, b.quantity, model.pi_min, model.delta, model.sigma, model.eps_q)[K[:, fi]]
        if nf > 1:
            # the face's softmax: every hand's six entries of the (face, k) table in one lookup
            E = np.exp(model.beta * (face_tables(ctx, model.face_kappa, True) - 1.0))
            E *= _legal_mask(ctx.mins)[:, None]
            Eh = E.ravel()[self.flat]
            ef = model.eps_face
            like *= (1.0 - ef) * Eh[:, fi] / Eh.sum(axis=1) + ef / nf
        standing = ctx.standing
        if standing is not None:
            # it did not call: (1 - P(calza)) (1 - P(dudo)), dudo depending on its best raise too
            si = standing.face - 1
            p = face_p(standing.face, ctx.wild)
            unseen = ctx.total - n
            kd = model.dudo_kappa
            at_q = PAD + standing.quantity - K[:, si]
            ps = seen_row(unseen, p, ctx.credit[si], kd)[at_q]
            pr = face_tables(ctx, kd, False).ravel()[self.flat].max(axis=1)
            keep = 1.0 - model.p_dudo_np(ps, pr)
            if ctx.calza:
                keep *= 1.0 - model.p_calza_np(exact_row(unseen, p)[at_q])
            like *= keep
        w = self.w * like
        total = float(w.sum())
        if not total > 0.0:  # the model ruled out every hand: forget this bid
            return
        self.w = w / total if total < 1e-150 else w
        self.informed = True
        self._marg = None
        self._joint = None

    def marginals(self) -> np.ndarray:
        """marg[f - 1, k]: P(k of this hand's dice count for face f)."""
        if self._marg is None:
            side = self.hands.n + 1
            w = self.w
            m = np.bincount(self.flat.ravel(), weights=w[_repeat6(len(w))], minlength=6 * side)
            self._marg = (m / w.sum()).reshape(6, side)
        return self._marg

    def joint(self) -> np.ndarray:
        """joint[f - 1, k, m]: P(k dice count for face f, and m for its best other face)
        (aces left out of "other" when wild): what the next player's answer to a bid on f
        depends on."""
        if self._joint is None:
            side = self.hands.n + 1
            w = self.w
            J = np.bincount(self.cell, weights=w[_tile6(len(w))], minlength=6 * side * side)
            self._joint = (J / w.sum()).reshape(6, side, side)
        return self._joint

    def sample(self, count: int, rng: Any) -> list[tuple[tuple[int, ...], float]]:
        """``count`` hands (matching-count vectors) drawn by systematic resampling, each with weight
        1/count; all hands with their exact weights if there are no more than ``count`` of them."""
        w = self.w.tolist()
        total = sum(w)
        if len(w) <= count:
            return [(k, x / total) for k, x in zip(self.kv, w) if x]
        step = total / count
        at = rng.random() * step
        out = []
        acc = 0.0
        i = -1
        each = 1.0 / count
        for _ in range(count):
            while acc <= at and i + 1 < len(w):
                i += 1
                acc += w[i]
            out.append((self.kv[i], each))
            at += step
        return out


def tail(dist: np.ndarray, need: int) -> float:
    """P(X >= need) for X distributed as ``dist``."""
    if need <= 0:
        return 1.0
    if need >= len(dist):
        return 0.0
    return min(1.0, float(dist[need:].sum()))


def at(dist: np.ndarray, k: int) -> float:
    return float(dist[k]) if 0 <= k < len(dist) else 0.0


# ---------------------------------------------------------------------------
# Decisions
# ---------------------------------------------------------------------------

OTHER_LOSS = 0.35  # with three or more players in: another player losing a die, in our own dice
REGAIN_AT_MAX = 0.05  # a right calza at the maximum regains nothing (we open the next round)
CHAIN_STEP = 0.6  # quantity added per raise, on average, when following a round past the next player
RAISE_AGAIN = -0.25  # the round comes back to us: the value of having to raise again
DUEL_LEAF = 0.8  # heads-up leaf: raising again costs about this times the chance our best raise is false
DUEL_SEARCH = True
DUEL_HANDS = 48  # heads-up search: opponent hands per candidate (all of them if fewer), at 1000 ms
DUEL_CANDIDATES = 5  # heads-up search: raises searched, at 1000 ms
RAISE_SPAN = 3  # quantities tried per face: the smallest legal one and the next two
DEBUG: list[Any] | None = None  # development aid: set to a list to collect predictions and outcomes
FALLBACKS = 0  # decisions that fell back to the plain odds after an internal error (tests assert 0)


# ---------------------------------------------------------------------------
# Solved rounds: where a CFR+ policy covers the state, it is played as it is
# ---------------------------------------------------------------------------

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bayes")
POLICIES = SolvedPolicies(DATA, accept=lambda name: name != "params.json")  # read when first needed


_DOUBTS: Kept[tuple[Any, ...], np.ndarray] = Kept(500)


def chain_doubts(model: Model, unseen: int, wild: bool) -> np.ndarray:
    """``row[f - 1, PAD + need]``: the chance that a player of ``model`` with ``unseen`` dice unseen
    doubts a bid of face f that needs ``need`` more of its own dice, reckoning naively (the bid's
    chance, and its smallest raise's one more). Kept: a model and a table size recur."""
    key = (model.dudo_t, model.dudo_w, model.dudo_a, model.eps_dudo, unseen, wild)
    got = _DOUBTS.get(key)
    if got is None:
        naive = by_face("naive", unseen, wild)
        raised = np.zeros_like(naive)
        raised[:, :-1] = naive[:, 1:]
        got = _DOUBTS.put(key, model.p_dudo_np(naive, raised))
    return got


class Candidates:
    """Candidate raises (``bids``; ``fi`` their faces - 1, ``qa`` their quantities) and, after each,
    whether the next player can raise the same face (``same``) and the smallest quantity of its
    best other face (``other``; aces left out when wild, 0 if none)."""

    __slots__ = ("bids", "fi", "qa", "same", "other", "_at")

    def __init__(self, bids: list[Bid], fi: np.ndarray, qa: np.ndarray, same: np.ndarray, other: np.ndarray) -> None:
        self.bids, self.fi, self.qa, self.same, self.other = bids, fi, qa, same, other
        self._at: dict[tuple[int, int], np.ndarray] = {}

    def chain_at(self, i: int, n: int) -> np.ndarray:
        """(candidate, k): the index ``PAD + need`` of the bid about ``i`` raises on (``CHAIN_STEP``
        each), for a later player with k of its ``n`` dice for the face. Kept with the candidates."""
        got = self._at.get((i, n))
        if got is None:
            got = self._at[(i, n)] = PAD + (self.qa + i * CHAIN_STEP + 0.5).astype(np.int64)[:, None] - _KS[: n + 1]
        return got

    def flat_at(self, i: int, n: int, width: int) -> np.ndarray:
        """:meth:`chain_at` as an index of a raveled per-face table of rows ``width`` long (one
        lookup instead of two, the same entries)."""
        key = (i, n, width)
        got = self._at.get(key)
        if got is None:
            got = self._at[key] = self.fi[:, None] * width + self.chain_at(i, n)
        return got

    def flat_back(self, seats: int, width: int) -> np.ndarray:
        """:meth:`back_at` as an index of a raveled per-face table of rows ``width`` long."""
        key = (seats, -1, width)
        got = self._at.get(key)
        if got is None:
            got = self._at[key] = self.fi * width + self.back_at(seats)
        return got

    def other_true(self, unseen: int, n: int, wild: bool) -> np.ndarray:
        """(candidate, k): the naive chance that the next player's best other raise is true, with
        k of its ``n`` dice for that face and ``unseen`` others (0 where it has none)."""
        key = (unseen, n, -2)
        got = self._at.get(key)
        if got is None:
            row = seen_row(unseen, P_WILD if wild else P_ONE, 0, 0.0)
            got = self._at[key] = row[PAD + self.other[:, None] - _KS[: n + 1]] * (self.other > 0)[:, None]
        return got

    def back_at(self, seats: int) -> np.ndarray:
        """``PAD`` + the quantity of each candidate after a round of ``seats`` raises (back at us)."""
        got = self._at.get((seats, -1))
        if got is None:
            got = self._at[(seats, -1)] = PAD + (self.qa + seats * CHAIN_STEP + 0.5).astype(np.int64)
        return got


_MINS: Kept[tuple[Any, ...], dict[int, int]] = Kept(20000)
_MIN_TABLES: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
_CANDIDATES: Kept[tuple[Any, ...], Candidates] = Kept(2500)  # each about 14 kB with its index arrays


class Bayes(Bot):
    def start(self, match: MatchInfo) -> None:
        self.me = match.seat
        self.rules = match.rules
        self.profiles = [Profile() for _ in range(match.players)]
        self.round = -1
        self.beliefs: dict[int, HandBelief] = {}
        self.seen = 0  # bids of this round's history already folded into the beliefs
        self.history: tuple[tuple[int, Bid], ...] = ()
        self.counts: tuple[int, ...] = ()
        self.palifico = False
        self.wild = False
        # what legal_mins reads of the rules: the key of the tables kept across matches
        self._order = (self.rules.ones, self.rules.open_on_ones, self.rules.palifico_change_face)
        self._cache: dict[int, np.ndarray] = {}
        self._nxt = -1

    # --- this round's beliefs ---

    def _new_round(self, turn: Turn) -> None:
        self.round = turn.round
        self.counts = turn.counts
        self.palifico = turn.palifico
        self.wild = turn.wild
        self.beliefs = {}
        for s, n in enumerate(turn.counts):
            if s != self.me and n > 0:
                hands = exact_hands(n) if n <= MAX_EXACT_DICE else sampled_hands(n, self.rng)
                self.beliefs[s] = HandBelief(hands, turn.wild)
        self.seen = 0
        self.history = ()

    def _fold(self, turn: Turn) -> None:
        """Fold the bids made since our last look into the beliefs."""
        hist = turn.history
        for i in range(self.seen, len(hist)):
            seat, b = hist[i]
            belief = self.beliefs.get(seat)
            if belief is None:
                continue
            ctx = context(
                self.rules,
                seat,
                hist[:i],
                turn.counts,
                turn.palifico,
                turn.wild,
                self._mins_after(hist[i - 1][1] if i else None, turn.total, turn.palifico, turn.counts[seat] == 1),
            )
            low = ctx.mins.get(b.face)
            if low is None or not low <= b.quantity <= ctx.total:
                continue  # not a legal bid by our reckoning: learn nothing from it
            belief.update(self.profiles[seat].model, ctx, b)
        self.seen = len(hist)
        self.history = hist

    def _table(self, seat: int) -> np.ndarray:
        """marg[f - 1, k] of ``seat``'s hand (the binomial before it has bid)."""
        belief = self.beliefs[seat]
        if belief.informed:
            return belief.marginals()
        return by_face("pmf", belief.hands.n, self.wild)

    def _dists(self, exclude: int = -1) -> np.ndarray:
        """dists[f - 1]: distribution of the opponents' dice counting for face f (leaving out
        ``exclude``), every face at once; kept for the decision."""
        got = self._cache.get(exclude)
        if got is not None:
            return got
        nxt = self._nxt
        if exclude == -1 and nxt in self.beliefs:  # the next player's share on top of the rest's
            got = convolve6(self._dists(nxt), self._table(nxt))
        else:
            plain = 0
            got = np.ones((6, 1))
            for s, belief in self.beliefs.items():
                if s == exclude:
                    continue
                if belief.informed:
                    got = convolve6(got, belief.marginals())
                else:
                    plain += belief.hands.n
            if plain:
                got = convolve6(got, by_face("pmf", plain, self.wild))
        self._cache[exclude] = got
        return got

    def _dist(self, face: int, exclude: int = -1) -> np.ndarray:
        """Distribution of the opponents' dice counting for ``face`` (leaving out ``exclude``)."""
        row: np.ndarray = self._dists(exclude)[face - 1]
        return row

    def _mins(self, q: int, f: int, total: int, palifico: bool, one_die: bool) -> dict[int, int]:
        """:func:`legal_mins` over the bid (q, f), kept across decisions and matches."""
        key = (self._order, q, f, total, palifico, one_die)
        got = _MINS.get(key)
        if got is None:
            got = _MINS.put(key, legal_mins(self.rules, bid(q, f), total, palifico, one_die))
        return got

    def _mins_after(self, standing: Bid | None, total: int, palifico: bool, one_die: bool) -> dict[int, int]:
        if standing is None:
            return legal_mins(self.rules, None, total, palifico, one_die)
        return self._mins(standing.quantity, standing.face, total, palifico, one_die)

    def _min_table(self, total: int, palifico: bool, one_die: bool) -> tuple[np.ndarray, np.ndarray]:
        """(low, ok): over every bid (q, f), q = 0..total, :func:`legal_mins` as arrays, ``low[q, f - 1,
        g - 1]`` the smallest quantity of face g that tops it and ``ok`` whether g may be bid at all
        (row 0 is unused). One table per rules, table size and palifico: few, so all kept."""
        key = (self._order, total, palifico, one_die)
        got = _MIN_TABLES.get(key)
        if got is None:
            low = np.zeros((total + 1, 6, 6), dtype=np.int64)
            for q in range(1, total + 1):
                for f in FACES:
                    for g, m in legal_mins(self.rules, bid(q, f), total, palifico, one_die).items():
                        low[q, f - 1, g - 1] = m
            got = _MIN_TABLES[key] = (low, low > 0)
        return got

    def _candidates(self, turn: Turn, one_die: bool) -> Candidates:
        """Our candidate raises here and what the next player could answer each with; kept across
        decisions and matches (it depends on the legal table and the table's size only)."""
        legal = turn.legal
        key = (
            self._order,
            tuple(legal.min_quantity.items()),
            legal.max_quantity,
            turn.total,
            turn.palifico,
            one_die,
            turn.wild,
        )
        got = _CANDIDATES.get(key)
        if got is None:
            cand: list[tuple[int, int]] = []  # (face, quantity)
            for face, low in legal.min_quantity.items():
                for q in range(low, min(low + RAISE_SPAN - 1, legal.max_quantity) + 1):
                    cand.append((face, q))
            fi = np.array([f - 1 for f, _ in cand], dtype=np.int64)
            qa = np.array([q for _, q in cand], dtype=np.int64)
            lows, oks = self._min_table(turn.total, turn.palifico, one_die)
            low_c, ok_c = lows[qa, fi], oks[qa, fi]  # (candidate, face): the next player's smallest raises
            ok_o = ok_c & (_G6 != fi[:, None]) & (_NOT_ACES if turn.wild else True)  # its other faces
            other = np.where(ok_o.any(axis=1), np.where(ok_o, low_c, _BIG).min(axis=1), 0)
            got = _CANDIDATES.put(
                key, Candidates([bid(q, f) for f, q in cand], fi, qa, ok_c[_C_ROWS[: len(cand)], fi], other)
            )
        return got

    # --- the decision ---

    def act(self, turn: Turn) -> Action:
        global FALLBACKS
        if turn.dead:  # out, asked for a dead man's calza
            return dead_mans_call(turn)
        try:
            action = self._decide(turn)
            if turn.legal.is_legal(action):
                if isinstance(action, Bid):
                    self.history = turn.history + ((turn.seat, action),)
                return action
        except Exception:  # a bug must cost a decision, never the match
            pass
        FALLBACKS += 1
        return self._fallback(turn)

    def _fallback(self, turn: Turn) -> Action:
        standing = turn.standing
        if standing is not None and (not turn.legal.min_quantity or turn.probability(standing) < 0.5):
            return DUDO
        b, _ = turn.best_raise()
        return b if b is not None else DUDO

    def _decide(self, turn: Turn) -> Action:
        solved = POLICIES.action(turn, self.rng)
        if solved is not None:
            return solved
        if turn.round != self.round or turn.counts != self.counts or len(turn.history) < self.seen:
            self._new_round(turn)
        self._fold(turn)
        self._cache = {}
        self._padded: dict[tuple[int, bool], np.ndarray] = {}
        self._credits: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        rules = self.rules
        legal = turn.legal
        standing = turn.standing
        alive = [s for s, c in enumerate(turn.counts) if c > 0]
        self._nxt = self._next_seats(turn, alive)[0]
        duel = len(alive) == 2
        other = 1.0 if duel else OTHER_LOSS
        options: list[tuple[float, Action]] = []
        if standing is not None and legal.dudo:
            options.append((self._dudo_value(turn, standing, other), DUDO))
        if standing is not None and legal.calza:
            f = standing.face
            p_ex = at(self._dist(f), standing.quantity - turn.mine(f))
            if rules.calza_reward == "regain":
                gain = 1.0 if len(turn.dice) < rules.dice else REGAIN_AT_MAX
            else:
                gain = other
            options.append((p_ex * gain - (1.0 - p_ex), CALZA))
        raises = self._raise_values(turn, alive, other)
        if duel and raises and DUEL_SEARCH:
            raises = self._duel_search(turn, raises, alive)
        options.extend(raises)
        if not options:
            return DUDO
        best = max(options, key=lambda o: o[0])[1]
        if DEBUG is not None:
            self._debug_note(turn, best, options, alive)
        return best

    def _dudo_value(self, turn: Turn, standing: Bid, other: float) -> float:
        dist = self._dist(standing.face)
        need = standing.quantity - turn.mine(standing.face)
        if self.rules.penalty != "difference":
            p_true = tail(dist, need)
            return -p_true + (1.0 - p_true) * other
        # difference: max(1, |q - count|) dice, never more than the loser holds
        v = 0.0
        mine = len(turn.dice)
        for k, pk in enumerate(dist):
            if pk:
                if k >= need:
                    v -= pk * min(mine, max(1, k - need))
                else:
                    v += pk * other * max(1, need - k)
        return v

    def _next_seats(self, turn: Turn, alive: list[int]) -> list[int]:
        """The other players in turn order after us."""
        i = alive.index(turn.seat)
        return alive[i + 1 :] + alive[:i]

    def _raise_values(self, turn: Turn, alive: list[int], other: float) -> list[tuple[float, Action]]:
        """One step of search for every candidate raise: the next player's answer, computed
        exactly over its posterior (its dice for the face and for its best other face), and
        the rest of the round followed player by player. All candidates at once: arrays over
        (candidate, the next player's dice for the face, its dice for its best other face)."""
        legal = turn.legal
        if not legal.min_quantity:
            return []
        rules = self.rules
        order = self._next_seats(turn, alive)
        nxt = order[0]
        n_j = turn.counts[nxt]
        total = turn.total
        unseen_j = total - n_j
        model = self.profiles[nxt].model
        kd = model.dudo_kappa
        wild = turn.wild
        cands = self._candidates(turn, n_j == 1)
        fi = cands.fi
        mine = np.array(_kvec_cache(turn.dice, wild))[fi]
        # the next player's chance a bid is true as it reckons it, per face (its credit for the
        # face once we have bid it: we count as a bidder)
        seen = seen_rows6(unseen_j, wild, self._credit(turn, nxt)[1], kd)
        # what the next player could raise to: the same face, and its best other one
        # (candidate, k): where a table per face (raveled) holds the need q - k
        at_q = cands.flat_at(0, n_j, seen.shape[1])
        flat_seen = seen.ravel()
        ps = flat_seen[at_q]
        same = flat_seen[at_q + 1] * cands.same[:, None]
        oth = cands.other_true(unseen_j, n_j, wild)
        tails = self._padded_dists(nxt, True)
        at_need = cands.flat_at(0, n_j, tails.shape[1]) - mine[:, None]  # the rest of the table's dice needed
        pt = tails.ravel()[at_need]
        v_dudo = pt * other - (1.0 - pt)
        cont = self._chain(turn, order, cands, mine, other)
        pd = model.p_dudo_np(ps[:, :, None], np.maximum(same[:, :, None], oth[:, None, :]))
        J = self.beliefs[nxt].joint()[fi]  # (candidate, k, m)
        Jm = J * (J >= 1e-9)
        acc = (Jm * (pd * v_dudo[:, :, None] + (1.0 - pd) * cont[:, None, None])).sum(axis=2)
        wk = J.sum(axis=2)
        if calza_allowed(rules, turn.counts):
            pz = model.p_calza_np(by_face("exact", unseen_j, wild).ravel()[at_q])
            pe = self._padded_dists(nxt, False).ravel()[at_need]
            v_calza = (-pe * other * 0.5 if rules.calza_reward == "regain" else -pe) + (1.0 - pe) * other
            per_k = pz * wk * v_calza + (1.0 - pz) * acc
        else:
            per_k = acc
        v = np.where(wk < 1e-9, 0.0, per_k).sum(axis=1)
        return list(zip(v.tolist(), cands.bids))

    def _chain(self, turn: Turn, order: list[int], cands: Candidates, mine: np.ndarray, other: float) -> np.ndarray:
        """For each candidate bid (faces ``fi`` + 1, quantities ``qa``; ``mine`` our dice for each face), the round going on past the
        next player: each later player calls (someone else loses a die) or raises by about
        ``CHAIN_STEP``; back at us, we doubt or raise again."""
        if len(order) == 1:  # heads-up: the next raise comes straight back to us
            return np.full(len(cands.qa), RAISE_AGAIN)
        fi, qa = cands.fi, cands.qa
        total = turn.total
        survive = np.ones(len(qa))
        v = np.zeros(len(qa))
        for i, seat in enumerate(order[1:], 1):
            model = self.profiles[seat].model
            n = turn.counts[seat]
            marg = self._table(seat)[fi]  # (candidate, k)
            doubts = chain_doubts(model, total - n, self.wild)
            c = (marg * (marg > 1e-9) * doubts.ravel()[cands.flat_at(i, n, doubts.shape[1])]).sum(axis=1)
            v += survive * c * other
            survive *= 1.0 - c
        tails = self._padded_dists(-1, True)
        p_true = tails.ravel()[cands.flat_back(len(order), tails.shape[1]) - mine]
        back = np.maximum(-p_true + (1.0 - p_true) * other, RAISE_AGAIN)
        out: np.ndarray = v + survive * back
        return out

    def _duel_search(
        self,
        turn: Turn,
        raises: list[tuple[float, Action]],
        alive: list[int],
    ) -> list[tuple[float, Action]]:
        """Heads-up: search the best few raises one level deeper over consistent deals.

        The opponent's hand is drawn from its posterior (every hand, weighted, when there are few);
        for each deal the model gives its answer to our raise: a call, settled by the deal, or a
        raise r. Deals are grouped by r, the only thing we would see, and against each r we take
        the better of doubting it (true in the share of r's deals where it is true) and raising
        again (a leaf estimate): our choice depends on what we know, not on the deal. All deals
        of a candidate at once: arrays over (deal, the opponent's raise face, its quantity)."""
        effort = min(1.0, max(0.05, turn.time_ms / 1000.0))
        count = max(8, int(DUEL_HANDS * effort))
        k_best = max(2, int(DUEL_CANDIDATES * effort + 0.5))
        ranked = sorted(raises, key=lambda o: -o[0])
        opp = alive[0] if alive[1] == turn.seat else alive[1]
        belief = self.beliefs[opp]
        deals = belief.sample(count, self.rng)
        D = np.array([kv for kv, _ in deals], dtype=np.int64).reshape(len(deals), 6)
        W = np.array([w for _, w in deals])
        model = self.profiles[opp].model
        rules = self.rules
        total = turn.total
        n_o = turn.counts[opp]
        side = n_o + 1
        unseen = total - n_o
        wild = turn.wild
        mine_all = np.array(_kvec_cache(turn.dice, wild))
        calza_o = calza_allowed(rules, turn.counts)
        exact_value = -0.5 if rules.calza_reward == "regain" else -1.0
        beta, kf, ef, kd = model.beta, model.face_kappa, model.eps_face, model.dudo_kappa
        flat = D + side * np.arange(6)  # a deal's entry of a (face, k) table, raveled
        have = mine_all + D  # our dice and the deal's, per face
        span = np.arange(RAISE_SPAN)
        leaf = self._duel_leaves(turn, n_o, mine_all)
        # every searched candidate at once: arrays over (candidate, deal, ...)
        bids = [bd for _value, bd in ranked[:k_best]]
        C = len(bids)
        qv = np.array([bd.quantity for bd in bids])
        fv = np.array([bd.face - 1 for bd in bids])
        ctxs = self._answer_contexts(turn, opp, bids)
        lows, oks = self._min_table(total, turn.palifico, n_o == 1)
        lo_c, ok_c = lows[qv, fv], oks[qv, fv]  # (candidate, face): the opponent's smallest raises
        rows = _C_ROWS[:C, None]
        pr = np.stack([face_tables(ctx, kd, False).ravel() for ctx in ctxs])[rows[:, :, None], flat].max(axis=2)
        at_q = PAD + qv[:, None] - D[:, fv].T  # (candidate, deal)
        ps = np.stack(
            [seen_row(unseen, face_p(bd.face, wild), ctx.credit[bd.face - 1], kd) for bd, ctx in zip(bids, ctxs)]
        )[rows, at_q]
        pd = model.p_dudo_np(ps, pr)
        have_b = have[:, fv].T
        values = [0.0] * C
        if calza_o:
            pz = model.p_calza_np(np.stack([exact_row(unseen, face_p(bd.face, wild)) for bd in bids])[rows, at_q])
            settled = pz * np.where(have_b == qv[:, None], exact_value, 1.0)
            values = [float(W @ settled[c]) for c in range(C)]  # one dot per candidate, as ever
            wc = W * (1.0 - pz)
        else:
            wc = W * np.ones((C, len(D)))
        called = pd * np.where(have_b >= qv[:, None], 1.0, -1.0)
        for c in range(C):
            values[c] += float(wc[c] @ called[c])
        live = [c for c in range(C) if ctxs[c].mins]  # candidates the opponent can raise over
        if live:
            L = np.array(live)
            legal = ok_c[L].astype(float)
            p_raise = wc[L] * (1.0 - pd[L])
            lrows = _C_ROWS[: len(live), None, None]
            E = np.stack([np.exp(beta * (face_tables(ctxs[c], kf, True) - 1.0)).ravel() for c in live])
            FF = E[lrows, flat] * legal[:, None, :]  # (candidate, deal, face)
            nf = legal.sum(axis=1)[:, None, None]
            pf = p_raise[:, :, None] * ((1.0 - ef) * FF / FF.sum(axis=2)[:, :, None] + ef / nf) * legal[:, None, :]
            pf *= (pf >= 1e-9) & (p_raise >= 1e-9)[:, :, None]
            Q = np.stack([_quantity_table(ctxs[c], model) for c in live])
            m = pf[:, :, :, None] * Q[lrows, flat]  # (candidate, deal, face, j)
            m *= m >= 1e-9
            lo = lo_c[L]
            wr = m.sum(axis=1)
            tr = (m * (have[None, :, :, None] >= lo[:, None, :, None] + span)).sum(axis=1)
            for i, c in enumerate(live):
                a, j = np.nonzero(wr[i] > 0)  # each raise the opponent may make, face by face
                w_r = wr[i, a, j]
                terms = w_r * np.maximum(1.0 - 2.0 * tr[i, a, j] / w_r, leaf[lo[i, a] + j, a])
                v = values[c]
                for x in terms.tolist():  # added one by one, in order: the sum stays exactly as it was
                    v += x
                values[c] = v
        refined: list[tuple[float, Action]] = list(zip(values, bids))
        return refined  # the others ranked lower one step deep; their values are not comparable

    def _credit(self, turn: Turn, seat: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """:func:`credit_of` for ``seat`` over this round's bids, and over them and a bid of every face
        by us (what it credits after our raise); kept for the decision."""
        got = self._credits.get(seat)
        if got is None:
            bidders: list[set[int]] = [set(), set(), set(), set(), set(), set()]
            for s, b in turn.history:
                if s != seat:
                    bidders[b.face - 1].add(s)
            before = tuple(len(x) for x in bidders)
            after = before if turn.seat == seat else tuple(c + (turn.seat not in x) for c, x in zip(before, bidders))
            got = self._credits[seat] = (before, after)
        return got

    def _padded_dists(self, exclude: int, tails: bool) -> np.ndarray:
        """:func:`padded` of :meth:`_dists`, kept for the decision."""
        key = (exclude, tails)
        got = self._padded.get(key)
        if got is None:
            got = self._padded[key] = padded(self._dists(exclude), tails)
        return got

    def _answer_contexts(self, turn: Turn, seat: int, bids: list[Bid]) -> list[Context]:
        """What ``seat`` faces after each of our raises ``bids`` (:func:`context`, without going over
        the history once per raise: only the raised face's credit changes, by us)."""
        rules = self.rules
        n = turn.counts[seat]
        before, after = self._credit(turn, seat)
        calza = calza_allowed(rules, turn.counts)
        out = []
        for b in bids:
            fi = b.face - 1
            credit = before if before[fi] == after[fi] else before[:fi] + (after[fi],) + before[fi + 1 :]
            out.append(
                Context(
                    seat,
                    n,
                    turn.total,
                    turn.wild,
                    turn.palifico,
                    b,
                    self._mins(b.quantity, b.face, turn.total, turn.palifico, n == 1),
                    calza,
                    credit,
                )
            )
        return out

    def _duel_leaves(self, turn: Turn, n_o: int, mine: np.ndarray) -> np.ndarray:
        """Heads-up: ``leaf[q, f - 1]``, the value of raising over the opponent's (q, f): about
        ``DUEL_LEAF`` times the chance that our best smallest raise is false, on our own dice and the
        opponent's ``n_o`` as unknown (-1 if nothing tops it). Every bid at once, once a decision."""
        low, ok = self._min_table(turn.total, turn.palifico, len(turn.dice) == 1)
        naive = by_face("naive", n_o, turn.wild)  # naive[g - 1, PAD + need]
        x = naive[_G6, PAD + low - mine] * ok  # (q, f, g): g's smallest raise true
        out: np.ndarray = np.where(ok.any(axis=2), -DUEL_LEAF * (1.0 - x.max(axis=2)), -1.0)
        return out

    # --- learning from the shown hands ---

    def round_end(self, result: RoundEnd) -> None:
        """Every hand is shown: score each opponent's decisions this round under every grid point."""
        if DEBUG is not None:
            self._debug_outcome(result)
        if result.round != self.round or result.fault is not None:
            return
        hands = result.dice
        counts = tuple(len(h) for h in hands)
        if counts != self.counts:
            return
        # what a player showed matters only for its play in later rounds of this match: nothing to
        # learn about a player the round put out, nor about anyone when it put us out or ended the match
        later = result.counts if len(result.counts) == len(counts) else counts
        if not later[self.me] or sum(1 for c in later if c) < 2:
            return
        wild = self.wild
        hist = list(self.history)
        if result.bid is not None and (not hist or hist[-1] != result.bid):
            known = len(hist)  # bids were made after our last look: only the last one is known
            hist.append(result.bid)
        else:
            known = len(hist)
        touched = set()
        rules = self.rules
        total = sum(counts)
        for i, (seat, b) in enumerate(hist):
            if seat == self.me or not hands[seat] or not later[seat] or (i >= known and i > 0):
                continue
            ctx = context(
                rules,
                seat,
                hist[:i],
                counts,
                self.palifico,
                wild,
                self._mins_after(hist[i - 1][1] if i else None, total, self.palifico, counts[seat] == 1),
            )
            low = ctx.mins.get(b.face)
            if low is None or not low <= b.quantity <= ctx.total:
                continue
            self.profiles[seat].observe_bid(ctx, kvec_of(hands[seat], wild), b)
            touched.add(seat)
        if result.call is not None and result.bid is not None:
            caller, kind = result.call
            if caller != self.me and 0 <= caller < len(hands) and hands[caller] and later[caller]:
                ctx = context(
                    rules,
                    caller,
                    hist,
                    counts,
                    self.palifico,
                    wild,  # hist ends with result.bid
                    self._mins_after(hist[-1][1], total, self.palifico, counts[caller] == 1),
                )
                self.profiles[caller].observe_call(ctx, kvec_of(hands[caller], wild), kind)
                touched.add(caller)
        for seat in touched:
            self.profiles[seat].refresh()

    # --- development aids (off unless DEBUG is a list) ---

    def _debug_note(self, turn: Turn, best: Action, options: list[tuple[float, Action]], alive: list[int]) -> None:
        self._dbg = (turn, best)

    def _debug_outcome(self, result: RoundEnd) -> None:
        note = getattr(self, "_dbg", None)
        self._dbg = None
        if note is None or result.bid is None or result.count is None or result.call is None:
            return
        turn, best = note
        standing = turn.standing
        if best == DUDO and standing is not None and result.call[0] == self.me:
            self._cache = {}
            need = standing.quantity - turn.mine(standing.face)
            DEBUG.append(("dudo", tail(self._dist(standing.face), need), result.count >= standing.quantity))
        elif isinstance(best, Bid):
            nxt = self._next_seats(turn, [s for s, c in enumerate(turn.counts) if c])[0]
            called = result.bid == (self.me, best) and result.call[0] == nxt
            DEBUG.append(
                (
                    "raise",
                    str(best),
                    called,
                    result.bid == (self.me, best) and result.count < best.quantity and called,
                    self.match.names[nxt],
                )
            )


_QROWS: Kept[tuple[Any, ...], np.ndarray] = Kept(10000)


_QTABLE6: Kept[tuple[Any, ...], np.ndarray] = Kept(5000)


def _quantity_table(ctx: Context, model: Model) -> np.ndarray:
    """(6 (n + 1), RAISE_SPAN): row (f - 1) (n + 1) + k is :func:`_quantity_rows` of face f at k,
    for each legal face (zeros for the others). Kept."""
    key = (
        tuple(ctx.mins.items()),
        ctx.total,
        ctx.n,
        ctx.wild,
        ctx.standing is not None,
        model.delta,
        model.sigma,
        model.pi_min,
        model.eps_q,
    )
    got = _QTABLE6.get(key)
    if got is None:
        out = np.zeros((6, ctx.n + 1, RAISE_SPAN))
        for g in ctx.mins:
            out[g - 1] = _quantity_rows(ctx, g, model)
        got = _QTABLE6.put(key, out.reshape(6 * (ctx.n + 1), RAISE_SPAN))
    return got


def _quantity_rows(ctx: Context, face: int, model: Model) -> np.ndarray:
    """rows[k, j]: P(the player bids quantity mins[face] + j | face chosen, k dice for it),
    the first ``RAISE_SPAN`` quantities, the rest of the mass on the last (zeros past the top).
    Kept (it depends on few things, which recur from candidate to candidate and decision to decision)."""
    key = (
        ctx.mins[face],
        ctx.total,
        ctx.n,
        face_p(face, ctx.wild),
        ctx.standing is not None,
        model.delta,
        model.sigma,
        model.pi_min,
        model.eps_q,
    )
    rows = _QROWS.get(key)
    if rows is None:
        rows = _QROWS.put(key, _make_quantity_rows(ctx, face, model))
    return rows


def _make_quantity_rows(ctx: Context, face: int, model: Model) -> np.ndarray:
    lo, hi = ctx.mins[face], ctx.total
    width = hi - lo + 1
    span = min(RAISE_SPAN, width)
    mu = (ctx.total - ctx.n) * face_p(face, ctx.wild) - model.delta + np.arange(ctx.n + 1)
    g = np.exp(-((np.arange(lo, hi + 1)[None, :] - mu[:, None]) ** 2) / (2.0 * model.sigma * model.sigma))
    z = g.sum(axis=1)
    z = np.where(z > 0, z, 1.0)
    atom = model.pi_min if ctx.standing is not None else 0.0
    e = model.eps_q
    probs = (1.0 - e) * (1.0 - atom) * g / z[:, None] + e / width
    probs[:, 0] += (1.0 - e) * atom
    rows = np.zeros((ctx.n + 1, RAISE_SPAN))
    rows[:, :span] = probs[:, :span]
    rows[:, span - 1] += probs[:, span:].sum(axis=1)
    return rows


_KV: Kept[tuple[tuple[int, ...], bool], tuple[int, ...]] = Kept(4096)


def _kvec_cache(dice: tuple[int, ...], wild: bool) -> tuple[int, ...]:
    key = (dice, wild)
    kv = _KV.get(key)
    if kv is None:
        kv = _KV.put(key, kvec_of(dice, wild))
    return kv


def kvec_of(dice: Sequence[int], wild: bool) -> tuple[int, ...]:
    """Dice counting for each face 1..6 (aces included for the others when ``wild``)."""
    c = [0] * 6
    for d in dice:
        c[d - 1] += 1
    if wild:
        return (c[0],) + tuple(c[0] + c[i] for i in range(1, 6))
    return tuple(c)
