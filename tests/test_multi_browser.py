"""The several-size HTML page in headless Chromium, as a person reads it at 1400×900.

The page must load without a console error, lead with its verdict in the report's banner
(whole and on screen before any scrolling, as every one-size page does:
tests/test_report_screens.py), show the heat map and each size's plot in that first
screen, and scroll nothing sideways. The sweep is made on fakes; only the browser is real.
Its first screen is kept as artifacts/screens/answer-multi.png. Skipped only when
/usr/bin/chromium or playwright is absent; never retried.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.test_multi_sweep import _cost, _spec

from quadscope.analyse.multi_sweep import analyse_multi
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.render.multi_html import html
from quadscope.run.runner import run_sweep
from quadscope.store import Store

ROOT = Path(__file__).resolve().parent.parent
SCREEN = {"width": 1400, "height": 900}

pytestmark = pytest.mark.browser


def test_the_several_size_page_answers_above_the_fold(browser: Any, tmp_path: Path,
                                                      store: Store, clock: FakeClock) -> None:
    sweep = run_sweep(_spec(name="join"), executor=FakeExecutor(_cost, clock), clock=clock,
                      store=store)
    report = analyse_multi(sweep, store.runs(sweep.id))
    assert report.verdict is not None
    path = tmp_path / "multi.html"
    path.write_bytes(html(report))
    page = browser.new_page(viewport=SCREEN)
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    assert errors == []

    verdict = page.locator("p.verdict#verdict")
    assert verdict.inner_text() == f"wall_s: {report.verdict.sentence}"
    box = verdict.bounding_box()
    assert box is not None and verdict.is_visible()
    assert box["y"] >= 0 and box["y"] + box["height"] <= SCREEN["height"] / 3, box
    # The banner is the one-size report's: its border and background, not plain text.
    style = verdict.evaluate("e => [getComputedStyle(e).borderLeftWidth, "
                             "getComputedStyle(e).backgroundColor]")
    assert style[0] == "5px" and style[1] != "rgba(0, 0, 0, 0)"
    # Then the plots: the heat map and both sizes' plots in the first screen, side by side.
    plots = page.locator("#plots .mfig svg")
    assert plots.count() == 3
    for i in range(3):
        b = plots.nth(i).bounding_box()
        assert b is not None and b["y"] > box["y"] and b["y"] + b["height"] <= SCREEN["height"]
        assert b["x"] >= 0 and b["x"] + b["width"] <= SCREEN["width"], b
    assert page.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    # The details follow the plots.
    table = page.locator("h2", has_text="How the cost grows in each size").bounding_box()
    assert table is not None and table["y"] > plots.nth(0).bounding_box()["y"]
    shots = ROOT / "artifacts" / "screens"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "answer-multi.png"))
    page.close()


def test_the_several_size_comparison_leads_with_the_change(browser: Any, tmp_path: Path,
                                                           store: Store, clock: FakeClock) -> None:
    """`compare A B --html` over several sizes: the change in red first, then each side's
    verdict, then B/A's heat map and the overlaid plots, all in the first screen."""
    from tests.test_multi_compare import _compare, _linear, _quadratic, _stored

    from quadscope.render.multi_compare_html import html as compare_html

    comp = _compare(store, _stored(store, clock, _linear), _stored(store, clock, _quadratic))
    path = tmp_path / "compare.html"
    path.write_bytes(compare_html(comp))
    page = browser.new_page(viewport=SCREEN)
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    assert errors == []
    change = page.locator("p.change-worse#change")
    assert change.inner_text() == f"wall_s: {comp.summary}"
    ys = [page.locator(s).bounding_box()["y"] for s in ("#change", "#verdict", "#verdict-b")]
    assert ys == sorted(ys) and ys[-1] < SCREEN["height"] / 2
    color = change.evaluate("e => getComputedStyle(e).color")
    assert color == "rgb(185, 28, 28)"  # report.css's --bad: the change is the bad news
    plots = page.locator("#plots .mfig svg")
    assert plots.count() == 3
    for i in range(3):
        b = plots.nth(i).bounding_box()
        assert b is not None and b["y"] + b["height"] <= SCREEN["height"], b
    page.screenshot(path=str(ROOT / "artifacts" / "screens" / "answer-multi-compare.png"))
    page.close()
