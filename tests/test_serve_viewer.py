"""The match viewer, the match list and the live page of a run (docs/serve.md).

The viewer's odds against ``arena play --assist``'s figures at the same
positions (rebuilt through the engine) and a brute-force count; the match
list against a plain filter of the records, read from the run's tables (no
record parsed) and from the lines of a run still playing; and, in headless
Chromium, stepping through a match by keyboard and mouse with the dice the
record holds, a link to one step, a hostile bot name as text, the list's
filters, the live page's Elo table and rule-variant statistics, the report's
links to the viewer when served, and ``arena run --serve``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("starlette", reason="pip install -e '.[serve]' installs the web server")
pytest.importorskip("uvicorn", reason="pip install -e '.[serve]' installs the web server")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_records  # noqa: E402
from test_serve import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    SHOTS,
    Page,
    Server,
    _chromium_or_skip,
    _free_port,
    brute_force,
    get,
)

from arena.engine.records import MatchRecord  # noqa: E402
from arena.engine.rules import Bid, Rules, apply, deal, fault, new_match  # noqa: E402
from arena.protocol import parse  # noqa: E402
from arena.protocol.messages import match_start_message, turn_message  # noqa: E402
from arena.running.store import read_records  # noqa: E402
from arena.serve.live import RunWatch  # noqa: E402
from arena.serve.matchview import view_data  # noqa: E402
from arena.serve.seating import assist  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


HOSTILE = '<img src=x onerror="document.title=9">'


HOSTILE_DETAIL = '<b id="pwned">stderr</b><script>document.title=7</script>'


def _records(n: int, seed: int = 1, bots: tuple[str, ...] = ("random", "sharp", "cautious", HOSTILE)) -> list[Any]:
    """Records played by the engine, every seventh with a fault whose reason is markup."""
    rng = random.Random(seed)
    rules = Rules.preset("classic")
    out = [
        synth_records.play(
            f"m-{i:05d}",
            "classic" if i % 3 else "palifico",
            rules,
            rng.sample(list(bots), rng.randint(2, min(4, len(bots)))),
            rng.randrange(2**31),
            fault=(0, 2, "timeout") if i % 7 == 0 else None,
            policy_of={HOSTILE: "reckless"},
        )
        for i in range(n)
    ]
    for rec in out:
        for f in rec["faults"]:
            f["detail"] = HOSTILE_DETAIL
        for r in rec["rounds"]:
            if "fault" in r:
                r["fault"]["detail"] = HOSTILE_DETAIL
    return out


def _folder(path: Path, records: list[Any], *, status: str = "complete") -> Path:
    """A run folder as a run writes it: compact lines (the store's), the tables."""
    rules = Rules.preset("classic").to_dict()
    synth_records.write_run(path, [], {"classic": rules, "palifico": rules}, status=status)
    (path / "games.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    if status == "complete":
        from arena.running.store import write_matches_parquet, write_tables

        write_matches_parquet(path)
        write_tables(path)
    return path


# --- the odds of every decision ---------------------------------------------------------


def test_each_decisions_odds_are_those_of_the_assisted_mode_and_a_brute_force_count() -> None:
    """Every decision of a few matches rebuilt through the engine as the turn
    its player was sent: the viewer's figures are the assisted mode's."""
    checked = brute = 0
    for raw in _records(12, seed=5):
        rec = MatchRecord.from_json(orjson.dumps(raw))
        data = view_data(rec)
        state = new_match(rec.rules, rec.players, rec.first)
        starts = [
            parse.parse_match_start(match_start_message(rec.match, s, list(rec.bots), rec.rules.to_dict(), 1))  # type: ignore[arg-type]
            for s in range(rec.players)
        ]
        for rnd, shown in zip(rec.rounds, data["rounds"], strict=True):
            state = deal(state, rnd.dice)
            assert shown["dice"] == [list(h) for h in rnd.dice]
            for (seat, action), act in zip(rnd.actions, shown["actions"], strict=True):
                assert state.to_act == seat
                turn = parse.parse_turn(turn_message(rec.match, state, 1000), starts[seat], random.Random(0))  # type: ignore[arg-type]
                figures, odds = assist(turn), act["odds"]
                assert sorted(odds["own"]) == sorted(turn.dice) and odds["unseen"] == turn.unseen
                assert odds["likely"] == [f.likely for f in figures.faces]
                if figures.standing is not None:
                    assert odds["standing"] == [figures.standing.quantity, figures.standing.face]
                    assert odds["p_standing"] == pytest.approx(figures.p_standing, abs=1e-12)
                    if figures.p_calza is not None:
                        assert odds["p_exact"] == pytest.approx(figures.p_calza, abs=1e-12)
                    if brute < 40 and turn.unseen <= 8:
                        s = figures.standing
                        assert odds["p_standing"] == pytest.approx(brute_force(turn, s.quantity, s.face), abs=1e-9)
                        assert odds["p_exact"] == pytest.approx(brute_force(turn, s.quantity, s.face, True), abs=1e-9)
                        brute += 1
                else:
                    assert "p_standing" not in odds
                if isinstance(action, Bid):
                    assert odds["p_bid"] == pytest.approx(turn.probability(action), abs=1e-12)
                state = apply(state, action)
                checked += 1
            if rnd.fault is not None:
                state = fault(state, rnd.fault.seat)
    assert checked > 100 and brute >= 20


# --- the match list -------------------------------------------------------------------


def _expected(records: list[Any], *, bot: str = "", variant: str = "", fault: str = "", q: str = "") -> list[str]:
    out = []
    for r in records:
        kinds = [f["kind"] for f in r["faults"]]
        if bot and bot not in r["bots"] or variant and r["variant"] != variant or q and q not in r["match"]:
            continue
        if fault == "any" and not kinds or fault not in ("", "any") and fault not in kinds:
            continue
        out.append(r["match"])
    return out


@pytest.mark.parametrize("source", ["tables", "lines"])
def test_the_match_list_filters_pages_and_opens_every_record(tmp_path: Path, source: str) -> None:
    records = _records(130)
    folder = _folder(tmp_path / "run", records, status="complete" if source == "tables" else "running")
    watch = RunWatch(folder)
    if source == "tables":
        # Read from the tables: no record is parsed for the list.
        import arena.serve.live as live

        def refuse(line: bytes) -> None:
            raise AssertionError("a record was parsed for the list")

        original, live._outline = live._outline, refuse  # type: ignore[assignment]
        try:
            first = watch.matches()
        finally:
            live._outline = original
    else:
        first = watch.matches()
    assert first["total"] == first["recorded"] == 130 and first["pages"] == 3 and len(first["rows"]) == 50
    assert [r["match"] for r in first["rows"]] == [r["match"] for r in records[:50]]
    assert set(first["bots"]) == {"random", "sharp", "cautious", HOSTILE}
    for kw in (
        {"bot": "sharp"},
        {"variant": "palifico"},
        {"fault": "any"},
        {"fault": "timeout", "bot": HOSTILE},
        {"q": "m-0001"},
        {"bot": "nobody"},
    ):
        want = _expected(records, **kw)
        got = [r["match"] for p in range(4) for r in watch.matches(page=p, **kw)["rows"]][: len(want) + 1]
        assert watch.matches(**kw)["total"] == len(want)
        if len(want) <= 150:
            assert got[: len(want)] == want, kw
    row = watch.matches(q="m-00007")["rows"][0]
    raw = records[7]
    assert row["players"] == [{"bot": b, "place": p} for b, p in zip(raw["bots"], raw["placements"], strict=True)]
    assert row["faults"] == [{"bot": raw["bots"][f["seat"]], "kind": f["kind"]} for f in raw["faults"]]
    assert row["rounds"] == raw["rounds_played"]
    # The biggest upsets first: the winner furthest below the best-rated player at its table.
    elo = {r["bot"]: r["elo"] for r in watch.snapshot(wait_fit=True)["elo"]["rows"]}
    ups = [r["upset"] for p in range(3) for r in watch.matches(order="upset", page=p)["rows"]]
    assert ups == sorted(ups, reverse=True) and len(ups) == 130
    assert ups[0] == round(
        max(max(elo[b] for b in r["bots"]) - elo[r["bots"][r["placements"].index(1)]] for r in records)
    )
    every = read_records(folder).records
    for rec in every[::9]:
        assert watch.record(rec.match) == rec
    assert watch.record("m-99999") is None
    # A record appended later (a resumed run) is listed and opened too.
    more = _records(131)[130]
    more["match"] = "m-late"
    with open(folder / "games.jsonl", "ab") as fh:
        fh.write(orjson.dumps(more) + b"\n")
    assert watch.matches(q="late")["total"] == 1
    assert watch.record("m-late") == MatchRecord.from_json(orjson.dumps(more))


def test_a_finished_runs_tables_give_what_its_lines_give(tmp_path: Path) -> None:
    """The columns read from the tables and the rows read line by line: the
    same standings, faults, statistics, Elo table, list pages and records."""
    records = _records(120, seed=6)
    for r in records[::11]:
        r["faults"].append({"seat": 1, "round": 1, "kind": "arena", "detail": "the host failed"})
    done = RunWatch(_folder(tmp_path / "done", records))
    live = RunWatch(_folder(tmp_path / "live", records, status="running"))
    a, b = done.snapshot(wait_fit=True), live.snapshot(wait_fit=True)
    assert done._base is not None and live._base is None
    for key in ("recorded", "standings", "fault_kinds", "faults", "warnings", "variants"):
        assert a[key] == b[key], key
    assert [(r["bot"], round(r["elo"], 6)) for r in a["elo"]["rows"]] == [
        (r["bot"], round(r["elo"], 6)) for r in b["elo"]["rows"]
    ]
    for kw in ({}, {"bot": "sharp", "page": 1}, {"fault": "any", "order": "upset"}, {"variant": "palifico"}):
        x, y = done.matches(**kw), live.matches(**kw)  # type: ignore[arg-type]
        assert x == y, kw
    assert done.record("m-00042") == live.record("m-00042")


def test_the_live_page_rates_every_bot_with_intervals_and_shows_variant_statistics(tmp_path: Path) -> None:
    records = _records(90, seed=2)
    folder = _folder(tmp_path / "run", records, status="running")
    state = RunWatch(folder).snapshot(wait_fit=True)
    elo = state["elo"]
    assert elo["after"] == 90 and {r["bot"] for r in elo["rows"]} == {"random", "sharp", "cautious", HOSTILE}
    assert [r["elo"] for r in elo["rows"]] == sorted((r["elo"] for r in elo["rows"]), reverse=True)
    assert all(r["half"] is not None and 0 < r["half"] < 1000 for r in elo["rows"])
    from arena.analysis.ratings import design, fit_design, to_elo

    labels = [r["bot"] for r in elo["rows"]]
    rankings = [
        [labels.index(r["bots"][s]) for s in sorted(range(len(r["bots"])), key=lambda s: r["placements"][s])]
        for r in records
    ]
    fitted = to_elo(fit_design(design(len(labels), rankings)))
    assert [r["elo"] for r in elo["rows"]] == pytest.approx(list(fitted), abs=1e-6)
    by = {v["variant"]: v for v in state["variants"]}
    assert set(by) == {"classic", "palifico"}  # 60 and 30 matches: each enough
    classic = [r for r in records if r["variant"] == "classic"]
    mean = sum(r["rounds_played"] for r in classic) / len(classic)
    assert by["classic"]["matches"] == 60 and by["classic"]["rounds"][0] == pytest.approx(mean)
    assert by["classic"]["rounds"][1] < mean < by["classic"]["rounds"][2]
    won = sum(r["placements"][r["first"]] == 1 for r in classic)
    from arena.analysis.stats import wilson

    assert by["classic"]["first_wins"] == pytest.approx(list(wilson(won, 60)), abs=1e-12)
    # The server's figures need no pandas (its import alone is half a second of a run's CPU).
    code = (
        "import sys; from pathlib import Path; from arena.serve.live import RunWatch; "
        f"s = RunWatch(Path({str(folder)!r})).snapshot(wait_fit=True); assert s['elo'] and s['variants']; "
        "print('pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
    # One bot faulting in most of its matches is warned about, with the command that says why.
    faulty = _records(40, seed=3, bots=("random", "sharp"))
    for r in faulty:
        r["faults"] = [{"seat": 0, "round": 1, "kind": "crash", "detail": "boom"}]
    folder2 = _folder(tmp_path / "run2", faulty, status="running")
    warnings = RunWatch(folder2).snapshot()["warnings"]
    assert any("faulted in" in w and "arena check" in w for w in warnings), warnings


# --- in the browser ----------------------------------------------------------------------


def _faces(p: Page, selector: str) -> list[list[int | None]]:
    """The dice drawn in each element matching ``selector``: a face, or None for a hidden die."""
    out = []
    for box in p.page.locator(selector).all():
        labels = box.locator("svg.die").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        out.append([None if lab == "hidden die" else int(lab.rsplit(" ", 1)[1]) for lab in labels])
    return out


@pytest.fixture(scope="module")
def run_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("viewer")
    records = _records(150, seed=4)
    folder = _folder(tmp / "run", records)
    srv = Server(tmp / "table-viewer", run=folder)
    yield srv, folder, records
    srv.stop()


def test_the_viewer_steps_through_a_match_as_its_record_holds(run_server: Any, browser: Any) -> None:
    srv, folder, records = run_server
    rec = next(
        MatchRecord.from_json(orjson.dumps(r))
        for r in records
        if HOSTILE in r["bots"] and r["faults"] and len(r["rounds"]) >= 3 and len(r["rounds"][0]["actions"]) >= 2
    )
    p = Page(browser, srv.base + "/match/" + urllib.parse.quote(rec.match))
    page = p.page
    page.wait_for_selector("#seats .seat")
    assert page.locator(".seat-name").all_text_contents() == list(rec.bots)  # the hostile name as text
    assert page.locator("img").count() == 0 and page.title() == "Dudo Arena: " + rec.match
    first = rec.rounds[0]
    assert _faces(p, "#seats .seat") == [list(h) for h in first.dice]  # a finished match is public
    assert page.locator(".seat.to-act .seat-name").text_content() == rec.bots[first.actions[0][0]]
    # Step by key to the first round's second decision: the odds its player faced.
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#step=3"
    assert page.locator(".seat.to-act .seat-name").text_content() == rec.bots[first.actions[1][0]]
    seat, action = first.actions[1]
    odds = view_data(rec)["rounds"][0]["actions"][1]["odds"]
    assert page.locator("#odds-title").text_content() == f"What {rec.bots[seat]} faced"
    text = page.locator("#odds").text_content() or ""
    assert f"{100 * odds['p_standing']:.1f}%" in text and f"{100 * odds['p_exact']:.1f}%" in text
    assert page.locator("#history li").count() == 2
    page.screenshot(path=str(SHOTS / "viewer-1400.png"), full_page=True)
    # The reveal, by mouse: every hand, the dice that counted highlighted.
    for _ in range(len(first.actions) - 1):
        page.locator("#next").click()
    assert page.locator("#reveal-box").is_visible()
    assert _faces(p, "#hands .hand") == [list(h) for h in first.dice if h]
    if first.count is not None:
        assert page.locator("#hands svg.counted").count() == first.count
    # Hands hidden until the reveal, on request.
    page.locator("#first").click()
    page.locator("#hide").check()
    assert all(f is None for hand in _faces(p, "#seats .seat") for f in hand)
    page.locator("#hide").uncheck()
    # The fault's reason (a bot-controlled string) at its round's reveal, and the end.
    fr = next(i for i, r in enumerate(rec.rounds) if r.fault is not None)
    step = sum(len(r.actions) + 2 for r in rec.rounds[: fr + 1])
    link = srv.base + "/match/" + urllib.parse.quote(rec.match) + f"#step={step}"
    q = Page(browser, link, width=800)
    q.page.wait_for_selector("#reveal-box:not([hidden])")
    assert rec.rounds[fr].fault is not None
    shown = q.page.text_content("#reveal-text") or ""
    assert shown.startswith(f"Fault: {rec.bots[rec.rounds[fr].fault.seat]}") and HOSTILE_DETAIL in shown
    assert q.page.locator("#pwned").count() == 0
    q.page.screenshot(path=str(SHOTS / "viewer-800.png"), full_page=True)
    page.keyboard.press("End")
    assert page.locator("#over-box").is_visible()
    order = sorted(range(rec.players), key=lambda s: rec.placements[s])
    assert page.locator("#placements li").all_text_contents() == [f"{rec.placements[s]}. {rec.bots[s]}" for s in order]
    assert HOSTILE_DETAIL in (page.text_content("#faults") or "") and page.locator("#pwned").count() == 0
    assert page.evaluate("location.hash") == f"#step={sum(len(r.actions) + 2 for r in rec.rounds)}"
    assert page.locator("img").count() == 0 and page.title() == "Dudo Arena: " + rec.match
    assert not p.problems and not q.problems, p.problems + q.problems
    p.context.close()
    q.context.close()
    status, body, _ = get(srv.base + "/api/match/no-such-match")
    assert status == 404 and "no match" in json.loads(body)["error"]


def test_the_match_list_finds_a_match_and_opens_it(run_server: Any, browser: Any) -> None:
    srv, folder, records = run_server
    p = Page(browser, srv.base + "/matches")
    page = p.page
    page.wait_for_selector("#matches tbody tr")
    assert page.locator("#matches tbody tr").count() == 50
    assert page.text_content("#page") == "page 1 of 3"
    page.select_option("#bot", HOSTILE)
    page.select_option("#fault", "timeout")
    want = _expected(records, bot=HOSTILE, fault="timeout")
    from playwright.sync_api import expect  # (wait_for_function evaluates a string: the page's policy refuses it)

    expect(page.locator("#count")).to_have_text(f"{len(want)} of 150 matches recorded")
    assert page.locator("#matches tbody td:first-child").all_text_contents() == want[:50]
    assert "bot=" in page.evaluate("location.search")  # the filter can be linked
    page.screenshot(path=str(SHOTS / "matches-1400.png"), full_page=True)
    page.set_viewport_size({"width": 800, "height": 1000})
    page.screenshot(path=str(SHOTS / "matches-800.png"), full_page=True)
    page.locator("#matches tbody a").first.click()
    page.wait_for_selector("#seats .seat")
    assert page.evaluate("location.pathname") == "/match/" + want[0]
    assert page.locator("img").count() == 0 and not p.problems, p.problems
    p.context.close()


def test_the_live_page_shows_elo_with_intervals_and_variant_statistics(run_server: Any, browser: Any) -> None:
    srv, folder, records = run_server
    p = Page(browser, srv.base + "/run")
    page = p.page
    page.wait_for_selector("#elo tbody tr")
    rows = page.locator("#elo tbody tr").all()
    assert len(rows) == 4
    state = json.loads(get(srv.base + "/api/run")[1])
    for row, want in zip(rows, state["elo"]["rows"], strict=True):
        cells = row.locator("td").all_text_contents()
        assert cells[0] == want["bot"] and cells[1] == f"{want['elo']:.0f}" and cells[2] == f"± {want['half']:.0f}"
    assert page.locator("#variants tbody tr").count() == 2
    assert page.locator("#faults a").first.get_attribute("href", timeout=5000).startswith("/match/m-")
    assert HOSTILE_DETAIL in (page.text_content("#faults") or "") and page.locator("#pwned").count() == 0
    assert page.title() == "Dudo Arena: a run"
    assert page.locator("img").count() == 0 and not p.problems, p.problems
    page.screenshot(path=str(SHOTS / "run-1400.png"), full_page=True)
    page.set_viewport_size({"width": 800, "height": 1000})
    page.screenshot(path=str(SHOTS / "run-800.png"), full_page=True)
    # A bot's name opens its matches in the list.
    page.locator("#elo tbody a", has_text=HOSTILE).click()
    from playwright.sync_api import expect

    want = _expected(records, bot=HOSTILE)
    expect(page.locator("#count")).to_have_text(f"{len(want)} of 150 matches recorded")
    assert page.input_value("#bot") == HOSTILE and page.locator("img").count() == 0
    assert not p.problems, p.problems
    p.context.close()


@pytest.mark.slow
def test_the_served_report_links_each_step_to_the_viewer(run_server: Any, browser: Any, tmp_path: Path) -> None:
    """Served at /report, the report's viewer links the step it shows to the
    match viewer; opened as a file, it has no such link (self-contained)."""
    from arena.analysis.report import CSP, write_report

    srv, folder, records = run_server
    path = write_report(folder)
    status, _, headers = get(srv.base + "/report")
    assert status == 200 and headers["content-security-policy"] == CSP
    p = Page(browser, srv.base + "/report")
    page = p.page
    page.wait_for_selector("#viewer-where")
    page.locator("#viewer").focus()
    page.keyboard.press("ArrowRight")
    where = page.text_content("#viewer-where") or ""
    mid = where.split(" ")[0]
    link = page.locator("#viewer-served")
    assert link.is_visible() and link.get_attribute("href") == f"/match/{mid}#step=2"
    link.click()
    page.wait_for_selector("#seats .seat")
    assert page.evaluate("location.pathname + location.hash") == f"/match/{mid}#step=2"
    assert page.text_content("#where", timeout=5000).startswith("step 2 of ")
    assert not p.problems, p.problems
    p.context.close()
    f = Page(browser, path.resolve().as_uri())
    f.page.wait_for_selector("#viewer-where")
    assert f.page.locator("#viewer-served").is_hidden()
    f.context.close()


@pytest.mark.slow
def test_arena_run_serve_follows_the_run_then_stays_until_ctrl_c(tmp_path: Path) -> None:
    port = _free_port()
    out = tmp_path / "quick"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "run",
            str(ROOT / "configs" / "quick.yaml"),
            "--matches",
            "4",
            "--workers",
            "2",
            "--seed",
            "7",
            "--out",
            str(out),
            "--no-live",
            "--serve",
            "--serve-port",
            str(port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, seen = time.monotonic() + 240, []
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, (
                seen,
                proc.stderr.read() if proc.stderr else "",
            )
            try:
                state = json.loads(get(base + "/api/run")[1])
            except OSError:
                time.sleep(0.3)
                continue
            seen.append((state["status"], state["recorded"]))
            if state["status"] == "complete":
                break
            time.sleep(0.3)
        while state["elo"] is None:  # fitted in the background: the next look has it
            assert time.monotonic() < deadline
            time.sleep(0.3)
            state = json.loads(get(base + "/api/run")[1])
        assert state["recorded"] == state["total"] == 4
        listed = json.loads(get(base + "/api/matches")[1])
        assert listed["total"] == 4
        rec = json.loads(get(base + "/api/match/" + listed["rows"][0]["match"])[1])
        assert rec["match"] == listed["rows"][0]["match"] and rec["rounds"]
        time.sleep(1.0)
        assert proc.poll() is None  # the page stays after the run
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert f"live page: {base}/run" in err and "stays at" in err
        with pytest.raises(OSError):
            get(base + "/api/run")  # the server stopped with it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_viewer_draws_every_step_of_palifico_and_dead_mans_rounds(tmp_path: Path, browser: Any) -> None:
    """Every step of matches with palifico rounds and dead men's calls and
    passes (a seat with no dice acting), stepped through to the end: no
    error, the palifico banner exactly on those rounds, a dead man's odds."""
    rules = Rules.preset("classic", {"dead_mans_calza": True})
    rng = random.Random(9)
    raws = [
        synth_records.play(f"d-{i:03d}", "dead", rules, ["random", "sharp", "cautious"], rng.randrange(2**31))
        for i in range(40)
    ]
    recs = [MatchRecord.from_json(orjson.dumps(r)) for r in raws]

    def dead_acts(rec: MatchRecord) -> int:
        return sum(1 for rnd in rec.rounds for seat, _ in rnd.actions if not rnd.dice[seat])

    rec = max(recs, key=lambda r: (any(rnd.palifico for rnd in r.rounds), dead_acts(r)))
    assert dead_acts(rec) and any(rnd.palifico for rnd in rec.rounds)
    folder = tmp_path / "run"
    synth_records.write_run(folder, [], {"dead": rules.to_dict()}, status="running")
    (folder / "games.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in raws))
    srv = Server(tmp_path / "tables", run=folder)
    try:
        p = Page(browser, srv.base + "/match/" + rec.match)
        page = p.page
        page.wait_for_selector("#seats .seat")
        seen_dead = False
        for ri, rnd in enumerate(rec.rounds):
            for step in range(len(rnd.actions) + 2):
                assert page.locator("#palifico").is_visible() == rnd.palifico, (ri, step)
                if 0 < step <= len(rnd.actions) and not rnd.dice[rnd.actions[step - 1][0]]:
                    assert "none (out: a dead man's call)" in (page.text_content("#odds") or "")
                    seen_dead = True
                page.keyboard.press("ArrowRight")
        assert seen_dead and page.locator("#over-box").is_visible()
        assert not p.problems, p.problems
        p.context.close()
    finally:
        srv.stop()


def test_a_runs_pages_and_data_need_the_key_when_the_server_has_one(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "run", _records(12))
    srv = Server(tmp_path / "tables", key="sekrit-key", run=folder)
    try:
        for path in ("/run", "/matches", "/match/m-00003", "/api/run", "/api/matches", "/api/match/m-00003"):
            status, body, _ = get(srv.base + path)
            assert status == 403 and "needs its key" in body, path
            status, body, headers = get(srv.base + path + "?key=sekrit-key")
            assert status == 200 and "script-src 'self'" in headers["content-security-policy"], path
        assert json.loads(get(srv.base + "/api/match/m-00003?key=sekrit-key")[1])["match"] == "m-00003"
    finally:
        srv.stop()
