"""Adaptive sweeps on a fake clock run exactly the recorded runs, in order, with the same timeouts.

The sequences in tests/fixtures/adaptive/runs.json were recorded from the
adaptive loop as it was before it became a plan handing the runner batches;
any change to what the adaptive sweep decides shows up here as a diff (sizes,
counts and order exactly; timeouts and start times within `approx`'s tolerance).
Set QUADSCOPE_UPDATE_SNAPSHOTS=1 to re-record them (and read the diff).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import cost_model

from approx import same
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor, SerialExecutor
from quadscope.model import Measurement
from quadscope.run.runner import resume_sweep, run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore, Store

FIXTURE = Path(__file__).parent / "fixtures" / "adaptive" / "runs.json"


class _Recorder(SerialExecutor):
    """Passes every run to a fake executor, noting its timeout; Ctrl-C after `limit` runs."""

    def __init__(self, inner: FakeExecutor, limit: int | None = None) -> None:
        self.inner = inner
        self.limit = limit
        self.timeouts: list[float | None] = []

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        if self.limit is not None and len(self.timeouts) == self.limit:
            raise KeyboardInterrupt
        self.timeouts.append(timeout_s)
        return self.inner.execute(argv, timeout_s)


def _jitter(base: Callable[[int], float], pattern: tuple[float, ...]) -> Callable[[int], float]:
    """base(n) times the next factor of `pattern`, cycling: deterministic noise."""
    calls = [0]

    def cost(n: int) -> float:
        calls[0] += 1
        return base(n) * pattern[calls[0] % len(pattern)]

    return cost


def _rows(store: Store, sweep_id: int, timeouts: list[float | None]) -> list[list[Any]]:
    runs = store.runs(sweep_id)
    assert len(runs) == len(timeouts)
    return [[r.variant, r.size_n, r.repeat, r.warmup, t, r.started_at]
            for r, t in zip(runs, timeouts, strict=True)]


def _sweep(tmp_path: Path, cost: Callable[[int], float], spec: SweepSpec) -> dict[str, Any]:
    clock = FakeClock(start=1000.0)
    store = SqliteStore(tmp_path / "results.db")
    ex = _Recorder(FakeExecutor(cost_model(cost), clock))
    sweep = store.get_sweep(run_sweep(spec, executor=ex, clock=clock, store=store).id)
    return {"runs": _rows(store, sweep.id, ex.timeouts), "sizes": list(sweep.sizes),
            "status": sweep.status, "clock": clock.monotonic()}


def _interrupted_then_resumed(tmp_path: Path) -> dict[str, Any]:
    clock = FakeClock(start=1000.0)
    store = SqliteStore(tmp_path / "results.db")
    cost = cost_model(_jitter(lambda n: 2e-3 + 1e-7 * n**2, (1.0, 1.3)))
    first = _Recorder(FakeExecutor(cost, clock), limit=9)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=8.0, start_n=4,
                     timeout_s=2.0)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, executor=first, clock=clock, store=store)
    stopped = store.list_sweeps()[0][0]
    second = _Recorder(FakeExecutor(cost, clock))
    resume_sweep(stopped, executor=second, clock=clock, store=store)
    sweep = store.get_sweep(stopped.id)
    return {"runs": _rows(store, sweep.id, first.timeouts + second.timeouts),
            "sizes": list(sweep.sizes), "status": sweep.status, "clock": clock.monotonic(),
            "interrupted_sizes": list(stopped.sizes), "interrupted_status": stopped.status}


SCENARIOS: dict[str, Callable[[Path], dict[str, Any]]] = {
    # No --timeout: while growing, a run's timeout is 8× its predicted time (≥ 0.5 s), so the
    # steep cubic no longer spends the whole budget on its last size (it did before issue 9).
    "noisy_cubic_hits_budget": lambda tmp: _sweep(
        tmp, _jitter(lambda n: 1e-3 + 1e-9 * n**3, (0.5, 1.5)),
        SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=3.0, start_n=1)),
    # Runs reach --timeout at 8192: n steps back once to 5793, between it and 4096, and never
    # beyond 8192 (before issue 9, growth simply ended at 8192).
    "linear_times_out": lambda tmp: _sweep(
        tmp, _jitter(lambda n: 1e-4 * n, (0.5, 1.5)),
        SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=200.0, start_n=1,
                  timeout_s=1.0, until=("wall_s",))),
    # A/B with warm-ups, refinement where spread is wide, and a last run capped by the budget.
    "ab_spread_budget_and_timeout": lambda tmp: _sweep(
        tmp, _jitter(lambda n: 1e-3 + 1e-5 * n, (1.0, 0.7, 1.6)),
        SweepSpec(command=("a", "{n}"), vs_command=("b", "{n}"), mode="adaptive",
                  budget_s=12.0, start_n=16, repeat=3, warmup=2, timeout_s=0.4, seed=5)),
    "quadratic_interrupted_then_resumed": _interrupted_then_resumed,
    # A backtracking-regex-like cost, ×1.6 per step, from n = 20 with the default 30 s budget:
    # priced from the fit so far, no size is started that the budget cannot pay for.
    "exponential_within_budget": lambda tmp: _sweep(
        tmp, _jitter(lambda n: 1e-3 + 1e-6 * 1.6**n, (1.0, 1.1, 0.9)),
        SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=30.0, start_n=20)),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_adaptive_runs_match_the_recorded_sequence(name: str, tmp_path: Path) -> None:
    """(variant, size, repeat, warm-up, timeout, start) of every run, and the end state, as recorded."""
    got = json.loads(json.dumps(SCENARIOS[name](tmp_path)))
    recorded = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    if os.environ.get("QUADSCOPE_UPDATE_SNAPSHOTS"):
        recorded[name] = got
        FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    same(got, recorded[name], name)


def test_steep_growth_gets_its_sizes_within_the_budget(tmp_path: Path) -> None:
    """The ×1.6-per-step cost ends with no run cut short by the budget and ≥ 4 sizes measured."""
    got = SCENARIOS["exponential_within_budget"](tmp_path)
    assert got["status"] == "complete"
    assert len(got["sizes"]) >= 4
    assert got["clock"] - 1000.0 < 30.0
