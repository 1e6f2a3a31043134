"""The exact meter (`--meter instructions`): retired instructions, the same count on every run.

Contract: `METER` counts the user-space instructions of every run (see
`measure.exact`): with the CPU's counter on the held-still child where it
counts one (`counters` "perf"; a program, without `--no-perf`), else in a
second run of each job: for a program under QEMU's user-mode emulator where
it counts here (`counters` "qemu", `measure.qemu`; Cachegrind for a command
that starts other processes or threads, which QEMU would count only in part;
`QUADSCOPE_NO_QEMU=1` opts out), else under Valgrind (`counters` "valgrind"):
Cachegrind for a program, Callgrind around the call alone for a Python function (by its
`python:` name, or the API's function object and setup: by name where
importable, else by value, pickled, `measure.pycount.send`; one that cannot be
sent or loaded is `pycount.CannotSend`, one sentence). The timed run is the
time meter's, so wall time stays a real run's.
`unavailable` says why it cannot count here: no hardware counter and no
Valgrind.

Cost, for planners: where Valgrind counts, each measurement is one extra run
~20-50x slower than the plain one (`measure.exact`), plus Valgrind's start,
about 0.3 s for a small C program (BENCHMARKS.md §6: ~4 s for the ~15 counted
runs of a five-size sweep on the 2-core VM); where QEMU counts, its start is
about 0.03 s and the run a few times slower (`measure.qemu.STARTUP_S` and
`SLOWDOWN` price it, `Cost.under`); the CPU's counter costs nothing over the
time meter. A Python function's sizes are counted under one Valgrind start
(`Cost.batch`): about 1 s to start Valgrind and the child Python, 0.5 s more for each
call's fork and setup (uncounted, but under Valgrind), and ~80x the plain call while
Callgrind counts it (the list dedup of bench/gate_stability.py on the 2-core VM, quiet:
1000..4000 counted in 7.3 s for 61 ms of plain calls, 1000..8000 in 29.8 s for 0.41 s;
the set dedup at 1000..16000, 3 ms of calls, in 3.4 s).

Counts at once: a program's counts (QEMU or Valgrind) may run `count_jobs`
at a time, one per CPU the runs may use (`--cpus`, else this process's), at
most MAX_COUNT_JOBS, `QUADSCOPE_COUNT_JOBS=N` to choose: an exact sweep hands
out its first sizes together (`run.counting`), and an exact count does not
depend on what else runs. The timed runs stay one at a time, alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quadscope.errors import ToolMissingError
from quadscope.meters.base import BatchCost, Cost, Measuring, Meter, Target
from quadscope.meters.timing import python_executor

if TYPE_CHECKING:  # imported where used: the registry is read by the CLI's parser
    from quadscope.measure.counters import CounterBackend

EVENT = "instructions"  # perf's event name of the metric counted
MAX_COUNT_JOBS = 4  # counts at once at most: an exact sweep's first sizes (SETTLE_SIZES)
COUNT_JOBS = "QUADSCOPE_COUNT_JOBS"  # the environment variable choosing how many


def count_jobs(cpus: Sequence[int] = ()) -> int:
    """How many counts of a program may run at once here (module docstring)."""
    chosen = os.environ.get(COUNT_JOBS, "").strip()
    if chosen.isdigit() and int(chosen) > 0:
        return min(int(chosen), MAX_COUNT_JOBS)
    try:
        usable = len(cpus) or len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(usable, MAX_COUNT_JOBS))


def _cpu_counter(target: Target) -> CounterBackend | None:
    """The perf backend counting this program's instructions on the CPU here; None if none."""
    if target.python or target.no_perf:
        return None
    from quadscope.measure.detect import detect_counters

    backend, _ = detect_counters()
    return backend if EVENT in backend.events else None


def measuring(target: Target) -> Measuring:
    """The CPU's counter when it counts here, else Valgrind (see the module docstring)."""
    from quadscope.measure import qemu
    from quadscope.measure.counters import NoCounters
    from quadscope.measure.exact import Cachegrind, Callgrind, HeldStill, InstructionMeter, find_valgrind
    from quadscope.measure.launcher import ProcessExecutor
    from quadscope.measure.pycount import check_loads, count_command, count_many_command, send

    if (backend := _cpu_counter(target)) is not None:
        return Measuring(HeldStill(ProcessExecutor(backend, cpus=target.cpus)), "perf",
                         "instructions counted by the CPU, ASLR off")
    if target.function is not None:  # the API: the child Python imports it, or unpickles it
        refs = (send(target.function), send(target.setup) if target.setup is not None else None)
        check_loads(*refs)
        return Measuring(InstructionMeter(python_executor(target), ProcessExecutor(NoCounters()),
                                          Callgrind(find_valgrind()), command=count_command(*refs),
                                          many=count_many_command(*refs)),
                         "valgrind", "instructions of the call alone, counted under Valgrind's "
                         "callgrind")
    valgrind = find_valgrind()
    runner = ProcessExecutor(NoCounters(), cpus=target.cpus)
    if target.python:
        return Measuring(
            InstructionMeter(python_executor(target), runner, Callgrind(valgrind),
                             command=count_command(), many=count_many_command()),
            "valgrind", "instructions of the call alone, counted under Valgrind's callgrind")
    spares = tuple(ProcessExecutor(NoCounters(), cpus=target.cpus)
                   for _ in range(count_jobs(target.cpus) - 1))  # counts at once
    if not target.no_qemu and (emulator := qemu.find()) is not None:
        return Measuring(InstructionMeter(runner, runner, emulator, fallback=Cachegrind(valgrind),
                                          spares=spares), "qemu",
                         "no hardware instruction counter here: instructions counted under "
                         "QEMU (exact, one extra run per measurement: ~0.03 s plus a few times "
                         "the run; a command that starts other processes or threads is "
                         "counted under Valgrind)")
    return Measuring(InstructionMeter(runner, runner, Cachegrind(valgrind), spares=spares),
                     "valgrind",
                     "no hardware instruction counter here: instructions counted under "
                     "Valgrind (exact, one extra run per measurement, ~20-50x slower)")


def unavailable(target: Target) -> str:
    """Why instructions cannot be counted for `target` here; "" when they can."""
    if _cpu_counter(target) is not None:
        return ""
    from quadscope.measure.exact import find_valgrind

    try:
        find_valgrind()
    except ToolMissingError as exc:
        return f"no hardware instruction counter here and {exc}"
    return ""


METER = Meter(
    "instructions", metrics=("instructions",), exact=True, measuring=measuring,
    unavailable=unavailable, cost=Cost(slowdown=30.0, startup_s=0.3,
              batch=BatchCost(startup_s=1.0, per_call_s=0.5, slowdown=80.0)),
    describe="instructions: also count retired instructions exactly (perf's instructions:u, "
             "else QEMU or Valgrind); one run per size when two agree",
)
