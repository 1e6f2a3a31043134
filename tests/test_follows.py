"""A time bracket the counted work decides: settled on the work's class only where the
time's own interval holds the work's exponent and nothing says the time grows otherwise."""

from __future__ import annotations

from quadscope.analyse.follows import follows, kernel_outgrows, work_follows
from quadscope.analyse.headline import verdict_line
from quadscope.model import Doubt, Fit, Measurement, Run

SIZES = (1000, 2000, 4000, 8000, 16000)


def _fit(metric: str, cls: str, k: float, ci: tuple[float, float],
         bracket: tuple[str, str] | None = None) -> Fit:
    lo, hi = bracket or (cls, cls)
    return Fit(metric=metric, cls="inconclusive" if bracket else cls, exponent=k,
               exponent_ci=ci, coefficients={"a": 0.0, "b": 1.0}, r2=0.99, candidates=(),
               n_points=15, best=lo, at_least=lo, at_most=hi)


def _runs() -> list[Run]:
    return [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                started_at=0.0, measurement=Measurement(
                    wall_s=n * 1e-6, user_s=n * 1e-6, sys_s=0.0, instructions=1e3 * n,
                    exit_code=0))
            for i, n in enumerate(SIZES)]


WORK = _fit("instructions", "n", 1.0, (1.0, 1.0))


def test_a_time_bracket_holding_the_works_exponent_settles_on_the_work() -> None:
    """tac under busy: CPU time √n … n log n beside k = 0.89 [0.76, 1.03], work n exact."""
    cpu = _fit("cpu_s", "n", 0.89, (0.76, 1.03), ("sqrt n", "n log n"))
    fits, notes = work_follows({"cpu_s": cpu, "instructions": WORK}, _runs(), "instructions")
    assert fits["cpu_s"].cls == "n" and fits["cpu_s"].confident
    assert fits["cpu_s"].exponent_ci == (0.76, 1.03)  # the time's own interval is kept
    assert len(notes) == 1 and "√n … n log n" in notes[0] and "0.76" in notes[0]
    line = verdict_line(fits, work="instructions")
    assert "the work grows as n" in line and "CPU time too (k = 0.89 [0.76, 1.03])" in line


def test_an_interval_that_excludes_the_works_exponent_keeps_the_times_verdict() -> None:
    """Time that surely grows faster than the work is the gap's, never the work's class."""
    cpu = _fit("cpu_s", "n log n", 1.25, (1.12, 1.38), ("n", "n^2"))
    assert not follows(cpu, WORK, 16000.0)
    fits, notes = work_follows({"cpu_s": cpu, "instructions": WORK}, _runs(), "instructions")
    assert fits["cpu_s"] is cpu and notes == []


def test_unsettled_work_regimes_and_rising_slopes_settle_nothing() -> None:
    cpu = _fit("cpu_s", "n", 1.0, (0.8, 1.2), ("sqrt n", "n log n"))
    open_work = _fit("instructions", "n", 1.0, (1.0, 1.0), ("n", "n log n"))
    assert not follows(cpu, open_work, 16000.0)
    from dataclasses import replace
    assert not follows(replace(cpu, regime_n=4000), WORK, 16000.0)
    slopes = Doubt("slopes", "n", "n^2", None)
    assert not follows(replace(cpu, doubts=(slopes,)), WORK, 16000.0)
    # A bracket that does not hold the work's class is not the work's to settle.
    assert not follows(_fit("cpu_s", "n^2", 1.9, (0.95, 2.6), ("n log n", "n^3")), WORK, 16000.0)
    # A settled time is left alone (the gap speaks where it differs).
    assert not follows(_fit("cpu_s", "n", 1.0, (0.9, 1.1)), WORK, 16000.0)


