"""arena report: one self-contained HTML page from a real run folder.

A small real run (built-in bots plus a hostile one that writes HTML to its
stderr and crashes, two variants, 32 matches, a fixed seed) is played with
``arena run --report``; the page is then checked as text (self-contained,
escaped) and rendered in headless Chromium (no console error, no failed
request, the Elo table and every plot present), which also takes the
screenshot (written to docs/report.png when ARENA_UPDATE_SCREENSHOT=1).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.analysis.report import PLOTS, build_report, notable_matches, write_report
from arena.analysis.results import load
from arena.analysis.stats import rate_results
from arena.analysis.viewer import SCRIPT_HASH

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

HOSTILE_BOT = '''"""Writes HTML to its stderr, then crashes on its 4th turn."""
import sys
from arena.sdk import Bot


class Hostile(Bot):
    def start(self, match):
        self.turns = 0

    def act(self, turn):
        self.turns += 1
        print("</pre><script>alert('stderr')</script><img src=x>", self.turns, file=sys.stderr, flush=True)
        if self.turns == 4:
            raise RuntimeError("<b>hostile</b> deliberate crash")
        return next(turn.legal.bids())
'''

CONFIG = """name: tiny
seed: 11
bots: [random, cautious, probabilistic, ./hostile.py]
players: [3, 4]
matches: 16
format: league
variants:
  classic: {preset: classic}
  lizumo: {preset: lizumo}
workers: 2
"""


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("report")
    (base / "hostile.py").write_text(HOSTILE_BOT)
    (base / "tiny.yaml").write_text(CONFIG)
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", "tiny.yaml", "--out", "run", "--report"],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "report: " in proc.stderr
    return base / "run"


def test_run_report_flag_writes_a_self_contained_page(run_folder: Path) -> None:
    page = (run_folder / "report.html").read_text(encoding="utf-8")
    # Nothing to fetch: no external URL in src/href, images inline. The one
    # script is the viewer's, inline, allowed by its hash and nothing else; the
    # other script element is JSON data, which a browser does not run.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", page)
    assert page.lower().count("<script") == 2
    assert '<script type="application/json" id="viewer-data">' in page
    assert f"script-src '{SCRIPT_HASH}'" in page and "script-src 'unsafe" not in page
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]
    assert "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() == SCRIPT_HASH
    assert "innerHTML" not in script  # bot text is written with textContent only
    for plot in PLOTS:
        assert re.search(rf'<img id="plot-{plot}" alt="[^"]*" src="data:image/png;base64,', page), plot
    # The hostile bot's stderr and fault detail are shown, escaped.
    assert "&lt;/pre&gt;&lt;script&gt;alert(&#x27;stderr&#x27;)&lt;/script&gt;" in page
    assert "&lt;b&gt;hostile&lt;/b&gt; deliberate crash" in page
    assert "<b>hostile</b>" not in page
    # Provenance: the seed and each bot file's hash from run.json.
    meta = json.loads((run_folder / "run.json").read_text())
    assert f"<td>seed</td><td>{meta['seed']}</td>" in page
    for bot in meta["bots"]:
        assert bot["sha256"] in page


def test_notable_matches_are_real_upsets_and_the_longest(run_folder: Path) -> None:
    res = load(run_folder)
    table = rate_results(res, resamples=20).table
    notables = notable_matches(res, table)
    longest = res.matches["rounds_played"].max()
    assert f"the longest match: {longest} rounds" in [n.why for n in notables]
    # The hostile bot crashed: its first faulted match is shown.
    faulted = [n for n in notables if n.why.startswith("a fault:")]
    assert faulted and faulted[0].why == "a fault: hostile (crash)"
    assert faulted[0].match == res.faults[res.faults["kind"] == "crash"]["match"].iloc[0]
    elo = {(r.variant, r.bot): r.elo for r in table.itertuples()}
    for n in [n for n in notables if n.why.startswith("upset")]:
        seats = res.seats[res.seats["match"] == n.match]
        variant = seats["variant"].iloc[0]
        winner = seats.loc[seats["place"] == 1, "bot"].iloc[0]
        assert max(elo[(variant, b)] for b in seats["bot"]) > elo[(variant, winner)]
    page = (run_folder / "report.html").read_text(encoding="utf-8")
    for n in notables:
        anchor = f"match-{n.match}"
        assert f'href="#{anchor}"' in page and f'id="{anchor}"' in page
    assert "every rule checked" in page  # rendered by arena.engine.replay.render


def test_hostile_names_are_escaped(run_folder: Path, tmp_path: Path) -> None:
    """A bot label that is HTML (and matplotlib math) is shown as text everywhere."""
    evil = "<script>$x^$</script>"
    folder = tmp_path / "evil"
    shutil.copytree(run_folder, folder)
    for name in ("games.jsonl", "run.json"):
        path = folder / name
        path.write_text(path.read_text().replace('"random"', json.dumps(evil)))
    page = build_report(folder, resamples=20)
    assert page.lower().count("<script") == 2  # the viewer's data and code, nothing from the bot
    assert "&lt;script&gt;$x^$&lt;/script&gt;" in page
    data = page.split('id="viewer-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and evil in json.loads(data)[0]["players"] + [
        p for m in json.loads(data) for p in m["players"]
    ]


def test_report_needs_matches(tmp_path: Path) -> None:
    from arena.errors import ArenaError

    (tmp_path / "run.json").write_text("{}")
    (tmp_path / "games.jsonl").write_text("")
    with pytest.raises(ArenaError, match="no finished match"):
        write_report(tmp_path)


def _chromium_or_skip() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)")
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test]' installs playwright")


def _page(browser: Any, problems: list[str]) -> Any:
    """A page at a desktop size whose console errors, warnings and page errors land in ``problems``."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return page


