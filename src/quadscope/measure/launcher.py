"""Run processes and measure each: wall time, rusage and (optionally) perf counts.

Contract: `Executor.execute(argv, timeout_s) -> Measurement` runs one process;
`Executor.execute_many(jobs) -> Iterator[Measurement]` runs a batch of `Job`s
(argv + timeout each) one after another, in the order given, and yields each
measurement as soon as its run has ended, so the caller can store it before the
next one starts. Runs never overlap: a concurrent run would disturb the one
being measured. `SerialExecutor` is the base every local executor shares: its
`execute_many` calls `execute` once per job, lazily, so a caller that stops
iterating starts no further run. An executor that runs a batch elsewhere (a
remote node, a resident launcher) overrides `execute_many` alone. `argv` is run
directly, never through a shell (shell mode is the caller's
`["/bin/sh", "-c", s]`), in a new process group, with stdin and stdout on
/dev/null and only the last `stderr_tail_bytes` of stderr kept. `wall_s` spans
the child alone: from just before its fork (or its release from the gate, when
counting with perf) to its reaping. The rusage fields are wait4's for that
child and its reaped descendants. On timeout the whole process group gets
SIGKILL, is reaped, and the measurement says `timed_out=True`. A program that
is missing or not executable raises `ProgramError` before anything runs.

Why a launcher: on Linux, `exec` records the exec'ing process's old peak RSS
into the rusage of the new program. A child forked or vforked straight from
quadscope (30+ MB with numpy loaded) therefore reports quadscope's peak as its
own `ru_maxrss`: /bin/true "uses" 31 MB. So `ProcessExecutor` spawns a tiny C
launcher (built once by `cbuild`) that forks the real child from its own small
image, holds it on a pipe, releases it and starts CLOCK_MONOTONIC just before
its exec, reaps it with wait4 and reports back over a pipe. The launcher also
enforces the timeout (pidfd + poll, no busy-wait) and, being the group's child
subreaper, kills and reaps every member of the group before it reports, so no
stray grandchild outlives a timed-out run. The hold lets a counter backend
attach first (see `meters`). Without a C compiler the executor falls back to
`os.posix_spawn` straight from quadscope (clock around spawn..wait4, pidfd for
the timeout), whose max_rss_bytes has quadscope's peak RSS as a floor;
counting with perf then raises `ToolMissingError`.

Overhead for /bin/true on the 2-core VM, interleaved with `hyperfine -N` in one
run (medians of 500 runs; the machine was shared, so ratios matter, not ms):
hyperfine 0.750 ms; launcher wall_s 0.697 ms (0.93×; 0.945× with a timeout),
~2.2 ms of harness time per run; posix_spawn fallback 0.806 ms (1.07×),
~1.0 ms per run. os.posix_spawn and subprocess.Popen measured the same
(0.56 ms each, quieter moment), so the fallback uses posix_spawn.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, Protocol

from quadscope import metrics
from quadscope.errors import ProgramError, ToolMissingError
from quadscope.measure.clock import FakeClock
from quadscope.measure.meters import CounterBackend, NoCounters, no_counts
from quadscope.model import Measurement

# fds 3 and 4 of the launcher: the release byte comes in on GO, the child's pid
# and then its measurement go out on REPORT. The timed window opens before fork
# or, when gated, just before the release byte is written to the child.
_LAUNCHER_C = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define GO_FD 3
#define REPORT_FD 4

static char read1(int fd) {
    char c = 0;
    while (read(fd, &c, 1) < 0 && errno == EINTR) {}
    return c;
}

static long long since_ns(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)(t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

/* 0 when the child exited before timeout_ns, 1 when the deadline passed first. */
static int wait_exit(pid_t pid, long long timeout_ns, const struct timespec *t0) {
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) _exit(125);
    struct pollfd p = {pfd, POLLIN, 0};
    int expired = 0;
    for (;;) {
        long long left = timeout_ns - since_ns(t0);
        if (left <= 0) { expired = 1; break; }
        int r = poll(&p, 1, (int)((left + 999999) / 1000000));
        if (r > 0) break;
        if (r < 0 && errno != EINTR) _exit(125);
    }
    close(pfd);
    return expired;
}

/* usage: launcher GATED(0|1) TIMEOUT_NS(-1: none) PATH ARGV0 ARGS... */
int main(int argc, char **argv) {
    if (argc < 5) return 125;
    int gated = argv[1][0] == '1';
    long long timeout_ns = atoll(argv[2]);
    /* Orphaned descendants come to us, so a timeout can reap the whole group. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int rel[2], err[2];
    if (pipe2(rel, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return 125;
    /* Ungated, the window opens before fork, as hyperfine's does: waking a child
     * held on a pipe would add a scheduler round trip to every measurement. */
    struct timespec t0;
    pid_t pid = -1;
    if (!gated) {
        /* posix_spawn (a vfork in glibc) as hyperfine's Command does: no page
         * tables copied for a child that only execs. */
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addclose(&fa, GO_FD);
        posix_spawn_file_actions_addclose(&fa, REPORT_FD);
        posix_spawnattr_init(&at);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&at, 0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = posix_spawn(&pid, argv[3], &fa, &at, argv + 4, environ);
        if (rc != 0) {
            dprintf(REPORT_FD, "pid 0\ndone 0 0 0 %d 0 0 0 0 0 0 0 0 0\n", rc);
            return 0;
        }
    } else {
        pid = fork();
    }
    if (pid < 0) return 125;
    if (pid == 0) {
        setpgid(0, 0);
        close(GO_FD);
        close(REPORT_FD);
        if (gated) read1(rel[0]);
        execv(argv[3], argv + 4);
        int e = errno;
        (void)!write(err[1], &e, sizeof e);
        _exit(127);
    }
    setpgid(pid, pid); /* here too, so the group exists before anyone signals it */
    close(rel[0]);
    close(err[1]);
    if (gated) {
        dprintf(REPORT_FD, "pid %d\n", (int)pid);
        if (read1(GO_FD) != 'g') { kill(pid, SIGKILL); waitpid(pid, NULL, 0); return 125; }
        clock_gettime(CLOCK_MONOTONIC, &t0);
        (void)!write(rel[1], "g", 1);
    }
    int timed_out = timeout_ns >= 0 && wait_exit(pid, timeout_ns, &t0);
    if (timed_out) killpg(pid, SIGKILL);
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) return 125;
    long long wall_ns = since_ns(&t0);
    if (timed_out) {
        /* Members that outlived the leader are ours now (subreaper): kill and reap them all. */
        killpg(pid, SIGKILL);
        while (kill(-pid, 0) == 0)
            if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) break;
    }
    /* Ungated, nobody needs the pid early: saying it inside the window would wake
     * quadscope mid-measurement to compete with the child for a CPU. */
    if (!gated) dprintf(REPORT_FD, "pid %d\n", (int)pid);
    int e = 0;
    if (read(err[0], &e, sizeof e) != (ssize_t)sizeof e) e = 0;
    dprintf(REPORT_FD, "done %lld %d %d %d %ld %ld %ld %ld %ld %ld %ld %ld %ld\n",
            wall_ns, timed_out, status, e,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
            ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
    return 0;
}
"""