def test_a_kernel_share_that_surely_outgrows_the_work_settles_nothing() -> None:
    """The instructions counted are the program's own: system time growing faster is work
    they do not see, so the time stays as its own runs read it."""
    cpu = _fit("cpu_s", "n", 1.1, (0.85, 1.35), ("n", "n log n"))
    sys = _fit("sys_s", "n^2", 1.8, (1.5, 2.1), ("n log n", "n^2"))
    fits = {"cpu_s": cpu, "sys_s": sys, "instructions": WORK}
    assert kernel_outgrows(fits, WORK, 16000.0)
    assert work_follows(fits, _runs(), "instructions")[0]["cpu_s"] is cpu
    calm = _fit("sys_s", "n", 0.9, (0.2, 1.6), ("1", "n^2"))
    assert not kernel_outgrows({**fits, "sys_s": calm}, WORK, 16000.0)
    assert work_follows({**fits, "sys_s": calm}, _runs(), "instructions")[0]["cpu_s"].cls == "n"


def test_a_time_that_says_next_to_nothing_is_not_given_the_works_class() -> None:
    """k = 2.70 [1.40, 4.00]: the time's data hold n² but barely speak, in a bracket of five
    classes or of three."""
    quadratic = _fit("instructions", "n^2", 2.0, (2.0, 2.0))
    assert not follows(_fit("wall_s", "n^2", 2.7, (1.4, 4.0), ("n", "c^n")), quadratic, 16000.0)
    assert not follows(_fit("wall_s", "n^2", 2.7, (1.4, 4.0), ("n log n", "n^3")), quadratic,
                       16000.0)
    fair = _fit("wall_s", "n^2", 2.1, (1.6, 2.6), ("n log n", "n^3"))
    assert follows(fair, quadratic, 16000.0)


def test_a_time_settled_faster_than_the_work_is_bracketed_between_them() -> None:
    """mawk `s = s "x"` under busy: CPU time settled n³ (k = 2.87 [2.70, 3.04]) beside work
    counted n²: an instruction's cost is bounded, so the time reads "n² … n³", not n³."""
    from quadscope.analyse.anchors import work_anchors
    work = _fit("instructions", "n^2", 1.89, (1.89, 1.89))
    cpu = _fit("cpu_s", "n^3", 2.87, (2.70, 3.04))
    wall = _fit("wall_s", "n^3", 2.9, (2.7, 3.1))
    fits, notes = work_anchors({"cpu_s": cpu, "wall_s": wall, "instructions": work},
                               _runs(), "instructions")
    for metric in ("cpu_s", "wall_s"):
        got = fits[metric]
        assert not got.confident and (got.at_least, got.at_most) == ("n^2", "n^3")
        assert got.exponent_ci == ((2.7, 3.1) if metric == "wall_s" else (2.70, 3.04))
        assert got.doubts[-1].check == "anchor"
    assert [x.split(":")[0] for x in notes] == ["wall_s", "cpu_s"]
    assert "reads n³ (k = 2.87)" in notes[1] and "grows as n²" in notes[1]


def test_a_time_settled_slower_than_the_work_is_bracketed_between_them() -> None:
    """CPython sorted: CPU time settled n (k = 0.94) where the work counted is n log n."""
    from quadscope.analyse.anchors import work_anchors
    work = _fit("instructions", "n log n", 1.05, (1.05, 1.05))
    cpu = _fit("cpu_s", "n", 0.94, (0.79, 1.09))
    fits, _ = work_anchors({"cpu_s": cpu, "instructions": work}, _runs(), "instructions")
    assert (fits["cpu_s"].at_least, fits["cpu_s"].at_most) == ("n", "n log n")


