"""Sweep a Python function instead of a command: each call runs in a forked child.

Contract: `FunctionExecutor` is an `Executor` (its `execute_many` is
`SerialExecutor`'s, one call after another) whose argv is `(target, size)`,
where `target` is `python:MODULE:FUNC` (imported on first use) or a name
registered with a callable. For every run it forks; the child builds the
argument with `setup(n)` (default: n itself, outside the timed window), then
times `func(arg)` alone with the monotonic clock and the rusage of its own
process (getrusage deltas around the call), and reports over a pipe. Forking
keeps calls independent (no warm caches or leaked memory from earlier sizes)
and lets a timeout kill a call that never returns. `max_rss_bytes` is the
child's peak, which starts at the parent's size: that lands in the fit's offset
a, not in its growth. An exception is exit code 1 with the traceback as the
stderr tail.

`quadscope.api.sweep_function(func, sizes=...)` is the Python API over it.
"""

from __future__ import annotations

import importlib
import os
import pickle
import resource
import select
import signal
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from quadscope import metrics
from quadscope.errors import ProgramError
from quadscope.measure.launcher import SerialExecutor, rusage_values
from quadscope.model import Measurement

PREFIX = "python:"


def resolve_function(target: str) -> Callable[[Any], Any]:
    """`python:MODULE:FUNC` (or `MODULE:FUNC`) to the function; ProgramError when it is not there."""
    spec = target[len(PREFIX):] if target.startswith(PREFIX) else target
    module_name, _, func_name = spec.partition(":")
    if not module_name or not func_name:
        raise ProgramError(f"{target!r} is not MODULE:FUNC, e.g. mypkg.sorting:insertion_sort")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import can fail in any way; the user needs the reason
        raise ProgramError(f"cannot import {module_name!r}: {exc}") from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ProgramError(f"{module_name!r} has no function {func_name!r}")
    return func


def _call_rusage(r0: resource.struct_rusage, r1: resource.struct_rusage) -> dict[str, Any]:
    """The registry's rusage metrics for the call between two getrusage readings.

    A running total is the difference of the readings; a high-water mark (peak
    RSS) is the later reading, as a delta of peaks means nothing.
    """
    before = rusage_values(lambda name: getattr(r0, name))
    after = rusage_values(lambda name: getattr(r1, name))
    return {k: after[k] - before[k] if metrics.get(k).accumulates else after[k] for k in after}


def _child(func: Callable[[Any], Any], setup: Callable[[int], Any] | None, n: int,
           out_fd: int) -> None:
    code = 0
    report: dict[str, Any] = {}
    try:
        arg = setup(n) if setup is not None else n
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        func(arg)
        t1 = time.monotonic()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        report = {"wall_s": t1 - t0, **_call_rusage(r0, r1)}
    except BaseException:  # the child must report whatever happened, then leave
        code = 1
        report = {"stderr_tail": traceback.format_exc()[-2000:]}
    try:
        os.write(out_fd, pickle.dumps(report))
    finally:
        os._exit(code)


class FunctionExecutor(SerialExecutor):
    """Runs `(target, size)` as one forked call of a Python function."""

    def __init__(self, functions: Mapping[str, Callable[[Any], Any]] | None = None,
                 setup: Callable[[int], Any] | None = None) -> None:
        self._functions = dict(functions or {})
        self._setup = setup

    def function(self, target: str) -> Callable[[Any], Any]:
        if target not in self._functions:
            self._functions[target] = resolve_function(target)
        return self._functions[target]

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        func = self.function(argv[0])
        n = int(argv[-1])
        read_fd, write_fd = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            os.close(read_fd)
            _child(func, self._setup, n, write_fd)
        os.close(write_fd)
        chunks: list[bytes] = []
        timed_out = False
        try:
            while True:
                left = None if timeout_s is None else timeout_s - (time.monotonic() - started)
                if left is not None and left <= 0:
                    timed_out = True
                    os.kill(pid, signal.SIGKILL)
                    break
                ready, _, _ = select.select([read_fd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(read_fd)
            _, status = os.waitpid(pid, 0)
        return self._measurement(chunks, status, timed_out, time.monotonic() - started)

    @staticmethod
    def _measurement(chunks: list[bytes], status: int, timed_out: bool,
                     elapsed_s: float) -> Measurement:
        report: dict[str, Any] = {}
        if chunks and not timed_out:
            try:
                report = pickle.loads(b"".join(chunks))
            except (pickle.UnpicklingError, EOFError):
                report = {"stderr_tail": "the child's report was cut short"}
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        # A call that failed or was killed measured nothing but its elapsed time:
        # its other metrics stay None rather than a made-up 0.
        values = {k: v for k, v in report.items() if k in metrics.RAW_NAMES}
        values.setdefault("wall_s", elapsed_s)
        return Measurement(values, exit_code=code, timed_out=timed_out,
                           stderr_tail=str(report.get("stderr_tail", "")))
