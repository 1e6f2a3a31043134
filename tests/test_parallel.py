"""Wall time that lags CPU time as a program keeps more CPUs busy at larger n (`analyse.parallel`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from tests.conftest import measurement

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.headline import time_fit
from quadscope.analyse.parallel import parallel_bound, spread_out
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit, Run
from quadscope.run.spec import SweepSpec

SIZES = tuple(62500 * 2**i for i in range(5))  # 62.5k..1M, the bench's coreutils sort grid


def _runs(cost: Callable[[float], float], threads: Callable[[float], float]) -> list[Run]:
    """CPU time cost(n) (1% noise) spread over threads(n) CPUs: wall = CPU / threads."""
    rng = np.random.default_rng(5)
    out = []
    for i, n in enumerate(np.repeat(SIZES, 4)):
        cpu = cost(float(n)) * (1 + 0.01 * rng.standard_normal())
        m = measurement(cpu / threads(float(n)), user_s=cpu)
        out.append(Run(sweep_id=1, seq=i, variant="A", size_n=int(n), repeat=i % 4,
                       warmup=False, started_at=0.0, measurement=m))
    return out


def _sort(n: float) -> float:
    """GNU sort's CPU time: n log n, 50 ms at 62.5k lines."""
    return 50e-3 * n * math.log(n) / (SIZES[0] * math.log(SIZES[0]))


def _linear(n: float) -> float:
    return 40e-3 * n / SIZES[0]


def _two_threads(n: float) -> float:
    """One thread below 128k lines, then two threads sharing it, 1.6 CPUs busy at once."""
    return 1.0 if n < 128_000 else 1.6


def test_a_sort_that_starts_a_second_thread_has_cpu_time_lead_and_wall_time_doubted() -> None:
    """coreutils sort, idle machine: CPU/wall 0.99 at 62.5k, 1.6 at 1M; wall time lags."""
    runs = _runs(_sort, _two_threads)
    fits, _ = fit_runs(runs, metrics=("wall_s", "cpu_s"))
    assert fits["wall_s"].exponent is not None and fits["cpu_s"].exponent is not None
    assert fits["wall_s"].exponent < fits["cpu_s"].exponent  # wall time grows slower
    out, notes = parallel_bound(fits, runs)
    doubt = out["wall_s"].doubts[-1]
    assert doubt.check == "parallel" and doubt.meter == "instructions"
    assert len(notes) == 1 and "1.0 at n = 62500 and 1.6 at n = 1000000" in notes[0]
    # CPU time, every thread's, leads the headline where wall time was widened up to it.
    assert time_fit(out) is (out["wall_s"] if out["wall_s"].confident else out["cpu_s"])


def test_wall_time_settled_slower_than_cpu_time_is_widened_up_to_it() -> None:
    """Wall time settled "n" beside CPU time's "n log n": the bracket [n, n log n]."""
    runs = _runs(_sort, _two_threads)
    fits = {"wall_s": _settled("wall_s", "n", 0.93, (0.85, 1.01)),
            "cpu_s": _settled("cpu_s", "n log n", 1.20, (1.09, 1.31))}
    out, _ = parallel_bound(fits, runs)
    wall = out["wall_s"]
    assert not wall.confident and (wall.at_least, wall.at_most) == ("n", "n log n")
    assert wall.best == "n" and "more CPUs busy" in wall.reason
    assert time_fit(out) is out["cpu_s"]
    # CPU time growing no faster than wall time: the verdict stands, with the doubt.
    same = {"wall_s": _settled("wall_s", "n", 0.93, (0.90, 0.96)),
            "cpu_s": _settled("cpu_s", "n", 1.0, (0.95, 1.05))}
    kept, _ = parallel_bound(same, runs)
    assert kept["wall_s"].confident and kept["wall_s"].cls == "n"
    assert kept["wall_s"].doubts[-1].check == "parallel"
    assert time_fit(kept) is kept["wall_s"]  # settled, the narrower, no slower than CPU time


def test_one_thread_or_a_constant_number_of_threads_leaves_wall_time_alone() -> None:
    """Parallelism that does not grow with n (none, or two threads at every size) changes
    no growth, nor does a program waiting on I/O (CPU below wall) at small n only."""
    for threads in (lambda n: 1.0, lambda n: 1.9, lambda n: 0.5 if n < 128_000 else 1.05):
        runs = _runs(_sort, threads)
        fits, _ = fit_runs(runs, metrics=("wall_s", "cpu_s"))
        assert spread_out(runs) is None
        assert parallel_bound(fits, runs) == (fits, [])


def test_a_sweep_whose_wall_time_lagged_as_threads_rose_is_counted() -> None:
    """Linear work whose CPU time settles "n" cleanly: with threads rising, wall time lags
    and the default meter counts the work (`run.counting.open_reason`); on one thread it
    does not."""
    from quadscope.host import Host
    from quadscope.measure.clock import FakeClock
    from quadscope.run import counting
    from quadscope.run.spec import new_sweep

    spec = SweepSpec(command=("prog", "{n}"), sizes=SIZES)
    sweep = replace(new_sweep(spec, clock=FakeClock(0.0), counters="", counters_note="",
                              host=Host()), id=1)
    assert "more CPUs busy" in counting.open_reason(sweep, _runs(_linear, _two_threads))
    assert counting.open_reason(sweep, _runs(_linear, lambda n: 1.0)) == ""


def _settled(metric: str, cls: str, k: float, ci: tuple[float, float]) -> Fit:
    """A settled fit of class `cls` with k's interval `ci` (a fake)."""
    return Fit(metric, cls, k, ci, {}, None, (), 8, best=cls, at_least=cls, at_most=cls)


def test_a_fit_without_a_class_is_left_alone() -> None:
    runs = _runs(_sort, _two_threads)
    empty = Fit("wall_s", INCONCLUSIVE, None, None, {}, None, (), 0)
    fits = {"wall_s": empty, "cpu_s": _settled("cpu_s", "n log n", 1.2, (1.1, 1.3))}
    assert parallel_bound(fits, runs) == (fits, [])


def test_a_sweep_that_counted_the_work_is_not_advised_to_count_it() -> None:
    """With the work counted, the doubt's sentence names no meter to count it with."""
    runs = _runs(_sort, _two_threads)
    fits = {"wall_s": _settled("wall_s", "n", 0.93, (0.85, 1.01)),
            "cpu_s": _settled("cpu_s", "n log n", 1.20, (1.09, 1.31))}
    _, advised = parallel_bound(fits, runs)
    _, counted = parallel_bound(fits, runs, work="instructions")
    assert "`--meter instructions`" in advised[0]
    assert "--meter" not in counted[0] and "more CPUs busy" in counted[0]
