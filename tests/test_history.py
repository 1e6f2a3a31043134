"""History across commits: provenance recorded per sweep, commit order, changepoints, the page."""

from __future__ import annotations

import dataclasses
import math
import random
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.history import (
    History,
    HistoryPoint,
    build_history,
    change_sentences,
    changepoints,
    history_metric,
    merge_unsure,
    order_sweeps,
    own_cost,
    reference_n,
)
from quadscope.classes import INCONCLUSIVE
from quadscope.cli import main
from quadscope.commands.history import load_history
from quadscope.host import Host
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.measure.provenance import Provenance, collect_provenance, machine_label
from quadscope.model import Fit, Measurement, Prediction, Sweep
from quadscope.render.history_html import history_html
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore
from quadscope.workloads.synthetic import Scenario, simulate, truth_for


def test_changepoints_finds_one_step_and_none_in_flat_data() -> None:
    """A jump of 2 in ln(cost) with 0.1 errors is one changepoint; flat data has none."""
    var = [0.01] * 6
    assert changepoints([0.0, 0.05, -0.05, 2.0, 2.05, 1.95], var, 2 * 1.79) == [3]
    assert changepoints([0.0, 0.05, -0.05, 0.02, 0.01, -0.03], var, 2 * 1.79) == []
    assert changepoints([1.0], [0.01], 1.0) == []


def test_steps_that_are_too_small_or_not_sure_are_merged() -> None:
    """Segments 3% apart merge under a 5% threshold; a 2× step stays; a 20% step whose
    sides' errors make it 2.2 standard errors is not sure at z = 2.8, and merges."""
    y = [0.0, 0.0, 0.03, 0.03, 0.72, 0.72]
    var = [1e-8] * 6
    starts = changepoints(y, var, 2 * 1.79)
    assert starts == [2, 4]
    assert merge_unsure(y, var, starts, 0.0488, 2.8) == [4]
    y = [0.0, 0.0, 0.0, 0.18, 0.18, 0.18]
    assert merge_unsure(y, [0.01] * 6, [3], 0.0488, 2.8) == []  # 0.18 / √(2·0.01/3) = 2.2
    assert merge_unsure(y, [0.001] * 6, [3], 0.0488, 2.8) == [3]


def test_own_cost_is_the_median_at_ref_n_with_the_pooled_spread() -> None:
    """The median of the runs at ref_n; its error from every size's spread, √(π/2)/√m."""
    sizes = [1, 1, 2, 2, 4, 4, 4]
    values = [1.0, 1.1, 2.0, 2.2, 4.0, 4.4, 4.2]
    median, se = own_cost(sizes, values, 4) or (0.0, 0.0)
    assert median == pytest.approx(4.2)
    x = [[math.log(1.0), math.log(1.1)], [math.log(2.0), math.log(2.2)],
         [math.log(4.0), math.log(4.4), math.log(4.2)]]
    ss = sum(sum((v - sum(g) / len(g)) ** 2 for v in g) for g in x)
    widen = 4.604094 / 2.575829  # t(0.995, 4 df) / z(0.995)
    assert se == pytest.approx(math.sqrt(ss / 4) * math.sqrt(math.pi / 2) / math.sqrt(3) * widen)
    assert own_cost(sizes, values, 8) is None  # not measured there
    assert own_cost([1, 2], [1.0, 2.0], 2) is None  # no degrees of freedom


def test_reference_n_is_the_largest_common_size_else_the_smallest_maximum() -> None:
    """Common sizes give their maximum; disjoint sizes never extrapolate a sweep."""
    assert reference_n([[1, 2, 4, 8], [2, 4, 8, 16]]) == 8
    assert reference_n([[1, 2], [3, 4]]) == 2
    assert reference_n([]) == 0


def test_order_sweeps_follows_git_then_time() -> None:
    """Listed commits in git's order (ties by time), unlisted ones after, by time."""
    def sw(i: int, commit: str, t: float) -> Sweep:
        return Sweep(id=i, name="x", mode="sizes", command=("p",), git_commit=commit, created_at=t)
    sweeps = [sw(1, "c2", 1.0), sw(2, "c1", 2.0), sw(3, "zz", 0.5), sw(4, "c1", 1.5)]
    assert [s.id for s in order_sweeps(sweeps, ["c1", "c2"])] == [4, 2, 1, 3]
    assert [s.id for s in order_sweeps(sweeps, None)] == [3, 1, 4, 2]


