"""Run processes and measure each: wall time, rusage and (optionally) perf counts.

Contract: `Executor.execute(argv, timeout_s) -> Measurement` runs one process;
`Executor.execute_many(jobs) -> Iterator[Measurement]` runs a batch of `Job`s
one after another, in the order given, and yields each measurement as soon as
it has it, so the caller can store it (`ProcessExecutor` runs a batch back to
back in its launcher and takes the replies of short runs in a few at a time,
at most `resident.LOOK_S` late; `SerialExecutor` yields each before the next
run starts). `execute_chunks(jobs) -> Iterator[Chunk]` is the same batch a
look at a time: a `Chunk` holds the measurements taken in together, and says
whether they are `logged` (on disk, tagged, in the launcher's reply log until
the caller asks for the next chunk), in which case the caller may store them
in one transaction with no journal of its own (the runner does);
`SerialExecutor`'s chunks are one measurement each, not logged. A
`Job` may carry untimed commands to run before its measured run: `setup` (the
runner gives it to the first job of each size) and `prepare` (every job); a
failing one raises `SetupError` naming it, and nothing of it is measured. Runs
never overlap: a concurrent run would disturb the one being measured.
`SerialExecutor` is the base every local executor shares: its `execute_many`
runs each job's untimed commands (`run_untimed`) and then the job
(`execute_job`), lazily, so a caller that stops iterating starts no further
run. An executor that runs a batch elsewhere (a remote node) overrides
`execute_many` alone, and runs the untimed commands there too. `argv` is run
directly, never through a shell (shell mode is the caller's `["/bin/sh", "-c",
s]`), in a new process group, with stdin and stdout on /dev/null and only the
last `stderr_tail_bytes` of stderr kept; the environment is quadscope's (as it
was at the executor's first run), with a job's `env` added. `wall_s` spans the
child alone: from just before its spawn to its reaping, hyperfine -N's window
(launcher.c). The rusage fields are wait4's for that child and its reaped
descendants. On timeout the whole process group gets SIGKILL, is reaped, and
the measurement says `timed_out=True`. No process a run starts outlives it:
`cleanup` names how (see `resident`; the posix_spawn fallback kills the run's
group after each run, so it misses setsid children). A program that is missing
or not executable raises `ProgramError` before anything runs.

How: `ProcessExecutor` hands every run to one resident C launcher (`resident`,
`launcher.c`), started at its first run and kept for the executor's life.
Spawning from that small process, not from quadscope, matters beyond speed: on
Linux `exec` records the exec'ing process's old peak RSS into the new
program's rusage, so a child forked straight from quadscope (30+ MB with
numpy) would report quadscope's peak as its own `ru_maxrss`. The launcher also
counts the counter backend's perf events on each child (opened once, inherited
by every run), enforces the timeout and reaps the group. Without a C compiler
the executor falls back to `os.posix_spawn` from quadscope (clock around
spawn..wait4, pidfd for the timeout), whose max_rss_bytes has quadscope's peak
RSS as a floor, and which cannot count: asking it to count raises
`ToolMissingError`; its `--cpu` pinning pins quadscope itself, which the child
inherits.

Overhead: `bench/overhead.py` measures it against `hyperfine -N`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import signal
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

from quadscope import metrics
from quadscope.errors import ProgramError, SetupError, SetupTimeoutError, ToolMissingError
from quadscope.measure.clock import FakeClock
from quadscope.measure.counters import METRIC_OF_EVENT, CounterBackend, NoCounters
from quadscope.measure.resident import (
    Reply,
    Request,
    ResidentLauncher,
    build_launcher,
    default_rescue_dir,
)
from quadscope.model import Measurement
from quadscope.textsafe import command_text, visible
from quadscope.units import fmt_exit

_RUSAGE_METRICS = metrics.by_source(metrics.RUSAGE)
_MAX_CACHED_REQUESTS = 4096  # distinct (argv, env, timeout) requests kept
# (metric, struct rusage field, scale, integral) of each: `measurement_of`'s plan.
_RUSAGE_PLAN = tuple((m.name, m.events[0], m.scale, m.integral) for m in _RUSAGE_METRICS)
_NONE: dict[str, float | int | None] = dict.fromkeys(metrics.RAW_NAMES)  # every raw metric


def rusage_values(ru: Callable[[str], float]) -> dict[str, float | int]:
    """Each rusage metric of the registry from `ru(field)`, a struct rusage field's value."""
    out: dict[str, float | int] = {}
    for m in _RUSAGE_METRICS:
        v = ru(m.events[0]) * m.scale
        out[m.name] = int(v) if m.integral else float(v)
    return out


