"""arena report: one self-contained HTML page from a real run folder.

A small real run (built-in bots plus a hostile one that writes HTML to its
stderr and crashes, two variants, 32 matches, a fixed seed) is played with
``arena run --report``; the page is then checked as text (self-contained,
escaped) and rendered in headless Chromium (no console error, no failed
request, the Elo table and every plot present), which also takes the
screenshot (written to docs/report.png when ARENA_UPDATE_SCREENSHOT=1).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.analysis.report import PLOTS, build_report, notable_matches, write_report
from arena.analysis.results import load
from arena.analysis.stats import rate_results

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]

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
    proc = subprocess.run([sys.executable, "-m", "arena", "run", "tiny.yaml", "--out", "run", "--report"],
                          cwd=base, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "report: " in proc.stderr
    return base / "run"


def test_run_report_flag_writes_a_self_contained_page(run_folder: Path) -> None:
    page = (run_folder / "report.html").read_text(encoding="utf-8")
    # Nothing to fetch: no script, no external URL in src/href, images inline.
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", page)
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
    assert notables[-1].why == f"the longest match: {longest} rounds"
    elo = {(r.variant, r.bot): r.elo for r in table.itertuples()}
    for n in notables[:-1]:
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
    assert "<script" not in page.lower()
    assert "&lt;script&gt;$x^$&lt;/script&gt;" in page


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


def test_report_renders_in_headless_chromium(run_folder: Path, tmp_path: Path) -> None:
    _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto((run_folder / "report.html").resolve().as_uri(), wait_until="load")
            assert problems == []
            # Only the page itself and its inline data: images are requested.
            assert all(u.startswith(("file:", "data:")) for u in requests), requests
            # The Elo table: one block per variant label, one row per bot.
            labels = page.locator("#elo-table h3").all_inner_texts()
            assert labels == ["all", "classic", "lizumo"]
            rows = page.locator("#elo-table table").first.locator("tbody tr")
            assert rows.count() == 4
            assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {
                "random", "cautious", "probabilistic", "hostile"}
            for plot in PLOTS:
                img = page.locator(f"#plot-{plot}")
                assert img.count() == 1, plot
                width = img.evaluate("el => el.complete ? el.naturalWidth : 0")
                assert width > 100, f"plot {plot} did not decode"
            assert page.locator("script").count() == 0
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
    assert result.output.strip() == str(out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    missing = CliRunner().invoke(main, ["report", str(tmp_path / "nope")])
    assert missing.exit_code != 0 and "no such run folder" in missing.output