def test_collect_provenance_reads_git_through_the_runner() -> None:
    """Commit, branch and dirtiness come from git; outside a repository all stay empty."""
    answers = {"rev-parse": "abc123\n", "symbolic-ref": "main\n", "status": " M src/x.c\n"}

    def fake_git(args: Sequence[str], cwd: Path) -> str | None:
        return answers.get(args[0])

    host = Host(hostname="box", cpu="Xeon")
    got = collect_provenance(host=host, cwd=Path("/r"), git=fake_git)
    assert got == Provenance("abc123", "main", True, "box (Xeon)")
    none = collect_provenance(host=Host(), cwd=Path("/r"), git=lambda a, c: None)
    assert none == Provenance("", "", False, "")
    assert machine_label(Host(hostname="box")) == "box"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          timeout=30).stdout


def _cost(repo: Path, rng: random.Random):  # type: ignore[no-untyped-def]
    """A workload whose algorithm is whatever the repository's algo.txt says at this commit."""
    def cost(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        quadratic = (repo / "algo.txt").read_text().strip() == "quadratic"
        # 1% noise: this is about marking the changes; at 2% over these 1.5 decades, "n or
        # n log n" is an honest verdict for a linear sweep, and one was.
        wall = (1e-3 + (2e-10 * n * n if quadratic else 4e-7 * n)) * rng.lognormvariate(0, 0.01)
        return Measurement(wall_s=wall, user_s=wall, sys_s=0.0, exit_code=0)
    return cost


@pytest.mark.slow
def test_history_marks_linear_quadratic_linear_commits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits making a function linear, quadratic, linear: both changes marked, nothing else."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    rng = random.Random(5)
    clock = FakeClock(start=1_700_000_000.0)
    with SqliteStore(tmp_path / "results.db") as store:
        for i, algo in enumerate(["linear", "quadratic", "linear"]):
            (repo / "algo.txt").write_text(algo + "\n")
            _git(repo, "add", "algo.txt")
            _git(repo, "commit", "-q", "-m", f"{i}: {algo}")
            for _ in range(2):  # two sweeps per commit: replicates for the scatter estimate
                spec = SweepSpec(command=("prog", "{n}"), name="hot", repeat=3, warmup=0,
                                 sizes=(1000, 2000, 4000, 8000, 16000, 32000), seed=i)
                prov = collect_provenance(host=Host(hostname="h"), cwd=repo)
                run_sweep(spec, executor=FakeExecutor(_cost(repo, rng), clock), clock=clock,
                          store=store, provenance=prov)
        (repo / "algo.txt").write_text("linear, edited\n")
        dirty = collect_provenance(host=Host(), cwd=repo)
        history = load_history(store, "hot", "wall_s", repo)
        # Without --metric, the time the verdicts led with (a timed sweep counts no work).
        assert load_history(store, "hot", None, repo).metric == "wall_s"
    commits = _git(repo, "rev-list", "--reverse", "HEAD").split()
    assert dirty.git_dirty and dirty.git_commit == commits[-1] and dirty.git_branch == "main"
    assert history.order == "git" and history.ref_n == 32000
    assert [p.commit for p in history.points] == [c for c in commits for _ in range(2)]
    assert [p.cls for p in history.points] == ["n", "n", "n^2", "n^2", "n", "n"]
    assert [p.class_changed for p in history.points] == ["", "", "n → n²", "", "n² → n", ""]
    steps = [p.step for p in history.points]
    assert [s is not None for s in steps] == [False, False, True, False, True, False]
    assert steps[2] is not None and steps[2] > 5 and steps[4] is not None and steps[4] < 0.2
    page = history_html(history).decode()
    assert page.count("<tr class=\"change\">") == 2 and "n → n²" in page and "<script" not in page
    html = tmp_path / "history.html"
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line, whatever runs the tests
    assert main(["history", "hot", "--db", str(tmp_path / "results.db"), "--repo", str(repo),
                 "--html", str(html)]) == 0
    assert "class n → n²" in capsys.readouterr().out and html.read_text() == page
    assert main(["history", "cold", "--db", str(tmp_path / "results.db")]) == 5


def test_history_page_escapes_stored_strings() -> None:
    """A branch or name holding markup is written as text, never as markup."""
    p = HistoryPoint(sweep_id=1, commit="", branch="<b>x</b>", dirty=False, created_at=0.0,
                     machine="<img src=x>", meter="", cls="n", exponent=None, exponent_ci=None,
                     cost=None, cost_lo=None, cost_hi=None)
    page = history_html(History("<script>", "wall_s", 10, "time", 0.0, (p,))).decode()
    assert "<b>x</b>" not in page and "<img" not in page and "<script>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


def _point(i: int, cost: float, cls: str = "n", changed: str = "",
           step: float | None = None) -> HistoryPoint:
    return HistoryPoint(i, f"{i:07x}abcdef0123", "main", False, 1.7e9 + 3600 * i, "box (Xeon)",
                        "time", cls, 1.0, (0.9, 1.1), cost, cost * 0.95, cost * 1.05, changed,
                        step)


# Six sweeps, the first at the least cost (its value label once touched it); forty, whose
# commit labels would overlap if each were drawn.
FEW = History("hot", "wall_s", 32000, "git", 0.05, (
    _point(1, 0.0135), _point(2, 0.0137), _point(3, 0.21, "n^2", "n → n²", 15.3),
    _point(4, 0.205, "n^2"), _point(5, 0.0139, "n", "n² → n", 0.07), _point(6, 0.0134)))
MANY = History("hot", "max_rss_bytes", 32000, "git", 0.05, tuple(
    _point(i, 1.3e7 * (1 + 0.01 * (i % 3)) * (4 if i > 20 else 1), step=4.0 if i == 21 else None)
    for i in range(1, 41)))

# Pairs of overlapping boxes among the plot's labels and points (screen coordinates).
OVERLAPS_JS = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const texts = [...document.querySelectorAll('svg text')].map(e => [e.textContent, box(e)]);
  const dots = [...document.querySelectorAll('svg circle')].map((e, i) => ['point ' + i, box(e)]);
  const hit = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  const out = [];
  texts.forEach(([t, a], i) => {
    texts.slice(i + 1).forEach(([u, b]) => { if (hit(a, b)) out.push([t, u]); });
    dots.forEach(([u, b]) => { if (hit(a, b)) out.push([t, u]); });
  });
  return [texts.length, out];
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 400])
@pytest.mark.parametrize("history", [FEW, MANY], ids=["few", "many"])
def test_history_plot_labels_touch_nothing_and_the_page_fits(
        browser: Any, tmp_path: Path, history: History, width: int) -> None:
    """In Chromium no label of the history plot overlaps a point or another label, the
    changed commits are labelled, and at 400 px nothing sticks out but inside a scroll box."""
    from test_report_screens import OVERFLOW_JS

    path = tmp_path / "history.html"
    path.write_bytes(history_html(history))
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    page.goto(path.as_uri())
    count, overlaps = page.evaluate(OVERLAPS_JS)
    assert overlaps == [] and count >= 5  # the title, two values and two commits at least
    labels = page.eval_on_selector_all("svg text.mono", "els => els.map(e => e.textContent)")
    assert {p.commit[:7] for p in history.changes} <= set(labels)
    scroll, view, bad = page.evaluate(OVERFLOW_JS)
    assert (scroll, bad) == (view, [])
    page.close()


