"""arena.analysis.ratings: the Plackett-Luce fit, its intervals, sequential Elo, head to head."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from arena.analysis import ratings as rt
from arena.errors import ArenaError, RatingError


def sample_rankings(
    rng: np.random.Generator, theta: np.ndarray, matches: int, sizes: tuple[int, int] = (2, 5), replace: bool = False
) -> list[list[int]]:
    """Finishing orders drawn from Plackett-Luce with log-strengths ``theta``:
    sorting strength + Gumbel noise is an exact PL sample."""
    out = []
    for _ in range(matches):
        k = int(rng.integers(sizes[0], sizes[1] + 1))
        players = rng.choice(len(theta), k, replace=replace)
        noisy = theta[players] + rng.gumbel(size=k)
        out.append(players[np.argsort(-noisy)].tolist())
    return out


def loglik_reference(theta: np.ndarray, rankings: list[list[int]]) -> float:
    """The Plackett-Luce log-likelihood written directly from its definition."""
    total = 0.0
    for r in rankings:
        for j in range(len(r)):
            total += theta[r[j]] - math.log(sum(math.exp(theta[i]) for i in r[j:]))
    return total


def bt_mm(n: int, pairs: list[tuple[int, int]], iters: int = 20000) -> np.ndarray:
    """Hunter's (2004) MM algorithm for Bradley-Terry, independent of scipy."""
    wins = np.zeros(n)
    games = np.zeros((n, n))
    for w, lo in pairs:
        wins[w] += 1
        games[w, lo] += 1
        games[lo, w] += 1
    p = np.ones(n)
    for _ in range(iters):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = wins / denom
        new /= np.exp(np.log(new).mean())
        if np.abs(new - p).max() < 1e-13:
            p = new
            break
        p = new
    return np.log(p) - np.log(p).mean()


def test_objective_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(3)
    ranks = sample_rankings(rng, rng.normal(0, 1, 6), 80, (2, 6), replace=True)
    d = rt.design(6, ranks)
    w = rng.integers(0, 3, d.n_rankings).astype(float)
    x = rng.normal(0, 1.5, 6)
    for precision in (0.0, 0.4):
        value, grad = rt._objective(x, d, w, precision)
        numeric = approx_fprime(x, lambda t, p=precision: rt._objective(t, d, w, p)[0], 1e-6)
        assert np.allclose(grad, numeric, rtol=1e-4, atol=1e-3)
        # The value is the reference log-likelihood (weighted) plus the penalty.
        ref = -sum(wi * loglik_reference(x, [r]) for wi, r in zip(w, ranks))
        penalty = 0.5 * precision * float(x @ x) if precision else 0.5 * float(x.sum()) ** 2
        assert value == pytest.approx(ref + penalty, rel=1e-10)


def test_two_player_fit_equals_bradley_terry_mm() -> None:
    rng = np.random.default_rng(11)
    theta = np.array([0.8, 0.3, 0.0, -0.4, -0.9])
    pairs = [tuple(r) for r in sample_rankings(rng, theta, 600, (2, 2))]
    ours = rt.bradley_terry(5, pairs, prior_sd=None)  # type: ignore[arg-type]
    assert np.allclose(ours, bt_mm(5, pairs), atol=1e-6)  # type: ignore[arg-type]


def test_multiplayer_fit_is_the_maximum_of_the_reference_likelihood() -> None:
    rng = np.random.default_rng(5)
    ranks = sample_rankings(rng, np.array([1.0, 0.5, 0.0, -0.5]), 150, (3, 4))
    fit = rt.fit_plackett_luce(4, ranks, prior_sd=None)
    grad = approx_fprime(fit, lambda t: loglik_reference(t, ranks), 1e-7)
    assert np.abs(grad).max() < 1e-3
    best = loglik_reference(fit, ranks)
    for step in np.eye(4) * 0.01:
        assert loglik_reference(fit + step, ranks) < best
        assert loglik_reference(fit - step, ranks) < best


def test_elo_scale_is_400_log10() -> None:
    # A beats B 10 times out of 11: strength ratio 10, so 400 Elo apart.
    ranks = [[0, 1]] * 10 + [[1, 0]]
    elo = rt.to_elo(rt.fit_plackett_luce(2, ranks, prior_sd=None))
    assert elo[0] - elo[1] == pytest.approx(400.0, abs=1e-4)
    assert elo.mean() == pytest.approx(1500.0)
    anchored = rt.to_elo(rt.fit_plackett_luce(2, ranks, prior_sd=None), anchor=1, anchor_elo=1000.0)
    assert anchored.tolist() == pytest.approx([1400.0, 1000.0], abs=1e-4)