_T = TypeVar("_T")  # what an executor yields: a measurement or a chunk


@dataclass(frozen=True, slots=True)
class Job:
    """One run to execute: the argv (already substituted) and its timeout (None: no limit).

    `env`: variables added to the child's environment (the size padding).
    `setup`, `prepare`: argvs run untimed before this run (None: nothing), each allowed
    `untimed_timeout_s` (None: no limit). It is not the run's own timeout: an adaptive
    sweep caps a run at a few times its predicted time, and writing a size's input
    often costs more than reading it (`seq -f %09.0f 8000000`: 1.8 s, `tac` of it 0.1 s).
    `tag`: which run this is, for the launcher's rescue manifest (`run.rescue`); "" none.
    """

    argv: tuple[str, ...]
    timeout_s: float | None
    env: tuple[tuple[str, str], ...] = ()
    setup: tuple[str, ...] | None = None
    prepare: tuple[str, ...] | None = None
    tag: str = ""
    untimed_timeout_s: float | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """The measurements of consecutive jobs of a batch, taken in at one look, in order.

    `logged`: each is on disk already, with its job's tag, until the caller asks for
    the next chunk (the resident launcher's reply log, `run.rescue`), so storing the
    chunk in one transaction before asking loses nothing to a kill; False: the caller
    keeps each one safe itself (the store's journal).
    """

    measurements: tuple[Measurement, ...]
    logged: bool = False


class Executor(Protocol):
    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement: ...

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]: ...

    def execute_chunks(self, jobs: Iterable[Job]) -> Iterator[Chunk]: ...


class SerialExecutor(ABC):
    """The serial `execute_many` of every local executor: one `execute` per job, in order.

    A base class rather than a free function so that each executor has the
    method the runner calls, written once; a subclass supplies `execute`, and
    one that ships whole batches elsewhere overrides `execute_many`.
    """

    @abstractmethod
    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement: ...

    def execute_job(self, job: Job) -> Measurement:
        """The measured run of `job`; an executor that honours `job.env` overrides this."""
        return self.execute(job.argv, job.timeout_s)

    def run_untimed(self, what: str, argv: Sequence[str], timeout_s: float | None) -> None:
        """Run a `--setup` or `--prepare` command (`what`); SetupError when it fails."""
        run_untimed(self, what, argv, timeout_s)

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]:
        for job in jobs:
            if job.setup is not None:
                self.run_untimed("--setup", job.setup, job.untimed_timeout_s)
            if job.prepare is not None:
                self.run_untimed("--prepare", job.prepare, job.untimed_timeout_s)
            yield self.execute_job(job)

    def execute_chunks(self, jobs: Iterable[Job]) -> Iterator[Chunk]:
        """`execute_many`'s measurements, one chunk each (none logged)."""
        for m in self.execute_many(jobs):
            yield Chunk((m,))


def run_untimed(executor: Executor, what: str, argv: Sequence[str],
                timeout_s: float | None) -> None:
    """Run a `--setup` or `--prepare` command (`what`) on `executor`; SetupError when it fails."""
    m = executor.execute(argv, timeout_s)
    if not m.ok:
        raise (SetupTimeoutError if m.timed_out else SetupError)(_failure(what, argv, m))


def _failure(what: str, argv: Sequence[str], m: Measurement) -> str:
    # The command and the child's stderr are other people's text: quoted through
    # textsafe, so an escape sequence it printed reaches the terminal as text.
    shell = tuple(argv[:2]) == ("/bin/sh", "-c")
    shown = command_text(argv[-1:] if shell else argv, shell=shell)
    how = (f"timed out after {m.wall_s:.3g} s" if m.timed_out
           else f"was {fmt_exit(m.exit_code)}" if m.exit_code < 0
           else f"exited with status {m.exit_code}")
    last = m.stderr_tail.strip().splitlines()[-1:] or [""]
    said = f" saying: {visible(last[0].strip())[:200]}" if last[0].strip() else ""
    return f"{what} `{shown}` {how}{said}; nothing was measured for this run"


