"""Every report kind in headless Chromium, looked at as a person would.

The kinds: single sweep, compare, profile, doctor; and every page (those, the doctor's
summary, an import, a history) answers in its first screen (1280×800, unscrolled).

Each page must load without a console error, lead with its headline, draw one
series per variant in every open metric's cost plot, and (for a profile) let a
click on a flame-graph frame zoom into it. Screenshots go to artifacts/screens/;
with QUADSCOPE_UPDATE_IMAGES=1 they also replace docs/images/, which the README
shows. Skipped only when /usr/bin/chromium or playwright is absent; never retried.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from quadscope.analyse.analysis import Analysis, analyse
from quadscope.doctor.records import DoctorReport, ProbeResult, ProbeSeries
from quadscope.host import Host
from quadscope.model import Sweep
from quadscope.profile.attribute import attribute
from quadscope.profile.flamegraph import render_svg
from quadscope.profile.flametree import flame_tree
from quadscope.profile.records import Attribution
from quadscope.profile.stacks import Frame, StackProfile
from quadscope.profile.startup import fold_startup
from quadscope.render.html import HtmlRenderer
from test_report import synth_runs

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1000, 2000, 4000, 8000, 16000, 32000, 64000)
PY, LIBC = "/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libc.so.6"

pytestmark = pytest.mark.browser


def _sweep(vs: bool = False) -> Sweep:
    return Sweep(id=12, name="insert-loop", mode="sizes",
                 command=("python3", "-c", "l=[]\n[l.insert(0, i) for i in range({n})]"),
                 vs_command=("python3", "-c", "l=[]\n[l.append(i) for i in range({n})]")
                 if vs else None, sizes=SIZES, repeat=3,
                 host=Host(kernel="6.1.0", cpu="Intel Xeon", cpus=2,
                           libc="glibc 2.36", boot_flags="mitigations=auto"))


def single() -> Analysis:
    return analyse(_sweep(), synth_runs(SIZES, 3, coef=1e-11, noise=0.03))


def compared() -> Analysis:
    runs = synth_runs(SIZES, 3, coef=1e-11, noise=0.03)
    runs += synth_runs(SIZES, 3, variant="B", power=1.0, coef=2e-8, seed=2, start_seq=100,
                       noise=0.03)
    return analyse(_sweep(vs=True), runs)


def _profiles() -> list[StackProfile]:
    base = (Frame("_start", PY), Frame("Py_RunMain", PY))
    imports = base + tuple(Frame(f"_find_and_load_{i}", "<frozen importlib._bootstrap>") for i in range(9))
    module = (*base, Frame("<module>", "<string>"))
    insert = (*module, Frame("list.insert", PY), Frame("__memmove_avx_unaligned_erms", LIBC))
    out = []
    for n in (1000, 4000, 16000, 64000):
        secs = {imports: 0.015, (*base, Frame("Py_InitializeEx", PY)): 0.004,
                insert: 1e-11 * n * n, module: 1e-7 * n}
        stacks = {s: int(v * 1e9) for s, v in secs.items()}
        out.append(StackProfile(n, stacks, int(sum(secs.values()) * 4000), "cpu-clock",
                                sum(secs.values())))
    return out


def profiled() -> Analysis:
    a = single()
    profs = list(fold_startup(_profiles()).profiles)  # as profile_sweep does
    res = attribute(profs)
    classes = {Frame(c.symbol, c.dso): c.self_class for c in res.culprits}
    profile = Attribution(12, tuple(p.size_n for p in profs), "perf", "cpu-clock",
                          tuple(p.samples for p in profs), res.culprits, (), "",
                          render_svg(profs[0], profs[-1], classes=classes), res.superlinear,
                          flame_tree=flame_tree(profs[0], profs[-1], classes=classes,
                                                middle=profs[-2]))
    return analyse(a.sweep, a.runs, profile=profile)


def doctor() -> Analysis:
    report = DoctorReport(
        (ProbeResult("fork", "spawn cost against RSS", "n", "0.8 ms at 1 GiB", "slow",
                     "fork copies page tables: spawn cost grows with RSS; use posix_spawn"),
         ProbeResult("clock", "clock_gettime", "1", "20 ns", "ok", "vDSO: cheap")),
        machine={"kernel": "6.1.0", "cpu": "Intel Xeon", "cpus": 2}, quick=True, budget_s=30.0,
        elapsed_s=12.0)
    series = {"fork": (ProbeSeries("fork", tuple((n, 1e-4 + n * 3e-7) for n in SIZES[:5]),
                                   "wall_s"),
                       ProbeSeries("posix_spawn", tuple((n, 1e-4) for n in SIZES[:5]), "wall_s"))}
    a = single()
    return analyse(a.sweep, a.runs, doctor=report, probe_series=series)


KINDS = {"sweep": single, "compare": compared, "profile": profiled, "doctor": doctor}


def _open(browser: Any, analysis: Analysis, tmp_path: Path) -> tuple[Any, list[str]]:
    path = tmp_path / "report.html"
    path.write_bytes(HtmlRenderer().render(analysis))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    return page, errors


# What the README shows of each kind: the part a person looks at first.
README_PART = {"sweep": "body", "compare": "body", "profile": "#growth",
               "doctor": "#doctor"}


def _keep(page: Any, kind: str) -> None:
    page.mouse.move(0, 0)
    shots = ROOT / "artifacts" / "screens"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{kind}.png"), full_page=True)
    if os.environ.get("QUADSCOPE_UPDATE_IMAGES"):
        (ROOT / "docs" / "images").mkdir(parents=True, exist_ok=True)
        target = str(ROOT / "docs" / "images" / f"report-{kind}.png")
        part = README_PART[kind]
        if part == "body":
            page.screenshot(path=target, clip={"x": 0, "y": 0, "width": 1280, "height": 1300},
                            full_page=True)
        else:
            page.locator(part).screenshot(path=target)


@pytest.mark.parametrize("kind", list(KINDS))
def test_report_kind_reads_right_in_chromium(browser: Any, tmp_path: Path, kind: str) -> None:
    """No console error; the headline leads; each open metric's cost plot has one series per variant."""
    analysis = KINDS[kind]()
    page, errors = _open(browser, analysis, tmp_path)
    # Under an A/B change, A's own verdict is labelled "A:" (the change leads).
    label = "A: " if analysis.change is not None else ""
    assert page.inner_text("#verdict") == label + analysis.verdict
    if analysis.change is not None:
        assert page.inner_text("#change") == analysis.change.text
        assert page.evaluate("document.querySelector('#change').compareDocumentPosition("
                             "document.querySelector('#verdict')) & 4")  # change comes first
    variants = len([v for v, fs in analysis.fits.items() if fs])
    if kind == "profile":  # its metric sections are folded under the culprits: open one
        page.locator("details.metric > summary").first.click()
        page.wait_for_selector("details[open] svg.qs-plot")
    series = page.eval_on_selector_all(
        "details[open] svg.qs-plot[data-plot$='-cost']",
        "els => els.map(e => e.querySelectorAll('g.pts').length)")
    assert series and all(count == variants for count in series)
    if kind == "profile":
        page.wait_for_selector("#qs-flame[data-ready] g.frame")
        frame = page.locator("#qs-flame g.frame[name*='list.insert']").first
        before = float(frame.locator("rect").get_attribute("width") or 0)
        frame.click()
        page.wait_for_timeout(600)  # the zoom transition (250 ms) and the label's delay
        after = float(frame.locator("rect").get_attribute("width") or 0)
        assert after > 1.5 * before
        page.fill("#qs-flame-search", "memmove")
        assert "1 frame(s)" in page.inner_text("#qs-flame-info")
        hit = page.locator("#qs-flame g.frame[name*='memmove'] rect").first
        assert hit.evaluate("r => getComputedStyle(r).fill") == "rgb(255, 191, 0)"  # shown
        page.fill("#qs-flame-search", "")
        page.click("#qs-flame-reset")
        page.wait_for_timeout(400)
    assert errors == []
    _keep(page, kind)
    page.close()