def test_prior_keeps_unbeaten_and_disconnected_items_finite() -> None:
    # Item 0 never loses; items 3 and 4 only ever meet each other.
    ranks = [[0, 1], [0, 2], [1, 2], [2, 1], [3, 4], [4, 3], [3, 4]]
    fit = rt.fit_plackett_luce(5, ranks)
    assert np.all(np.isfinite(fit))
    elo = rt.to_elo(fit)
    assert elo[0] > elo[1] and elo[0] > elo[2] and elo[3] > elo[4]
    assert elo[0] - 1500 < 4 * rt.PRIOR_SD_ELO
    # A stronger prior (smaller sd) shrinks the ratings toward the mean.
    tight = rt.to_elo(rt.fit_plackett_luce(5, ranks, prior_sd=50.0))
    assert np.abs(tight - 1500).max() < np.abs(elo - 1500).max()


def test_non_convergence_raises_with_the_iteration_count() -> None:
    rng = np.random.default_rng(0)
    ranks = sample_rankings(rng, np.linspace(-1, 1, 8), 200)
    with pytest.raises(RatingError, match=r"did not converge after \d+ iterations \(max_iter=2\)") as info:
        rt.fit_plackett_luce(8, ranks, max_iter=2)
    assert isinstance(info.value, ArenaError)


@pytest.mark.parametrize(
    "ranks, message",
    [
        ([], "no rankings"),
        ([[0, 1], [2]], "ranking 1 has 1 entries"),
        ([[0, 5]], r"must lie in 0\.\.2"),
        ([[0, -1]], r"must lie in 0\.\.2"),
    ],
)
def test_bad_rankings_are_named(ranks: list[list[int]], message: str) -> None:
    with pytest.raises(RatingError, match=message):
        rt.fit_plackett_luce(3, ranks)


def test_bootstrap_is_reproducible_and_seeded() -> None:
    rng = np.random.default_rng(2)
    ranks = sample_rankings(rng, np.array([0.5, 0.0, -0.5]), 60, (2, 3))
    a = rt.rate(3, ranks, resamples=30, seed=4)
    b = rt.rate(3, ranks, resamples=30, seed=4)
    c = rt.rate(3, ranks, resamples=30, seed=5)
    assert np.array_equal(a.samples, b.samples) and np.array_equal(a.low, b.low)
    assert not np.array_equal(a.samples, c.samples)
    assert np.all(a.low <= a.elo) and np.all(a.elo <= a.high)
    assert np.allclose(a.samples.mean(axis=1), 1500.0)


def test_anchored_item_has_zero_width_interval() -> None:
    rng = np.random.default_rng(9)
    ranks = sample_rankings(rng, np.array([0.5, 0.0, -0.5]), 60, (2, 3))
    r = rt.rate(3, ranks, resamples=20, seed=1, anchor=2, anchor_elo=1000.0)
    assert r.elo[2] == r.low[2] == r.high[2] == 1000.0
    assert np.all(r.high[:2] > r.low[:2])


def test_intervals_cover_true_strengths_at_about_the_nominal_rate() -> None:
    """Rating recovery: simulate matches from known strengths many times and
    count how often each 95% interval contains the true (mean-centred) Elo."""
    rng = np.random.default_rng(2026)
    true_elo = np.array([-250.0, -120.0, 0.0, 90.0, 280.0])
    theta = true_elo / rt.ELO_PER_NAT
    target = rt.to_elo(theta)
    covered = total = 0
    for sim in range(30):
        ranks = sample_rankings(rng, theta, 250, (2, 5))
        r = rt.rate(5, ranks, resamples=100, seed=sim)
        covered += int(np.sum((r.low <= target) & (target <= r.high)))
        total += len(target)
    coverage = covered / total
    assert 0.85 <= coverage <= 0.99, f"coverage {coverage:.3f} over {total} intervals"


