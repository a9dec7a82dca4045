"""The paired-play integrity check (docs/ratings.md, Integrity; docs/sprt.md, Integrity).

First the statistic on hand-made plays (seat luck cancels by construction,
strata without a mirror say nothing), then by simulation with the real
engine and referee, in-process, on the real schedules: honest bots are
flagged in at most about alpha of the runs, and a bot told the deal on its
later plays (``tests/bots/told_deal.py``: the protection switched off) is
flagged within a few dozen deals, refused H1 by ``arena sprt``, and shown by
``arena ratings``, the HTML report and the live warnings of ``arena run``.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arena.analysis.commands import rate_run
from arena.analysis.format import format_ratings, ratings_json
from arena.analysis.results import from_records, match_seeds
from arena.analysis.stats import rate_results
from arena.apps.standings import LiveStandings
from arena.engine.records import MatchRecord, MatchSpec
from arena.engine.rules import Rules
from arena.match.inprocess import InProcessTransport
from arena.match.referee import play_match
from arena.protocol.loader import BotFactory, load_python_bot
from arena.running.integrity import ALPHA, MIN_DEALS, Play, check_plays
from arena.running.observe import Finished
from arena.running.schedule import build_schedule
from arena.running.sprt import SprtParams, SprtTest, sprt_schedule

ROOT = Path(__file__).resolve().parent.parent
BOTS: dict[str, BotFactory] = {
    n: load_python_bot(ROOT / "bots" / f"{n}.py") for n in ("random", "probabilistic", "cautious", "bluffer")
}


def _told_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("told_deal", ROOT / "tests" / "bots" / "told_deal.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOLD = _told_module()
CHEAT: BotFactory = TOLD.ToldDeal
ONE_DIE = Rules.preset("classic", {"dice": 1}).to_dict()  # one round a match: fast
CLASSIC = Rules.preset("classic").to_dict()  # five dice each, as the decoding bots of docs/sandbox.md played


# -- the statistic -------------------------------------------------------------


def _heads_up(outcomes: Sequence[tuple[int, float, float]]) -> list[Play]:
    """Plays of bot "x" from (its seat on the first play, first score, later score),
    the later play in the other seat; "y" takes the other seat each time."""
    plays = []
    for deal, (seat, first, later) in enumerate(outcomes):
        for order, (s, score) in enumerate(((seat, first), (1 - seat, later))):
            place = 1 if score == 1 else 2
            plays += [Play(deal, order, "x", s, 2, "v", place), Play(deal, order, "y", 1 - s, 2, "v", 3 - place)]
    return plays


def test_seat_luck_cancels_by_construction_even_with_unbalanced_orders() -> None:
    # Seat 0 always wins. Seat 0 was x's first seat on 7 deals and its later seat
    # on 23: later-minus-first averages (23 - 7) / 30 = +0.53, yet x plays the
    # same whichever play comes first, and the check must see no gain.
    outcomes = [(0, 1.0, 0.0)] * 7 + [(1, 0.0, 1.0)] * 23
    report = check_plays(_heads_up(outcomes))
    x = report.check_of("x")
    assert x is not None and x.gain == pytest.approx(0.0) and not x.flagged and x.deals == 30


def test_a_bot_that_wins_its_later_plays_is_flagged_and_its_opponent_is_not() -> None:
    outcomes = [(k % 2, float(k % 3 == 0), 1.0) for k in range(30)]  # x wins every later play
    report = check_plays(_heads_up(outcomes))
    x, y = report.check_of("x"), report.check_of("y")
    assert x is not None and y is not None
    assert x.flagged and x.gain > 0.5 and x.p < ALPHA / 2
    assert not y.flagged and y.gain < 0
    assert [c.bot for c in report.flagged] == ["x"]
    text = "\n".join(report.lines())
    assert "INTEGRITY FLAG: x did better on later plays of a deal" in text and "cannot be trusted" in text


def test_too_few_deals_or_no_mirror_is_not_a_test() -> None:
    few = check_plays(_heads_up([(k % 2, 0.0, 1.0) for k in range(MIN_DEALS - 1)]))
    assert few.checks == () and set(few.untested) == {"x", "y"} and few.paired
    # The same seat on both plays (a variant played after another, a field bot of
    # an SPRT pair): play order and configuration cannot be told apart.
    same_seat = [Play(d, o, "x", 0, 2, f"v{o}", 1 + o) for d in range(40) for o in (0, 1)]
    report = check_plays(same_seat)
    assert report.checks == () and report.untested == ("x",)
    assert report.lines() == []  # arena ratings stays silent; the report says it
    assert "no bot could be tested" in report.lines(untestable=True)[0]
    assert check_plays([Play(d, 0, "x", 0, 2, "v", 1) for d in range(40)]).lines() == []  # no deal replayed


def test_holm_over_the_bots_tested() -> None:
    # Two bots with the same moderate evidence, p each: at alpha 2.5p Holm's first
    # step (p <= alpha / 2) and second (p <= alpha) both pass; at 1.5p the first fails,
    # and then nothing is flagged, though p < 1.5p alone.
    base = _heads_up([(k % 2, 0.0, 1.0) for k in range(6)] + [(k % 2, 1.0, 1.0) for k in range(34)])
    x = check_plays(base, bots=["x"]).check_of("x")
    assert x is not None and 0 < x.p < 0.05
    both = [*base, *[Play(p.deal, p.order, p.bot.upper(), p.seat, 2, "v", p.place) for p in base]]
    assert {c.bot for c in check_plays(both, alpha=2.5 * x.p, bots=["x", "X"]).flagged} == {"x", "X"}
    assert check_plays(both, alpha=1.5 * x.p, bots=["x", "X"]).flagged == []
    assert check_plays(base, alpha=1.5 * x.p, bots=["x"]).flagged != []


# -- simulation with the engine ------------------------------------------------


def _play(
    specs: Sequence[MatchSpec], labels: Sequence[str], bots: Mapping[str, BotFactory], cheat: str | None = None
) -> list[MatchRecord]:
    """Play ``specs`` in-process in schedule order. The bot ``cheat`` (a
    ToldDeal) is told the deal on every play of a deal after its first."""
    seen: set[int] = set()
    records = []
    for spec in specs:
        names = [labels[e] for e in spec.entrants]
        TOLD.TOLD["seed"] = spec.dice_seed if cheat in names and spec.dice_seed in seen else None
        if cheat in names:
            seen.add(spec.dice_seed)
        seats = [InProcessTransport(bots[n], n) for n in names]
        records.append(play_match(spec, seats, names, 1000).record)
    TOLD.TOLD["seed"] = None
    return records


def _plays(records: Sequence[MatchRecord]) -> list[Play]:
    return [
        Play(r.seed, int(r.match.removeprefix("m-")), b, s, len(r.bots), r.variant, p)
        for r in records
        for s, (b, p) in enumerate(zip(r.bots, r.placements))
    ]


def _sprt_specs(seed: int, pairs: int, rules: dict[str, Any]) -> list[MatchSpec]:
    return sprt_schedule(
        seed=seed, labels=["A", "B"], params=SprtParams("A", "B"), players=2, pairs=pairs, variant="v", rules=rules
    )


def _rotate_specs(seed: int, tables: int, rules: dict[str, Any], size: int = 3) -> list[MatchSpec]:
    return build_schedule(
        seed=seed,
        n_entrants=4,
        sizes=[size],
        matches=tables * size,
        fmt="league",
        seating="rotate",
        variants={"v": rules},
    )


LEAGUE = ["probabilistic", "random", "cautious", "bluffer"]


@pytest.mark.slow
def test_honest_heads_up_pairs_are_flagged_in_at_most_alpha_of_the_runs() -> None:
    # 500 runs of 24 SPRT pairs, probabilistic against random (a large skill gap
    # and the seat luck of one-die matches: the stress on "zero by construction").
    runs = 500
    flagged = 0
    for k in range(runs):
        records = _play(_sprt_specs(k, 24, ONE_DIE), ["A", "B"], {"A": BOTS["probabilistic"], "B": BOTS["random"]})
        report = check_plays(_plays(records))
        assert len(report.checks) == 2
        flagged += bool(report.flagged)
    # alpha 0.01 of 500 is 5 expected; 10 is above the binomial's 98th percentile.
    assert flagged <= 10, flagged


@pytest.mark.slow
def test_honest_rotated_leagues_are_flagged_in_at_most_alpha_of_the_runs() -> None:
    runs = 300
    flagged = 0
    for k in range(runs):
        records = _play(_rotate_specs(k, 24, ONE_DIE), LEAGUE, BOTS)
        report = check_plays(_plays(records))
        assert len(report.checks) == 4  # every bot tested, Holm over four
        flagged += bool(report.flagged)
    assert flagged <= 7, flagged  # alpha 0.01 of 300 is 3 expected


def test_a_bot_told_the_deal_is_flagged_within_a_few_dozen_pairs() -> None:
    caught = 0
    for k in range(10):  # heads up against its honest twin, 30 pairs each
        records = _play(
            _sprt_specs(100 + k, 30, CLASSIC), ["A", "B"], {"A": CHEAT, "B": BOTS["probabilistic"]}, cheat="A"
        )
        report = check_plays(_plays(records))
        caught += [c.bot for c in report.flagged] == ["A"]
    assert caught >= 9, caught


def test_a_bot_told_the_deal_is_flagged_in_a_rotated_league() -> None:
    bots = {**BOTS, "probabilistic": CHEAT}
    caught = 0
    for k in range(4):  # 60 tables of three, each played in three rotations: the cheater sits at about 45
        records = _play(_rotate_specs(200 + k, 60, CLASSIC), LEAGUE, bots, cheat="probabilistic")
        report = check_plays(_plays(records))
        caught += [c.bot for c in report.flagged] == ["probabilistic"]
    assert caught >= 3, caught


# -- arena sprt ------------------------------------------------------------------


def _sprt(a: BotFactory, seed: int, *, cheat: bool, pairs: int = 300) -> SprtTest:
    test = SprtTest(SprtParams("A", "B", elo0=0, elo1=20), pairs)
    seen: set[int] = set()
    for spec in _sprt_specs(seed, pairs, CLASSIC):
        names = ["A" if e == 0 else "B" for e in spec.entrants]
        TOLD.TOLD["seed"] = spec.dice_seed if cheat and spec.dice_seed in seen else None
        seen.add(spec.dice_seed)
        seats = [InProcessTransport(a if n == "A" else BOTS["probabilistic"], n) for n in names]
        record = play_match(spec, seats, names, 1000).record
        if test.observe(Finished.of(record)):
            break
    TOLD.TOLD["seed"] = None
    return test


def test_sprt_refuses_h1_to_a_bot_that_remembers_deals_and_says_why() -> None:
    test = _sprt(CHEAT, 7, cheat=True)
    assert test.verdict == "untrusted", test.summary()
    summary = test.summary()
    assert summary.startswith("H1 refused, the result cannot be trusted")
    assert "A did better on later plays of a deal than on its first" in summary and "Integrity" in summary
    data = test.to_data()
    assert data["verdict"] == "untrusted" and data["integrity"]["bots"][0]["flagged"]
    # Its honest twin (the same bot, never told) is not refused: the test decides on strength alone.
    twin = _sprt(CHEAT, 7, cheat=False)
    assert twin.verdict in ("H0", "inconclusive", "H1") and twin.verdict != "untrusted", twin.summary()


def test_sprt_waits_for_enough_pairs_before_accepting_h1() -> None:
    # A far stronger A reaches H1's bound of a wide window within a few pairs;
    # the check cannot speak before MIN_DEALS pairs, so H1 waits for them.
    test = SprtTest(SprtParams("A", "B", elo0=0, elo1=400), 100)
    for t in range(100):
        a_seat = t % 2
        for role in (0, 1):  # A wins both plays of every deal: no gain on the later one
            bots = ["A", "B"] if (role == 0) == (a_seat == 0) else ["B", "A"]
            test.observe_places(2 * t + role, bots, [1, 2] if bots[0] == "A" else [2, 1])
        if test.decided:
            break
    assert test.verdict == "H1" and test.decided_at is not None and test.decided_at >= MIN_DEALS
    assert test.integrity is not None and not test.integrity.flagged


# -- ratings, report, live warnings ------------------------------------------------


def _cheater_run(tmp_path: Path) -> Path:
    from synth_records import write_run

    bots = {**BOTS, "probabilistic": CHEAT}
    records = _play(_rotate_specs(5, 60, CLASSIC), LEAGUE, bots, cheat="probabilistic")
    folder = write_run(tmp_path / "run", [json.loads(r.to_json()) for r in records], {"v": CLASSIC})
    meta = json.loads((folder / "run.json").read_text())
    meta["schedule"] = {"format": "league", "players": [3], "seating": "rotate"}
    (folder / "run.json").write_text(json.dumps(meta))
    return folder


def test_arena_ratings_and_the_report_show_the_flag(tmp_path: Path) -> None:
    folder = _cheater_run(tmp_path)
    seeds = match_seeds(folder)
    assert len(seeds) == 180 and len(set(seeds.values())) == 60  # three plays of each deal
    report = rate_run(folder, write=False, resamples=20)  # reads matches.parquet, then the seeds
    assert report.integrity is not None
    assert [c.bot for c in report.integrity.flagged] == ["probabilistic"]
    text = format_ratings(report)
    assert "INTEGRITY FLAG: probabilistic did better on later plays of a deal" in text
    assert ratings_json(report)["integrity"]["bots"][0]["flagged"]

    from arena.analysis.report import build_report

    page = build_report(folder, resamples=20)
    assert 'id="integrity"' in page and "FLAGGED" in page and "INTEGRITY FLAG: probabilistic" in page


def test_an_honest_run_gets_one_all_clear_line(tmp_path: Path) -> None:
    records = _play(_rotate_specs(6, 30, ONE_DIE), LEAGUE, BOTS)
    report = rate_results(from_records(records), resamples=20)
    assert report.integrity is not None and report.integrity.flagged == []
    assert "integrity: no bot does better on later plays of a deal (alpha 0.01, 4 bots tested" in format_ratings(report)


def test_the_live_warnings_of_arena_run_name_the_bot(tmp_path: Path) -> None:
    bots = {**BOTS, "probabilistic": CHEAT}
    records = _play(_rotate_specs(5, 60, CLASSIC), LEAGUE, bots, cheat="probabilistic")
    out: list[str] = []
    now = [0.0]
    live = LiveStandings(out.append, every=5.0, tty=False, enabled=False, clock=lambda: now[0], paired=True)
    for rec in records:
        live.observe(Finished.of(rec))
    now[0] = 10.0
    live.tick(len(records), len(records))
    text = "".join(out)
    assert "warning: integrity: probabilistic did better on later plays of a deal" in text
    assert text.count("warning: integrity:") == 1 and "probabilistic" in text
    # An unpaired run's standings keep nothing of it.
    plain = LiveStandings(out.append, every=5.0, tty=False, enabled=False, clock=lambda: now[0])
    for rec in records:
        plain.observe(Finished.of(rec))
    assert plain.integrity is None


def test_finished_carries_the_deal_from_a_line_too() -> None:
    records = _play(_sprt_specs(1, 1, ONE_DIE), ["A", "B"], {"A": BOTS["random"], "B": BOTS["random"]})
    rec = records[0]
    again = Finished.from_line(rec.to_json())
    assert again == Finished.of(rec) and again.deal == rec.seed and again.variant == "v"


def test_in_a_field_sprt_a_plays_each_deal_once_and_h1_stands() -> None:
    # A (pair half 0) and B (half 1) at seat t % 3 with the same two opponents:
    # A never sees a deal twice, so the check has nothing of A's and H1 is H1.
    test = SprtTest(SprtParams("A", "B", elo0=0, elo1=100), 200)
    for t in range(200):
        seat = t % 3
        for role, hero in enumerate(("A", "B")):
            bots = ["x", "y"]
            bots.insert(seat, hero)
            places = [2, 3]
            places.insert(seat, 1 if hero == "A" else 3)
            if hero == "B":
                places = [1 if b == "x" else 2 if b == "y" else 3 for b in bots]
            test.observe_places(2 * t + role, bots, places)
        if test.decided:
            break
    assert test.verdict == "H1", test.summary()
    assert test.integrity is not None and test.integrity.check_of("A") is None and "A" not in test.integrity.untested


def test_the_live_check_keeps_a_bounded_number_of_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.apps.standings as standings

    monkeypatch.setattr(standings, "INTEGRITY_DEALS", 3)
    live = LiveStandings(lambda text: None, every=5.0, tty=False, enabled=False, paired=True)
    for i in range(20):  # ten deals, two plays each
        live.observe(Finished(f"m-{i:06d}", ("a", "b"), (1, 2), (), 1000 + i // 2, "v"))
    assert live.integrity is not None and len(live.integrity.plays) == 3 * 2 * 2


@pytest.mark.slow
def test_arena_sprt_refuses_h1_on_matches_of_a_bot_told_the_deal(tmp_path: Path) -> None:
    """Through the command: ``arena sprt`` with the told-deal bot, sandboxed (never
    told: its honest twin), accepts H0; then the same test's matches as a trusted
    in-process harness plays them with the bot told the deal on second plays
    (the protection off) take the folder's place, and the command, resuming,
    refuses H1 and says why, in its output and in run.json."""
    import shutil
    import subprocess
    import sys

    from arena.running.config import build_config
    from arena.running.planning import plan_run
    from arena.running.sprt import sprt_config_data

    out = tmp_path / "sprt"
    args = [
        sys.executable,
        "-m",
        "arena",
        "sprt",
        "tests/bots/told_deal.py",
        "probabilistic",
        "--seed",
        "11",
        "--max-matches",
        "160",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    first = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "H0 accepted" in first.stdout, first.stdout

    data = sprt_config_data(
        "tests/bots/told_deal.py",
        "probabilistic",
        (),
        players=None,
        preset="classic",
        elo0=0.0,
        elo1=20.0,
        alpha=0.05,
        beta=0.05,
        max_matches=160,
        seed=11,
        out=str(out),
        workers=1,
    )
    cfg = build_config(data, ROOT / "arena sprt")
    specs = plan_run(cfg).specs
    labels = [e.label for e in cfg.entrants]
    records = _play(specs, labels, {labels[0]: CHEAT, labels[1]: BOTS["probabilistic"]}, cheat=labels[0])
    (out / "games.jsonl").write_bytes(b"".join(r.to_json() + b"\n" for r in records))
    shutil.rmtree(out / "tables")
    (out / "matches.parquet").unlink()
    meta = json.loads((out / "run.json").read_text())
    meta["status"], meta["sprt"]["verdict"] = "interrupted", None
    (out / "run.json").write_text(json.dumps(meta))

    again = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert (
        "H1 refused, the result cannot be trusted: the LLR reached H1's bound, but told_deal did better on "
        "later plays of a deal than on its first" in again.stdout
    ), again.stdout
    sprt = json.loads((out / "run.json").read_text())["sprt"]
    assert sprt["verdict"] == "untrusted" and sprt["integrity"]["bots"][0]["flagged"]
    rated = subprocess.run(
        [sys.executable, "-m", "arena", "ratings", str(out), "--no-write"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "INTEGRITY FLAG: told_deal did better on later plays of a deal" in rated.stdout, rated.stdout