def test_the_flame_graph_is_whole_the_moment_the_page_has_loaded(browser: Any,
                                                                 tmp_path: Path) -> None:
    """Every frame has its final width as soon as the graph says it is ready: its first
    drawing grew each frame's width over 250 ms, so `chromium --screenshot` of a profiled
    report showed "all" a sixteenth of the graph's width and the culprits as slivers. Each
    rect's width is read at once, then again after the transition it once took."""
    path = tmp_path / "report.html"
    path.write_bytes(HtmlRenderer().render(profiled()))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())  # the load event: what `chromium --screenshot` waits for
    page.wait_for_selector("#qs-flame[data-ready]")
    widths = ("() => [...document.querySelectorAll('#qs-flame g.frame rect')]"
              ".map(r => r.getAttribute('width'))")
    first = page.evaluate(widths)
    whole = page.evaluate("() => document.querySelector('#qs-flame svg').getAttribute('width')")
    page.wait_for_timeout(800)
    assert first == page.evaluate(widths) and first[0] == whole and errors == []
    page.close()


# Every element inside the viewport, or inside a box that scrolls sideways: what a phone
# shows without the whole page sliding. Shared with test_history's page check.
OVERFLOW_JS = """() => {
  const W = document.documentElement.clientWidth, bad = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1) continue;
    let c = e.parentElement, boxed = false;
    for (; c && c !== document.body; c = c.parentElement) {
      const o = getComputedStyle(c).overflowX;
      if (o === 'auto' || o === 'scroll') { boxed = true; break; }
    }
    if (!boxed) bad.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                        + ' right ' + Math.round(r.right));
  }
  return [document.documentElement.scrollWidth, W, bad.slice(0, 10)];
}"""