# The launcher's "done" line, field by field, as its dprintf writes it.
_DONE_FIELDS = ("wall_ns", "timed_out", "status", "errno", "utime_s", "utime_us",
                "stime_s", "stime_us", "ru_maxrss", "ru_minflt", "ru_majflt", "ru_nvcsw",
                "ru_nivcsw")


def _from_done(done: Mapping[str, int]) -> dict[str, float]:
    """The struct rusage fields of a launcher "done" line, times in seconds."""
    ru = {k: float(v) for k, v in done.items() if k.startswith("ru_")}
    ru["ru_utime"] = done["utime_s"] + done["utime_us"] / 1e6
    ru["ru_stime"] = done["stime_s"] + done["stime_us"] / 1e6
    return ru


def rusage_values(ru: Callable[[str], float]) -> dict[str, float | int]:
    """Each rusage metric of the registry from `ru(field)`, a struct rusage field's value."""
    out: dict[str, float | int] = {}
    for m in metrics.by_source(metrics.RUSAGE):
        v = ru(m.events[0]) * m.scale
        out[m.name] = int(v) if m.integral else float(v)
    return out


@dataclass(frozen=True, slots=True)
class Job:
    """One run to execute: the argv (already substituted) and its timeout (None: no limit)."""

    argv: tuple[str, ...]
    timeout_s: float | None


