"""Ratings from finishing orders: pure numerics on int-indexed data.

A *ranking* is a sequence of item indices, best first (a match's finishing
order: the winner, then the players in reverse order of elimination). The same
item may appear more than once (two copies of one bot at a table).

- :func:`fit_plackett_luce`: maximum-likelihood Plackett-Luce log-strengths
  with a Gaussian prior (a ridge penalty) so that unbeaten, winless or
  disconnected items still get finite values. With two-item rankings it is
  the Bradley-Terry model.
- :func:`rate`: the fit on the Elo scale with seeded bootstrap intervals over
  rankings (matches) and the likelihood of superiority of every pair.
- :func:`sequential_elo`: the classic K-factor Elo, which depends on order.
- :func:`head_to_head`: how often item a finished above item b.

numpy only (scipy's trust-region fit is the fallback where Newton's method
stops short): no pandas, no records (the model is kept apart from its data). See
docs/ratings.md for the model, the prior and what each number means.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.elo import ELO_PER_NAT, score_of_elo
from arena.errors import RatingError

Ranking = Sequence[int]
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


PRIOR_SD_ELO = 400.0
"""Default prior standard deviation of a rating around the mean, in Elo.

Weak against data (a few dozen matches outweigh it) but enough to keep an
unbeaten bot finite: one 400 Elo above the mean is expected to beat a mean
player 10 times out of 11 head to head."""

DEFAULT_MAX_ITER = 1000


@dataclass(frozen=True)
class Design:
    """Rankings packed into padded arrays, prepared once and reused by every
    bootstrap fit (the expensive part of a fit is evaluating these)."""

    n_items: int
    items: IntArray  # (matches, longest ranking); padding holds 0
    mask: NDArray[np.bool_]  # True where items holds a real entry
    lengths: IntArray  # entries per ranking

    @property
    def n_rankings(self) -> int:
        return int(self.items.shape[0])


def design(n_items: int, rankings: Sequence[Ranking]) -> Design:
    """Check and pack rankings; a ranking needs at least two entries."""
    if n_items < 1:
        raise RatingError(f"n_items={n_items}: need at least one item to rate")
    if not rankings:
        raise RatingError("no rankings to rate: the selection holds no finished match")
    width = max(len(r) for r in rankings)
    items = np.zeros((len(rankings), width), dtype=np.int64)
    mask = np.zeros((len(rankings), width), dtype=bool)
    lengths = np.zeros(len(rankings), dtype=np.int64)
    for m, ranking in enumerate(rankings):
        if len(ranking) < 2:
            raise RatingError(f"ranking {m} has {len(ranking)} entries: a finishing order needs at least 2")
        row = np.asarray(ranking, dtype=np.int64)
        if row.min() < 0 or row.max() >= n_items:
            raise RatingError(f"ranking {m} = {list(ranking)}: item indices must lie in 0..{n_items - 1}")
        items[m, : len(row)] = row
        mask[m, : len(row)] = True
        lengths[m] = len(row)
    return Design(n_items, items, mask, lengths)


class _Model:
    """The penalised negative log-likelihood of a design, its gradient and
    Hessian, sharing one computation per point (the optimiser asks for all
    three at the same theta).

    For a ranking (i_0, ..., i_k), stage j draws i_j from the softmax over the
    entries still in play: P_j[p] = exp(theta_{i_p}) / S_j for p >= j, with
    S_j = sum_{q >= j} exp(theta_{i_q}). The log-likelihood is
    sum_j log P_j[j]; its gradient for entry p is 1 - sum_{j <= p} P_j[p];
    its Hessian is -sum_j (diag(P_j) - P_j P_j^T), gathered onto items.
    Each row is shifted by its largest strength first, so every exponential
    is at most 1 and every P_j[p] lies in [0, 1].
    """

    def __init__(self, d: Design, weights: FloatArray, precision: float) -> None:
        self.d = d
        self.w = weights
        self.precision = precision
        k = d.items.shape[1]
        self.stage = np.triu(np.ones((k, k), dtype=bool))[None, :, :] & d.mask[:, :, None] & d.mask[:, None, :]
        self.pairs = (d.items[:, :, None] * d.n_items + d.items[:, None, :]).ravel()
        self._at: FloatArray | None = None
        self._terms = np.empty(0)
        self._probs = np.empty(0)

    def _stages(self, theta: FloatArray) -> None:
        if self._at is not None and np.array_equal(theta, self._at):
            return
        d = self.d
        t = np.where(d.mask, theta[d.items], -np.inf)
        shifted = t - t.max(axis=1, keepdims=True)
        e = np.where(d.mask, np.exp(shifted), 0.0)
        suffix = np.cumsum(e[:, ::-1], axis=1)[:, ::-1]  # S_j; 0 on padding
        with np.errstate(divide="ignore", invalid="ignore"):
            self._terms = np.where(d.mask, shifted - np.log(suffix), 0.0)
            self._probs = np.where(self.stage, e[:, None, :] / suffix[:, :, None], 0.0)
        self._at = theta.copy()

    def value_grad(self, theta: FloatArray) -> tuple[float, FloatArray]:
        self._stages(theta)
        d, w = self.d, self.w
        loglik = float(w @ self._terms.sum(axis=1))
        g_entries = np.where(d.mask, 1.0 - self._probs.sum(axis=1), 0.0) * w[:, None]
        grad_ll = np.bincount(d.items.ravel(), weights=g_entries.ravel(), minlength=d.n_items)
        if self.precision > 0:
            penalty = 0.5 * self.precision * float(theta @ theta)
            grad_pen = self.precision * theta
        else:
            # No prior: the likelihood is flat along theta + c, so pin the mean
            # at 0 (this term is 0 at every optimum and makes the problem well posed).
            s = float(theta.sum())
            penalty = 0.5 * s * s
            grad_pen = np.full_like(theta, s)
        return -loglik + penalty, -grad_ll + grad_pen

    def hessian(self, theta: FloatArray) -> FloatArray:
        self._stages(theta)
        d, n = self.d, self.d.n_items
        probs = self._probs
        diag = probs.sum(axis=1) * self.w[:, None]
        outer = np.matmul(probs.transpose(0, 2, 1), probs) * self.w[:, None, None]
        hess: FloatArray = np.diag(np.bincount(d.items.ravel(), weights=diag.ravel(), minlength=n)).astype(np.float64)
        hess -= np.bincount(self.pairs, weights=outer.ravel(), minlength=n * n).reshape(n, n)
        hess += self.precision * np.eye(n) if self.precision > 0 else np.ones((n, n))
        return np.asarray(hess, dtype=np.float64)


def _objective(theta: FloatArray, d: Design, weights: FloatArray, precision: float) -> tuple[float, FloatArray]:
    """Penalised negative log-likelihood and gradient (see :class:`_Model`)."""
    return _Model(d, weights, precision).value_grad(theta)


def _hessian(theta: FloatArray, d: Design, weights: FloatArray, precision: float) -> FloatArray:
    """Hessian of :func:`_objective`."""
    return _Model(d, weights, precision).hessian(theta)


def fit_design(
    d: Design,
    weights: FloatArray | None = None,
    *,
    prior_sd: float | None = PRIOR_SD_ELO,
    init: FloatArray | None = None,
    max_iter: int = DEFAULT_MAX_ITER,
) -> FloatArray:
    """Plackett-Luce log-strengths (natural log, mean 0) for a packed design.

    ``weights`` count each ranking (bootstrap resamples use integer counts);
    ``prior_sd`` is the Gaussian prior's standard deviation in Elo (None: pure
    maximum likelihood, which diverges for an unbeaten item).
    Raises :class:`RatingError` naming the iteration count if the optimiser
    does not converge.

    The optimiser is Newton's method with the analytic Hessian and a
    backtracking line search (:func:`_newton`): the objective is convex and
    has one variable per bot, so the Hessian is tiny and Newton converges in
    a handful of iterations. Where it stops short (a singular Hessian, which
    only a design without the prior can have), scipy's ``trust-exact`` (Newton
    steps in a trust region) fits it instead, from the same start.
    """
    w = np.ones(d.n_rankings) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (d.n_rankings,):
        raise RatingError(f"weights has shape {w.shape}; expected ({d.n_rankings},), one per ranking")
    precision = 0.0 if prior_sd is None else (ELO_PER_NAT / prior_sd) ** 2
    if prior_sd is not None and not prior_sd > 0:
        raise RatingError(f"prior_sd={prior_sd}: must be a positive number of Elo points, or None")
    x0 = np.zeros(d.n_items) if init is None else np.asarray(init, dtype=np.float64)
    model = _Model(d, w, precision)
    theta, converged = _newton(model, x0, max_iter)
    if converged:
        return np.asarray(theta - theta.mean(), dtype=np.float64)
    # Imported only here: scipy.optimize takes half a second to import, which
    # ``arena run`` would otherwise spend while its workers wait for matches.
    from scipy.optimize import minimize

    res = minimize(
        model.value_grad,
        x0,
        jac=True,
        hess=model.hessian,
        method="trust-exact",
        options={"maxiter": max_iter, "gtol": GTOL},
    )
    theta = np.asarray(res.x, dtype=np.float64)
    if not res.success:
        # A trust-region method may stop because it cannot improve on a point
        # already at the optimum to machine precision; accept that, reject
        # anything else.
        _, grad = model.value_grad(theta)
        scale = max(1.0, float(w.sum()))
        if not (np.all(np.isfinite(theta)) and float(np.abs(grad).max()) <= 1e-6 * scale):
            raise RatingError(
                f"Plackett-Luce fit did not converge after {res.nit} iterations "
                f"(max_iter={max_iter}): {res.message}; largest gradient {float(np.abs(grad).max()):.3g}"
            )
    return np.asarray(theta - theta.mean(), dtype=np.float64)


GTOL = 1e-8
"""A fit has converged when the gradient's norm is at most this (scipy's
``gtol``, as the trust-region fit was asked for)."""


def _newton(model: _Model, x0: FloatArray, max_iter: int) -> tuple[FloatArray, bool]:
    """Newton's method on ``model`` from ``x0``: (the point reached, whether it
    converged). Each step solves with the analytic Hessian and is halved until
    the objective falls by a sufficient share of what the step promises
    (Armijo's rule); a step too small for the objective's value to judge is
    taken whole while it lowers the gradient. Where nothing lowers either any
    more, the point is accepted if its gradient is within the rounding of the
    sums behind it (as the trust-region fit's was). Not converged: the
    Hessian singular or not positive along the step, or ``max_iter`` steps
    taken; the caller then hands the problem to scipy."""
    x = np.array(x0, dtype=np.float64)
    value, grad = model.value_grad(x)
    scale = max(1.0, float(model.w.sum()))

    def at_rounding() -> bool:
        # The gradient sums a term per ranking: with thousands of them its
        # rounding alone can exceed GTOL, so a point where Newton cannot move
        # is taken when its gradient is that small relative to the data.
        return bool(np.all(np.isfinite(x)) and float(np.abs(grad).max()) <= 1e-6 * scale)

    for _ in range(max_iter):
        if float(np.linalg.norm(grad)) <= GTOL:
            return x, True
        try:
            step = -np.linalg.solve(model.hessian(x), grad)
        except np.linalg.LinAlgError:
            return x, False
        slope = float(grad @ step)
        if not (np.all(np.isfinite(step)) and slope < 0):
            return x, False
        if -slope <= 1e-12 * max(1.0, abs(value)):
            # The step promises less than the objective's value can resolve, so
            # no line search can judge it: this close, Newton's full step is
            # safe, and it is taken while it brings the gradient down. Where it
            # no longer does, the gradient is at its own rounding (along the
            # likelihood's flat direction, all strengths up together, only the
            # prior holds the fit, and rounding keeps proposing steps).
            new = x + step
            new_value, new_grad = model.value_grad(new)
            if not float(np.linalg.norm(new_grad)) < float(np.linalg.norm(grad)):
                return x, at_rounding()
            x, value, grad = new, new_value, new_grad
            continue
        t = 1.0
        while True:
            new = x + t * step
            new_value, new_grad = model.value_grad(new)
            if new_value <= value + 1e-4 * t * slope:
                break
            t *= 0.5
            if t < 1e-12:  # no step lowers it: at the optimum to machine precision, or stuck
                return x, at_rounding()
        x, value, grad = new, new_value, new_grad
    return x, float(np.linalg.norm(grad)) <= GTOL


def fit_plackett_luce(
    n_items: int,
    rankings: Sequence[Ranking],
    *,
    weights: Sequence[float] | None = None,
    prior_sd: float | None = PRIOR_SD_ELO,
    max_iter: int = DEFAULT_MAX_ITER,
) -> FloatArray:
    """Maximum-likelihood (with prior: maximum a posteriori) Plackett-Luce
    log-strengths in natural log units, mean 0. Multiply by
    :data:`ELO_PER_NAT` (or call :func:`to_elo`) for the Elo scale."""
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return fit_design(design(n_items, rankings), w, prior_sd=prior_sd, max_iter=max_iter)


def bradley_terry(
    n_items: int,
    outcomes: Sequence[tuple[int, int]],
    *,
    prior_sd: float | None = PRIOR_SD_ELO,
    max_iter: int = DEFAULT_MAX_ITER,
) -> FloatArray:
    """Bradley-Terry log-strengths from ``(winner, loser)`` pairs: the
    Plackett-Luce model restricted to two-entry rankings."""
    return fit_plackett_luce(n_items, outcomes, prior_sd=prior_sd, max_iter=max_iter)


def to_elo(theta: FloatArray, *, anchor: int | None = None, anchor_elo: float = 1500.0) -> FloatArray:
    """Log-strengths on the Elo scale: mean ``anchor_elo``, or item ``anchor``
    at ``anchor_elo``. Works on one vector or on rows of bootstrap samples."""
    elo = np.asarray(theta, dtype=np.float64) * ELO_PER_NAT
    if anchor is None:
        ref = elo.mean(axis=-1, keepdims=True)
    else:
        if not 0 <= anchor < elo.shape[-1]:
            raise RatingError(f"anchor={anchor}: item indices lie in 0..{elo.shape[-1] - 1}")
        ref = elo[..., anchor : anchor + 1]
    return np.asarray(elo - ref + anchor_elo, dtype=np.float64)


@dataclass(frozen=True)
class Rating:
    """A rated set of items on the Elo scale."""

    elo: FloatArray  # point estimate per item
    low: FloatArray  # lower end of the interval (percentile bootstrap)
    high: FloatArray  # upper end
    samples: FloatArray  # (resamples, items) bootstrap Elo values
    los: FloatArray  # los[a, b]: likelihood that a is stronger than b
    level: float


_ERFC = np.frompyfunc(math.erfc, 1, 1)  # elementwise, inf and NaN included

BATCH = 50
"""Bootstrap resamples refitted together (arrays of batch x matches x seats)."""

STEP_TOL = 1e-7
"""A resample's fit has converged when no log-strength moves by more than this
in a step: 4e-6 Elo, far below the 0.01 Elo the tables show. (The steps
shrink geometrically, so the error left is of the order of the last step.)"""

NEWTON_STEPS = 30
"""Iterations a resample may take before it is handed to scipy's trust-region
fit instead (a safety net: from the full-data optimum a resample typically
converges in under ten)."""


def _one_hot(d: Design) -> FloatArray:
    """(matches, seats, items): 1 where entry (m, p) is item i (padding: 0)."""
    hot = np.zeros((d.n_rankings, d.items.shape[1], d.n_items))
    m, p = np.nonzero(d.mask)
    hot[m, p, d.items[m, p]] = 1.0
    return hot


def _ranking_hessians(d: Design, hot: FloatArray, theta: FloatArray) -> FloatArray:
    """(matches, items * items): each ranking's term of the negative
    log-likelihood's Hessian at ``theta`` (see :class:`_Model`), flattened. A
    resample's Hessian there is the weighted sum of these: one matrix product."""
    model = _Model(d, np.ones(d.n_rankings), 0.0)
    model._stages(theta)
    probs: FloatArray = np.asarray(model._probs, dtype=np.float64)  # (matches, stage j, entry p)
    eye: FloatArray = np.eye(d.items.shape[1])
    local = np.einsum("mjp,pq->mpq", probs, eye) - np.einsum("mjp,mjq->mpq", probs, probs)
    out: FloatArray = np.einsum("mpi,mpq,mqj->mij", hot, local, hot).reshape(d.n_rankings, -1)
    return out


def _by_length(d: Design, hot: FloatArray) -> list[tuple[IntArray, IntArray, FloatArray]]:
    """The rankings grouped by length L: (their rows in the design, their
    items as an (L, rankings) array, their one-hot (L * rankings, items)),
    so that the gradient runs on dense blocks with no padding to mask."""
    groups = []
    for length in np.unique(d.lengths):
        rows = np.flatnonzero(d.lengths == length)
        items = np.ascontiguousarray(d.items[rows, :length].T)
        flat = hot[rows, :length].transpose(1, 0, 2).reshape(-1, d.n_items)
        groups.append((rows, items, np.ascontiguousarray(flat)))
    return groups


def _batch_fit(
    d: Design, hot: FloatArray, hess: FloatArray, weights: FloatArray, theta: FloatArray, precision: float
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Fit a batch of resamples at once, each from ``theta``: Newton steps
    with each resample's exact Hessian at ``theta`` held fixed (``hess``:
    batch x items x items, penalty included), so that a step needs only the
    gradient, which needs no stage-by-stage array: with e_p the (shifted)
    strength of entry p and S_j the sum of e over entries j.., the gradient
    of entry p is 1 - e_p * sum_{j <= p} 1 / S_j (see :class:`_Model`).
    Returns the fits and which converged (last step at most STEP_TOL)."""
    theta = theta.copy()
    batch, n = theta.shape
    inverse = np.linalg.inv(hess)
    # Rankings of one length at a time, in a seats-first layout: every slice
    # [:, p] is a (batch, rankings) block, so the prefix and suffix sums over a
    # ranking's few entries are a short loop of whole-array additions (numpy's
    # cumsum along a short last axis is many times slower). The "1" of every
    # entry's gradient sums to a constant per item (``entries``), and e_p is
    # its item's strength, so the per-entry sum to gather onto items is only
    # w * sum_{j <= p} 1 / S_j, multiplied by the item's strength afterwards.
    groups = [
        (items, flat, np.ascontiguousarray(weights[:, rows])[:, None, :]) for rows, items, flat in _by_length(d, hot)
    ]
    entries = weights @ hot.sum(axis=1)  # (batch, items): weighted entries of each item

    def gradient(x: FloatArray) -> FloatArray:
        # One shift per resample keeps every exponential at most 1 (the ratios
        # e_p / S_j do not depend on it); log-strengths are a few units apart.
        strength = np.exp(x - x.max(axis=1, keepdims=True))
        gathered = np.zeros((batch, n))
        for items, flat, w in groups:
            k = items.shape[0]
            inv_s = strength[:, items]  # (batch, k, rankings): e_p, then S_p, then 1 / S_p
            for p in range(k - 2, -1, -1):
                inv_s[:, p] += inv_s[:, p + 1]
            np.reciprocal(inv_s, out=inv_s)
            for p in range(1, k):
                inv_s[:, p] += inv_s[:, p - 1]
            inv_s *= w
            gathered += inv_s.reshape(batch, -1) @ flat
        out: FloatArray = strength * gathered - entries
        out += precision * x if precision > 0 else x.sum(axis=1, keepdims=True)
        return out

    # Broyden's ("good") update of the inverse Hessian after each step: the
    # exact Hessian at the start is close, and the updates make up the rest,
    # so a fit converges in a handful of gradients.
    grad = gradient(theta)
    done = np.zeros(batch, dtype=bool)
    for _ in range(NEWTON_STEPS):
        step = -np.einsum("bij,bj->bi", inverse, grad)
        done = np.abs(step).max(axis=1) <= STEP_TOL
        theta = theta + step  # a converged fit moves by at most STEP_TOL: no harm
        if done.all() or not np.all(np.isfinite(theta)):
            break
        new = gradient(theta)
        dg = new - grad
        grad = new
        u = np.einsum("bij,bj->bi", inverse, dg)
        denom = np.einsum("bi,bi->b", step, u)
        row = np.einsum("bi,bij->bj", step, inverse)
        safe = np.abs(denom) > 1e-300
        upd = np.einsum("bi,bj->bij", step - u, row) / np.where(safe, denom, 1.0)[:, None, None]
        inverse = inverse + np.where(safe[:, None, None], upd, 0.0)
    ok = done & np.all(np.isfinite(theta), axis=1)
    return theta, ok


def bootstrap(
    d: Design,
    theta: FloatArray,
    *,
    resamples: int,
    seed: int,
    prior_sd: float | None = PRIOR_SD_ELO,
    max_iter: int = DEFAULT_MAX_ITER,
    progress: Callable[[int, int], None] | None = None,
) -> FloatArray:
    """Log-strengths refitted on ``resamples`` resamples of the rankings (with
    replacement, as integer weights), each warm-started from ``theta``.
    Seeded: the same seed gives the same samples.

    The resamples are fitted in batches by :func:`_batch_fit` (hundreds of
    separate scipy fits cost tens of seconds on a league); a resample that
    does not converge there is refitted alone by :func:`fit_design`, so
    the answer is the same optimum either way. ``progress(done, total)`` is
    called after each batch."""
    rng = np.random.default_rng(seed)
    counts = (
        np.stack(
            [np.bincount(rng.integers(0, d.n_rankings, d.n_rankings), minlength=d.n_rankings) for _ in range(resamples)]
        ).astype(np.float64)
        if resamples
        else np.zeros((0, d.n_rankings))
    )
    precision = 0.0 if prior_sd is None else (ELO_PER_NAT / prior_sd) ** 2
    if prior_sd is not None and not prior_sd > 0:
        raise RatingError(f"prior_sd={prior_sd}: must be a positive number of Elo points, or None")
    hot = _one_hot(d)
    per_ranking = _ranking_hessians(d, hot, theta)
    prior = precision * np.eye(d.n_items) if precision > 0 else np.ones((d.n_items, d.n_items))
    out = np.empty((resamples, d.n_items))
    batch = max(1, min(BATCH, int(2e6 // max(1, d.items.size))))
    for start in range(0, resamples, batch):
        w = counts[start : start + batch]
        hess = (w @ per_ranking).reshape(len(w), d.n_items, d.n_items) + prior
        fits, ok = _batch_fit(d, hot, hess, w, np.repeat(theta[None, :], len(w), axis=0), precision)
        for j in np.flatnonzero(~ok):
            fits[j] = fit_design(d, w[j], prior_sd=prior_sd, init=theta, max_iter=max_iter)
        out[start : start + len(w)] = fits - fits.mean(axis=1, keepdims=True)
        if progress is not None:
            progress(start + len(w), resamples)
    return out


def likelihood_of_superiority(samples: FloatArray) -> FloatArray:
    """P(a stronger than b) for every pair, from bootstrap samples of ratings.

    Uses a normal approximation to the bootstrap distribution of each
    difference (mean over its standard deviation), which is smooth where the
    raw share of resamples would round to exactly 0 or 1. The diagonal is 0.5.
    """
    s = np.asarray(samples, dtype=np.float64)
    diff = s[:, :, None] - s[:, None, :]
    mean = diff.mean(axis=0)
    sd = diff.std(axis=0, ddof=1) if s.shape[0] > 1 else np.zeros_like(mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, mean / sd, np.sign(mean) * np.inf)
    # The normal CDF, 0.5 * erfc(-z / sqrt 2) (what scipy's ndtr computes), from the
    # standard library: importing scipy.special for one matrix cost arena run
    # most of a second.
    los = np.asarray(_ERFC(-z / math.sqrt(2.0)), dtype=np.float64) * 0.5
    los[np.isnan(z)] = 0.5
    np.fill_diagonal(los, 0.5)
    return los


def rate(
    n_items: int,
    rankings: Sequence[Ranking],
    *,
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
    prior_sd: float | None = PRIOR_SD_ELO,
    anchor: int | None = None,
    anchor_elo: float = 1500.0,
    max_iter: int = DEFAULT_MAX_ITER,
    progress: Callable[[int, int], None] | None = None,
) -> Rating:
    """Plackett-Luce Elo ratings with percentile-bootstrap intervals.

    Every bootstrap fit is put on the same scale as the point estimate (mean
    ``anchor_elo``, or the anchor item fixed at it), so an anchored item has a
    zero-width interval by definition and the others' intervals are relative
    to it.
    """
    if not 0 < level < 1:
        raise RatingError(f"level={level}: an interval level lies strictly between 0 and 1, e.g. 0.95")
    if resamples < 2:
        raise RatingError(f"resamples={resamples}: need at least 2 bootstrap resamples for an interval")
    d = design(n_items, rankings)
    theta = fit_design(d, prior_sd=prior_sd, max_iter=max_iter)
    boot = bootstrap(d, theta, resamples=resamples, seed=seed, prior_sd=prior_sd, max_iter=max_iter, progress=progress)
    elo = to_elo(theta, anchor=anchor, anchor_elo=anchor_elo)
    samples = to_elo(boot, anchor=anchor, anchor_elo=anchor_elo)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail], axis=0)
    return Rating(elo, low, high, samples, likelihood_of_superiority(samples), level)


def sequential_elo(
    n_items: int,
    rankings: Sequence[Ranking],
    *,
    k: float = 16.0,
    start: float = 1500.0,
) -> FloatArray:
    """Classic Elo, updated match by match in the order given.

    A ranking of n entries counts as every pair of entries playing one game
    (the higher finisher wins), with the K-factor divided by n - 1 so that a
    match moves a player's rating by at most K whatever the table size.
    Updates within a match are simultaneous. The result depends on the order
    of the rankings: use it only as the familiar reference figure.
    """
    # Plain floats, not a numpy array per match: numpy's overhead on a table's
    # few entries was most of the time (2,000 five-player matches: 0.10 s
    # against 0.03 s). The arithmetic is numpy's own: the same operations in
    # the same order, and each entry's sum over the table as numpy's add.reduce
    # adds a row (_row_sum); the same to the last bit where numpy's power and
    # sums take their plain paths, within an ulp where they are vectorised.
    r = [float(start)] * n_items
    for m, ranking in enumerate(rankings):
        n = len(ranking)
        if n < 2:
            raise RatingError(f"ranking {m} has {n} entries: a finishing order needs at least 2")
        if min(ranking) < 0 or max(ranking) >= n_items:
            raise RatingError(f"ranking {m} = {list(ranking)}: item indices must lie in 0..{n_items - 1}")
        ratings = [r[i] for i in ranking]
        step = k / (n - 1)
        # Entry a's delta against entry b: its score (1 when it finished above b,
        # at a lower position) less the expected score; none against itself.
        moves = [
            step
            * _row_sum(
                [0.0 if a == b else (1.0 if a < b else 0.0) - score_of_elo(ratings[a] - ratings[b]) for b in range(n)]
            )
            for a in range(n)
        ]
        for i, move in zip(ranking, moves):  # simultaneous: every move from the ratings before the match
            r[i] += move
    return np.array(r)


def _row_sum(row: list[float]) -> float:
    """``sum(row)`` as numpy's ``add.reduce`` adds a contiguous row: one by
    one under 8 entries, else pairwise over 8 partial sums (numpy's
    pairwise_sum below its 128-entry block)."""
    n = len(row)
    if n < 8:
        total = 0.0
        for x in row:
            total += x
        return total
    part = row[:8]
    i = 8
    while i + 8 <= n:
        for j in range(8):
            part[j] += row[i + j]
        i += 8
    total = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]))
    for x in row[i:]:
        total += x
    return total


def head_to_head(n_items: int, rankings: Sequence[Ranking]) -> tuple[IntArray, IntArray]:
    """``(above, met)``: ``met[a, b]`` counts pairs of entries of a and b in the
    same ranking, ``above[a, b]`` those where a finished above b. Entries of
    the same item are not compared with each other (the diagonal is 0)."""
    above = np.zeros((n_items, n_items), dtype=np.int64)
    by_length: dict[int, list[Ranking]] = {}
    for m, ranking in enumerate(rankings):
        if len(ranking) and (min(ranking) < 0 or max(ranking) >= n_items):
            raise RatingError(f"ranking {m} = {list(ranking)}: item indices must lie in 0..{n_items - 1}")
        by_length.setdefault(len(ranking), []).append(ranking)
    # Rankings of one length at a time: every (higher, lower) pair of entries counted at once.
    for length, group in by_length.items():
        idx = np.asarray(group, dtype=np.int64).reshape(len(group), length)
        hi, lo = np.triu_indices(length, k=1)
        pairs = (idx[:, hi] * n_items + idx[:, lo]).ravel()
        above += np.bincount(pairs, minlength=n_items * n_items).reshape(n_items, n_items)
    np.fill_diagonal(above, 0)
    met = above + above.T
    return above, met
