"""The driver's side of a fleet: store what each node sends, as it arrives, and say what died.

Contract: only the `Store` methods every back end has (create_sweep, add_run,
update_sweep, set_status, put_blob) are used, and only from the calling
thread. Every stored sweep carries its machine in `host` (its `Host` record's
`hostname` and `ray_node_id`, beside the kernel and provenance the node
measured); a run sweep is named `<name or "fleet">@<label>`, a doctor's summary
sweep `doctor@<label>` (its probe sweeps keep their names).

- `store_doctor(store, node, result)` copies the doctor sweeps, runs and blobs
  of `result` (the node's `tasks.NodeDoctor`) into `store` under new ids,
  rewriting the sweep ids the blobs hold, and returns the node's
  `DoctorReport` pointing at the stored summary.
- `stream_sweeps(store, streams, died, name="", progress=None)` consumes one
  event stream per node (`streams`: (node, events) pairs; each iterated in
  its own thread, so a slow node never holds back a fast one) and stores each
  run the moment it arrives. A stream that raises (the node died, its worker
  crashed, the task became unschedulable) leaves its sweep "interrupted" with
  every run already received and `died(exception)` as its sentence; a node
  that reports "failed" before starting has no sweep. Returns one `NodeOutcome`
  per node, in the order given.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from quadscope.doctor.records import DoctorReport, ProbeResult, doctor_from_dict
from quadscope.fleet.cluster import FleetNode
from quadscope.fleet.tasks import NodeDoctor, NodeEvent
from quadscope.host import Host
from quadscope.model import Sweep
from quadscope.store import Store


def _machine_host(sweep: Sweep, node: FleetNode, hostname: str) -> Host:
    return dataclasses.replace(sweep.host, hostname=hostname or node.hostname,
                               ray_node_id=node.node_id)


def _renumbered_result(result: ProbeResult, ids: Mapping[int, int]) -> ProbeResult:
    """A probe's result with the node's ids of its sweeps made the store's (0: not copied)."""
    if result.ran is None:
        return result
    sweeps = {label: ids.get(int(i), 0) for label, i in result.ran.sweeps.items()}
    return dataclasses.replace(result, ran=dataclasses.replace(result.ran, sweeps=sweeps))


def _renumbered_report(report: DoctorReport, ids: Mapping[int, int]) -> DoctorReport:
    """A node's doctor report with its summary's and every probe's sweep ids made the store's."""
    return dataclasses.replace(report, summary_sweep_id=ids.get(report.summary_sweep_id, 0),
                               results=tuple(_renumbered_result(r, ids) for r in report.results))


def _renumbered_blob(blob: Mapping[str, Any], ids: Mapping[int, int]) -> dict[str, Any]:
    record = doctor_from_dict(blob)
    if isinstance(record, DoctorReport):
        return _renumbered_report(record, ids).to_dict()
    return _renumbered_result(record, ids).to_dict()


def store_doctor(store: Store, node: FleetNode, result: NodeDoctor) -> DoctorReport:
    ids: dict[int, int] = {}
    for copied in result.sweeps:
        s = copied.sweep
        name = f"{s.name}@{node.label}" if s.name == "doctor" else s.name
        stored = store.create_sweep(dataclasses.replace(
            s, name=name, host=_machine_host(s, node, result.node.hostname)))
        ids[s.id] = stored.id
        for run in copied.runs:
            store.add_run(dataclasses.replace(run, sweep_id=stored.id))
    for copied in result.sweeps:
        for key, blob in copied.blobs.items():  # each a doctor blob (tasks.BLOB_KEYS)
            store.put_blob(ids[copied.sweep.id], key, _renumbered_blob(blob, ids))
    return _renumbered_report(result.report, ids)