def resolve_program(argv0: str) -> str:
    """The path that running `argv0` would execute (shutil.which semantics), or ProgramError."""
    if os.sep in argv0:
        if not os.path.exists(argv0):
            raise ProgramError(f"'{argv0}' does not exist")
        if os.path.isdir(argv0) or not os.access(argv0, os.X_OK):
            raise ProgramError(f"'{argv0}' is not executable")
        return argv0
    found = shutil.which(argv0)
    if found is None:
        raise ProgramError(f"program '{argv0}' not found on PATH")
    return found


def cannot_run(argv0: str, err: int, path: str | None = None) -> ProgramError:
    """Why exec refused `argv0` in one sentence: for a script whose #! interpreter is
    missing, that interpreter (exec says "No such file or directory" of a file that is
    there); for a file exec cannot read as a program, what it is not."""
    why = os.strerror(err)
    where = path or shutil.which(argv0) or argv0
    if err == errno.ENOENT and os.path.isfile(where):
        interpreter = _interpreter(where)
        if interpreter:
            why = f"its interpreter {interpreter} (its #! line) does not exist"
    elif err == errno.ENOEXEC:
        why = ("it is not a program this machine runs (a binary for another system, "
               "or a script without a #! line)")
    return ProgramError(f"'{argv0}' could not be run: {why}")


