"""Sweep a Python function instead of a command: calls timed in-process, or each in a fork.

Contract: `FunctionExecutor` is an `Executor` (its `execute_many` is
`SerialExecutor`'s) whose argv is `(target, size)`, where `target` is
`python:MODULE:FUNC[:SETUP]` (imported on first use; SETUP names a function of
the same module) or a name registered with a callable. The argument is
`setup(n)` (default: n itself), built outside the timed window. Over several
sizes (`python:M:F {n} {m}`, run/axes.py) the argv is `(target, n, m, ...)`
and the function gets `setup(n, m)`, or is called as `func(n, m)` without one.

In-process (the default), as timeit and pyperf do: calls run in batches of
`loops` back-to-back calls on the same argument, the loop count growing until
one batch lasts at least `min_batch_s` (10 ms); that batch is the
measurement, every metric per call: `wall_s` is the batch's monotonic time
over `loops`, rusage running totals are getrusage deltas over `loops` (counts
rounded to whole events), peak RSS the process's. The loop count found for a
size is reused by its later runs, so a repeat costs one batch. A function that
mutates its argument sees the mutated one on its next call: use `fork=True`
for it. A timeout interrupts the batch with SIGALRM (main thread only) and
marks the run timed out; an exception is exit code 1 with the traceback as the
stderr tail, `sys.exit(code)` a failed run with that code (1 for 0), and
`os._exit`/`os.abort` a failed run too (they raise while the function runs
in-process, in any thread of this process, so a function cannot end
quadscope by leaving). A crash in C code (a segfault, `ctypes.string_at(0)`)
cannot be caught in-process, so a `python:` target's first call at each size
runs once in a fork first (the probe: one call and one fork per size, a few
ms): one that dies by a signal there is a failed run, with one sentence, at
that size and never run in-process; one that times out there is a timed-out
run. Callables registered through the API skip the probe (their callers'
own state is what they touch; `fork=True` isolates them). The garbage
collector stays on: collections the function causes are part of its cost.

With `fork=True` (`--fork`) every run forks once; the child builds the
argument, times one call alone with the monotonic clock and getrusage deltas,
and reports over a pipe. Forking keeps calls independent (no warm caches or
memory left by earlier sizes) and lets a timeout SIGKILL a call that never
returns; the child's `max_rss_bytes` starts at the parent's size.

Cost (bench/pyfunc.py --quick, loaded 2-core VM): for a 1 µs call
(`bisect.bisect` over 10⁴ keys) one measured value costs 0.023 s of harness
time against 1.05 s for `pyperf timeit --fast` (0.02×), and both report the
same per-call time (0.98×); pyperf spends its time on worker processes and
warm-ups, which is what makes its values trustworthy on their own, while a
sweep gets its robustness from many sizes and the fit.

`quadscope.api.sweep_function(func, sizes=...)` is the Python API over it.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import pickle
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, NoReturn

from quadscope import metrics
from quadscope.errors import ProgramError
from quadscope.measure.launcher import SerialExecutor, rusage_values
from quadscope.model import Measurement

PREFIX = "python:"
MIN_BATCH_S = 0.01  # pyperf's default minimum time per batch of loops
_TAIL_BYTES = 2000

Func = Callable[[Any], Any]
Setup = Callable[..., Any]
Sizes = int | tuple[int, ...]  # one size, or every axis's in a sweep over several (run/axes)


def _argument(setup: Setup | None, n: Sizes) -> Any:
    """What the function is called with: setup(n) (setup(n, m) over several sizes), else the
    size itself (the tuple of sizes, spread by `_spread`)."""
    if isinstance(n, tuple):
        return setup(*n) if setup is not None else n
    return setup(n) if setup is not None else n


def _spread(func: Func) -> Func:
    """func(n, m) for a sweep over several sizes without setup: the sizes as its arguments."""
    def call(sizes: Any) -> Any:
        return func(*sizes)
    return call


def _parts(target: str) -> list[str]:
    spec = target[len(PREFIX):] if target.startswith(PREFIX) else target
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise ProgramError(f"{target!r} is not MODULE:FUNC, e.g. mypkg.sorting:insertion_sort")
    return parts


def _attr(module: Any, module_name: str, name: str) -> Func:
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part, None)
    if not callable(obj):
        raise ProgramError(f"{module_name!r} has no function {name!r}")
    return obj


def resolve_target(target: str) -> tuple[Func, Setup | None]:
    """`python:MODULE:FUNC[:SETUP]` to (func, setup or None); ProgramError when not there."""
    module_name, func_name, *setup_name = _parts(target)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import can fail in any way; the user needs the reason
        raise ProgramError(f"cannot import {module_name!r}: {exc}") from None
    setup = _attr(module, module_name, setup_name[0]) if setup_name else None
    return _attr(module, module_name, func_name), setup


def resolve_function(target: str) -> Func:
    """`python:MODULE:FUNC` (or `MODULE:FUNC`) to the function; ProgramError when it is not there."""
    return resolve_target(target)[0]


def _call_rusage(r0: resource.struct_rusage, r1: resource.struct_rusage,
                 calls: int = 1) -> dict[str, Any]:
    """The registry's rusage metrics per call between two getrusage readings.

    A running total is the difference of the readings over `calls`; a
    high-water mark (peak RSS) is the later reading, as a delta of peaks means
    nothing.
    """
    before = rusage_values(lambda name: getattr(r0, name))
    after = rusage_values(lambda name: getattr(r1, name))
    out: dict[str, Any] = {}
    for k in after:
        m = metrics.get(k)
        if not m.accumulates:
            out[k] = after[k]
            continue
        v = (after[k] - before[k]) / calls
        out[k] = round(v) if m.integral else v
    return out


def _child(func: Func, setup: Setup | None, n: Sizes, out_fd: int) -> None:
    code = 0
    report: dict[str, Any] = {}
    try:
        arg = _argument(setup, n)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        func(arg)
        t1 = time.monotonic()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        report = {"wall_s": t1 - t0, **_call_rusage(r0, r1)}
    except BaseException:  # the child must report whatever happened, then leave
        code = 1
        report = {"stderr_tail": traceback.format_exc()[-_TAIL_BYTES:]}
    try:
        os.write(out_fd, pickle.dumps(report))
    finally:
        os._exit(code)


class _Expired(BaseException):
    """Raised by SIGALRM inside a timed batch; a BaseException so user code rarely swallows it."""


@contextlib.contextmanager
def _deadline(timeout_s: float | None) -> Iterator[None]:
    """SIGALRM after `timeout_s` raises _Expired (no limit off the main thread)."""
    import threading

    if timeout_s is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _Expired

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class _Left(BaseException):
    """The function called os._exit or os.abort in-process: raised instead, so quadscope lives on."""

    def __init__(self, code: int, how: str) -> None:
        super().__init__(code, how)
        self.code = code
        self.how = how


@contextlib.contextmanager
def _staying_in() -> Iterator[Callable[[Func], Func]]:
    """While inside, os._exit and os.abort in this process raise _Left instead of ending it.

    It yields the function that swaps a target that is one of them (resolved
    before they were replaced) for its stand-in.

    A child the function forks still leaves for real (multiprocessing's workers
    end with os._exit), since the stand-ins look at the pid. A crash in C code
    (a segfault) cannot be caught in-process: --fork measures such a function.
    """
    real_exit, real_abort, pid = os._exit, os.abort, os.getpid()

    def _exit(status: int) -> NoReturn:
        if os.getpid() != pid:
            real_exit(status)
        raise _Left(_failed(status), f"called os._exit({status})")

    def _abort() -> NoReturn:
        if os.getpid() != pid:
            real_abort()
        raise _Left(-signal.SIGABRT, "called os.abort()")

    stand_ins: dict[Any, Any] = {real_exit: _exit, real_abort: _abort}
    os._exit, os.abort = _exit, _abort
    try:
        yield lambda func: stand_ins.get(func, func)
    finally:
        os._exit, os.abort = real_exit, real_abort


_SIGNALS = {int(s) for s in signal.Signals}


def _exit_code(exc: BaseException | None) -> int:
    """The failed run's exit status: SystemExit's own code when it is a failure's, else 1."""
    code = exc.code if isinstance(exc, SystemExit) else 1
    return _failed(code if isinstance(code, int) and not isinstance(code, bool) else 1)


