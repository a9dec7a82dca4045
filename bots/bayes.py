"""Bayes: (docstring written below once the method settles)."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Sequence

from arena.sdk import CALZA, DUDO, Action, Bid, Bot, MatchInfo, RoundEnd, Turn, bid

FACES = (1, 2, 3, 4, 5, 6)
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

    def _grow(self, n: int) -> None:
        p, q = self.p, 1.0 - self.p
        while len(self.pmf) <= n:
            m = len(self.pmf)
            row = [math.comb(m, k) * p ** k * q ** (m - k) for k in range(m + 1)]
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

    __slots__ = ("n", "counts", "prior", "kwild", "kplain")

    def __init__(self, n: int, counts: list[tuple[int, ...]], prior: list[float]) -> None:
        self.n = n
        self.counts = counts
        self.prior = prior
        # k[f - 1]: dice counting for face f (aces included for f != 1 when wild)
        self.kwild = [(c[0],) + tuple(c[0] + c[i] for i in range(1, 6)) for c in counts]
        self.kplain = [tuple(c) for c in counts]


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
        norm = 6.0 ** n
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


class Model:
    """One opponent's policy model, each part a point on its own grid."""

    __slots__ = ("beta", "eps_face", "pi_min", "delta", "sigma", "eps_q", "call_t", "call_a", "eps_call",
                 "calza")

    def __init__(self, face: tuple[float, float], qty: tuple[float, float, float, float],
                 call: tuple[float, float, float], calza: float) -> None:
        self.beta, self.eps_face = face
        self.pi_min, self.delta, self.sigma, self.eps_q = qty
        self.call_t, self.call_a, self.eps_call = call
        self.calza = calza

    def p_call(self, p_naive: float) -> float:
        return 0.5 * self.eps_call + (1.0 - self.eps_call) * _sigmoid(self.call_a * (self.call_t - p_naive))


class Context:
    """What a player faced at one point of a round (public information only)."""

    __slots__ = ("seat", "n", "total", "wild", "palifico", "standing", "mins")

    def __init__(self, seat: int, n: int, total: int, wild: bool, palifico: bool, standing: Bid | None,
                 mins: dict[int, int]) -> None:
        self.seat, self.n, self.total, self.wild, self.palifico = seat, n, total, wild, palifico
        self.standing, self.mins = standing, mins


def context(rules: Any, i: int, history: Sequence[tuple[int, Bid]], counts: Sequence[int], palifico: bool,
            wild: bool) -> Context:
    """What the maker of the ``i``-th bid of ``history`` faced."""
    seat = history[i][0]
    standing = history[i - 1][1] if i > 0 else None
    total = sum(counts)
    mins = legal_mins(rules, standing, total, palifico, counts[seat] == 1)
    return Context(seat, counts[seat], total, wild, palifico, standing, mins)


def face_feature(ctx: Context, face: int, k: int) -> float:
    """How well a hand with ``k`` dice counting for ``face`` supports bidding it here."""
    p = face_p(face, ctx.wild)
    unseen = ctx.total - ctx.n
    ref = max(ctx.mins[face], int(ctx.total * p + 0.5))
    return p_true_naive(unseen, p, ref - k)


def call_feature(ctx: Context, k: int) -> float:
    """The naive chance the standing bid is true for a hand with ``k`` matching dice."""
    s = ctx.standing
    assert s is not None
    return p_true_naive(ctx.total - ctx.n, face_p(s.face, ctx.wild), s.quantity - k)


def q_table(ctx: Context, face: int, qty: float, pi_min: float, delta: float, sigma: float, eps_q: float,
            ) -> list[float]:
    """P(quantity == qty | face chosen, k) for k = 0..n."""
    lo, hi = ctx.mins[face], ctx.total
    width = hi - lo + 1
    p = face_p(face, ctx.wild)
    base = (ctx.total - ctx.n) * p - delta
    inv = 1.0 / (2.0 * sigma * sigma)
    atom = pi_min if ctx.standing is not None else 0.0
    out = []
    for k in range(ctx.n + 1):
        mu = base + k
        z = 0.0
        for q in range(lo, hi + 1):
            z += math.exp(-(q - mu) ** 2 * inv)
        g = math.exp(-(qty - mu) ** 2 * inv) / z if z > 0 else 1.0 / width
        pm = atom * (1.0 if qty == lo else 0.0) + (1.0 - atom) * g
        out.append((1.0 - eps_q) * pm + eps_q / width)
    return out


