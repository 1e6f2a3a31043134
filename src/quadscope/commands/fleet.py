"""`doctor --fleet` and `run --fleet`: the same measurement on every node of a Ray cluster.

Contract: connect (bounded, `fleet.cluster.connect`) -> choose the live nodes
(`--fleet-label`) -> one task per node, pinned to it -> store on this machine
what each node sends (`fleet.collect`) -> print. `doctor_fleet` prints the
machine × probe table (as wide as the terminal) and one sentence per outlier
(`fleet.outliers`), and writes them with every output option whose renderer
has a fleet form (`render.fleet`; any other is refused before connecting);
`run_fleet` prints each machine's verdict, then how every machine differs
from the first (by label) that completed: class changes first, then
constants, then offsets (`analyse.compare` through `stored.combined`). A node
that dies, cannot run the command, or does not answer in time is one
sentence on stderr; the others' results stand. Exit 0 when every node
finished, `PARTIAL_EXIT` (12) when some did not, `FleetError` (11) when none
did.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator, Sequence
from types import ModuleType
from typing import Any

from quadscope import render
from quadscope.commands.common import (
    STDOUT,
    asked_outputs,
    check_outputs,
    emit,
    open_store,
    terminal_width,
)
from quadscope.doctor.base import Probe
from quadscope.errors import PARTIAL_FLEET_EXIT, FleetError, UsageError
from quadscope.fleet.cluster import FleetNode, alive_nodes, connect, parse_label, pinned, select_nodes
from quadscope.fleet.collect import FleetProgress, NodeOutcome, store_doctor, stream_sweeps
from quadscope.fleet.outliers import FleetDoctor, Machine, judge, table
from quadscope.fleet.tasks import NodeEvent, doctor_on_node, sweep_on_node
from quadscope.run.spec import SweepSpec
from quadscope.store import Store

PARTIAL_EXIT = PARTIAL_FLEET_EXIT
DOCTOR_GRACE_S = 300.0  # beyond the budget: compiling the helpers on a cold node, starting a worker
CHANGE_ORDER = ("class", "constant", "offset")


def _say(text: str) -> None:
    print(f"quadscope: {text}", file=sys.stderr, flush=True)


def why_failed(e: BaseException) -> str:
    """One line for a task that raised: Ray's exception class and its first line."""
    cause = getattr(e, "cause", None)
    shown = cause if isinstance(cause, BaseException) else e
    first = (str(shown).strip().splitlines() or [""])[0]
    return f"{type(shown).__name__}: {first[:200]}".rstrip(": ")


def _fleet(args: argparse.Namespace) -> tuple[ModuleType, tuple[FleetNode, ...]]:
    wants = [parse_label(t) for t in args.fleet_label]
    t0 = time.monotonic()
    ray = connect(args.fleet)
    nodes = select_nodes(alive_nodes(ray), wants, args.fleet)
    _say(f"fleet: {len(nodes)} node{'s' if len(nodes) != 1 else ''} of {args.fleet} "
         f"({', '.join(n.label for n in nodes)}), joined in {time.monotonic() - t0:.1f} s")
    return ray, nodes


