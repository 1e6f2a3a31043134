"""What runs on each node of the fleet: the doctor, or one whole sweep streamed back run by run.

Contract: these functions run inside a Ray task on one node (quadscope must
be installed there); they import no Ray and store nothing the driver keeps.
Each measures into a scratch SQLite store in a temporary directory (the
ordinary runner and doctor need a store) that is deleted when it returns, or
when the node's process exits mid-sweep (`scratch`: the sweep's daemon thread
runs no `finally` then).

- `doctor_on_node(names, quick, budget_s, no_perf)` runs the doctor and
  returns a `NodeDoctor`: the node's identity, its `DoctorReport` and every
  sweep with its runs and "doctor" blob, for the driver to store.
- `sweep_on_node(spec, no_perf, fork)` is a generator (a Ray streaming task):
  it yields `NodeEvent`s: "started" with the sweep as created, one "run" per
  finished run as soon as it is stored, then "ended" with the sweep as it
  ended; or "failed" with one sentence (the command is missing here, or the
  sweep could not go on). The sweep runs in a thread of the task so each run
  is yielded while the next is measured. The whole sweep runs on this node,
  through the same session as `quadscope run` (`run.session`: the node's host
  facts and skew checks, and its name).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import shutil
import socket
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope.doctor.records import DoctorReport
from quadscope.errors import QuadscopeError
from quadscope.model import Run, Sweep
from quadscope.run.spec import SweepSpec
from quadscope.scratch import make_scratch
from quadscope.store import SqliteStore

if TYPE_CHECKING:  # the session is imported where a node runs a sweep
    from quadscope.run.session import Machine

BLOB_KEYS = ("doctor",)  # what the doctor attaches to its sweeps (doctor.runner.BLOB_KEY)


@dataclass(frozen=True, slots=True)
class NodeIdentity:
    node_id: str
    hostname: str
    pid: int

    @classmethod
    def here(cls) -> NodeIdentity:
        node_id = ""
        try:
            import ray  # present: this runs inside a Ray task

            node_id = ray.get_runtime_context().get_node_id()
        except (ImportError, RuntimeError):
            pass
        return cls(node_id, socket.gethostname(), os.getpid())


@dataclass(frozen=True, slots=True)
class CopiedSweep:
    """One sweep measured on a node: its record, its runs, and its blobs by key."""

    sweep: Sweep
    runs: tuple[Run, ...]
    blobs: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NodeDoctor:
    node: NodeIdentity
    report: DoctorReport
    sweeps: tuple[CopiedSweep, ...]


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """One message of a node's sweep stream (see the module docstring)."""

    kind: str  # started | run | ended | failed
    node: NodeIdentity
    sweep: Sweep | None = None
    run: Run | None = None
    total_runs: int | None = None
    error: str = ""


def _scratch() -> Path:
    return make_scratch("fleet")


def doctor_on_node(names: Sequence[str], quick: bool, budget_s: float,
                   no_perf: bool) -> NodeDoctor:
    from quadscope.doctor import select
    from quadscope.doctor.machine import machine_info
    from quadscope.doctor.runner import default_tools, run_doctor
    from quadscope.measure.clock import SystemClock

    node = NodeIdentity.here()
    scratch = _scratch()
    try:
        machine = {**machine_info().to_dict(), "hostname": node.hostname,
                   "ray_node_id": node.node_id}
        with SqliteStore(scratch / "doctor.db") as store:
            report = run_doctor(select(names), quick=quick, budget_s=budget_s, store=store,
                                clock=SystemClock(), tools=default_tools(no_perf),
                                machine=machine)
            sweeps = tuple(
                CopiedSweep(s, tuple(store.runs(s.id)),
                            {k: b for k in BLOB_KEYS if (b := store.get_blob(s.id, k))})
                for s, _ in reversed(store.list_sweeps())
            )
        return NodeDoctor(node, report, sweeps)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class _Forward:
    """The runner's progress hook: every stored run goes to the stream at once."""

    def __init__(self, out: queue.Queue[NodeEvent], node: NodeIdentity) -> None:
        self._out = out
        self._node = node

    def started(self, sweep: Sweep, total_runs: int | None) -> None:
        self._out.put(NodeEvent("started", self._node, sweep=sweep, total_runs=total_runs))

    def ran(self, run: Run, done: int, elapsed_s: float) -> None:
        self._out.put(NodeEvent("run", self._node, run=run))


def _check_command(spec: SweepSpec) -> None:
    """The command (and the B command) must exist on this node: `ProgramError` otherwise."""
    from quadscope.measure.launcher import resolve_program
    from quadscope.measure.pyfunc import PREFIX, resolve_function

    for cmd, shell in ((spec.command, spec.shell), (spec.vs_command, spec.vs_shell)):
        if cmd and cmd[0].startswith(PREFIX):
            if "" not in sys.path:
                sys.path.insert(0, "")
            resolve_function(cmd[0])
        elif cmd and not shell:
            resolve_program(cmd[0])


def _node_machine(node: NodeIdentity) -> Machine:
    """This machine as a fleet node: its facts name it by Ray's hostname and node id."""
    from quadscope.run import session

    here = session.Machine.real()
    return dataclasses.replace(here, host_info=lambda: dataclasses.replace(
        here.host_info(), hostname=node.hostname, ray_node_id=node.node_id))


def _sweep(spec: SweepSpec, no_perf: bool, fork: bool, out: queue.Queue[NodeEvent],
           node: NodeIdentity) -> None:
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    scratch = _scratch()
    try:
        _check_command(spec)
        measuring = session.choose(dataclasses.replace(spec, fork=fork), no_perf=no_perf)
        machine = _node_machine(node)
        facts = session.read_host(machine, spec=spec)
        with SqliteStore(scratch / "sweep.db") as store:
            ended = session.start(spec, store=store, clock=SystemClock(), machine=machine,
                                  measuring=measuring, facts=facts,
                                  progress=_Forward(out, node))
        out.put(NodeEvent("ended", node, sweep=ended))
    except QuadscopeError as e:
        out.put(NodeEvent("failed", node, error=str(e)))
    except Exception as e:  # reported by the driver as this node's failure, not a crash there
        out.put(NodeEvent("failed", node, error=f"{type(e).__name__}: {e}"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def sweep_on_node(spec: SweepSpec, no_perf: bool, fork: bool) -> Iterator[NodeEvent]:
    node = NodeIdentity.here()
    out: queue.Queue[NodeEvent] = queue.Queue()
    worker = threading.Thread(target=_sweep, args=(spec, no_perf, fork, out, node),
                              name="quadscope-fleet-sweep", daemon=True)
    worker.start()
    while True:
        event = out.get()
        yield event
        if event.kind in ("ended", "failed"):
            return
