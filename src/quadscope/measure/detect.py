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

`choose_measuring(command, meter="instructions")` is the exact meter (see
`exact`): the CPU's instruction counter on the held-still child when it
counts one (`counters` "perf"), else a second run of each job under Valgrind
(`counters` "valgrind"; callgrind around the call alone for a Python
function). `fork` runs a Python function's calls one per forked child.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quadscope.errors import ToolMissingError
from quadscope.measure.exact import (
    Cachegrind,
    Callgrind,
    HeldStill,
    InstructionMeter,
    find_valgrind,
)
from quadscope.measure.launcher import Executor, ProcessExecutor
from quadscope.measure.meters import EVENTS, CounterBackend, NoCounters, PerfEventCounters
from quadscope.measure.pycount import count_command
from quadscope.measure.pyfunc import PREFIX, FunctionExecutor
from quadscope.measure.resident import Request, ResidentLauncher, build_launcher

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
        reply = launcher.run(Request("/bin/true", ("/bin/true",), (), 10.0))
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




def _exact(function: FunctionExecutor | None, no_perf: bool, cpus: Sequence[int]) -> Measuring:
    """The instruction meter: the CPU's counter when it counts here, else Valgrind."""
    if function is None and not no_perf:
        backend, _ = detect_counters()
        if "instructions" in backend.events:
            return Measuring(HeldStill(ProcessExecutor(backend, cpus=cpus)), "perf",
                             "instructions counted by the CPU, ASLR off")
    valgrind = find_valgrind()
    runner = ProcessExecutor(NoCounters(), cpus=cpus)
    if function is not None:
        return Measuring(
            InstructionMeter(function, runner, Callgrind(valgrind), command=count_command()),
            "valgrind", "instructions of the call alone, counted under Valgrind's callgrind")
    return Measuring(InstructionMeter(runner, runner, Cachegrind(valgrind)), "valgrind",
                     "no hardware instruction counter here: instructions counted under "
                     "Valgrind (exact, one extra run per measurement, ~20-50x slower)")


def choose_measuring(command: Sequence[str] = (), *, no_perf: bool = False,
                     meter: str = "time", fork: bool = False,
                     cpus: Sequence[int] = ()) -> Measuring:
    """How to measure `command` on this machine (see the module docstring)."""
    function = None
    if command and command[0].startswith(PREFIX):
        if "" not in sys.path:
            sys.path.insert(0, "")  # like `python -m`: modules in the working directory
        function = FunctionExecutor(fork=fork)
    if meter == "instructions":
        return _exact(function, no_perf, cpus)
    if function is not None:
        how = "its forked call" if fork else "calibrated in-process batches of calls"
        return Measuring(function, "rusage", f"a Python function: rusage of {how}")
    if no_perf:
        return Measuring(ProcessExecutor(NoCounters(), cpus=cpus), "rusage",
                         "perf counting turned off (--no-perf)")
    backend, note = detect_counters()
    return Measuring(ProcessExecutor(backend, cpus=cpus), backend.name, note)
