"""`--callgrind auto` in a profile: its budget is the timed runs plus the sampling, and a
skipped count is a note and a record of what `--callgrind on` would cost (fakes only)."""

from __future__ import annotations

from typing import Any

import pytest

from quadscope.commands import profile as command
from quadscope.model import Measurement, Run, Sweep
from quadscope.profile import callgrind, exact_attach
from quadscope.profile.callgrind import CallgrindSkipped
from quadscope.profile.records import Attribution

SWEEP = Sweep(id=4, name="t", mode="sizes", command=("./prog", "{n}"), sizes=(1, 2, 3, 4))
RUNS = [Run(4, i, "A", n, 0, False, 0.0, Measurement(wall_s=0.25, exit_code=0))
        for i, n in enumerate(SWEEP.sizes)]


def _sampled() -> Attribution:
    return Attribution(4, (1, 2, 3, 4), "perf", "cpu-clock", (1, 2, 3, 4), (), (), "", "", True)


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    got: dict[str, Any] = {}

    def fake_count(sweep: Sweep, runs: Any, **kw: Any) -> Any:
        got.update(kw)
        raise CallgrindSkipped("Callgrind skipped: its 4 counts would take about 12.0 s",
                               predicted_s=12.0, budget_s=kw["budget_s"], spent_s=0.0)

    monkeypatch.setattr(callgrind, "count_sweep", fake_count)
    monkeypatch.setattr("quadscope.measure.exact.find_valgrind", lambda: "valgrind")
    monkeypatch.setattr(exact_attach, "wants_exact", lambda _cmd: True)
    return got


def test_auto_budget_is_runs_plus_sampling_and_a_skip_is_recorded(seen: dict[str, Any]) -> None:
    a = command._with_exact("auto", SWEEP, RUNS, _sampled(), sampled_s=9.0)
    assert seen["strict"] is True
    assert seen["budget_s"] == pytest.approx(1.0 + 9.0)
    assert seen["budget_what"] == "the timed runs and the sampling"
    assert a.extra["callgrind"] == {"skipped": True, "predicted_s": 12.0,
                                    "budget_s": pytest.approx(10.0), "spent_s": 0.0}
    assert a.notes[-1].startswith("Callgrind skipped")


def test_on_lets_the_skip_through_as_an_error(seen: dict[str, Any]) -> None:
    """`on` never skips: a strict=False count does not raise CallgrindSkipped, but a fake
    that does is not swallowed either."""
    with pytest.raises(CallgrindSkipped):
        command._with_exact("on", SWEEP, RUNS, _sampled(), sampled_s=9.0)
    assert seen["strict"] is False
