"""`arena sprt`: the statistic (against closed forms), the paired schedule,
the error rates by simulation with in-process bots, then for real."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine.rules import Rules
from arena.match.inprocess import InProcessTransport
from arena.match.referee import play_match
from arena.protocol.loader import load_python_bot
from arena.running.observe import Finished
from arena.running.sprt import (
    SprtParams,
    SprtTest,
    constrained_mle,
    elo_of_score,
    llr,
    llr_normal,
    score_of_elo,
    sprt_schedule,
    wald_bounds,
)
from arena.running.store import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
RANDOM = load_python_bot(ROOT / "bots" / "random.py")
PROBABILISTIC = load_python_bot(ROOT / "bots" / "probabilistic.py")
CAUTIOUS = load_python_bot(ROOT / "bots" / "cautious.py")
ONE_DIE = Rules.preset("classic", {"dice": 1}).to_dict()  # a match is one round: fast


def test_wald_bounds_and_the_logistic_scale() -> None:
    assert wald_bounds(0.05, 0.05) == pytest.approx((-math.log(19), math.log(19)))
    assert score_of_elo(0) == 0.5 and score_of_elo(400) == pytest.approx(10 / 11)
    assert elo_of_score(score_of_elo(37.0)) == pytest.approx(37.0)


def test_constrained_fit_has_the_asked_mean_and_is_a_distribution() -> None:
    for probs in ([0.2, 0.3, 0.5], [0.7, 0.2, 0.1], [0.001, 0.998, 0.001]):
        for mu in (0.3, 0.5, 0.52, 0.8):
            q = constrained_mle((0.0, 0.5, 1.0), probs, mu)
            assert sum(q) == pytest.approx(1.0, abs=1e-9)
            assert sum(v * p for v, p in zip((0.0, 0.5, 1.0), q)) == pytest.approx(mu, abs=1e-9)
            assert all(p > 0 for p in q)


def test_without_level_pairs_the_llr_is_wald_binomial_one() -> None:
    # On {0, 1} the fit with a given mean is that Bernoulli: the generalized
    # test is Wald's binomial test (up to the tiny count of the empty class).
    for wins, losses in ((30, 20), (12, 40), (100, 100)):
        s0, s1 = score_of_elo(0), score_of_elo(20)
        exact = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
        assert llr([losses, 0, wins], 0, 20) == pytest.approx(exact, abs=0.02)


def test_the_normal_llr_approaches_the_trinomial_one_near_the_hypotheses() -> None:
    """llr_normal (the luck-reduced test's, docs/sprt.md, Luck) on pair scores that are
    still 0, 1/2 or 1 agrees with the trinomial GSPRT when the mean lies between
    the hypotheses, where a test decides; and it has the trinomial's sign."""
    for below, level, above in ((300, 420, 280), (280, 400, 320), (250, 500, 250), (310, 380, 310)):
        n = below + level + above
        mean = (0.5 * level + above) / n
        var = (below * mean**2 + level * (0.5 - mean) ** 2 + above * (1 - mean) ** 2) / n
        exact = llr([below, level, above], 0, 20)
        approx = llr_normal(n, mean, var, 0, 20)
        assert approx == pytest.approx(exact, rel=0.01, abs=0.01), (below, level, above)
    assert llr_normal(1, 0.9, 0.1, 0, 20) == 0.0 and llr_normal(10, 0.5, 0.0, 0, 20) == 0.0


def test_the_paired_schedule_puts_a_and_b_in_one_seat_of_one_deal() -> None:
    labels = ["A", "B", "x", "y", "z"]
    params = SprtParams("A", "B")
    specs = sprt_schedule(seed=3, labels=labels, params=params, players=4, pairs=20, variant="c", rules=ONE_DIE)
    assert [s.match for s in specs] == [f"m-{i:06d}" for i in range(40)]
    seats = set()
    for first, second in zip(specs[::2], specs[1::2]):
        assert first.dice_seed == second.dice_seed and first.seed != second.seed
        seat = first.entrants.index(0)
        seats.add(seat)
        assert second.entrants[seat] == 1 and 1 not in first.entrants and 0 not in second.entrants
        assert [e for i, e in enumerate(first.entrants) if i != seat] == [
            e for i, e in enumerate(second.entrants) if i != seat
        ]
        assert first.rules["seating"] == "fixed" and (first.repeat, second.repeat) == (0, 1)
    assert seats == {0, 1, 2, 3}  # the hero's seat goes round the table
    heads = sprt_schedule(seed=3, labels=["A", "B"], params=params, players=2, pairs=2, variant="c", rules=ONE_DIE)
    assert [s.entrants for s in heads] == [(0, 1), (1, 0), (1, 0), (0, 1)]


def simulate(bots: dict[str, object], params: SprtParams, *, seed: int, pairs: int, players: int = 2) -> SprtTest:
    """One test with in-process bots through the referee, on the real paired schedule."""
    labels = list(bots)
    test = SprtTest(params, pairs)
    for spec in sprt_schedule(
        seed=seed, labels=labels, params=params, players=players, pairs=pairs, variant="one-die", rules=ONE_DIE
    ):
        names = [labels[e] for e in spec.entrants]
        seats = [InProcessTransport(bots[n], n) for n in names]  # type: ignore[arg-type]
        record = play_match(spec, seats, names, 1000).record
        if test.observe(Finished.of(record)):
            break
    return test


@pytest.mark.slow
def test_equal_bots_accept_h1_in_at_most_about_alpha_of_the_trials() -> None:
    params = SprtParams("A", "B", elo0=0, elo1=100, alpha=0.05, beta=0.05)
    trials = 150
    verdicts = [simulate({"A": RANDOM, "B": RANDOM}, params, seed=1000 + k, pairs=400).verdict for k in range(trials)]
    h1 = verdicts.count("H1")
    # alpha 0.05 of 150 is 7.5 expected; the binomial's 3-sigma upper end is about 15.
    assert h1 <= 15, verdicts
    assert verdicts.count("H0") >= trials * 0.8  # and most trials decide, for H0


@pytest.mark.slow
def test_a_clearly_stronger_bot_accepts_h1_within_a_bounded_number_of_pairs() -> None:
    params = SprtParams("A", "B", elo0=0, elo1=100, alpha=0.05, beta=0.05)
    for k in range(20):
        test = simulate({"A": PROBABILISTIC, "B": RANDOM}, params, seed=2000 + k, pairs=400)
        assert test.verdict == "H1" and test.decided_at is not None and test.decided_at <= 120, test.summary()


@pytest.mark.slow
def test_in_a_field_equal_bots_do_not_accept_h1_and_a_stronger_one_does() -> None:
    params = SprtParams("A", "B", elo0=0, elo1=100, alpha=0.05, beta=0.05)
    field = {"x": CAUTIOUS, "y": RANDOM, "z": PROBABILISTIC}
    equal = [
        simulate({"A": RANDOM, "B": RANDOM, **field}, params, seed=3000 + k, pairs=300, players=3).verdict
        for k in range(30)
    ]
    assert equal.count("H1") <= 5, equal
    stronger = [
        simulate({"A": PROBABILISTIC, "B": RANDOM, **field}, params, seed=4000 + k, pairs=300, players=3)
        for k in range(5)
    ]
    assert all(t.verdict == "H1" for t in stronger), [t.summary() for t in stronger]


def test_the_verdict_reads_pairs_in_schedule_order_whatever_the_arrival() -> None:
    params = SprtParams("A", "B", elo0=0, elo1=100)
    specs = sprt_schedule(seed=9, labels=["A", "B"], params=params, players=2, pairs=200, variant="c", rules=ONE_DIE)
    records = []
    for spec in specs:
        names = ["A" if e == 0 else "B" for e in spec.entrants]
        seats = [InProcessTransport(PROBABILISTIC if n == "A" else RANDOM, n) for n in names]
        records.append(Finished.of(play_match(spec, seats, names, 1000).record))
    in_order, shuffled = SprtTest(params, 200), SprtTest(params, 200)
    for rec in records:
        in_order.observe(rec)
    import random

    mixed = list(records)
    random.Random(1).shuffle(mixed)
    for rec in mixed:
        shuffled.observe(rec)
    assert in_order.verdict == shuffled.verdict == "H1"
    assert in_order.decided_at == shuffled.decided_at and in_order.counts == shuffled.counts


def sprt_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, "sprt", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_arena_sprt_for_real(tmp_path: Path) -> None:
    out = tmp_path / "s"
    # A set seed: the matches, and so the verdict and the integrity check beside it (which refuses H1 to
    # an honest A in 1% of tests at random), are the same on every machine.
    r = sprt_cli("probabilistic", "random", "--max-matches", "600", "--workers", "2", "--seed", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "H1 accepted" in r.stdout and "LLR" in r.stdout
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "complete" and meta["sprt"]["verdict"] == "H1"
    assert 2 * meta["sprt"]["decided_at"] <= 400  # a few hundred matches at most
    lines = (out / "games.jsonl").read_bytes()
    # The same command: already decided, said so, nothing played.
    again = sprt_cli(
        "probabilistic", "random", "--max-matches", "600", "--workers", "2", "--seed", "3", "--out", str(out)
    )
    assert again.returncode == 0 and "already decided" in again.stderr and "H1 accepted" in again.stdout
    assert (out / "games.jsonl").read_bytes() == lines
    # An ordinary run folder: rated like any other.
    rated = subprocess.run([*ARENA, "ratings", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rated.returncode == 0 and "probabilistic" in rated.stdout
    assert len(read_records(out).records) >= 2 * meta["sprt"]["decided_at"]
    # Two copies of one bot never accept H1.
    same = sprt_cli("random", "random", "--max-matches", "300", "--workers", "2", "--out", str(tmp_path / "same"))
    assert same.returncode == 0, same.stderr
    assert "H1 accepted" not in same.stdout
    assert json.loads((tmp_path / "same" / "run.json").read_text())["sprt"]["verdict"] in ("H0", "inconclusive")
