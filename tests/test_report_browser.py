"""The HTML report in a real browser: Debian's headless Chromium driven by Playwright.

Skipped only when /usr/bin/chromium or the playwright package is absent
(scripts/setup installs both); never retried. Leaves a screenshot in
artifacts/report.png for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from quadscope.render.html import HtmlRenderer
from quadscope.render.plotdata import plot_point_count, report_data
from test_report import HOSTILE, build_analysis

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"

pytestmark = pytest.mark.browser


def test_report_in_chromium(browser, tmp_path) -> None:
    """Every drawn plot has its points, hover names the run, no errors, hostile text is text."""
    analysis = build_analysis(vs=True)
    data = report_data(analysis)
    path = tmp_path / "report.html"
    path.write_bytes(HtmlRenderer().render(analysis))

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")

    drawn = page.eval_on_selector_all(
        "svg.qs-plot", "els => els.map(e => [e.dataset.plot, e.querySelectorAll('.pt').length])")
    expected = {p.id: plot_point_count(data, p) for p in data.plots}
    open_metrics = {s.metric for s in data.sections if s.open}
    want_drawn = {p.id for s in data.sections if s.open for p in s.plots}
    assert {pid for pid, _ in drawn} == want_drawn and open_metrics
    for pid, count in drawn:
        assert count == expected[pid], pid
    assert dict(drawn)["wall_s-cost"] == 60  # 29 + 1 failed of A, 30 of B

    # The failed run is the only cross in the cost plot: its tooltip names it exactly.
    failed = next(r for r in analysis.failures if r.variant == "A")
    page.hover("svg[data-plot='wall_s-cost'] path.pt")
    ms = failed.measurement.wall_s * 1e3
    assert page.inner_text("#qs-tip") == (
        f"A  n = {failed.size_n}, repeat {failed.repeat}, run #{failed.seq}\n"
        f"wall_s = {float(f'{ms:.4g}'):g} ms\nexit 3"
    )

    # A closed section draws its plots when opened.
    page.click("#m-voluntary_ctx_switches > summary")
    page.wait_for_selector("svg[data-plot='voluntary_ctx_switches-cost'] .pt")  # drawn on open
    assert page.locator("svg[data-plot='voluntary_ctx_switches-cost'] .pt").count() == 60

    # Box zoom changes the axes; double-click restores them.
    svg = page.locator("svg[data-plot='wall_s-cost']")
    svg.scroll_into_view_if_needed()

    def ticks() -> list[str]:
        return svg.evaluate("e => [...e.querySelectorAll('text.tick')].map(t => t.textContent)")

    before = ticks()
    box = svg.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.7, steps=4)
    page.mouse.up()
    assert ticks() != before
    svg.dblclick(position={"x": box["width"] * 0.5, "y": box["height"] * 0.5})
    assert ticks() == before

    assert HOSTILE in page.inner_text("dl.facts")
    assert dialogs == [] and errors == []
    page.mouse.move(0, 0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    page.close()



def _ink_middle(png: bytes, x0: int, x1: int) -> float:
    """The mean row of the non-white pixels in columns x0..x1 of a screenshot."""
    import io

    from PIL import Image

    im = Image.open(io.BytesIO(png)).convert("L")
    rows = [y for y in range(im.height) for x in range(x0, min(x1, im.width))
            if im.getpixel((x, y)) < 200]
    assert rows, "no ink"
    return sum(rows) / len(rows)


def test_glyph_swatches_sit_on_their_label_s_middle_line(browser, tmp_path) -> None:
    """The legend's × (failed runs) is drawn on its label's middle line, as the dot and dash
    swatches are: as a ::before with an 8 px line-height it sat 4-5 px below the text (seen
    in a crashing sweep's report). Measured on the pixels of each legend item: the ink's
    mean row under the glyph against the ink's mean row under the label's first letters."""
    path = tmp_path / "report.html"
    path.write_bytes(HtmlRenderer().render(build_analysis(vs=True)))
    page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=2)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    items = page.locator(".legend span:has(> i.sw-points.cross)")
    assert items.count() >= 1
    offsets = []
    for k in range(items.count()):
        item = items.nth(k)
        item.scroll_into_view_if_needed()
        glyph = item.locator("i").bounding_box()
        box = item.bounding_box()
        assert glyph is not None and box is not None
        left, right = 2 * (glyph["x"] - box["x"]), 2 * (glyph["x"] + glyph["width"] - box["x"])
        png = item.screenshot()
        offsets.append(abs(_ink_middle(png, int(left), int(right) + 1)
                           - _ink_middle(png, int(right) + 8, int(right) + 40)))
    page.close()
    assert max(offsets) <= 2.0, offsets  # in device pixels, 2 per CSS pixel