# ---------------------------------------------------------------------------
# Parameters: the grids and the population prior (fitted by tools/fit_bayes.py)
# ---------------------------------------------------------------------------

FACE_GRID = [(b, e) for b in (-15.0, -6.0, -2.0, 0.0, 2.0, 6.0, 15.0, 40.0, 100.0) for e in (0.03, 0.15, 0.5)]
QTY_GRID = [(pm, d, s, e) for pm in (0.05, 0.4, 0.8, 0.97, 0.995) for d in (-1.0, 0.0, 1.0, 2.0)
            for s in (0.5, 1.2, 2.5) for e in (0.05, 0.3)]
CALL_GRID = [(t, a, e) for t in (0.02, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) for a in (4.0, 12.0, 40.0)
             for e in (0.02, 0.1, 0.3)]


def _load_params() -> dict[str, Any]:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bayes", "params.json")
    try:
        with open(path) as fh:
            data = json.load(fh)
        if (len(data["face_prior"]) == len(FACE_GRID) and len(data["qty_prior"]) == len(QTY_GRID)
                and len(data["call_prior"]) == len(CALL_GRID)):
            return data
    except (OSError, ValueError, KeyError, TypeError):
        pass
    def peak(grid: list[Any], at: tuple[float, ...]) -> list[float]:
        return [0.0 if g == at else -3.0 for g in grid]
    return {"face_prior": peak(FACE_GRID, (6.0, 0.15)), "qty_prior": peak(QTY_GRID, (0.8, 1.0, 1.2, 0.05)),
            "call_prior": peak(CALL_GRID, (0.4, 12.0, 0.1)), "calza_prior": [1.0, 6.0]}


PARAMS = _load_params()


class Profile:
    """What a match has shown of one opponent: log-likelihood of every grid point."""

    def __init__(self) -> None:
        self.face = list(PARAMS["face_prior"])
        self.qty = list(PARAMS["qty_prior"])
        self.call = list(PARAMS["call_prior"])
        a, b = PARAMS["calza_prior"]
        self.calza_yes, self.calza_no = float(a), float(b)
        self.model = self._map()

    def _map(self) -> Model:
        fi = max(range(len(FACE_GRID)), key=self.face.__getitem__)
        qi = max(range(len(QTY_GRID)), key=self.qty.__getitem__)
        ci = max(range(len(CALL_GRID)), key=self.call.__getitem__)
        return Model(FACE_GRID[fi], QTY_GRID[qi], CALL_GRID[ci], self.calza_yes / (self.calza_yes + self.calza_no))

    def observe_bid(self, ctx: Context, kvec: Sequence[int], b: Bid) -> None:
        """A revealed hand (``kvec``: matching counts per face) made bid ``b`` in ``ctx``."""
        if ctx.standing is not None:
            self.observe_call(ctx, kvec, False, None)
        faces = list(ctx.mins)
        nf = len(faces)
        if nf > 1:
            feats = [face_feature(ctx, f, kvec[f - 1]) for f in faces]
            mine = face_feature(ctx, b.face, kvec[b.face - 1])
            for i, (beta, eps) in enumerate(FACE_GRID):
                z = sum(math.exp(beta * (x - 1.0)) for x in feats)
                p = (1.0 - eps) * math.exp(beta * (mine - 1.0)) / z + eps / nf
                self.face[i] += math.log(p)
        k = kvec[b.face - 1]
        cache: dict[tuple[float, float], float] = {}
        lo, hi = ctx.mins[b.face], ctx.total
        width = hi - lo + 1
        mu0 = (ctx.total - ctx.n) * face_p(b.face, ctx.wild) + k
        atom_on = ctx.standing is not None
        for i, (pm, d, s, e) in enumerate(QTY_GRID):
            g = cache.get((d, s))
            if g is None:
                mu = mu0 - d
                inv = 1.0 / (2.0 * s * s)
                z = sum(math.exp(-(q - mu) ** 2 * inv) for q in range(lo, hi + 1))
                g = cache[(d, s)] = math.exp(-(b.quantity - mu) ** 2 * inv) / z if z > 0 else 1.0 / width
            atom = pm if atom_on else 0.0
            p = atom * (1.0 if b.quantity == lo else 0.0) + (1.0 - atom) * g
            self.qty[i] += math.log((1.0 - e) * p + e / width)

    def observe_call(self, ctx: Context, kvec: Sequence[int], called: bool, calza: bool | None) -> None:
        """A revealed hand called (``calza``: which call, None when calza was not allowed) or raised."""
        s = ctx.standing
        assert s is not None
        x = call_feature(ctx, kvec[s.face - 1])
        for i, (t, a, e) in enumerate(CALL_GRID):
            p = 0.5 * e + (1.0 - e) * _sigmoid(a * (t - x))
            self.call[i] += math.log(p if called else 1.0 - p)
        if called and calza is not None:
            if calza:
                self.calza_yes += 1.0
            else:
                self.calza_no += 1.0

    def refresh(self) -> None:
        self.model = self._map()


