"""One wiring from a request to stored runs: spec → host facts → meter → executor → store.

Contract: every entry point that starts a sweep goes through here (`run` and
`run --resume`, `demo`, the Python API and so the pytest plugin, each node of
`run --fleet`, and every probe sweep of `doctor`), so each records the same
host facts and skew checks the same way and measures with the executor the
meter registry picks.

- `Machine` is how a session reads the machine: the skew checks' `Reader`
  (`measure.system`), `host_info` and `provenance` (git). `Machine.real()`
  reads this one; tests give fakes.
- `read_host(machine, git=True, spec=None)` is the one place `Sweep.host` (a `Host`) is assembled:
  the machine's `host_info()` (a fleet node's names it by its Ray node) with
  the skew checks' facts (governor, turbo, THP, ASLR, load), the checks
  themselves (`advice`, for a command to print) and where the sweep ran
  (`Provenance`: git, left out for the doctor's sweeps of its own helpers). A
  session that runs many sweeps (the doctor) reads it once. With `spec`, the
  programs its commands name that are version managers' shims are looked up
  (`Machine.find_shim`, `measure.shims`) and recorded as the `shims` fact: the
  runner then runs the program each shim would run (`run.runner`).
- `choose(spec, no_perf=, registry=)` is the `Measuring` the spec's meter
  picks for its command (`meters.choose_measuring`, looked up when called so
  a test can replace it).
- `start(spec, store=, clock=, machine=, measuring=, facts=)` runs a new sweep
  (`run.runner.run_sweep`) with those, then adds what only the end can say:
  the steal time and the CPUs other work kept busy over the sweep (/proc/stat
  read before and after through the machine's reader, less `Machine.own_cpu`,
  the CPU time of quadscope and its children: `measure.system.own_cpu_s`)
  and how the executor cleaned up after each run
  (`run_cleanup`), and stores the sweep again with them.
- `resume(sweep, store=, clock=)` continues a stored sweep with the meter and
  settings it was started with (`measuring_to_resume`: perf only if it
  counted with perf).

Nothing here prints: a command prints `facts.advice` before it starts.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from quadscope import meters
from quadscope.host import Host
from quadscope.measure.clock import Clock
from quadscope.measure.host import host_info
from quadscope.measure.provenance import Provenance, collect_provenance
from quadscope.measure.shims import Shim, find_shim, shims_fact
from quadscope.measure.system import (
    STAT,
    Check,
    FileReader,
    OtherLoad,
    Reader,
    Shims,
    StealTime,
    cpu_times,
    online_cpus,
    own_cpu_s,
    read_checks,
    with_checks,
)
from quadscope.meters import REGISTRY, Measuring, Registry
from quadscope.model import Sweep
from quadscope.run import runner  # called through the module: tests replace run_sweep
from quadscope.run.counting import Counting
from quadscope.run.runner import Progress
from quadscope.run.spec import SweepSpec
from quadscope.store import Store


def _provenance(host: Host) -> Provenance:
    return collect_provenance(host=host)  # git, in the working directory


@dataclass(frozen=True, slots=True)
class Machine:
    """How a session reads the machine it measures on (see the module docstring)."""

    reader: Reader
    host_info: Callable[[], Host] = host_info
    provenance: Callable[[Host], Provenance] = _provenance
    find_shim: Callable[[str], Shim | None] = find_shim
    own_cpu: Callable[[], float] = own_cpu_s
    clock_ticks: int = os.sysconf("SC_CLK_TCK")

    @classmethod
    def real(cls) -> Machine:
        return cls(FileReader())


@dataclass(frozen=True, slots=True)
class HostFacts:
    """What a sweep records of the machine before it starts (`Sweep.host`), and its checks."""

    host: Host
    checks: tuple[Check, ...] = ()
    provenance: Provenance | None = None

    @property
    def advice(self) -> tuple[str, ...]:
        """What on this machine will likely skew the timings, and the fix; one line each."""
        return tuple(a for c in self.checks if (a := c.advice()) is not None)


def _shims(machine: Machine, spec: SweepSpec) -> tuple[Check, ...]:
    """The `Shims` check of `spec`'s programs that are shims (none for a shell command)."""
    programs = [c[0] for c, shell in ((spec.command, spec.shell),
                                      (spec.vs_command, spec.vs_shell)) if c and not shell]
    found = [s for p in dict.fromkeys(programs) if (s := machine.find_shim(p)) is not None]
    fact = shims_fact(found)
    return () if fact is None else (Shims(fact),)


def read_host(machine: Machine, *, git: bool = True, spec: SweepSpec | None = None) -> HostFacts:
    """The host facts every sweep records (see the module docstring); `git=False` for
    sweeps of quadscope's own helpers (the doctor's), which no commit of the user's describes."""
    checks = read_checks(machine.reader) + (() if spec is None else _shims(machine, spec))
    host = with_checks(machine.host_info(), checks)
    return HostFacts(host, checks, machine.provenance(host) if git else None)


def choose(spec: SweepSpec, *, no_perf: bool = False,
           registry: Registry = REGISTRY) -> Measuring:
    """How `spec.meter` measures `spec.command` here."""
    return meters.choose_measuring(spec.command, meter=spec.meter, no_perf=no_perf,
                                   fork=spec.fork, cpus=spec.cpus, registry=registry)


