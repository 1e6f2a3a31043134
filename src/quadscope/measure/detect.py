"""How runs are measured here: the one place that picks an executor and its counter backend.

Contract: `choose_measuring(command, no_perf=, cpus=)` returns a `Measuring`:
the executor every command (`run`, `demo`, `doctor`) sweeps with, the name the
sweep records as its counters, and a note saying what could not be counted and
the fix. A Python function target (`python:MODULE:FUNC`) is measured by
`FunctionExecutor`; a program by `ProcessExecutor` (the resident launcher)
with the best counter backend this machine allows, pinned to `cpus`. A new
counter backend (or executor) is chosen here and nowhere else.

`detect_counters()` runs /bin/true once through the launcher with every perf
event of the registry and keeps the events that opened: `PerfEventCounters`
over those, or `NoCounters` when none did (perf_event_open not permitted by
kernel.perf_event_paranoid, or no C compiler for the launcher).
`counters_note(errnos, paranoid)` is the note, pure: which events failed, why
(from each errno and the paranoid level), and the fix; "" when all count.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quadscope.errors import ToolMissingError
from quadscope.measure.launcher import Executor, ProcessExecutor
from quadscope.measure.meters import EVENTS, CounterBackend, NoCounters, PerfEventCounters
from quadscope.measure.pyfunc import PREFIX, FunctionExecutor
from quadscope.measure.resident import ResidentLauncher, build_launcher

_HARDWARE = ("instructions", "cycles")
_DENIED = (errno.EACCES, errno.EPERM)
PARANOID_PATH = "/proc/sys/kernel/perf_event_paranoid"


def counters_note(errnos: Mapping[str, int], paranoid: str | None) -> str:
    """Why the events in `errnos` (event -> errno of perf_event_open) are not counted, and the fix."""
    if not errnos:
        return ""
    failed = [e for e in EVENTS if e in errnos]
    counted = [e for e in EVENTS if e not in errnos]
    still = (f"; {', '.join(counted)} are still counted" if counted
             else "; counting instructions, cycles, page-faults and context-switches is off")
    if any(errnos[e] in _DENIED for e in failed):
        level = f" (kernel.perf_event_paranoid is {paranoid})" if paranoid else ""
        return (f"perf_event_open is not permitted{level}: run "
                f"`sysctl kernel.perf_event_paranoid=1`{still}")
    if set(failed) == set(_HARDWARE):
        return ("this machine does not expose hardware counters (perf_event_open refuses "
                "instructions, cycles — typical of a VM); page-faults and context-switches "
                "are still counted")
    why = ", ".join(f"{e} ({errno.errorcode.get(errnos[e], errnos[e])})" for e in failed)
    return f"perf_event_open cannot count {why} here{still}"


def _read_paranoid() -> str | None:
    try:
        return Path(PARANOID_PATH).read_text().strip()
    except OSError:
        return None


def detect_counters() -> tuple[CounterBackend, str]:
    """The best backend for this machine and a note saying what is missing and the fix."""
    try:
        launcher = ResidentLauncher(build_launcher(), events=EVENTS)
    except ToolMissingError as e:
        return NoCounters(), f"{str(e).rstrip('.')}; counting with perf_event_open is off"
    try:
        reply = launcher.run("/bin/true", ["/bin/true"], [], 10.0)
    finally:
        launcher.close()
    counted = tuple(e for e in EVENTS if e not in reply.open_errnos)
    note = counters_note(reply.open_errnos, _read_paranoid())
    return (PerfEventCounters(counted) if counted else NoCounters()), note


@dataclass(frozen=True, slots=True)
class Measuring:
    """An executor, the counters name a sweep records (`Sweep.counters`), and why not more."""

    executor: Executor
    counters: str
    note: str

    @property
    def meter(self) -> str:
        """What measures the runs, as a sweep records it (`Sweep.meter`): "process+perf" etc."""
        kind = "function" if isinstance(self.executor, FunctionExecutor) else "process"
        return f"{kind}+{self.counters}"


def choose_measuring(command: Sequence[str] = (), *, no_perf: bool = False,
                     cpus: Sequence[int] = ()) -> Measuring:
    """How to measure `command` on this machine (see the module docstring)."""
    if command and command[0].startswith(PREFIX):
        if "" not in sys.path:
            sys.path.insert(0, "")  # like `python -m`: modules in the working directory
        return Measuring(FunctionExecutor(), "rusage",
                         "a Python function: rusage of its forked call")
    if no_perf:
        return Measuring(ProcessExecutor(NoCounters(), cpus=cpus), "rusage",
                         "perf counting turned off (--no-perf)")
    backend, note = detect_counters()
    return Measuring(ProcessExecutor(backend, cpus=cpus), backend.name, note)