def test_likelihood_of_superiority() -> None:
    rng = np.random.default_rng(1)
    samples = np.column_stack([rng.normal(1700, 20, 400), rng.normal(1500, 20, 400), rng.normal(1505, 20, 400)])
    los = rt.likelihood_of_superiority(samples)
    assert np.allclose(los + los.T, 1.0)
    assert np.allclose(np.diag(los), 0.5)
    assert los[0, 1] > 0.999 and los[1, 0] < 0.001
    assert 0.3 < los[2, 1] < 0.8
    # Identical columns: no evidence either way.
    same = rt.likelihood_of_superiority(np.column_stack([samples[:, 0], samples[:, 0]]))
    assert same[0, 1] == 0.5


def test_sequential_elo_by_hand() -> None:
    # Two players: the winner gains K/2 at equal ratings.
    assert rt.sequential_elo(2, [[0, 1]], k=16).tolist() == pytest.approx([1508.0, 1492.0])
    # Three players at equal ratings: pairwise scores 2, 1, 0 of 2 expected 1 each, K/(n-1) = 8.
    assert rt.sequential_elo(3, [[0, 1, 2]], k=16).tolist() == pytest.approx([1508.0, 1500.0, 1492.0])
    # Second match from (1508, 1492), won by 1, whose expected score is 1/(1 + 10^(16/400)).
    e = 1 / (1 + 10 ** (16 / 400))
    after = rt.sequential_elo(2, [[0, 1], [1, 0]], k=16)
    assert after.tolist() == pytest.approx([1508 - 16 * (1 - e), 1492 + 16 * (1 - e)])
    # Order matters (that is why the table labels it): the same matches reversed differ.
    assert not np.allclose(
        rt.sequential_elo(2, [[0, 1], [0, 1], [1, 0]]), rt.sequential_elo(2, [[1, 0], [0, 1], [0, 1]])
    )
    # Ratings are conserved.
    many = rt.sequential_elo(4, [[0, 1, 2, 3], [3, 1], [2, 0, 1]], k=32)
    assert many.sum() == pytest.approx(4 * 1500.0)


def _sequential_elo_numpy(n_items: int, rankings: list[list[int]], k: float = 16.0) -> list[float]:
    """The update written with numpy arrays, one matrix per match (how
    sequential_elo was first written): ratings.csv's elo_seq must not move by
    a bit when the implementation does."""
    r = np.full(n_items, 1500.0)
    for ranking in rankings:
        idx = np.asarray(ranking, dtype=np.int64)
        n = len(idx)
        ratings = r[idx]
        expected = 1.0 / (1.0 + 10.0 ** ((ratings[None, :] - ratings[:, None]) / 400.0))
        pos = np.arange(n)
        delta = (pos[:, None] < pos[None, :]).astype(np.float64) - expected
        np.fill_diagonal(delta, 0.0)
        np.add.at(r, idx, k / (n - 1) * delta.sum(axis=1))
    return r.tolist()


def test_sequential_elo_is_the_matrix_update() -> None:
    rng = np.random.default_rng(12)
    for _ in range(60):
        items = int(rng.integers(2, 13))
        rankings = []
        for _ in range(150):
            n = int(rng.integers(2, min(10, items) + 1))
            # Mostly distinct bots at a table; at times copies of one (a bot entered twice).
            pick = rng.choice(items, n, replace=bool(rng.random() < 0.2))
            rankings.append([int(i) for i in pick])
        # Within rounding, not to the last bit: numpy's row sums take a SIMD path on
        # some CPUs and not on others (one ulp apart seen on a CI machine), so the
        # numpy form is not one fixed sum order to match.
        assert rt.sequential_elo(items, rankings).tolist() == pytest.approx(
            _sequential_elo_numpy(items, rankings), rel=1e-12, abs=0
        )
    with pytest.raises(RatingError, match="at least 2"):
        rt.sequential_elo(3, [[0, 1], [2]])
    with pytest.raises(RatingError, match="must lie in 0..2"):
        rt.sequential_elo(3, [[0, 3]])


def test_head_to_head_counts_every_pair_of_entries() -> None:
    above, met = rt.head_to_head(3, [[0, 1, 2], [2, 0], [1, 1, 0]])
    # [1, 1, 0]: both copies of 1 finish above 0; copies are not compared.
    assert above.tolist() == [[0, 1, 1], [2, 0, 1], [1, 0, 0]]
    assert met.tolist() == [[0, 3, 2], [3, 0, 1], [2, 1, 0]]
    assert np.all(above + above.T == met)