def _interpreter(path: str) -> str:
    """The program a script's #! line names, or ""."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return ""
    if not first.startswith(b"#!"):
        return ""
    words = first[2:].decode("utf-8", "replace").split()
    return words[0] if words else ""


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def _signal_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group already exited
        os.killpg(pgid, signal.SIGKILL)


def _expired(pid: int, timeout_s: float) -> bool:
    """Waits for `pid` to exit or the deadline; at the deadline kills its group (True)."""
    # pidfd + poll waits for exit or the deadline without a thread or a busy-wait.
    pidfd = os.pidfd_open(pid)
    try:
        p = select.poll()
        p.register(pidfd, select.POLLIN)
        if p.poll(max(0, int(timeout_s * 1000))):
            return False
        _signal_group(pid)
        return True
    finally:
        os.close(pidfd)


class ProcessExecutor(SerialExecutor):
    """Runs real processes; see the module docstring for what is measured and how."""

    def __init__(
        self,
        counters: CounterBackend | None = None,
        stderr_tail_bytes: int = 2000,
        *,
        launcher: str | None = "auto",
        cpus: Sequence[int] = (),
        rescue_dir: Path | None = None,
    ) -> None:
        """`launcher`: "auto" builds it (falling back to posix_spawn), None never uses it.

        `cpus`: the CPUs every run is pinned to (empty: wherever the kernel likes).
        `rescue_dir`: where a launcher keeps the replies of a quadscope killed mid-batch
        (`run.rescue`); None: `resident.default_rescue_dir()`.
        """
        self.rescue_dir = rescue_dir
        self.counters: CounterBackend = counters if counters is not None else NoCounters()
        self.stderr_tail_bytes = stderr_tail_bytes
        self.cpus = tuple(cpus)
        if launcher == "auto":
            try:
                launcher = build_launcher()
            except ToolMissingError:
                if self.counters.events:
                    raise
                launcher = None
        if launcher is None and self.counters.events:
            raise ToolMissingError(
                f"counting with {self.counters.name} needs quadscope's C launcher"
            )
        self.launcher = launcher
        self._resident: ResidentLauncher | None = None
        self._paths: dict[str, str] = {}  # argv[0] -> resolved path, looked up once
        self._requests: dict[tuple[object, ...], Request] = {}  # by (argv, env, timeout_s)
        self._devnull: int | None = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)

    def close(self) -> None:
        """Stop the resident launcher; a later run starts a new one."""
        if self._resident is not None:
            self._resident.close()
            self._resident = None

    def __del__(self) -> None:
        fd = getattr(self, "_devnull", None)
        if fd is not None:
            os.close(fd)
            self._devnull = None

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self.execute_job(Job(tuple(argv), timeout_s))

    def execute_job(self, job: Job) -> Measurement:
        if self.launcher is not None:
            reply = self._launcher(self.launcher).run(self._request(job), job.tag)
            return self.measurement_of(job, reply)
        path = self._path(job.argv)
        with tempfile.TemporaryFile(prefix="quadscope-stderr-") as err:
            m = self._run_direct(path, job, err.fileno())
            size = err.seek(0, os.SEEK_END)
            err.seek(max(0, size - self.stderr_tail_bytes))
            return replace(m, stderr_tail=err.read().decode("utf-8", errors="replace"))

    @property
    def cleanup(self) -> str:
        """What is killed after each run: "cgroup" or "subreaper" (all it started), else "group"."""
        return self._resident.cleanup if self._resident is not None else "group"

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]:
        """As `SerialExecutor`'s, but jobs with no untimed command go to the launcher in batches.

        A batch runs back to back in the launcher (`ResidentLauncher.run_many`);
        a job with a --setup or --prepare runs alone, after its untimed commands.
        """
        return self._split(jobs, self._run_batch, super().execute_many)

    def execute_chunks(self, jobs: Iterable[Job]) -> Iterator[Chunk]:
        """As `execute_many`, but a chunk at each look at the launcher (`run_chunks`).

        A batch's chunks are `logged` when every job is tagged and the launcher keeps
        its rescue; a job with an untimed command is a chunk of its own, not logged.
        """
        return self._split(jobs, self._run_chunks, super().execute_chunks)

    def _split(self, jobs: Iterable[Job], batch: Callable[[str, Sequence[Job]], Iterator[_T]],
               alone: Callable[[Iterable[Job]], Iterator[_T]]) -> Iterator[_T]:
        """`jobs` in order, lazily: each run of jobs with no untimed command as one
        launcher batch (`batch`), each job with one `alone`; every job `alone` when there
        is no launcher."""
        if self.launcher is None:
            yield from alone(jobs)
            return
        plain: list[Job] = []
        for job in jobs:
            if job.setup is None and job.prepare is None:
                plain.append(job)
                continue
            yield from batch(self.launcher, plain)
            plain = []
            yield from alone((job,))
        yield from batch(self.launcher, plain)

    def _run_chunks(self, launcher: str, jobs: Sequence[Job]) -> Iterator[Chunk]:
        if not jobs:
            return
        requests = [self._request(job) for job in jobs]  # a missing program: before any run
        tags = [job.tag for job in jobs] if all(job.tag for job in jobs) else []
        resident = self._launcher(launcher)
        chunks = resident.run_chunks(requests, tags)
        done = 0
        try:
            for replies in chunks:
                measurements, error = self._measurements(jobs[done:done + len(replies)], replies)
                done += len(replies)
                if measurements:
                    yield Chunk(measurements, logged=bool(tags) and resident.logging)
                if error is not None:
                    raise error
        finally:
            chunks.close()  # cut short: the launcher is closed, its logs kept, the run killed

    def _measurements(self, jobs: Sequence[Job], replies: Sequence[Reply],
                      ) -> tuple[tuple[Measurement, ...], ProgramError | None]:
        """The measurements of `replies`, up to the first program that could not run."""
        out = []
        for job, reply in zip(jobs, replies, strict=True):
            try:
                out.append(self.measurement_of(job, reply))
            except ProgramError as e:
                return tuple(out), e
        return tuple(out), None

    def _path(self, argv: Sequence[str]) -> str:
        """The program argv[0] runs, looked up once (ProgramError when there is none)."""
        if not argv:
            raise ProgramError("the command is empty")
        path = self._paths.get(argv[0])
        if path is None:
            path = self._paths[argv[0]] = resolve_program(argv[0])
        return path

    def _request(self, job: Job) -> Request:
        # A sweep runs each size many times: its request is made once (a few µs a run).
        key = (job.argv, job.env, job.timeout_s)
        request = self._requests.get(key)
        if request is None:
            if len(self._requests) >= _MAX_CACHED_REQUESTS:
                self._requests.clear()
            request = self._requests[key] = Request(
                self._path(job.argv), job.argv,
                tuple(os.fsencode(f"{k}={v}") for k, v in job.env), job.timeout_s)
        return request

    def ready(self) -> None:
        """Start the resident launcher now, from this thread: it dies with the thread that
        started it (PR_SET_PDEATHSIG), so one used from short-lived threads (counts run at
        once, `measure.concurrent`) is started by the thread that outlives them."""
        if self.launcher is not None:
            self._launcher(self.launcher)

    def _launcher(self, launcher: str) -> ResidentLauncher:
        if self._resident is None or self._resident.closed:
            self._resident = ResidentLauncher(launcher, events=self.counters.events,
                                              cpus=self.cpus, tail_bytes=self.stderr_tail_bytes,
                                              rescue_dir=self.rescue_dir or default_rescue_dir())
        return self._resident

    def _run_batch(self, launcher: str, jobs: Sequence[Job]) -> Iterator[Measurement]:
        if not jobs:
            return
        requests = [self._request(job) for job in jobs]  # a missing program: before any run
        tags = [job.tag for job in jobs] if all(job.tag for job in jobs) else []
        replies = self._launcher(launcher).run_many(requests, tags)
        try:
            for job, reply in zip(jobs, replies, strict=True):
                yield self.measurement_of(job, reply)
        finally:
            replies.close()  # cut short: the launcher is closed, the run in flight killed

    @staticmethod
    def measurement_of(job: Job, reply: Reply) -> Measurement:
        """What a launcher's reply says of `job` (ProgramError: it could not be run)."""
        if reply.errno:
            raise cannot_run(job.argv[0], reply.errno)
        # rusage_values and counts_by_metric unrolled: this is on every run's path.
        values = _NONE.copy()
        ru = reply.rusage
        for name, field, scale, integral in _RUSAGE_PLAN:
            v = ru[field] * scale
            values[name] = int(v) if integral else float(v)
        for event, n in reply.counts.items():
            values[METRIC_OF_EVENT[event]] = n
        values["wall_s"] = reply.wall_ns / 1e9
        return Measurement.trusted(values, exit_code=_exit_code(reply.status),
                                   timed_out=reply.timed_out, stderr_tail=reply.stderr_tail)

    def _file_actions(self, err_fd: int) -> list[tuple[int, int, int]]:
        assert self._devnull is not None
        return [
            (os.POSIX_SPAWN_DUP2, self._devnull, 0),
            (os.POSIX_SPAWN_DUP2, self._devnull, 1),
            (os.POSIX_SPAWN_DUP2, err_fd, 2),
        ]

    def _run_direct(self, path: str, job: Job, err_fd: int) -> Measurement:
        argv, timeout_s = job.argv, job.timeout_s
        if self.cpus and os.sched_getaffinity(0) != set(self.cpus):
            os.sched_setaffinity(0, self.cpus)  # inherited by every child spawned from here
        actions = self._file_actions(err_fd)
        args = list(argv)  # built before the clock starts
        env = {**os.environ, **dict(job.env)}
        t0 = time.monotonic()
        try:
            pid = os.posix_spawn(path, args, env, file_actions=actions, setpgroup=0)
        except OSError as e:
            raise cannot_run(argv[0], e.errno or 0, path) from None
        try:
            timed_out = timeout_s is not None and _expired(pid, timeout_s)
            _, status, ru = os.wait4(pid, 0)
        except BaseException:  # Ctrl-C or SIGTERM: the run in flight goes with us
            _signal_group(pid)
            os.waitpid(pid, 0)
            raise
        wall_s = time.monotonic() - t0
        # The leader is reaped; what it left running in its group goes too.
        _signal_group(pid)
        return Measurement(
            rusage_values(lambda name: getattr(ru, name)),
            wall_s=wall_s,
            exit_code=_exit_code(status),
            timed_out=timed_out,
        )