def doctor_fleet(args: argparse.Namespace, probes: Sequence[Probe], budget_s: float) -> int:
    for flag in ("dir", "vs", "save"):
        if getattr(args, flag, None):
            raise UsageError(f"--{flag} is for one machine; it cannot go with --fleet")
    outputs = asked_outputs(args)
    fleet_flags = [r.flag for r in render.file_renderers() if r.writes_fleet]
    for r, _ in outputs:
        if not r.writes_fleet:
            raise UsageError(f"{r.flag} has no fleet form; doctor --fleet writes "
                             f"{', '.join(fleet_flags[:-1])} or {fleet_flags[-1]}")
    check_outputs(args)
    ray, nodes = _fleet(args)
    task = ray.remote(doctor_on_node)
    names = [p.name for p in probes]
    pending = {task.options(**pinned(n.node_id)).remote(names, args.quick, budget_s, args.no_perf): n
               for n in nodes}
    deadline = time.monotonic() + budget_s + DOCTOR_GRACE_S
    machines: list[Machine] = []
    lost = 0
    with open_store(args) as store:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1,
                                timeout=max(deadline - time.monotonic(), 0.0))
            if not ready:
                for n in pending.values():
                    _say(f"node {n.label} did not finish the doctor within "
                         f"{budget_s + DOCTOR_GRACE_S:.0f} s; left out")
                lost += len(pending)
                break
            node = pending.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except Exception as e:  # the node died, or the doctor failed there
                _say(f"node {node.label}: the doctor did not finish ({why_failed(e)})")
                lost += 1
                continue
            report = store_doctor(store, node, result)
            machines.append(Machine(node.label, report))
            _say(f"fleet: {node.label} done, stored as sweep {report.summary_sweep_id}")
    if not machines:
        raise FleetError(f"no node of {args.fleet} finished the doctor")
    machines.sort(key=lambda m: m.label)
    fleet = FleetDoctor(args.fleet, tuple(machines), judge(machines))
    if not any(path == STDOUT for _, path in outputs):
        width = _width()
        print(table(fleet.machines, fleet.findings, width))
        print()
        for f in fleet.findings:
            print(textwrap.fill(f.sentence, width, initial_indent="* ", subsequent_indent="  "))
        if not fleet.findings:
            print(f"no outlier among {len(machines)} machines")
    for r, path in outputs:
        emit(r, path, r().render_fleet(fleet))
    return PARTIAL_EXIT if lost else 0


def _width() -> int:
    return terminal_width()


class _StderrProgress:
    every_s = 2.0

    def __init__(self) -> None:
        self._next = 0.0

    def arrived(self, node: FleetNode, runs: int, total_runs: int | None) -> None:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.every_s
            of = f"/{total_runs}" if total_runs else ""
            _say(f"fleet: {node.label} {runs}{of} runs")


def run_fleet(args: argparse.Namespace, spec: SweepSpec,
              progress: FleetProgress | None = None) -> int:
    if args.resume:
        raise UsageError("--resume continues a sweep on this machine; it cannot go with --fleet")
    ray, nodes = _fleet(args)
    task = ray.remote(num_returns="streaming")(sweep_on_node)
    streams = [(n, _events(ray, task.options(**pinned(n.node_id)).remote(spec, args.no_perf,
                                                                           args.fork)))
               for n in nodes]
    with open_store(args) as store:
        outcomes = stream_sweeps(store, streams, why_failed, name=spec.name,
                                 progress=progress or _StderrProgress())
        for o in outcomes:
            if o.sentence:
                _say(o.sentence)
        done = [o for o in outcomes if o.status == "complete"]
        if not done:
            raise FleetError(f"no node of {args.fleet} completed the sweep")
        _print_machines(store, outcomes)
    return 0 if len(done) == len(outcomes) else PARTIAL_EXIT


def _events(ray: ModuleType, generator: Iterable[Any]) -> Iterator[NodeEvent]:
    """A streaming task's events, each fetched as soon as the node yields it."""
    for ref in generator:
        event: NodeEvent = ray.get(ref)
        yield event


def _print_machines(store: Store, outcomes: Sequence[NodeOutcome]) -> None:
    from quadscope.analyse.analysis import analyse
    from quadscope.commands.stored import combined

    kept = [o for o in outcomes if o.sweep_id]
    for o in kept:
        sweep = store.get_sweep(o.sweep_id)
        analysis = analyse(sweep, store.runs(o.sweep_id))
        _print(f"{o.node.label} (sweep {o.sweep_id}, {o.status}): {analysis.verdict}")
    done = [o for o in kept if o.status == "complete"]
    if len(done) < 2:
        return
    base = done[0]
    print()
    _print(f"machines against {base.node.label} (A = {base.node.label}, B = each machine):")
    for o in done[1:]:
        comparison = combined(store, str(base.sweep_id), str(o.sweep_id)).comparison
        changed = sorted((m for m in (comparison.metrics if comparison else ())
                          if m.change in CHANGE_ORDER), key=lambda m: CHANGE_ORDER.index(m.change))
        if not changed:
            _print(f"  {o.node.label}: no change detected")
        for m in changed:
            _print(f"  {o.node.label}: {m.summary}")


def _print(line: str) -> None:
    """One line of the machine comparison, folded at the terminal's width under its indent."""
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    print(textwrap.fill(line.strip(), _width(), initial_indent=line[:len(line) - len(line.lstrip())],
                        subsequent_indent=indent, break_on_hyphens=False))