def test_duplicate_items_in_a_ranking_fit_like_copies() -> None:
    # A bot seated twice: the fit treats the copies as equal-strength entries.
    ranks = [[0, 1, 0], [1, 0, 0], [0, 0, 1]] * 5
    fit = rt.fit_plackett_luce(2, ranks, prior_sd=None)
    grad = approx_fprime(fit, lambda t: loglik_reference(t, ranks), 1e-7)
    assert np.abs(grad).max() < 1e-3


def test_rates_itertools_all_orders_symmetrically() -> None:
    # Every order of 3 items once: no item is better, all ratings equal.
    ranks = [list(p) for p in itertools.permutations(range(3))]
    assert np.allclose(rt.to_elo(rt.fit_plackett_luce(3, ranks)), 1500.0, atol=1e-6)


def test_hessian_matches_finite_differences_of_the_gradient() -> None:
    rng = np.random.default_rng(8)
    ranks = sample_rankings(rng, rng.normal(0, 1, 5), 60, (2, 5), replace=True)
    d = rt.design(5, ranks)
    w = rng.integers(0, 3, d.n_rankings).astype(float)
    x = rng.normal(0, 1, 5)
    for precision in (0.0, 0.7):
        numeric = np.array(
            [approx_fprime(x, lambda t, i=i, p=precision: rt._objective(t, d, w, p)[1][i], 1e-6) for i in range(5)]
        )
        hess = rt._hessian(x, d, w, precision)
        assert np.allclose(hess, numeric, rtol=1e-4, atol=1e-3)
        assert np.allclose(hess, hess.T)
        assert np.all(np.linalg.eigvalsh(hess) > 0)  # strictly convex: one optimum


@pytest.mark.parametrize("seed", range(6))
def test_newtons_fit_is_the_trust_region_fit(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """fit_design takes Newton's method, and scipy's trust-exact only where
    Newton stops short: on any data the two must give the same optimum, with
    and without the prior, small data and large (where the gradient's own
    rounding is above the 1e-8 tolerance), and weighted as the bootstrap is."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    matches = int(rng.choice([30, 400, 3000]))
    d = rt.design(n, sample_rankings(rng, rng.normal(0, 1, n), matches, sizes=(2, min(6, n))))
    weights = rng.integers(0, 3, d.n_rankings).astype(np.float64) if seed % 2 else None
    prior = rt.PRIOR_SD_ELO if seed % 3 else None
    if prior is None and weights is not None:
        weights = None  # a zero weight may leave an item unbeaten, which diverges without the prior
    newton = rt.fit_design(d, weights, prior_sd=prior)
    monkeypatch.setattr(rt, "_newton", lambda model, x0, max_iter: (x0, False))  # straight to scipy
    trust = rt.fit_design(d, weights, prior_sd=prior)
    assert np.abs(rt.to_elo(newton) - rt.to_elo(trust)).max() < 1e-4  # Elo; the tables show 0.01


def test_a_design_newton_cannot_solve_goes_to_the_trust_region() -> None:
    """Without the prior, two groups that never met leave the Hessian singular
    (each group's level is free; the penalty pins only their sum): Newton
    cannot step, and scipy's fit takes over and finds the likelihood's maximum."""
    ranks = [[0, 1], [1, 0], [0, 1], [2, 3], [3, 2], [2, 3]]
    fit = rt.fit_plackett_luce(4, ranks, prior_sd=None)
    assert np.all(np.isfinite(fit))
    grad = approx_fprime(fit, lambda t: loglik_reference(t, ranks), 1e-7)
    assert np.abs(grad).max() < 1e-4  # the likelihood's maximum
    assert fit[0] - fit[1] == pytest.approx(math.log(2), abs=1e-5) and fit[2] - fit[3] == pytest.approx(
        math.log(2), abs=1e-5
    )


def test_the_end_of_run_table_imports_no_scipy(tmp_path: Path) -> None:
    """arena run imports the end-of-run table's modules while its workers wait
    for their first matches (arena.apps.cli); scipy.optimize and scipy.special
    would add most of a second there. A fresh interpreter rates a run and says
    which scipy modules it loaded."""
    import subprocess
    import sys

    import synth_records

    run = synth_records.league(tmp_path / "run")
    code = (
        "import sys; from arena.analysis.commands import end_of_run_text; "
        f"text = end_of_run_text({str(run)!r}); assert 'Elo' in text, text; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