class FakeExecutor(SerialExecutor):
    """Returns `cost(argv)` and moves `clock` by its wall_s; records every argv it was given."""

    def __init__(self, cost: Callable[[Sequence[str]], Measurement], clock: FakeClock) -> None:
        self._cost = cost
        self._clock = clock
        self._calls: list[tuple[str, ...]] = []
        self._untimed: list[tuple[str, tuple[str, ...]]] = []

    @property
    def calls(self) -> tuple[tuple[str, ...], ...]:
        """The argv of every measured run, in order."""
        return tuple(self._calls)

    @property
    def untimed_calls(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """("--setup" or "--prepare", argv) of every untimed command, in order; none moves the clock."""
        return tuple(self._untimed)

    def run_untimed(self, what: str, argv: Sequence[str], timeout_s: float | None) -> None:
        self._untimed.append((what, tuple(argv)))

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        self._calls.append(tuple(argv))
        m = self._cost(argv)
        if timeout_s is not None and m.wall_s > timeout_s:
            self._clock.advance(timeout_s)
            return replace(m, values={**m.values, "wall_s": timeout_s}, timed_out=True,
                           exit_code=-signal.SIGKILL)
        self._clock.advance(m.wall_s)
        return m


__all__ = [
    "Chunk",
    "Executor",
    "FakeExecutor",
    "Job",
    "ProcessExecutor",
    "SerialExecutor",
    "resolve_program",
]