def _bisected(i: int, cost: float, cls: str = "n", changed: str = "") -> HistoryPoint:
    """A sweep bisect made: a detached worktree (no branch), a VM's long machine name."""
    return HistoryPoint(i, f"{i:07x}abcdef0123", "", False, 1.7e9 + 3600 * i,
                        "vm (Intel(R) Xeon(R) Processor)", "instructions", cls, 1.0, (1.0, 1.0),
                        cost, cost, cost, changed, None, subject="sum against every earlier item")


BISECTED = History("sumprog", "instructions", 2000, "git", 0.01, (
    _bisected(1, 2.95e6), _bisected(2, 5.75e6), _bisected(3, 1.61e7, "n^2", "n → n²")))


def test_history_page_leaves_out_a_column_no_sweep_has() -> None:
    """Sweeps bisect made have no branch: the page drops the empty column (it pushed
    "when" and "machine" out of sight at 1280 px) and keeps it when one sweep has one."""
    page = history_html(BISECTED).decode()
    assert "<th>branch</th>" not in page and "<th>when</th>" in page
    assert page.count("<td class=\"wrap\">vm (Intel(R) Xeon(R) Processor)</td>") == 3
    one = dataclasses.replace(BISECTED, points=(*BISECTED.points[:2], dataclasses.replace(
        BISECTED.points[2], branch="main")))
    assert "<th>branch</th>" in history_html(one).decode()