def counting_for(spec_meter: str, command: Sequence[str], *, no_perf: bool = False,
                 fork: bool = False, cpus: Sequence[int] = (),
                 function: Callable[[Any], Any] | None = None,
                 setup: Callable[[int], Any] | None = None,
                 registry: Registry = REGISTRY, no_qemu: bool = False) -> Counting | None:
    """The exact meter a sweep of `spec_meter` falls back on (`run.counting`), None when the
    meter never counts or its exact meter cannot count here (no Valgrind). The exact
    meter's executor is built only when counting starts (`Counting.make`)."""
    name = meters.named(spec_meter, registry).counts_with
    if name is None:
        return None
    exact = meters.named(name, registry)
    target = meters.Target(tuple(command), tuple(cpus), fork, no_perf, function, setup, no_qemu)
    if exact.unavailable(target) or exact.agrees_on is None:
        return None
    return Counting(functools.partial(exact.measuring, target), exact.name, exact.agrees_on,
                    exact.cost)


def choose_counting(spec: SweepSpec, *, no_perf: bool = False,
                    registry: Registry = REGISTRY) -> Counting | None:
    """What `spec.meter` falls back on to count the work here (`counting_for`)."""
    return counting_for(spec.meter, tuple(spec.command), no_perf=no_perf, fork=spec.fork,
                        cpus=tuple(spec.cpus), registry=registry)


def _ended_host(host: Host, measuring: Measuring, before: tuple[tuple[int, ...], float],
                machine: Machine) -> Host:
    """`host` with what only the end can say: the steal time, the other work over the
    sweep, and how runs were cleaned up. `before` is /proc/stat and `machine.own_cpu()`
    at the start."""
    after = cpu_times(machine.reader.read(STAT))
    cpus = len(online_cpus(machine.reader)) or host.cpus or 0
    ended = (StealTime.between(before[0], after),
             OtherLoad.between(before[0], after, machine.own_cpu() - before[1],
                               machine.clock_ticks, cpus))
    if found := tuple(c for c in ended if c is not None):
        host = with_checks(host, found)
    cleanup = getattr(measuring.executor, "cleanup", None)  # what no-orphans relied on
    if isinstance(cleanup, str) and cleanup:
        host = dataclasses.replace(host, run_cleanup=cleanup)
    return host


def start(spec: SweepSpec, *, store: Store, clock: Clock, machine: Machine,
          measuring: Measuring | None = None, facts: HostFacts | None = None,
          no_perf: bool = False, progress: Progress | None = None,
          registry: Registry = REGISTRY, counting: Counting | None = None) -> Sweep:
    """Run a new sweep of `spec` to its end and return it as stored (module docstring).

    `measuring` defaults to `choose(spec)` and then `counting` to `choose_counting(spec)`;
    `facts` defaults to `read_host(machine)`.
    """
    if measuring is None:  # a caller bringing its own executor brings its own counting
        counting = choose_counting(spec, no_perf=no_perf, registry=registry)
    measuring = measuring or choose(spec, no_perf=no_perf, registry=registry)
    facts = facts or read_host(machine, spec=spec)
    before = cpu_times(machine.reader.read(STAT)), machine.own_cpu()
    sweep = runner.run_sweep(spec, executor=measuring.executor, clock=clock, store=store,
                             progress=progress, counters=measuring.counters,
                             counters_note=measuring.note, host=facts.host,
                             provenance=facts.provenance, registry=registry,
                             counting=counting)
    ended = _ended_host(sweep.host, measuring, before, machine)
    counted = measuring.counted() if sweep.counters == measuring.counters else sweep.counters
    if counted != sweep.counters:
        from quadscope.analyse.text import counted_how  # Valgrind took over from QEMU

        sweep = dataclasses.replace(sweep, counters=counted, counters_note=(
            f"{sweep.counters_note}; QEMU could not count this command whole (it started "
            f"other processes or threads, or died under the emulator), so its runs were "
            f"counted {counted_how(counted)}"))
        store.update_sweep(sweep)
    if ended != sweep.host:
        sweep = dataclasses.replace(sweep, host=ended)
        store.update_sweep(sweep)
    return sweep


def measuring_to_resume(sweep: Sweep, registry: Registry = REGISTRY) -> Measuring:
    """The executor a stored sweep goes on with: its meter and settings, perf only if it had
    it, Valgrind if it had it (one tool's counts in one sweep)."""
    return meters.choose_measuring(sweep.command, meter=sweep.meter,
                                   no_perf=sweep.counters != "perf", fork=sweep.fork,
                                   cpus=sweep.cpus, registry=registry,
                                   no_qemu="valgrind" in sweep.counters)


def counting_to_resume(sweep: Sweep, registry: Registry = REGISTRY) -> Counting | None:
    """What a stored sweep's meter falls back on to count the work, perf only if it had it,
    Valgrind if it had it."""
    return counting_for(sweep.meter, tuple(sweep.command), no_perf=sweep.counters != "perf",
                        fork=sweep.fork, cpus=tuple(sweep.cpus), registry=registry,
                        no_qemu="valgrind" in sweep.counters)


def resume(sweep: Sweep, *, store: Store, clock: Clock, measuring: Measuring | None = None,
           progress: Progress | None = None, registry: Registry = REGISTRY,
           counting: Counting | None = None) -> Sweep:
    """Continue a stored sweep (`run.runner.resume_sweep`) with what it was started with
    (`counting` as in `start`)."""
    if measuring is None:
        counting = counting_to_resume(sweep, registry)
    measuring = measuring or measuring_to_resume(sweep, registry)
    return runner.resume_sweep(sweep, executor=measuring.executor, clock=clock, store=store,
                               progress=progress, registry=registry, counting=counting)
