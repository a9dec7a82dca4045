"""Screenshots of the HTML report at scale, for docs/ (not a timing: it lives beside the benchmarks
because it builds its run folder the same way).

    python benchmarks/report_screenshots.py [--variants 12] [--bots 12] [--out docs]

Builds a run folder of ``--variants`` rule variants and ``--bots`` bots
(tests/synth_records.py: matches played by the rules engine with simple
policies), writes its report, opens it in headless Chromium (/usr/bin/chromium,
driven by Playwright) and saves docs/report-12-variants.png (the ratings
section: the Elo and Elo-change heat maps), docs/report-12-variants-stats.png
(seats per table size and the per-statistic charts). docs/viewer.png and
docs/report.png come from a real run instead: ARENA_UPDATE_SCREENSHOT=1 pytest
tests/test_report.py -k chromium.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import synth_records as S  # noqa: E402

from arena.analysis.report import write_report  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", type=int, default=12)
    ap.add_argument("--bots", type=int, default=12)
    ap.add_argument("--matches", type=int, default=40, help="Matches per variant.")
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    args = ap.parse_args()
    if args.bots < 6:  # the tables seat 3 to 6 (synth_records.wide)
        ap.error(f"--bots {args.bots}: at least 6, the largest table of the synthetic run")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        run = S.wide(Path(tmp) / "wide", variants=args.variants, bots=args.bots, matches_per_variant=args.matches)
        page_path = write_report(run)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1200, "height": 1100})
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            page.evaluate("document.getElementById('ratings').scrollIntoView()")
            page.screenshot(path=str(args.out / "report-12-variants.png"))
            page.evaluate("document.getElementById('plot-length').scrollIntoView()")
            page.screenshot(path=str(args.out / "report-12-variants-stats.png"))
            browser.close()
    for name in ("report-12-variants.png", "report-12-variants-stats.png"):
        print(args.out / name)


if __name__ == "__main__":
    main()
