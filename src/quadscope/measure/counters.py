"""Which perf events each child is counted for, and the names they go by.

Contract: a `CounterBackend` says which perf events (perf's names, the
registry's perf metrics) the resident launcher counts on every child with
perf_event_open (`launcher.c`: opened once on the launcher, disabled,
enable_on_exec, inherit, so each child's copy counts from its exec; hardware
events user space only, as perf's `instructions:u`), and the
name `Sweep.counters` records: `PerfEventCounters` counts them ("perf"),
`NoCounters` counts nothing ("rusage"). Counts cover the child from its exec
and every descendant; an event the machine cannot count is None, never 0.
`EVENT_CODES` maps perf's event names to perf_event_attr's (type, config), the
generic encodings of linux/perf_event.h, so no `perf` binary is needed to
count. Choosing a backend for this machine is `detect`'s job.

`parse_perf_csv` reads `perf stat -x,` output: the tests use it to check the
launcher's counts against `perf stat` on the same program.

Overhead: no perf_event_open per run; the kernel's work for the inherited
copies (created at the spawn, enabled at the exec, folded back at the exit) is
inside wall_s, as it is inside `perf stat`'s (bench/overhead.py measures it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from quadscope import metrics

_PERF = metrics.by_source(metrics.PERF)
# The events counted (each metric's first name), in registry order.
EVENTS: tuple[str, ...] = tuple(m.events[0] for m in _PERF)
# perf's names (and the aliases it may print instead) -> the registry's metric names.
_METRIC_OF_EVENT: dict[str, str] = {e: m.name for m in _PERF for e in m.events}
METRIC_OF_EVENT: Mapping[str, str] = _METRIC_OF_EVENT  # the perf metric each event counts

# perf_event_attr (type, config): PERF_TYPE_HARDWARE = 0 with PERF_COUNT_HW_*,
# PERF_TYPE_SOFTWARE = 1 with PERF_COUNT_SW_* (include/uapi/linux/perf_event.h).
EVENT_CODES: dict[str, tuple[int, int]] = {
    "instructions": (0, 1),
    "cycles": (0, 0),
    "page-faults": (1, 2),
    "context-switches": (1, 3),
}
assert set(EVENTS) <= set(EVENT_CODES), "a perf metric of the registry needs its EVENT_CODES entry"


def no_counts() -> dict[str, int | None]:
    """Every perf metric uncounted."""
    return {m.name: None for m in _PERF}


def counts_by_metric(by_event: Mapping[str, int | None]) -> dict[str, int | None]:
    """Counts keyed by perf event name, as metric values; events not given are None."""
    out = no_counts()
    for event, n in by_event.items():
        out[_METRIC_OF_EVENT[event]] = n
    return out


def missing_events(counts: Mapping[str, object]) -> tuple[str, ...]:
    """perf's names of the events a run did not count, in EVENTS order."""
    return tuple(m.events[0] for m in _PERF if counts.get(m.name) is None)


class CounterBackend(Protocol):
    @property
    def name(self) -> str: ...  # what Sweep.counters records: "perf" or "rusage"

    @property
    def events(self) -> tuple[str, ...]: ...  # perf event names opened on each child


@dataclass(frozen=True, slots=True)
class NoCounters:
    """Counts nothing: every perf metric is None."""

    name: str = "rusage"
    events: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PerfEventCounters:
    """Counts `events` on every child with perf_event_open (see the module docstring)."""

    events: tuple[str, ...] = EVENTS
    name: str = "perf"


def parse_perf_csv(text: str) -> dict[str, int | None]:
    """Counts by metric name from `perf stat -x,` output; `<not supported>`/`<not counted>`
    and events absent from the output are None."""
    values = no_counts()
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split(",")
        if len(cols) < 3:
            continue
        raw, event = cols[0].strip(), cols[2].strip()
        if "/" in event:  # hybrid or PMU-qualified: cpu_core/instructions/
            event = event.strip("/").split("/")[-1]
        name = _METRIC_OF_EVENT.get(event.split(":")[0])
        if name is None or raw.startswith("<"):
            continue
        n = int(float(raw)) if "." in raw else int(raw)
        # Hybrid CPUs report one line per core type: the total is their sum.
        values[name] = (values[name] or 0) + n
    return values
