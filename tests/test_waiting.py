"""Wall time that outgrows CPU time while the runs are preempted: widened to CPU time's floor."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tests.conftest import measurement

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.headline import time_fit
from quadscope.analyse.waiting import preempted, wait_bound, waited
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit, Run

SIZES = tuple(4000 * 2**i for i in range(8))  # 4k..512k


def _runs(wait: Callable[[float], float], *, preempted: float = 150.0,
          voluntary: Callable[[float], float] = lambda n: 1.0) -> list[Run]:
    """Linear CPU time (2 ms at 4k, 1% noise); wall time = CPU time × wait(n); context
    switches: `preempted` involuntary at the largest size (scaled by n below it),
    `voluntary(n)` voluntary."""
    rng = np.random.default_rng(3)
    out = []
    for i, n in enumerate(np.repeat(SIZES, 3)):
        cpu = 2e-3 * n / SIZES[0] * (1 + 0.01 * rng.standard_normal())
        m = measurement(cpu * wait(float(n)), user_s=cpu,
                        involuntary_ctx_switches=round(preempted * n / SIZES[-1]),
                        voluntary_ctx_switches=round(voluntary(float(n))))
        out.append(Run(sweep_id=1, seq=i, variant="A", size_n=int(n), repeat=i % 3,
                       warmup=False, started_at=0.0, measurement=m))
    return out


def _rising(n: float) -> float:
    """Waiting for a CPU that grows with the run's length, as n (1× to 128×, far more than
    a busy machine makes; so that wall time settles a class, n²)."""
    return n / SIZES[0]


def test_wall_time_gaining_growth_from_preemption_is_widened_to_cpu_times_class() -> None:
    """cache_step under busy: CPU time n, wall time settling faster as the runs waited
    1.4× at 4k and 7× at 1M, preempted 151 times, 1 voluntary switch."""
    runs = _runs(_rising)
    fits, _ = fit_runs(runs, metrics=("wall_s", "cpu_s"))
    assert fits["wall_s"].confident and fits["wall_s"].cls == "n^2"
    assert fits["cpu_s"].cls == "n"
    widened, notes = wait_bound(fits, runs)
    wall = widened["wall_s"]
    assert not wall.confident and (wall.at_least, wall.at_most) == ("n", fits["wall_s"].cls)
    assert wall.doubts[-1].check == "waiting" and wall.doubts[-1].meter == "instructions"
    assert "waited for a CPU" in wall.reason and "128.0×" in wall.reason
    assert len(notes) == 1 and notes[0].startswith("wall_s: ")
    assert time_fit(widened) is widened["cpu_s"]  # CPU time leads the headline


def test_a_program_that_sleeps_or_a_quiet_machine_keeps_wall_time() -> None:
    sleeping = _runs(_rising, voluntary=lambda n: n / 1000)  # it blocks more as n grows
    quiet = _runs(lambda n: 1.05)
    unpreempted = _runs(_rising, preempted=2)
    for runs in (sleeping, quiet, unpreempted):
        fits, _ = fit_runs(runs, metrics=("wall_s", "cpu_s"))
        assert waited(runs) is None
        assert wait_bound(fits, runs) == (fits, [])


def _fit(metric: str, at_least: str, at_most: str, k: float, ci: tuple[float, float]) -> Fit:
    """An unsettled fit with bracket [at_least, at_most] and k's interval `ci` (a fake)."""
    return Fit(metric, INCONCLUSIVE, k, ci, {}, None, (), 8, best=at_least, at_least=at_least,
               at_most=at_most)


def test_an_unsettled_wall_time_wider_than_cpu_times_while_preempted_lets_cpu_time_lead() -> None:
    """mawk `s = s "x"` under busy: the runs waited 3.5–4.4× their CPU time at every size
    (no rise), and wall time read "√n … n²" (k = 1.14 [0.93, 1.36]) beside CPU time's
    "n² … n³" (k = 2.58 [2.41, 2.76]): wall time keeps its bracket, gains a "waiting"
    doubt, and CPU time leads the headline."""
    runs = _runs(lambda n: 3.0)
    fits = {"wall_s": _fit("wall_s", "sqrt n", "n^2", 1.14, (0.93, 1.36)),
            "cpu_s": _fit("cpu_s", "n^2", "n^3", 2.58, (2.41, 2.76))}
    assert waited(runs) is None  # the waiting did not grow: the settled-class rule is silent
    numbers = preempted(runs)
    assert numbers is not None and abs(numbers["ratio_hi"] - 3.0) < 0.1
    bound, notes = wait_bound(fits, runs)
    wall = bound["wall_s"]
    assert (wall.at_least, wall.at_most) == ("sqrt n", "n^2") and wall.doubts[-1].check == "waiting"
    assert len(notes) == 1 and "waited for a CPU" in notes[0]
    assert time_fit(bound) is bound["cpu_s"]
    assert time_fit(fits) is fits["wall_s"]  # without the doubt, wall time's bracket leads


def test_wall_time_keeps_the_lead_unless_the_runs_were_preempted_and_cpu_time_is_narrower() -> None:
    fits = {"wall_s": _fit("wall_s", "sqrt n", "n^2", 1.14, (0.93, 1.36)),
            "cpu_s": _fit("cpu_s", "n^2", "n^3", 2.58, (2.41, 2.76))}
    as_wide = {**fits, "cpu_s": _fit("cpu_s", "n^2", "n^3", 2.58, (2.38, 2.80))}
    for runs, given in ((_runs(lambda n: 1.05), fits),  # a quiet machine
                        (_runs(lambda n: 3.0, preempted=2), fits),  # waiting, not preempted
                        (_runs(lambda n: 3.0, voluntary=lambda n: n / 1000), fits),  # it sleeps
                        (_runs(lambda n: 3.0), as_wide)):  # CPU time no narrower
        assert wait_bound(given, runs) == (given, [])


def test_a_wall_time_bracket_above_cpu_times_floor_is_widened_as_a_class_is() -> None:
    """mawk `s = s "x"` under busy: wall time read "n³ above n ≈ 24,000" (a bracket of n³
    alone, above a change of regime) while the runs waited 2× at the smallest size and 3.9×
    at the largest, and CPU time read "n² … n³": wall time's floor is widened to n²."""
    runs = _runs(_rising)
    fits = {"wall_s": _fit("wall_s", "n^3", "n^3", 2.83, (2.62, 3.04)),
            "cpu_s": _fit("cpu_s", "n^2", "n^3", 2.46, (2.20, 2.73))}
    bound, notes = wait_bound(fits, runs)
    wall = bound["wall_s"]
    assert (wall.at_least, wall.at_most) == ("n^2", "n^3") and wall.doubts[-1].check == "waiting"
    assert len(notes) == 1 and time_fit(bound) is bound["cpu_s"]
