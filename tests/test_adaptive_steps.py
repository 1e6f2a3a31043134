"""Adaptive sweeps on a fake clock spend their time where it buys a verdict.

Looks (fits of the runs so far) are paid for like runs, intermediate looks are
cheap and the stopping look is the report's, steep costs are priced before
they are run, and the sizes a fit needs are made up below the largest.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from tests.conftest import fake_executor, measurement

import quadscope.run.adaptive as adaptive
from quadscope.analyse.analysis import analyse, fit_runs
from quadscope.measure.clock import FakeClock
from quadscope.model import Run
from quadscope.run.adaptive import MAX_SKIPPED_LOOKS, MIN_SIZES, estimate_wall_s
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store


class _Looks:
    """Every fit adaptive mode makes (runs seen, sizes, replicates); each moves `clock` by `cost_s`."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.seen: list[dict[str, Any]] = []
        self.clock: FakeClock | None = None
        self.cost_s = 0.0

    def __call__(self, runs: Sequence[Run], **kw: Any) -> Any:
        self.seen.append({"runs": len(runs), "sizes": len({r.size_n for r in runs}),
                          "n_boot": kw.get("n_boot")})
        if self.clock is not None:
            self.clock.advance(self.cost_s)
        return self.real(runs, **kw)

    def sizes_at_each(self) -> list[int]:
        """The number of sizes at each look (a look refitted with full replicates counts once)."""
        out: list[int] = []
        last_runs = -1
        for look in self.seen:
            if look["runs"] != last_runs:
                out.append(look["sizes"])
            last_runs = look["runs"]
        return out


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Looks]:
    spy = _Looks(adaptive.fit_runs)
    monkeypatch.setattr(adaptive, "fit_runs", spy)
    yield spy


def _sweep(store: Store, clock: FakeClock, cost: Callable[[int], float], start_n: int,
           budget_s: float = 30.0) -> int:
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=budget_s, start_n=start_n,
                     until=("wall_s",))
    return run_sweep(spec, executor=fake_executor(cost, clock), clock=clock, store=store).id


def test_looks_dearer_than_the_runs_they_judge_are_taken_less_often(
        store: Store, clock: FakeClock, looks: _Looks) -> None:
    """Millisecond runs, 0.2 s looks: growth goes MAX_SKIPPED_LOOKS steps between looks, not one."""
    looks.clock, looks.cost_s = clock, 0.2
    _sweep(store, clock, lambda n: 1e-3 + 1e-12 * n, start_n=1000)
    growing = looks.sizes_at_each()
    steps = [b - a for a, b in itertools.pairwise(growing) if b > a]
    assert steps and all(s == MAX_SKIPPED_LOOKS + 1 for s in steps)


def test_free_looks_come_after_every_step(store: Store, clock: FakeClock, looks: _Looks) -> None:
    """The same sweep on a clock that looks do not move: a look after every size."""
    _sweep(store, clock, lambda n: 1e-3 + 1e-12 * n, start_n=1000)
    growing = looks.sizes_at_each()
    assert len(growing) > 2 and all(b - a <= 1 for a, b in itertools.pairwise(growing))


def test_the_look_that_stops_a_sweep_is_the_full_analysis(store: Store, clock: FakeClock,
                                                           looks: _Looks) -> None:
    """Looks use LOOK_BOOT replicates; the last is refitted as the report fits it, and agrees."""
    sweep_id = _sweep(store, clock, lambda n: 1e-3 + 1e-9 * n**2, start_n=100)
    assert [look["n_boot"] for look in looks.seen[:-1]] == [adaptive.LOOK_BOOT] * (len(looks.seen) - 1)
    assert looks.seen[-1]["n_boot"] is None
    assert looks.seen[-1]["runs"] == looks.seen[-2]["runs"]  # the same runs, fitted in full
    analysis = analyse(store.get_sweep(sweep_id), store.runs(sweep_id))
    assert analysis.fits["A"]["wall_s"].cls == "n^2"


def test_two_steep_sizes_are_priced_as_an_exponential() -> None:
    """A slope steeper than any polynomial between two sizes is priced as cⁿ through them."""
    runs = [Run(1, i, "A", n, 0, False, 0.0, measurement(1e-6 * 2.0**n))
            for i, n in enumerate((20, 30))]
    assert estimate_wall_s(runs, 34) == pytest.approx(1e-6 * 2.0**34, rel=1e-6)


def test_a_size_whose_first_run_shows_its_repeats_unaffordable_ends_growth(
        store: Store, clock: FakeClock) -> None:
    """A cost that jumps ×15 past n = 40 (priced at 0.8 s, measured 6 s): one run there, no more."""
    sweep_id = _sweep(store, clock, lambda n: 0.01 * n if n <= 40 else 6.0, start_n=5)
    runs = [r for r in store.runs(sweep_id) if not r.warmup]
    past = [r.size_n for r in runs if r.size_n > 40]
    assert len(past) == 1
    assert all(r.size_n <= past[0] for r in runs)
    assert not any(r.measurement.timed_out for r in runs)
    assert store.get_sweep(sweep_id).status == "complete"