class Executor(Protocol):
    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement: ...

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]: ...


class SerialExecutor(ABC):
    """The serial `execute_many` of every local executor: one `execute` per job, in order.

    A base class rather than a free function so that each executor has the
    method the runner calls, written once; a subclass supplies `execute`, and
    one that ships whole batches elsewhere overrides `execute_many`.
    """

    @abstractmethod
    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement: ...

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]:
        for job in jobs:
            yield self.execute(job.argv, job.timeout_s)


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


def build_launcher() -> str:
    """Path of the launcher, compiled at first use; ToolMissingError without a C compiler."""
    from quadscope.measure.cbuild import compile_c

    return str(compile_c(_LAUNCHER_C, name="quadscope-launcher", flags=("-O2",)))


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def _stderr_tail(f: IO[bytes], tail_bytes: int) -> str:
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - tail_bytes))
    return f.read().decode("utf-8", errors="replace")


def _signal_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group already exited
        os.killpg(pgid, signal.SIGKILL)


class _Lines:
    """Newline-terminated messages from one pipe, read without a busy-wait."""

    __slots__ = ("_buf", "_fd")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buf = b""

    def read(self) -> str:
        while b"\n" not in self._buf:
            chunk = os.read(self._fd, 4096)
            if not chunk:
                raise RuntimeError(f"the quadscope launcher stopped early: {self._buf!r}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()


class ProcessExecutor(SerialExecutor):
    """Runs real processes; see the module docstring for what is measured and how."""

    def __init__(
        self,
        counters: CounterBackend | None = None,
        stderr_tail_bytes: int = 2000,
        *,
        launcher: str | None = "auto",
    ) -> None:
        """`launcher`: "auto" builds it (falling back to posix_spawn), None never uses it."""
        self.counters: CounterBackend = counters if counters is not None else NoCounters()
        self.stderr_tail_bytes = stderr_tail_bytes
        if launcher == "auto":
            try:
                launcher = build_launcher()
            except ToolMissingError:
                if self.counters.gated:
                    raise
                launcher = None
        if launcher is None and self.counters.gated:
            raise ToolMissingError(
                f"counting with {self.counters.name} needs quadscope's C launcher"
            )
        self.launcher = launcher
        self._devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)

    def __del__(self) -> None:
        fd = getattr(self, "_devnull", None)
        if fd is not None:
            os.close(fd)

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        if not argv:
            raise ProgramError("the command is empty")
        path = resolve_program(argv[0])
        with tempfile.TemporaryFile(prefix="quadscope-stderr-") as err:
            if self.launcher is None:
                m = self._run_direct(path, argv, timeout_s, err.fileno())
            else:
                m = self._run_launched(self.launcher, path, argv, timeout_s, err.fileno())
            return replace(m, stderr_tail=_stderr_tail(err, self.stderr_tail_bytes))

    def _file_actions(self, err_fd: int) -> list[tuple[int, int, int]]:
        return [
            (os.POSIX_SPAWN_DUP2, self._devnull, 0),
            (os.POSIX_SPAWN_DUP2, self._devnull, 1),
            (os.POSIX_SPAWN_DUP2, err_fd, 2),
        ]

    def _run_direct(
        self, path: str, argv: Sequence[str], timeout_s: float | None, err_fd: int
    ) -> Measurement:
        actions = self._file_actions(err_fd)
        args = list(argv)  # built before the clock starts
        env = os.environ
        timed_out = False
        t0 = time.monotonic()
        try:
            pid = os.posix_spawn(path, args, env, file_actions=actions, setpgroup=0)
        except OSError as e:
            raise ProgramError(f"'{argv[0]}' could not be run: {e.strerror}") from None
        if timeout_s is not None:
            # pidfd + poll waits for exit or the deadline without a thread or a busy-wait.
            pidfd = os.pidfd_open(pid)
            try:
                p = select.poll()
                p.register(pidfd, select.POLLIN)
                if not p.poll(max(0, int(timeout_s * 1000))):
                    timed_out = True
                    _signal_group(pid)
            finally:
                os.close(pidfd)
        _, status, ru = os.wait4(pid, 0)
        wall_s = time.monotonic() - t0
        if timed_out:
            # The leader is reaped; descendants that outlived it were in the same group.
            _signal_group(pid)
        return Measurement(
            rusage_values(lambda name: getattr(ru, name)),
            wall_s=wall_s,
            exit_code=_exit_code(status),
            timed_out=timed_out,
        )

    def _run_launched(
        self, launcher: str, path: str, argv: Sequence[str], timeout_s: float | None, err_fd: int
    ) -> Measurement:
        gated = self.counters.gated
        timeout_ns = "-1" if timeout_s is None else str(max(0, int(timeout_s * 1e9)))
        go_r, go_w = os.pipe()
        rep_r, rep_w = os.pipe()
        actions = [
            *self._file_actions(err_fd),
            (os.POSIX_SPAWN_DUP2, go_r, 3),
            (os.POSIX_SPAWN_DUP2, rep_w, 4),
        ]
        try:
            lpid = os.posix_spawn(
                launcher,
                [launcher, "1" if gated else "0", timeout_ns, path, *argv],
                os.environ,
                file_actions=actions,
            )
        finally:
            os.close(go_r)
            os.close(rep_w)
        lines = _Lines(rep_r)
        counting = None
        try:
            pid = int(lines.read().split()[1])
            try:
                if gated:
                    counting = self.counters.attach(pid)
                    os.write(go_w, b"g")
            finally:
                os.close(go_w)  # without a release byte the launcher kills the held child
            done = lines.read().split()
        finally:
            counts = counting.stop() if counting is not None else no_counts()
            os.close(rep_r)
            os.waitpid(lpid, 0)
        fields = dict(zip(_DONE_FIELDS, (int(x) for x in done[1:]), strict=True))
        if fields["errno"]:
            raise ProgramError(f"'{argv[0]}' could not be run: {os.strerror(fields['errno'])}")
        ru = _from_done(fields)
        return Measurement(
            {**rusage_values(ru.__getitem__), **counts},
            wall_s=fields["wall_ns"] / 1e9,
            exit_code=_exit_code(fields["status"]),
            timed_out=bool(fields["timed_out"]),
        )


class FakeExecutor(SerialExecutor):
    """Returns `cost(argv)` and moves `clock` by its wall_s; records every argv it was given."""

    def __init__(self, cost: Callable[[Sequence[str]], Measurement], clock: FakeClock) -> None:
        self._cost = cost
        self._clock = clock
        self._calls: list[tuple[str, ...]] = []

    @property
    def calls(self) -> tuple[tuple[str, ...], ...]:
        return tuple(self._calls)

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
    "Executor",
    "FakeExecutor",
    "Job",
    "ProcessExecutor",
    "SerialExecutor",
    "build_launcher",
    "resolve_program",
]
