"""How runs are measured here: the one place that picks an executor and its counter backend.

Contract: `choose_measuring(command, no_perf=)` returns a `Measuring`: the
executor every command (`run`, `demo`, `doctor`) sweeps with, the name the
sweep records as its counters, and a note saying what could not be counted
and the fix. A Python function target (`python:MODULE:FUNC`) is measured by
`FunctionExecutor`; a program by `ProcessExecutor` with the best counter
backend this machine allows. A new counter backend (or executor) is chosen
here and nowhere else.

`detect_counters(perf="perf") -> (backend, note)` runs /bin/true once
under `PerfCounters` through a `ProcessExecutor` and returns the best backend
with a note that names what is wrong and the fix ("" when all four events
count): `NoCounters` when perf is missing, not permitted or counts nothing;
`PerfCounters` when it counts at least one event. It lives apart from `meters`
because it needs the launcher, which itself imports `meters`.

`choose_measuring(command, meter="instructions")` is the exact meter (see
`exact`): perf's `instructions:u` on the held-still child when the CPU counts
it (`counters` "perf"), else a second run of each job under Valgrind
(`counters` "valgrind"; callgrind around the call alone for a Python
function). `fork` runs a Python function's calls one per forked child.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.errors import QuadscopeError
from quadscope.measure.exact import (
    Cachegrind,
    Callgrind,
    HeldStill,
    InstructionMeter,
    find_valgrind,
)
from quadscope.measure.launcher import Executor, ProcessExecutor
from quadscope.measure.meters import (
    EVENTS,
    CounterBackend,
    NoCounters,
    PerfCounters,
    missing_events,
)
from quadscope.measure.pycount import count_command
from quadscope.measure.pyfunc import PREFIX, FunctionExecutor

USER_INSTRUCTIONS = "instructions:u"  # user space only: the kernel's share is not the program's

_INSTALL = "install it with `apt-get install linux-perf`"


def _note_for_error(msg: str) -> str:
    low = msg.lower()
    if "paranoid" in low or "permission" in low or "access to performance" in low:
        return (
            "perf is not permitted: run `sysctl kernel.perf_event_paranoid=1`; "
            "counting instructions, cycles, page-faults and context-switches is off"
        )
    if "not found" in low or "no such file" in low or "c compiler" in low:
        return f"{msg.rstrip('.')}; counting with perf is off"
    return f"perf does not work here ({msg}); counting with perf is off"


def detect_counters(perf: str = "perf") -> tuple[CounterBackend, str]:
    """The best backend for this machine and a note saying what is missing and the fix."""
    if shutil.which(perf) is None:
        return NoCounters(), (
            f"perf is not installed: {_INSTALL}; "
            "counting instructions, cycles, page-faults and context-switches is off"
        )
    backend = PerfCounters(perf)
    try:
        m = ProcessExecutor(counters=backend).execute(["/bin/true"], 10.0)
    except QuadscopeError as e:
        return NoCounters(), _note_for_error(str(e))
    missing = missing_events(m.values)
    if not missing:
        return backend, ""
    if len(missing) == len(EVENTS):
        return NoCounters(), (
            "perf counted no event here (all four are <not supported>); counting with perf is off"
        )
    counted = [e for e in EVENTS if e not in missing]
    hw = {"instructions", "cycles"}
    if set(missing) == hw:
        return backend, (
            "this machine does not expose hardware counters (perf says <not supported> for "
            "instructions, cycles — typical of a VM); page-faults and context-switches are "
            "still counted by perf"
        )
    return backend, (
        f"perf cannot count {', '.join(missing)} here (<not supported>); "
        f"{', '.join(counted)} are still counted by perf"
    )


@dataclass(frozen=True, slots=True)
class Measuring:
    """An executor, the counters name a sweep records (`Sweep.counters`), and why not more."""

    executor: Executor
    counters: str
    note: str


def hardware_instructions(perf: str = "perf") -> bool:
    """Whether perf counts `instructions:u` here (hardware counters exposed and permitted)."""
    if shutil.which(perf) is None:
        return False
    try:
        m = ProcessExecutor(PerfCounters(perf, (USER_INSTRUCTIONS,))).execute(["/bin/true"], 10.0)
    except QuadscopeError:
        return False
    return m.values.get("instructions") is not None


def _exact(function: FunctionExecutor | None, no_perf: bool) -> Measuring:
    """The instruction meter: perf's `instructions:u` when counted here, else Valgrind."""
    if function is None and not no_perf and hardware_instructions():
        events = tuple(USER_INSTRUCTIONS if e == "instructions" else e for e in EVENTS)
        return Measuring(HeldStill(ProcessExecutor(PerfCounters(events=events))), "perf",
                         "instructions counted by the CPU (instructions:u), ASLR off")
    valgrind = find_valgrind()
    runner = ProcessExecutor(NoCounters())
    if function is not None:
        return Measuring(
            InstructionMeter(function, runner, Callgrind(valgrind), command=count_command()),
            "valgrind", "instructions of the call alone, counted under Valgrind's callgrind")
    return Measuring(InstructionMeter(runner, runner, Cachegrind(valgrind)), "valgrind",
                     "no hardware instruction counter here: instructions counted under "
                     "Valgrind (exact, one extra run per measurement, ~20-50x slower)")


def choose_measuring(command: Sequence[str] = (), *, no_perf: bool = False,
                     meter: str = "time", fork: bool = False) -> Measuring:
    """How to measure `command` on this machine (see the module docstring)."""
    function = None
    if command and command[0].startswith(PREFIX):
        if "" not in sys.path:
            sys.path.insert(0, "")  # like `python -m`: modules in the working directory
        function = FunctionExecutor(fork=fork)
    if meter == "instructions":
        return _exact(function, no_perf)
    if function is not None:
        how = "its forked call" if fork else "calibrated in-process batches of calls"
        return Measuring(function, "rusage", f"a Python function: rusage of {how}")
    if no_perf:
        return Measuring(ProcessExecutor(NoCounters()), "rusage",
                         "perf counting turned off (--no-perf)")
    backend, note = detect_counters()
    return Measuring(ProcessExecutor(backend), backend.name, note)