def test_report_renders_in_headless_chromium(run_folder: Path, tmp_path: Path) -> None:
    _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = _page(browser, problems)
            page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto((run_folder / "report.html").resolve().as_uri(), wait_until="load")
            assert problems == []
            # Only the page itself and its inline data: images are requested.
            assert all(u.startswith(("file:", "data:")) for u in requests), requests
            # The Elo table: one block per variant label, one row per bot.
            labels = page.locator("#elo-table h3").all_inner_texts()
            assert labels == ["all", "classic", "lizumo"]
            for plot in ("elo-change", "seats-3p", "seats-4p", "stat-bid_false_share"):
                assert page.locator(f"#plot-{plot}").count() == 1, plot
            # The long table is collapsed; the side-by-side one has a column per variant.
            assert not page.locator("#variant-stats").is_visible()
            assert page.locator("#stats-wide thead th").all_inner_texts() == ["statistic", "classic", "lizumo"]
            rows = page.locator("#elo-table table").first.locator("tbody tr")
            assert rows.count() == 4
            assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {
                "random",
                "cautious",
                "probabilistic",
                "hostile",
            }
            for plot in PLOTS:
                img = page.locator(f"#plot-{plot}")
                assert img.count() == 1, plot
                width = img.evaluate("el => el.complete ? el.naturalWidth : 0")
                assert width > 100, f"plot {plot} did not decode"
            assert page.locator("script").count() == 2
            assert page.locator("img[src=x]").count() == 0
            assert "</script>" in page.locator("#faults-section pre").first.inner_text()
            # The screenshot in docs/: the top of the ratings section, one viewport.
            page.locator("#ratings").scroll_into_view_if_needed()
            page.evaluate("document.getElementById('ratings').scrollIntoView()")
            # docs/report.png is refreshed only on request, so tests never touch the tree.
            keep = os.environ.get("ARENA_UPDATE_SCREENSHOT") == "1"
            shot = ROOT / "docs" / "report.png" if keep else tmp_path / "report.png"
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert 10_000 < shot.stat().st_size < 500_000


def test_report_command_writes_where_asked(run_folder: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.apps.cli import main

    out = tmp_path / "sub" / "page.html"
    result = CliRunner().invoke(main, ["report", str(run_folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)  # progress goes to stderr
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    missing = CliRunner().invoke(main, ["report", str(tmp_path / "nope")])
    assert missing.exit_code != 0 and "no such run folder" in missing.output


def test_viewer_steps_through_a_match_in_chromium(run_folder: Path, tmp_path: Path) -> None:
    """The notable match opens in the viewer; the right arrow walks its first
    round bid by bid (hands hidden), then reveals every hand, the count and who
    lost a die; the left arrow goes back; another match opens from its button."""
    _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    from arena.running.store import read_records

    records = {r.match: r for r in read_records(run_folder).records}
    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = _page(browser, problems)
            page.goto((run_folder / "report.html").resolve().as_uri(), wait_until="load")
            buttons = page.locator("#viewer-pick button")
            assert buttons.count() >= 2
            where = page.locator("#viewer-where")
            mid = where.inner_text().split(" ", 1)[0]
            rec = records[mid]
            first = rec.rounds[0]
            names = rec.bots
            assert "step 1 of" in where.inner_text()
            assert page.locator("#viewer-stage .viewer-dice").all_inner_texts() == [
                " ".join("?" for _ in hand) for hand in first.dice
            ]
            page.locator("#viewer").focus()
            for k, (seat, action) in enumerate(first.actions, start=1):
                page.keyboard.press("ArrowRight")
                bids = page.locator("#viewer-stage .viewer-bids li").all_inner_texts()
                assert len(bids) == k and bids[-1].startswith(names[seat])
                assert (
                    f"{action.quantity} x {action.face}" in bids[-1]
                    if hasattr(action, "quantity")
                    else f"calls {action}" in bids[-1]
                )
                assert "?" in "".join(page.locator("#viewer-stage .viewer-dice").all_inner_texts())
            page.keyboard.press("ArrowRight")  # the reveal
            assert page.locator("#viewer-stage .viewer-dice").all_inner_texts() == [
                " ".join(str(d) for d in hand) for hand in first.dice
            ]
            result = page.locator("#viewer-stage .viewer-result").inner_text()
            if first.fault is not None:
                assert "FAULT" in result
            else:
                assert f"count {first.count}" in result and names[first.change.seat] in result
            page.keyboard.press("ArrowLeft")
            assert page.locator("#viewer-stage .viewer-result").count() == 0
            page.keyboard.press("End")
            assert page.locator("#viewer-stage .viewer-final").count() == 1
            buttons.nth(1).click()
            assert where.inner_text().split(" ", 1)[0] != mid or buttons.count() == 1
            assert "step 1 of" in where.inner_text()
            keep = os.environ.get("ARENA_UPDATE_SCREENSHOT") == "1"
            page.locator("#viewer").focus()
            for _ in range(200):  # to the first reveal: hands, count, who lost a die
                if page.locator("#viewer-stage .viewer-result").count():
                    break
                page.keyboard.press("ArrowRight")
            page.evaluate("document.getElementById('viewer').scrollIntoView()")
            shot = ROOT / "docs" / "viewer.png" if keep else tmp_path / "viewer.png"
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert problems == []