@pytest.mark.browser
def test_a_bisected_history_s_table_needs_no_scrolling_at_1280(browser: Any,
                                                              tmp_path: Path) -> None:
    """At 1280 px the table of bisect's sweeps shows every column without a scroll bar:
    the screenshot showed "when" cut off and "machine" hidden behind one."""
    path = tmp_path / "history.html"
    path.write_bytes(history_html(BISECTED))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.as_uri())
    scroll, view = page.evaluate("""() => { const box = document.querySelector('table')
        .parentElement; return [box.scrollWidth, box.clientWidth]; }""")
    page.close()
    assert scroll <= view


def _fit(cls: str, cost: float, k: float, ci: tuple[float, float], rel: float = 0.05,
         metric: str = "wall_s", lo: str = "", hi: str = "") -> Fit:
    settled = cls != INCONCLUSIVE
    return Fit(metric=metric, cls=cls, exponent=k, exponent_ci=ci,
               coefficients={"a": 0.0, "b": 1.0}, r2=1.0, candidates=(), n_points=18,
               prediction=Prediction(32000, cost, cost * (1 - rel), cost * (1 + rel)),
               best=cls if settled else lo, at_least=lo or (cls if settled else ""),
               at_most=hi or (cls if settled else ""))


def _sweeps(n: int, meter: str = "time") -> list[Sweep]:
    return [Sweep(id=i + 1, name="x", mode="sizes", command=("p", "{n}"), meter=meter,
                  git_commit=f"{i + 1:x}" * 40, created_at=float(i)) for i in range(n)]


def test_a_step_judged_from_each_sweeps_own_interval_is_found_both_ways() -> None:
    """The reported history: five sweeps of wall time stepping 6 ms → 22 s → 8.8 ms. The
    spread of successive differences was carried by the steps and marked nothing; each
    sweep's own interval finds both steps and both changes of growth."""
    fits = [_fit("n log n", 6.0e-3, 1.1, (1.05, 1.15)), _fit("n log n", 6.1e-3, 1.1, (1.05, 1.15)),
            _fit("n^2", 22.0, 2.0, (1.95, 2.05)), _fit("n^2", 21.6, 2.0, (1.95, 2.05)),
            _fit("n log n", 8.8e-3, 1.1, (1.05, 1.15))]
    history = build_history(list(zip(_sweeps(5), fits, strict=True)), name="x",
                            metric="wall_s", ref_n=32000, order="git")
    steps = [p.step for p in history.points]
    assert [s is not None for s in steps] == [False, False, True, False, True]
    assert steps[2] == pytest.approx(3603, rel=0.001)
    assert steps[4] == pytest.approx(8.8e-3 / 21.8, rel=0.01)
    assert [p.class_changed for p in history.points] == ["", "", "n log n → n²", "",
                                                         "n² → n log n"]
    assert change_sentences(history)[0] == "wall time grew 3,603× at 3333333333: n log n → n²"
    assert change_sentences(history)[1].startswith("wall time fell 2,477× at 5555555555")


def test_an_exact_two_fold_step_of_the_work_is_found() -> None:
    """Counted exactly, the work is 5.76M, 11.5M (×2), 11.5M, then n²: both are changes, and
    nothing else; the sentence names the work."""
    costs = [5.76e6, 1.152e7, 1.152e7, 6.42e7, 6.42e7]
    classes = ["n", "n", "n", "n^2", "n^2"]
    fits = [_fit(c, v, 1.0 if c == "n" else 2.0, (0.999, 1.001) if c == "n" else (1.999, 2.001),
                 rel=0.0, metric="instructions") for c, v in zip(classes, costs, strict=True)]
    own = [(v, 0.0) for v in costs]
    history = build_history(list(zip(_sweeps(5, "instructions"), fits, strict=True)),
                            name="x", metric="instructions", ref_n=32000, order="git",
                            measured=own)
    assert history.exact and history.min_step == pytest.approx(0.01)
    assert [p.step for p in history.points] == [None, pytest.approx(2.0), None,
                                                pytest.approx(6.42e7 / 1.152e7), None]
    assert change_sentences(history) == (
        "the work grew 2× at 2222222222 (n)",
        "the work grew 5.57× at 4444444444: n → n²")
    # A timed metric of the same sweeps is not "the work": its threshold is compare's 5%.
    timed = build_history(list(zip(_sweeps(5), fits, strict=True)), name="x",
                          metric="instructions", ref_n=32000, order="git", measured=own)
    assert not timed.exact and timed.min_step == pytest.approx(0.05)