@dataclass(frozen=True, slots=True)
class NodeOutcome:
    """How one node's sweep ended: stored as `sweep_id` (0: never started) with `runs` runs."""

    node: FleetNode
    status: str  # complete | interrupted | failed | died
    sweep_id: int = 0
    runs: int = 0
    total_runs: int | None = None
    error: str = ""

    @property
    def sentence(self) -> str:
        """One line for the user; empty for a node whose sweep completed."""
        of = f" of {self.total_runs}" if self.total_runs else ""
        kept = (f"; its runs are kept as sweep {self.sweep_id}, marked interrupted"
                if self.sweep_id else "")
        if self.status == "died":
            return f"node {self.node.label} died after {self.runs}{of} runs{kept} ({self.error})"
        if self.status == "failed" and not self.sweep_id:
            return f"node {self.node.label} could not run the sweep: {self.error}"
        if self.status in ("failed", "interrupted"):
            return f"node {self.node.label} stopped after {self.runs}{of} runs{kept}: {self.error}"
        return ""


class FleetProgress(Protocol):
    def arrived(self, node: FleetNode, runs: int, total_runs: int | None) -> None: ...


class NoFleetProgress:
    def arrived(self, node: FleetNode, runs: int, total_runs: int | None) -> None:
        pass


_DONE = object()


def _pump(node: FleetNode, stream: Iterable[NodeEvent],
          out: queue.Queue[tuple[FleetNode, Any]], died: Callable[[BaseException], str]) -> None:
    try:
        for event in stream:
            out.put((node, event))
    except Exception as e:  # Ray's errors for a dead node or worker; told to the main thread
        out.put((node, died(e)))
    out.put((node, _DONE))


@dataclass
class _Tally:
    sweep: Sweep | None = None
    runs: int = 0
    total_runs: int | None = None
    status: str = "died"
    error: str = "its stream ended before the sweep did"


def stream_sweeps(store: Store, streams: Sequence[tuple[FleetNode, Iterable[NodeEvent]]],
                  died: Callable[[BaseException], str], name: str = "",
                  progress: FleetProgress | None = None) -> tuple[NodeOutcome, ...]:
    """Store every node's runs as they arrive (see the module docstring)."""
    progress = progress or NoFleetProgress()
    out: queue.Queue[tuple[FleetNode, Any]] = queue.Queue()
    tallies = {n.node_id: _Tally() for n, _ in streams}
    threads = [threading.Thread(target=_pump, args=(n, s, out, died), daemon=True,
                                name=f"quadscope-fleet-{n.label}") for n, s in streams]
    for t in threads:
        t.start()
    open_streams = len(threads)
    try:
        while open_streams:
            node, item = out.get()
            tally = tallies[node.node_id]
            if item is _DONE:
                open_streams -= 1
            elif isinstance(item, str):
                tally.status, tally.error = "died", item
            else:
                _store_event(store, node, item, tally, name)
                progress.arrived(node, tally.runs, tally.total_runs)
    finally:
        for t_node, _ in streams:
            tally = tallies[t_node.node_id]
            if tally.sweep is not None and tally.status != "complete":
                store.set_status(tally.sweep.id, "interrupted")
    return tuple(NodeOutcome(n, t.status, t.sweep.id if t.sweep else 0, t.runs, t.total_runs,
                             t.error)
                 for n, _ in streams for t in [tallies[n.node_id]])


def _store_event(store: Store, node: FleetNode, event: NodeEvent, tally: _Tally,
                 name: str) -> None:
    if event.kind == "started" and event.sweep is not None:
        s = event.sweep
        label = f"{name or 'fleet'}@{node.label}"
        tally.sweep = store.create_sweep(dataclasses.replace(
            s, name=label, status="running", host=_machine_host(s, node, event.node.hostname)))
        tally.total_runs = event.total_runs
    elif event.kind == "run" and event.run is not None and tally.sweep is not None:
        store.add_run(dataclasses.replace(event.run, sweep_id=tally.sweep.id))
        tally.runs += 1
    elif event.kind == "ended" and event.sweep is not None and tally.sweep is not None:
        ended = dataclasses.replace(event.sweep, id=tally.sweep.id, name=tally.sweep.name,
                                    host=tally.sweep.host)
        store.update_sweep(ended)
        tally.sweep, tally.status, tally.error = ended, "complete", ""
    elif event.kind == "failed":
        tally.status, tally.error = "failed", event.error