@pytest.mark.parametrize("kind", list(KINDS))
def test_report_kind_reads_at_400_px(browser: Any, tmp_path: Path, kind: str) -> None:
    """At 400 px nothing sticks out of the page but inside a scroll box, and the comparison
    (the compare kind) stacks its rows: each summary as wide as the page, none scrolled."""
    path = tmp_path / "report.html"
    path.write_bytes(HtmlRenderer().render(KINDS[kind]()))
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.set_default_timeout(15_000)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    scroll, width, bad = page.evaluate(OVERFLOW_JS)
    assert (scroll, bad) == (width, [])
    if kind == "compare":
        boxes = page.eval_on_selector_all(
            "table.stack td[data-label='summary']",
            "els => els.map(e => [e.getBoundingClientRect().width, "
            "e.closest('.wide').scrollWidth - e.closest('.wide').clientWidth])")
        assert boxes and all(w >= 0.8 * width - 24 and spill == 0 for w, spill in boxes), boxes
    shots = ROOT / "artifacts" / "screens"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{kind}-400.png"), full_page=True)
    page.close()


def imported() -> Analysis:
    """A hyperfine --parameter-scan of an n log n command, imported as `quadscope import`
    stores it (interop.read_sweeps, one run per time)."""
    import dataclasses
    import math

    from quadscope.interop import read_sweeps
    from quadscope.model import Run

    results = [{"command": f"sort-bench {n}", "parameters": {"n": str(n)},
                "times": [2e-3 + 4e-8 * n * math.log(n) * (1 + 0.01 * r) for r in (-1, 0, 1)],
                "exit_codes": [0, 0, 0]} for n in SIZES]
    (item,) = read_sweeps({"results": results}, source="hf.json", now=1.7e9)
    sweep = dataclasses.replace(item.sweep, id=31)  # as the store numbers it
    runs = [Run(31, seq, "A", n, seq % 3, False, 1.7e9, m)
            for seq, (n, m) in enumerate(item.runs)]
    return analyse(sweep, runs)


def _history_page() -> bytes:
    import dataclasses

    from quadscope.render.history_html import history_html
    from test_history import FEW

    subjects = ("parse: one pass", "parse: keep tokens", "parse: insert each token at the "
                "front (quadratic)", "docs", "parse: append, then reverse once", "tests")
    return history_html(dataclasses.replace(FEW, points=tuple(
        dataclasses.replace(p, subject=s) for p, s in zip(FEW.points, subjects, strict=True))))


def doctor_summary() -> Analysis:
    """What `quadscope doctor --html` writes: the summary sweep (no runs of its own) with
    the report and each probe's series."""
    a = doctor()
    summary = Sweep(id=20, name="doctor", mode="sizes", command=("quadscope", "doctor"),
                    kind="doctor", status="complete", host=a.sweep.host)
    assert isinstance(a.doctor, DoctorReport)
    return analyse(summary, [], doctor=a.doctor, probe_series=a.probe_series)


def imported_several() -> bytes:
    """`quadscope import` of a file holding two sweeps: one page, the summary first."""
    import dataclasses

    second = single()
    second = dataclasses.replace(second, sweep=dataclasses.replace(second.sweep, id=32))
    return HtmlRenderer().render_several([imported(), second])


# Every page, and the element that holds its answer: the verdict, the A/B change, the
# doctor's slow probe, the change column of the first commit where the growth changed.
PAGES = {"sweep": (single, "#verdict"), "compare": (compared, "#change"),
         "profile": (profiled, "#verdict"), "doctor": (doctor_summary, "#verdict"),
         "import": (imported, "#verdict"), "import-several": (imported_several, "#verdict"),
         "history": (_history_page, "tr.change td:nth-child(7)")}
FIRST_SCREEN = {"width": 1280, "height": 800}
# Whether an element lies inside the visible part of the box that scrolls it sideways.
IN_ITS_BOX_JS = """e => {
  const r = e.getBoundingClientRect();
  for (let c = e.parentElement; c && c !== document.body; c = c.parentElement) {
    const o = getComputedStyle(c).overflowX;
    if (o === 'auto' || o === 'scroll' || o === 'hidden') {
      const b = c.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1) return false;
    }
  }
  return true;
}"""