def test_the_kernel_or_waiting_may_carry_a_faster_time_and_the_same_class_is_kept() -> None:
    """Work the instructions do not see (system time surely faster) or wall time spent
    waiting (CPU time grows slower than wall time) keeps the faster time's class; a time
    on the work's class, or unsettled work, is left alone."""
    from quadscope.analyse.anchors import work_anchors
    work = _fit("instructions", "n", 1.0, (1.0, 1.0))
    cpu = _fit("cpu_s", "n log n", 1.3, (1.2, 1.4))
    sys = _fit("sys_s", "n^2", 2.0, (1.8, 2.2))
    fits, notes = work_anchors({"cpu_s": cpu, "sys_s": sys, "instructions": work},
                               _runs(), "instructions")
    assert fits["cpu_s"] is cpu and notes == []
    calm = _fit("sys_s", "n", 1.0, (0.5, 1.5))
    fits, _ = work_anchors({"cpu_s": cpu, "sys_s": calm, "instructions": work},
                           _runs(), "instructions")
    assert fits["cpu_s"].at_most == "n log n" and not fits["cpu_s"].confident
    wall = _fit("wall_s", "n log n", 1.3, (1.2, 1.4))
    calm_cpu = _fit("cpu_s", "n", 1.0, (0.9, 1.1))
    fits, notes = work_anchors({"wall_s": wall, "cpu_s": calm_cpu, "instructions": work},
                               _runs(), "instructions")
    assert fits["wall_s"] is wall and fits["cpu_s"] is calm_cpu and notes == []
    fits, _ = work_anchors({"wall_s": wall, "cpu_s": cpu, "sys_s": calm, "instructions": work},
                           _runs(), "instructions")
    assert not fits["wall_s"].confident  # CPU time grows as fast: no waiting to carry it
    open_work = _fit("instructions", "n", 1.0, (1.0, 1.0), ("n", "n log n"))
    fits, notes = work_anchors({"cpu_s": cpu, "instructions": open_work}, _runs(),
                               "instructions")
    assert fits["cpu_s"] is cpu and notes == []


def test_a_time_classes_away_from_the_work_keeps_its_class() -> None:
    """Linear time beside a constant count, or n² beside n: more than a cost per instruction
    moves over a sweep; the count misses work, and the time's class stands."""
    from quadscope.analyse.anchors import anchored
    assert not anchored(_fit("cpu_s", "n", 1.0, (0.9, 1.1)), _fit("instructions", "1", 0.0,
                                                                  (0.0, 0.0)))
    assert not anchored(_fit("cpu_s", "n^2", 2.0, (1.9, 2.1)), WORK)
    assert anchored(_fit("cpu_s", "n log n", 1.2, (1.1, 1.3)), WORK)


def test_a_time_bracket_is_cut_at_the_work_on_the_side_its_interval_leaves() -> None:
    """coreutils sort under busy: work n log n, CPU time k = 1.18 [1.17, 1.20] read
    "n … n²": linear, below the work, is what neither lens allows; "n log n … n²"."""
    from quadscope.analyse.anchors import cut_to_work, work_anchors
    work = _fit("instructions", "n log n", 1.08, (1.07, 1.10))
    cpu = _fit("cpu_s", "n", 1.18, (1.17, 1.20), ("n", "n^2"))
    fits, notes = work_anchors({"cpu_s": cpu, "instructions": work}, _runs(), "instructions")
    assert (fits["cpu_s"].at_least, fits["cpu_s"].at_most) == ("n log n", "n^2")
    assert not fits["cpu_s"].confident and fits["cpu_s"].exponent_ci == (1.17, 1.20)
    assert len(notes) == 1 and "lies above the work's exponent (1.10, n log n" in notes[0]
    # Below the work: start-up still fading; the faster end goes, unless the cut is barred.
    slow = _fit("cpu_s", "sqrt n", 0.8, (0.7, 0.9), ("sqrt n", "n log n"))
    assert cut_to_work(slow, WORK, 1.0) == ("sqrt n", "n")
    assert cut_to_work(slow, WORK, 1.0, below=False) is None
    # An interval holding the work's exponent, or a cut to a single class: nothing cut.
    assert cut_to_work(_fit("cpu_s", "n", 1.0, (0.9, 1.3), ("n", "n^2")), WORK, 1.0) is None
    assert cut_to_work(_fit("cpu_s", "n", 1.3, (1.2, 1.4), ("sqrt n", "n")), WORK, 1.0) is None
