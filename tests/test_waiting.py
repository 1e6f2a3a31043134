"""Wall time that outgrows CPU time while the runs are preempted: widened to CPU time's floor."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tests.conftest import measurement

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.headline import time_fit
from quadscope.analyse.waiting import wait_bound, waited
from quadscope.model import Run

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