# ---------------------------------------------------------------------------
# Beliefs within a round: a posterior over each opponent's hand
# ---------------------------------------------------------------------------


class HandBelief:
    """The posterior over one opponent's hand this round, updated bid by bid."""

    __slots__ = ("hands", "kv", "w", "dirty", "marg", "informed")

    def __init__(self, hands: _Hands, wild: bool) -> None:
        self.hands = hands
        self.kv = hands.kwild if wild else hands.kplain
        self.w = list(hands.prior)
        self.dirty = True
        self.informed = False  # no bid seen yet: the marginals are plain binomials
        self.marg: list[list[float]] = []

    def update(self, model: Model, ctx: Context, b: Bid) -> None:
        n = ctx.n
        faces = [f - 1 for f in ctx.mins]
        nf = len(faces)
        fi = b.face - 1
        # per-k tables (the hand enters only through its matching counts)
        if nf > 1:
            beta = model.beta
            E = [[0.0] * (n + 1) for _ in range(6)]
            for f in faces:
                row = E[f]
                for k in range(n + 1):
                    row[k] = math.exp(beta * (face_feature(ctx, f + 1, k) - 1.0))
        Q = q_table(ctx, b.face, b.quantity, model.pi_min, model.delta, model.sigma, model.eps_q)
        if ctx.standing is not None:
            si = ctx.standing.face - 1
            R = [1.0 - model.p_call(call_feature(ctx, k)) for k in range(n + 1)]
        else:
            si = fi
            R = [1.0] * (n + 1)
        w = self.w
        kv = self.kv
        total = 0.0
        if nf > 1:
            ef = model.eps_face
            a = 1.0 - ef
            u = ef / nf
            Ef = E[fi]
            for i, k in enumerate(kv):
                wi = w[i]
                if wi == 0.0:
                    continue
                z = 0.0
                for f in faces:
                    z += E[f][k[f]]
                kf = k[fi]
                wi *= (a * Ef[kf] / z + u) * Q[kf] * R[k[si]]
                w[i] = wi
                total += wi
        else:
            for i, k in enumerate(kv):
                wi = w[i] * Q[k[fi]] * R[k[si]]
                w[i] = wi
                total += wi
        if total <= 0.0 or total != total:  # the model ruled out every hand: fall back to the prior
            self.w = list(self.hands.prior)
        elif total < 1e-200 or total > 1e200:
            inv = 1.0 / total
            self.w = [x * inv for x in w]
        self.dirty = True
        self.informed = True

    def marginals(self) -> list[list[float]]:
        """marg[f - 1][k]: P(k of this hand's dice count for face f)."""
        if self.dirty:
            n = self.hands.n
            m = [[0.0] * (n + 1) for _ in range(6)]
            m0, m1, m2, m3, m4, m5 = m
            total = 0.0
            for wi, k in zip(self.w, self.kv):
                if wi:
                    total += wi
                    m0[k[0]] += wi
                    m1[k[1]] += wi
                    m2[k[2]] += wi
                    m3[k[3]] += wi
                    m4[k[4]] += wi
                    m5[k[5]] += wi
            inv = 1.0 / total
            self.marg = [[x * inv for x in row] for row in m]
            self.dirty = False
        return self.marg


