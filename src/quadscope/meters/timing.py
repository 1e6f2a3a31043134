"""The time meter (`--meter time`): the clock and rusage, and perf's counters where allowed.

Contract: `METER` measures a program with the resident launcher
(`measure.launcher.ProcessExecutor`) pinned to the target's CPUs, counting
the perf events this machine allows (`measure.detect.detect_counters`; none
with `--no-perf`), and a Python function with `measure.pyfunc.FunctionExecutor`
(rusage of calibrated in-process batches of calls, or of one forked call per
run). It is always available: what it cannot count is None in the runs and
said in the note. `python_executor(target)` is the Python-function executor
both meters time with.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from quadscope.meters.base import Measuring, Meter, Target

if TYPE_CHECKING:  # imported where used: the registry is read by the CLI's parser
    from quadscope.measure.pyfunc import FunctionExecutor


def python_executor(target: Target) -> FunctionExecutor:
    """The executor timing a Python function target: its object (API) or its name (CLI)."""
    from quadscope.measure.pyfunc import FunctionExecutor

    if target.function is not None:
        return FunctionExecutor({target.command[0]: target.function}, setup=target.setup,
                                fork=target.fork)
    if "" not in sys.path:
        sys.path.insert(0, "")  # like `python -m`: modules in the working directory
    return FunctionExecutor(fork=target.fork)


def measuring(target: Target) -> Measuring:
    """How to time `target` on this machine (see the module docstring)."""
    from quadscope.measure.counters import NoCounters
    from quadscope.measure.detect import detect_counters
    from quadscope.measure.launcher import ProcessExecutor

    if target.python:
        how = "its forked call" if target.fork else "calibrated in-process batches of calls"
        return Measuring(python_executor(target), "rusage", f"a Python function: rusage of {how}")
    if target.no_perf:
        return Measuring(ProcessExecutor(NoCounters(), cpus=target.cpus), "rusage",
                         "perf counting turned off (--no-perf)")
    backend, note = detect_counters()
    return Measuring(ProcessExecutor(backend, cpus=target.cpus), backend.name, note)


METER = Meter("time", metrics=("wall_s",), exact=False, measuring=measuring,
              describe="time: the clock, rusage and perf's counters only, never counting the work")