def _failed(status: int) -> int:
    # A function that left did not return: even sys.exit(0) is a run that measured nothing.
    return status if status != 0 else 1


def _batch(func: Func, arg: Any, loops: int) -> tuple[float, dict[str, Any]]:
    """(wall seconds per call, rusage per call) of `loops` back-to-back calls."""
    calls = range(loops)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    for _ in calls:
        func(arg)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (t1 - t0) / loops, _call_rusage(r0, r1, loops)


def next_loops(loops: int, per_call_s: float, min_batch_s: float = MIN_BATCH_S) -> int:
    """The loop count whose batch should last 1.5 × min_batch_s, grown at least 2×, at most 100×."""
    want = math.ceil(1.5 * min_batch_s / max(per_call_s, 1e-9))
    return min(max(want, 2 * loops), 100 * loops)


class FunctionExecutor(SerialExecutor):
    """Runs `(target, size)` as calibrated in-process batches, or one forked call (`fork`)."""

    def __init__(self, functions: Mapping[str, Func] | None = None,
                 setup: Setup | None = None, *, fork: bool = False,
                 min_batch_s: float = MIN_BATCH_S) -> None:
        self._functions = dict(functions or {})
        self._setups: dict[str, Setup | None] = dict.fromkeys(self._functions, setup)
        self.fork = fork
        self._min_batch_s = min_batch_s
        self._loops: dict[tuple[str, Sizes], int] = {}  # loops calibrated per (target, n)
        self._probed: set[str] = set()  # python: targets, whose first call per size is probed
        # Each probed size's failed run, or None when it may run in-process.
        self._crashed: dict[tuple[str, Sizes], Measurement | None] = {}

    def function(self, target: str) -> Func:
        if target not in self._functions:
            self._functions[target], self._setups[target] = resolve_target(target)
            self._probed.add(target)
        return self._functions[target]

    def _probe(self, target: str, func: Func, setup: Setup | None, n: Sizes,
               timeout_s: float | None) -> Measurement | None:
        """The failed run of a `python:` target that crashes or times out at `n` in a fork,
        or None: it may run in-process (see the module docstring). Once per size."""
        key = (target, n)
        if key in self._crashed or target not in self._probed:
            return self._crashed.get(key)
        m = self._forked(func, setup, n, timeout_s)
        if m.timed_out:
            return m  # not kept: a later run at n may be given longer
        self._crashed[key] = None
        if m.exit_code < 0:
            name = signal.Signals(-m.exit_code).name if -m.exit_code in _SIGNALS else \
                f"signal {-m.exit_code}"
            m = replace(m, stderr_tail=(
                f"{target} crashed with {name} at n = {n} (in C code: it would have ended "
                "quadscope, so each size's first call runs in a fork first); "
                "nothing was measured at this size"))
            self._crashed[key] = m
            return m
        return None

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        func = self.function(argv[0])
        setup = self._setups.get(argv[0])
        sizes = tuple(int(a) for a in argv[1:])
        n: Sizes = sizes[0] if len(sizes) == 1 else sizes
        if isinstance(n, tuple) and setup is None:
            func = _spread(func)
        if self.fork:
            return self._forked(func, setup, n, timeout_s)
        if (failed := self._probe(argv[0], func, setup, n, timeout_s)) is not None:
            return failed
        started = time.monotonic()
        try:
            with _deadline(timeout_s), _staying_in() as stand_in:
                func = stand_in(func)  # `python:os:_exit` itself
                arg = _argument(setup, n)
                loops = self._loops.get((argv[0], n), 1)
                while True:
                    per_call_s, ru = _batch(func, arg, loops)
                    if per_call_s * loops >= self._min_batch_s:
                        break
                    loops = next_loops(loops, per_call_s, self._min_batch_s)
        except _Expired:
            return Measurement({"wall_s": timeout_s}, exit_code=-signal.SIGALRM,
                               timed_out=True)
        except _Left as left:
            return Measurement({"wall_s": time.monotonic() - started}, exit_code=left.code,
                               stderr_tail=f"{argv[0]} {left.how}, which would have ended "
                               "quadscope; run it with --fork to let it leave its own process")
        except (Exception, SystemExit):  # the user's function may raise anything: a failed run
            return Measurement({"wall_s": time.monotonic() - started},
                               exit_code=_exit_code(sys.exc_info()[1]),
                               stderr_tail=traceback.format_exc()[-_TAIL_BYTES:])
        self._loops[(argv[0], n)] = loops
        return Measurement({"wall_s": per_call_s, **ru}, exit_code=0)

    def _forked(self, func: Func, setup: Setup | None, n: Sizes,
                timeout_s: float | None) -> Measurement:
        read_fd, write_fd = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            os.close(read_fd)
            _child(func, setup, n, write_fd)
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
