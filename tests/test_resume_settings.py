"""`--resume` measures as the interrupted sweep did: every setting that shapes the runs is stored.

`--fork` (how a python: target is called) and `--until` (the metrics an
adaptive sweep waits for) used to be forgotten, so a resumed sweep mixed
in-process batches with forked calls, or ran past what was asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quadscope.cli import main
from quadscope.errors import QuadscopeError
from quadscope.host import Host
from quadscope.measure.clock import FakeClock
from quadscope.model import Sweep
from quadscope.run.spec import SweepSpec, new_sweep
from quadscope.store import SqliteStore


class _Chosen(QuadscopeError):
    """Raised by the fakes once they have recorded their arguments: a clean exit 99."""

    exit_code = 99


def test_new_sweep_stores_fork_and_until_and_they_round_trip() -> None:
    """The spec's fork and until reach the stored Sweep and survive its JSON form."""
    spec = SweepSpec(command=("python:m:f", "{n}"), mode="adaptive", fork=True,
                     until=("wall_s", "page_faults"))
    sweep = new_sweep(spec, clock=FakeClock(), counters="rusage", counters_note="", host=Host())
    assert (sweep.fork, sweep.until) == (True, ("wall_s", "page_faults"))
    again = Sweep.from_dict(sweep.to_dict())
    assert (again.fork, again.until) == (True, ("wall_s", "page_faults"))


def test_a_sweep_stored_before_these_fields_reads_as_in_process_and_all_metrics() -> None:
    """An older stored sweep (no fork, no until) resumes as it ran: in-process, every metric."""
    d = new_sweep(SweepSpec(command=("prog", "{n}")), clock=FakeClock(), counters="rusage",
                  counters_note="", host=Host()).to_dict()
    del d["fork"], d["until"]
    old = Sweep.from_dict(d)
    assert (old.fork, old.until) == (False, ())


@pytest.mark.parametrize("fork", [True, False])
def test_resume_chooses_the_executor_with_the_stored_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork: bool
) -> None:
    """`run --resume` hands choose_measuring the fork the sweep was started with."""
    db = tmp_path / "r.db"
    spec = SweepSpec(command=("python:m:f", "{n}"), sizes=(1, 2, 3, 4), fork=fork)
    with SqliteStore(db) as store:
        sweep = store.create_sweep(new_sweep(spec, clock=FakeClock(), counters="rusage",
                                             counters_note="", host=Host()))
        store.set_status(sweep.id, "interrupted")
    seen: dict[str, Any] = {}

    def choose(command: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise _Chosen

    monkeypatch.setattr("quadscope.meters.choose_measuring", choose)
    assert main(["run", "--db", str(db), "--resume", str(sweep.id)]) == _Chosen.exit_code
    assert seen["fork"] is fork


def test_resume_of_an_adaptive_sweep_waits_for_the_stored_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resumed adaptive plan is built with the sweep's --until metrics."""
    from quadscope.run import adaptive, runner

    spec = SweepSpec(command=("prog", "{n}"), mode="adaptive", until=("page_faults",))
    seen: dict[str, Any] = {}

    class Plan:
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)
            raise _Chosen

    monkeypatch.setattr(adaptive, "AdaptivePlan", Plan)
    with SqliteStore(tmp_path / "r.db") as store:
        sweep = store.create_sweep(new_sweep(spec, clock=FakeClock(), counters="rusage",
                                             counters_note="", host=Host()))
        store.set_status(sweep.id, "interrupted")
        with pytest.raises(_Chosen):
            runner.resume_sweep(store.get_sweep(str(sweep.id)), executor=None,  # type: ignore[arg-type]
                                clock=FakeClock(), store=store)
    assert seen["until"] == ("page_faults",)