@pytest.mark.parametrize("kind", list(PAGES))
def test_every_page_shows_its_answer_in_the_first_screen(browser: Any, tmp_path: Path,
                                                          kind: str) -> None:
    """At 1280×800, before any scrolling, each page's answer is on screen, whole and
    visible; the first screen is kept as artifacts/screens/first-KIND.png."""
    make, answer = PAGES[kind]
    made = make()
    path = tmp_path / "page.html"
    path.write_bytes(made if isinstance(made, bytes) else HtmlRenderer().render(made))
    page = browser.new_page(viewport=FIRST_SCREEN)
    page.set_default_timeout(15_000)
    page.goto(path.as_uri())
    if kind != "history":  # the history page is static: no script marks it ready
        page.wait_for_selector("body[data-ready]")
    box = page.locator(answer).first.bounding_box()
    assert box is not None and page.locator(answer).first.is_visible()
    assert box["y"] >= 0 and box["y"] + min(box["height"], 120) <= FIRST_SCREEN["height"], box
    # Not behind a sideways scroll either (the history's change column once was).
    assert box["x"] >= 0 and box["x"] + box["width"] <= FIRST_SCREEN["width"], box
    assert page.locator(answer).first.evaluate(IN_ITS_BOX_JS), kind
    if kind == "doctor":  # the doctor's own answer, not "nothing could be fitted"
        assert page.inner_text(answer) == "fork is slow; 1 of 2 probes ok"
        assert page.locator("#doctor tr.verdict-slow").first.is_visible()
    elif kind == "import-several":  # the first sweep's verdict leads the summary
        assert page.inner_text(answer) == imported().verdict
        assert page.locator("header tbody tr").count() == 2
        # Each section's open plots are drawn from its own data.
        for sid in ("s31", "s32"):
            holders = page.locator(f"#{sid} details[open] .plot-holder")
            assert holders.count() > 0
            assert page.locator(f"#{sid} details[open] .plot-holder svg").count() == holders.count()
    elif isinstance(made, Analysis) and answer in ("#verdict", "#change"):
        shown = page.inner_text(answer)
        assert shown == (made.change.text if answer == "#change" and made.change
                         else made.verdict)
    shots = ROOT / "artifacts" / "screens"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"first-{kind}.png"))
    page.close()


ANSWER_SCREEN = {"width": 1400, "height": 900}


def profiled_with_sentence() -> Analysis:
    """The profile kind with its user's function named, as `--profile` stores it."""
    import dataclasses

    from quadscope.profile.records import CULPRIT_SENTENCE

    a = profiled()
    assert a.profile is not None
    said = ("<module> (<string>) makes it grow: its calls to list.insert are n², 97% of the "
            "growth beyond linear (time samples at n = 64k)")
    profile = dataclasses.replace(a.profile, extra={**a.profile.extra, CULPRIT_SENTENCE: said})
    return analyse(a.sweep, a.runs, profile=profile)


def test_the_profile_page_answers_with_the_culprit_above_the_fold(browser: Any,
                                                                   tmp_path: Path) -> None:
    """At 1400×900, unscrolled: the culprit sentence under the verdict, the culprits table's
    head on screen, every metric section folded, no culprit column behind a scroll bar.
    The first screen is kept as artifacts/screens/answer-profile.png."""
    made = profiled_with_sentence()
    path = tmp_path / "page.html"
    path.write_bytes(HtmlRenderer().render(made))
    page = browser.new_page(viewport=ANSWER_SCREEN)
    page.set_default_timeout(15_000)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    said = page.locator("#culprit")
    assert made.profile is not None and said.inner_text() == made.profile.culprit_sentence
    box, verdict = said.bounding_box(), page.locator("#verdict").bounding_box()
    assert box is not None and verdict is not None and said.is_visible()
    assert verdict["y"] < box["y"] and box["y"] + box["height"] <= ANSWER_SCREEN["height"], box
    head = page.locator("#growth table thead").bounding_box()
    assert head is not None and head["y"] + head["height"] <= ANSWER_SCREEN["height"], head
    assert page.evaluate("document.querySelectorAll('details.metric').length") > 0
    assert page.evaluate("document.querySelectorAll('details.metric[open]').length") == 0
    spill = page.evaluate("[...document.querySelectorAll('#growth .wide')]"
                          ".map(w => w.scrollWidth - w.clientWidth)")
    assert spill and all(s <= 1 for s in spill), spill
    shots = ROOT / "artifacts" / "screens"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "answer-profile.png"))
    page.close()