def test_steep_growth_makes_up_its_sizes_below_the_largest(store: Store, clock: FakeClock) -> None:
    """n³ from n = 100: the four sizes a fit needs come below the second size, not above it."""
    sweep_id = _sweep(store, clock, lambda n: 1e-4 + 1e-9 * n**3, start_n=100)
    order: list[int] = []
    for r in store.runs(sweep_id):
        if not r.warmup and r.size_n not in order:
            order.append(r.size_n)
    assert len(order) >= MIN_SIZES
    assert max(order[:MIN_SIZES]) == order[1]


# The runs of a calibration sweep (n → n² at 64k, 1% noise) that stopped at 128k on a
# confident "n", the largest size 25% above the line (bench/calibration.py, adaptive).
_BENDS = {1000: (6.385e-05, 6.359e-05, 6.379e-05), 2000: (1.266e-4, 1.289e-4, 1.27e-4),
          2828: (1.831e-4, 1.816e-4, 1.82e-4), 4000: (2.536e-4, 2.54e-4, 2.578e-4),
          8000: (5.021e-4, 5.152e-4, 5.124e-4), 16000: (1.02e-3, 1.023e-3, 1.018e-3),
          32000: (2.049e-3, 2.014e-3, 2.005e-3), 64000: (4.062e-3, 4.076e-3, 4.087e-3),
          128000: (1.038e-2, 1.02e-2, 9.954e-3)}


def _runs(values: dict[int, tuple[float, ...]]) -> list[Run]:
    flat = [(n, rep, v) for n, vs in values.items() for rep, v in enumerate(vs)]
    return [Run(1, i, "A", n, rep, False, 0.0, measurement(v)) for i, (n, rep, v) in enumerate(flat)]


def test_a_verdict_the_largest_size_climbs_away_from_does_not_stop_growth() -> None:
    """The fit says "n" with the top size out; the slope 64k → 128k (1.3) says look further."""
    runs = _runs(_BENDS)
    fit = fit_runs(runs, metrics=("wall_s",))[0]["wall_s"]
    assert fit.cls == "n" and fit.confident
    assert adaptive._bends_up(runs, "wall_s", fit)
    # The same sizes on the line, with the same 1% noise: nothing holds the verdict back.
    line = _runs({n: (6.3e-8 * n, 6.4e-8 * n, 6.5e-8 * n) for n in _BENDS})
    assert not adaptive._bends_up(line, "wall_s", fit_runs(line, metrics=("wall_s",))[0]["wall_s"])


def test_a_machine_that_drifts_over_an_adaptive_sweep_does_not_tilt_k(
        store: Store, clock: FakeClock) -> None:
    """Linear cost, 1% noise, the machine 10% slower by the 60th run: sizes grow with time, so
    the drift would pass for growth; the smallest size is run again after each growth step,
    and the fit takes the drift those runs show out. The interval for k holds 1."""
    calls = itertools.count()
    rng = np.random.default_rng(3)

    def cost(n: int) -> float:
        drift = 1.0 + 0.1 * min(next(calls) / 59, 1.0)
        return float(1e-3 + 4e-7 * n) * drift * math.exp(0.01 * float(rng.standard_normal()))

    sweep_id = _sweep(store, clock, cost, start_n=1000)
    runs = [r for r in store.runs(sweep_id) if not r.warmup]
    smallest = min(r.size_n for r in runs)
    at_smallest = [r.seq for r in runs if r.size_n == smallest]
    later = [r.seq for r in runs if r.size_n > 4 * smallest]
    assert later and max(at_smallest) > min(later)  # revisited after growing
    fit = fit_runs(runs, seed=0, metrics=("wall_s",))[0]["wall_s"]
    assert fit.exponent_ci is not None and fit.exponent_ci[0] <= 1.0 <= fit.exponent_ci[1], fit


def test_one_stall_at_a_growth_step_does_not_end_growth(store: Store, clock: FakeClock) -> None:
    """A linear cost whose first run at n = 4000 stalls 80 ms (over its short early cap):
    the step is tried once more, and n grows on past it."""
    stalled: list[int] = []

    def cost(n: int) -> float:
        if n == 4000 and not stalled:
            stalled.append(n)
            return 1e-3 + 1e-6 * n + 0.08
        return 1e-3 + 1e-6 * n

    sweep_id = _sweep(store, clock, cost, start_n=1000)
    sizes = {r.size_n for r in store.runs(sweep_id) if r.measurement.ok}
    assert stalled and 4000 in sizes and max(sizes) >= 64000
