"""The report as a reader sees it, in headless Chromium, at one, two and twelve
variants and two window widths: no figure is cut, by the page or within its
own picture, and no text is clipped by its box.

- A figure is cut by the page when an ancestor that hides its overflow ends
  before the image does, or when the image is drawn at another aspect ratio
  than its own (cropped or squeezed).
- A figure is cut within its picture when ink touches its edge: every figure
  is drawn with a margin (constrained layout), so the outermost pixels of an
  intact figure are all background, and a label or legend cut at the edge of
  the PNG leaves its strokes there (the outermost ``BAND`` pixels; a cut
  that falls exactly between two glyphs can escape it). The pixels are read back in the page from
  the decoded image (a canvas), what the screenshot shows.
- Text is clipped when an element that hides its overflow holds wider or
  taller content than its box.

Full-page screenshots go to ``$ARENA_REPORT_SHOTS`` when set (else a temporary
folder) to be looked at."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from synth_records import wide

from arena.analysis import report

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
SHOTS = Path(os.environ.get("ARENA_REPORT_SHOTS") or Path(tempfile.gettempdir()) / f"arena-report-shots-{os.getuid()}")
INK = 40  # a channel this far from the background colour is ink (anti-aliased edges included)
BAND = 2  # the outermost pixels checked on each side: intact report figures keep 3 or more blank

MEASURE = """
() => {
  const problems = [];
  const name = (el) => el.id ? `#${el.id}` : el.tagName.toLowerCase() + (el.className ? '.' + el.className : '');
  for (const img of document.querySelectorAll('img')) {
    if (!img.complete || img.naturalWidth === 0) { problems.push(`${name(img)}: not decoded`); continue; }
    const r = img.getBoundingClientRect();
    const drawn = r.width / r.height, own = img.naturalWidth / img.naturalHeight;
    if (Math.abs(drawn - own) / own > 0.01) problems.push(`${name(img)}: drawn at ${drawn.toFixed(3)}, is ${own.toFixed(3)}`);
    for (let a = img.parentElement; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (!['hidden', 'clip'].includes(s.overflowX) && !['hidden', 'clip'].includes(s.overflowY)) continue;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
        problems.push(`${name(img)}: cut by ${name(a)}`);
    }
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const px = g.getImageData(0, 0, c.width, c.height).data;
    const at = (x, y) => px.subarray(4 * (y * c.width + x), 4 * (y * c.width + x) + 3);
    const bg = at(0, 0);
    const edges = {top: 0, bottom: 0, left: 0, right: 0};
    const ink = (x, y) => { const p = at(x, y); return Math.max(...[0, 1, 2].map(i => Math.abs(p[i] - bg[i]))) > INK; };
    for (let k = 0; k < BAND; k++) {
      for (let x = 0; x < c.width; x++) { edges.top += ink(x, k); edges.bottom += ink(x, c.height - 1 - k); }
      for (let y = 0; y < c.height; y++) { edges.left += ink(k, y); edges.right += ink(c.width - 1 - k, y); }
    }
    for (const [side, n] of Object.entries(edges)) if (n) problems.push(`${name(img)}: ${n} px of ink on its ${side} edge`);
  }
  for (const el of document.querySelectorAll('body *')) {
    const s = getComputedStyle(el);
    const hideX = ['hidden', 'clip'].includes(s.overflowX), hideY = ['hidden', 'clip'].includes(s.overflowY);
    if ((hideX && el.scrollWidth > el.clientWidth + 1) || (hideY && el.scrollHeight > el.clientHeight + 1))
      problems.push(`${name(el)}: text clipped (${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight}): ${el.textContent.slice(0, 40)}`);
  }
  return {problems, images: document.querySelectorAll('img').length};
}
""".replace("INK", str(INK)).replace("BAND", str(BAND))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test]' installs playwright")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.slow
@pytest.mark.parametrize("variants", [1, 2, 12])
def test_no_figure_or_text_is_cut_in_the_browser(tmp_path: Path, browser: Any, variants: int) -> None:
    folder = wide(tmp_path / "run", variants=variants, bots=6 if variants < 12 else 12, matches_per_variant=30)
    page_path = report.write_report(folder, tmp_path / "report.html", resamples=20)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1400, 800):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(page_path.as_uri())
        page.wait_for_load_state("load")
        found = page.evaluate(MEASURE)
        page.screenshot(path=str(SHOTS / f"report-{variants}-variants-{width}px.png"), full_page=True)
        context.close()
        assert found["images"] >= 3, found
        assert not found["problems"], (variants, width, found["problems"])


def test_the_measure_sees_a_cut_label_a_squeezed_figure_and_clipped_text(tmp_path: Path, browser: Any) -> None:
    """The control: a figure whose label runs off its right edge, the same figure
    squeezed, and a narrow box hiding its text's overflow are each reported."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    fig.text(0.7, 0.5, "WWWWWWWWWWWWWWWWWWWW", fontsize=14)
    src = report._png(fig)
    html = (
        f'<html><body><img id="cut" src="{src}">'
        f'<img id="squeezed" src="{src}" style="width:300px;height:100px">'
        '<div id="box" style="width:60px;overflow:hidden;white-space:nowrap">a heading too wide for its box</div>'
        "</body></html>"
    )
    (tmp_path / "control.html").write_text(html)
    page = browser.new_page()
    page.goto((tmp_path / "control.html").as_uri())
    page.wait_for_load_state("load")
    problems = page.evaluate(MEASURE)["problems"]
    page.close()
    assert any(p.startswith("#cut: ") and "right edge" in p for p in problems), problems
    assert any(p.startswith("#squeezed: drawn at") for p in problems), problems
    assert any(p.startswith("#box: text clipped") for p in problems), problems
