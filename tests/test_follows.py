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
