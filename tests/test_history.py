"""History across commits: provenance recorded per sweep, commit order, changepoints, the page."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from quadscope.analyse.history import (
    History,
    HistoryPoint,
    between_sweep_scatter,
    changepoints,
    order_sweeps,
    reference_n,
)
from quadscope.cli import main
from quadscope.commands.history import load_history
from quadscope.host import Host
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.measure.provenance import Provenance, collect_provenance, machine_label
from quadscope.model import Measurement, Sweep
from quadscope.render.history_html import history_html
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore


def test_changepoints_finds_one_step_and_none_in_flat_data() -> None:
    """A jump of 2 in ln(cost) with 0.1 errors is one changepoint; flat data has none."""
    var = [0.01] * 6
    assert changepoints([0.0, 0.05, -0.05, 2.0, 2.05, 1.95], var, 2 * 1.79) == [3]
    assert changepoints([0.0, 0.05, -0.05, 0.02, 0.01, -0.03], var, 2 * 1.79) == []
    assert changepoints([1.0], [0.01], 1.0) == []


def test_scatter_is_zero_below_five_points_and_robust_to_a_step() -> None:
    """τ needs five points; one large step among small differences does not inflate it."""
    assert between_sweep_scatter([0.0, 5.0, 0.0]) == 0.0
    tau = between_sweep_scatter([0.0, 0.1, 0.0, 5.0, 5.1, 5.0])
    assert tau == pytest.approx(0.1 / (0.6744897501960817 * 2 ** 0.5))


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