def test_the_work_grew_thousands_fold_in_one_sentence() -> None:
    """"the work grew 3,500× at abc1234567: n log n → n²"."""
    fits = [_fit("n log n", 1e6, 1.07, (1.06, 1.08), 0.0, "instructions"),
            _fit("n^2", 3.5e9, 2.0, (1.99, 2.01), 0.0, "instructions")]
    sweeps = _sweeps(2, "instructions")
    sweeps[1] = dataclasses.replace(sweeps[1], git_commit="abc1234567" + "0" * 30)
    history = build_history(list(zip(sweeps, fits, strict=True)), name="x",
                            metric="instructions", ref_n=32000, order="git")
    assert change_sentences(history) == ("the work grew 3,500× at abc1234567: n log n → n²",)


def test_a_bracketed_sweep_changes_growth_when_its_exponent_is_apart() -> None:
    """n … n log n (k 1.0–1.2), then an unsettled k of 1.9–2.1: a change, marked once; a
    settled n² after it is the same growth, not a second change."""
    fits = [_fit(INCONCLUSIVE, 1.0, 1.1, (1.0, 1.2), lo="n", hi="n log n"),
            _fit(INCONCLUSIVE, 1.0, 2.0, (1.9, 2.1), lo="n log n", hi="n^3"),
            _fit("n^2", 1.0, 2.0, (1.95, 2.05))]
    history = build_history(list(zip(_sweeps(3), fits, strict=True)), name="x",
                            metric="wall_s", ref_n=32000, order="git")
    assert [p.class_changed for p in history.points] == ["", "n … n log n → n log n … n³", ""]
    assert all(p.step is None for p in history.points)


def test_history_follows_the_metric_run_led_with() -> None:
    """The work where every sweep counted it exactly; else the time most sweeps led with."""
    work = {"wall_s": _fit("n", 1.0, 1.0, (0.9, 1.1)),
            "instructions": _fit("n", 1.0, 1.0, (0.99, 1.01), metric="instructions")}
    assert history_metric([(work, "instructions"), (work, "instructions")]) == "instructions"
    assert history_metric([(work, "instructions"), (work, None)]) == "wall_s"
    cpu = {"wall_s": _fit(INCONCLUSIVE, 1.0, 1.0, (0.5, 1.5), lo="1", hi="n^2"),
           "cpu_s": _fit("n", 1.0, 1.0, (0.95, 1.05), metric="cpu_s")}
    assert history_metric([(cpu, None), (cpu, None), (work, None)]) == "cpu_s"
    assert history_metric([(cpu, None), (work, None)]) == "wall_s"  # a tie: wall time
    assert history_metric([]) == "wall_s"


def _flat_series(cv: float, seed: int, sweeps: int = 8) -> History:
    """`sweeps` sweeps of one n log n program (5 of start-up at the smallest size), noise
    `cv`, three repeats at six sizes: nothing changed."""
    rng = np.random.default_rng(seed)
    sizes = [1000, 2000, 4000, 8000, 16000, 32000]
    truth = truth_for("n log n", sizes, 0.2, top_s=0.5)
    entries, own = [], []
    for i, sweep in enumerate(_sweeps(sweeps)):
        n, v = simulate(truth, Scenario(cv=cv), sizes, 3, rng)
        entries.append((sweep, fit_metric("wall_s", n, v, predict_n=32000, seed=i)))
        own.append(own_cost(n, v, 32000))
    return build_history(entries, name="x", metric="wall_s", ref_n=32000, order="git",
                         measured=own)


@pytest.mark.parametrize("seed", [3, 4])
def test_a_noisy_flat_series_has_no_step_and_no_change(seed: int) -> None:
    """Eight sweeps of an unchanged program with 5% noise: nothing marked (the false-step
    rate on such series is measured in BENCHMARKS.md §history)."""
    history = _flat_series(0.05, seed)
    assert history.changes == ()