def convolve(a: list[float], b: list[float]) -> list[float]:
    if len(a) == 1:
        return b
    if len(b) == 1:
        return a
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x == 0.0:
            continue
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def tail(dist: list[float], need: int) -> float:
    """P(X >= need)."""
    if need <= 0:
        return 1.0
    if need >= len(dist):
        return 0.0
    return sum(dist[need:])


# ---------------------------------------------------------------------------
# The bot
# ---------------------------------------------------------------------------

OTHER_LOSS = 0.35
CONT_MULTI = -0.12
CONT_DUEL = -0.3


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

    # --- the round's beliefs ---

    def _new_round(self, turn: Turn) -> None:
        self.round = turn.round
        self.counts = turn.counts
        self.palifico = turn.palifico
        wild = turn.wild
        self.beliefs = {}
        for s, n in enumerate(turn.counts):
            if s != self.me and n > 0:
                hands = exact_hands(n) if n <= MAX_EXACT_DICE else sampled_hands(n, self.rng)
                self.beliefs[s] = HandBelief(hands, wild)
        self.seen = 0
        self.history = ()

    def _fold(self, turn: Turn) -> None:
        hist = turn.history
        for i in range(self.seen, len(hist)):
            seat, b = hist[i]
            belief = self.beliefs.get(seat)
            if belief is None:
                continue
            ctx = context(self.rules, i, hist, turn.counts, turn.palifico, turn.wild)
            if b.face not in ctx.mins or not ctx.mins[b.face] <= b.quantity <= ctx.total:
                continue  # cannot happen with a correct referee; never let it break the bot
            belief.update(self.profiles[seat].model, ctx, b)
        self.seen = len(hist)
        self.history = hist

    # --- counting ---

    def _dists(self, turn: Turn, face: int, exclude: int = -1) -> list[float]:
        """Distribution of the opponents' dice counting for ``face`` (all but ``exclude``)."""
        p = face_p(face, turn.wild)
        plain = 0
        dist = [1.0]
        fi = face - 1
        for s, belief in self.beliefs.items():
            if s == exclude:
                continue
            if not belief.informed:
                plain += belief.hands.n
                continue
            dist = convolve(dist, belief.marginals()[fi])
        if plain:
            dist = convolve(dist, BINOM[p].pmf_row(plain))
        return dist

    def act(self, turn: Turn) -> Action:
        if turn.round != self.round or turn.counts != self.counts or len(turn.history) < self.seen:
            self._new_round(turn)
        self._fold(turn)
        legal = turn.legal
        standing = turn.standing
        options: list[tuple[float, Action]] = []
        alive = sum(1 for c in turn.counts if c > 0)
        other = 1.0 if alive == 2 else OTHER_LOSS
        if standing is not None:
            f = standing.face
            dist = self._dists(turn, f)
            need = standing.quantity - turn.mine(f)
            p_true = tail(dist, need)
            options.append((-p_true + (1.0 - p_true) * other, DUDO))
            if legal.calza:
                p_ex = dist[need] if 0 <= need < len(dist) else 0.0
                regain = turn.rules.calza_reward == "regain"
                gain = (1.0 if len(turn.dice) < turn.rules.dice else 0.05) if regain else other
                options.append((p_ex * gain - (1.0 - p_ex), CALZA))
        nxt = self._next(turn)
        model = self.profiles[nxt].model
        belief = self.beliefs.get(nxt)
        n_next = turn.counts[nxt]
        cont = CONT_DUEL if alive == 2 else CONT_MULTI
        calza_next = (turn.rules.calza and alive >= turn.rules.calza_min_players)
        for face, low in legal.min_quantity.items():
            rest = self._dists(turn, face, exclude=nxt)
            if belief is not None and belief.informed:
                mj = belief.marginals()[face - 1]
            else:
                mj = BINOM[face_p(face, turn.wild)].pmf_row(n_next)
            mine = turn.mine(face)
            p = face_p(face, turn.wild)
            unseen_next = turn.total - n_next
            for q in range(low, min(low + 3, legal.max_quantity) + 1):
                v = 0.0
                for k, pk in enumerate(mj):
                    if pk < 1e-9:
                        continue
                    need = q - mine - k
                    pt = tail(rest, need)
                    pc = model.p_call(p_true_naive(unseen_next, p, q - k))
                    kz = model.calza if calza_next else 0.0
                    vd = pt * other - (1.0 - pt)
                    if kz:
                        pe = rest[need] if 0 <= need < len(rest) else 0.0
                        vz = -pe * other * 0.5 + (1.0 - pe) * other
                        vcall = (1.0 - kz) * vd + kz * vz
                    else:
                        vcall = vd
                    v += pk * (pc * vcall + (1.0 - pc) * cont)
                options.append((v, bid(q, face)))
        best = max(options, key=lambda o: o[0])[1]
        if not legal.is_legal(best):  # never send an illegal action
            best = DUDO if legal.dudo else next(iter(legal.bids()))
        if isinstance(best, Bid):
            self.history = turn.history + ((turn.seat, best),)
        return best

    def _next(self, turn: Turn) -> int:
        n = len(turn.counts)
        s = (turn.seat + 1) % n
        while turn.counts[s] == 0 and s != turn.seat:
            s = (s + 1) % n
        return s

    # --- learning from shown hands ---

    def round_end(self, result: RoundEnd) -> None:
        """Every hand is shown: score each opponent's observed decisions under every grid point."""
        if result.round != self.round or result.fault is not None:
            return
        hands = result.dice
        counts = tuple(len(h) for h in hands)
        if counts != self.counts:
            return
        wild = self.rules.wild_ones and not self.palifico
        hist = list(self.history)
        if result.bid is not None and (not hist or hist[-1] != result.bid):
            hist_known = len(hist)
            hist.append(result.bid)
        else:
            hist_known = len(hist) + 1
        touched = set()
        for i, (seat, b) in enumerate(hist):
            if seat == self.me or i >= hist_known or not hands[seat]:
                continue
            ctx = context(self.rules, i, hist, counts, self.palifico, wild)
            if b.face not in ctx.mins:
                continue
            self.profiles[seat].observe_bid(ctx, kvec_of(hands[seat], wild), b)
            touched.add(seat)
        if result.call is not None and result.bid is not None:
            caller, kind = result.call
            if caller != self.me and hands[caller]:
                standing = result.bid[1]
                total = sum(counts)
                ctx = Context(caller, counts[caller], total, wild, self.palifico, standing, {})
                alive = sum(1 for h in hands if h)
                calza_ok = self.rules.calza and alive >= self.rules.calza_min_players
                self.profiles[caller].observe_call(ctx, kvec_of(hands[caller], wild), True,
                                                   (kind == "calza") if calza_ok else None)
                touched.add(caller)
        for seat in touched:
            self.profiles[seat].refresh()


def kvec_of(dice: Sequence[int], wild: bool) -> tuple[int, ...]:
    c = [0] * 6
    for d in dice:
        c[d - 1] += 1
    if wild:
        return (c[0],) + tuple(c[0] + c[i] for i in range(1, 6))
    return tuple(c)
