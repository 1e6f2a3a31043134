"""A profiler's run of the user's program, to its end or its deadline and never beyond.

Contract: `run_bounded(cmd, timeout_s, capture=...)` runs `cmd` (perf record,
py-spy record or valgrind, with the user's program under it) with stdin on
/dev/null and returns a `Finished`: the exit status (None when it outlasted
`timeout_s`), its wall time from spawn to reap, and, for the streams named in
`capture` ("stdout", "stderr"), what they said. However it ends (done, past the
deadline, Ctrl-C, SIGTERM, or quadscope SIGKILLed) every process it started is
killed, one that left its session (a `setsid` daemon) included, so a program
that hangs under the profiler, or forks one that outlives it, is not left
running; its output goes through files, never pipes, so nothing left behind
holds quadscope waiting. A deadline is an outcome, never an exception:
`subprocess.run`'s TimeoutExpired once ended `quadscope profile` with exit 70.
A `cmd` whose program is not found raises FileNotFoundError, as Popen does.
`cut_note(size_n, limit_s, why)` is the one sentence a sampler adds to a
profile whose recording met its deadline.

How: the run is a run of quadscope's resident launcher (`measure.resident`, as
`bisect`'s builds are): a cgroup of its own, else a child subreaper, killed whole
after the run; and the launcher reads EOF on its request pipe when quadscope
dies, however it dies, and kills the run with everything it started (a group
SIGKILL of quadscope takes the launcher too; then its watchdog, in a session of
its own, kills the cgroup). Quadscope's own subreaper (`orphans.adopting`), which
ends with quadscope, left a `setsid` daemon of every recording a SIGKILLed
`profile` was in (10 of them after one killed `profile` here). Without a C
compiler for the launcher the run is a child of quadscope in a session of its
own, that session killed afterwards and what left it adopted and killed: sound
while quadscope lives; a SIGKILL of quadscope then leaves the recording and its
daemons running (PR_SET_PDEATHSIG would reach the profiler alone, not what it
started, and fires when the spawning thread ends, not the process).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import IO

from quadscope.errors import ToolMissingError
from quadscope.orphans import adopting
from quadscope.scratch import scratch_dir
from quadscope.units import fmt_seconds


@dataclass(frozen=True, slots=True)
class Finished:
    """How a bounded run ended: its exit status (None: killed at the deadline), its wall
    time from spawn to reap, and its output."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def _read(f: IO[bytes] | None) -> str:
    if f is None:
        return ""
    f.seek(0)
    return f.read().decode(errors="replace")


def _launcher() -> str | None:
    """The resident launcher's path, or None without a C compiler to build it."""
    from quadscope.measure.resident import build_launcher

    try:
        return build_launcher()
    except ToolMissingError:
        return None


def run_bounded(cmd: Sequence[str], timeout_s: float | None, *,
                capture: Collection[str] = ()) -> Finished:
    """Run `cmd` until it ends or `timeout_s` passes (see the contract)."""
    if not cmd or shutil.which(cmd[0]) is None:
        name = cmd[0] if cmd else ""
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
    launcher = _launcher()
    if launcher is not None:
        done = _in_launcher(launcher, cmd, timeout_s, capture)
        if done is not None:
            return done
    return _in_session(cmd, timeout_s, capture)


# The launcher's run: its streams into the files named, then the command itself.
_REDIRECT_SH = 'out=$1 err=$2; shift 2; exec "$@" >"$out" 2>"$err"'


def _in_launcher(launcher: str, cmd: Sequence[str], timeout_s: float | None,
                 capture: Collection[str]) -> Finished | None:
    """`cmd` as one run of a launcher of its own; None when the launcher cannot start."""
    from quadscope.measure.resident import Request, ResidentLauncher

    with scratch_dir("run") as tmp:
        out = os.path.join(tmp, "stdout") if "stdout" in capture else os.devnull
        err = os.path.join(tmp, "stderr") if "stderr" in capture else os.devnull
        try:
            resident = ResidentLauncher(launcher, tail_bytes=0)
        except (OSError, RuntimeError, ToolMissingError):
            return None
        try:
            reply = resident.run(Request("/bin/sh", ("/bin/sh", "-c", _REDIRECT_SH,
                                                     "quadscope-run", out, err, *cmd),
                                         (), timeout_s))
        finally:
            resident.close()
        if reply.errno:
            raise OSError(reply.errno, os.strerror(reply.errno), "/bin/sh")
        code = None if reply.timed_out else os.waitstatus_to_exitcode(reply.status)
        said = [_text(path) if path != os.devnull else "" for path in (out, err)]
        return Finished(code, said[0], said[1], reply.wall_ns / 1e9)


def _text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:  # the shell could not create it: the run said nothing there
        return ""


def _in_session(cmd: Sequence[str], timeout_s: float | None,
                capture: Collection[str]) -> Finished:
    """`cmd` in a session of its own, killed afterwards with what left it (the contract)."""
    with contextlib.ExitStack() as files:
        out = files.enter_context(tempfile.TemporaryFile()) if "stdout" in capture else None
        err = files.enter_context(tempfile.TemporaryFile()) if "stderr" in capture else None
        adoption = files.enter_context(adopting())  # a `setsid` daemon is ours to kill too
        t0 = time.monotonic()
        proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL,
                                stdout=out or subprocess.DEVNULL,
                                stderr=err or subprocess.DEVNULL, start_new_session=True)
        adoption.watch(proc.pid)
        code: int | None = None
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            wall_s = time.monotonic() - t0
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return Finished(code, _read(out), _read(err), wall_s)


def cut_note(size_n: int, limit_s: float | None, why: str = "") -> str:
    """The sentence for a recording at `size_n` stopped at its deadline `limit_s`, `why` so."""
    after = "" if limit_s is None else f" after {fmt_seconds(limit_s)}"
    because = f" ({why})" if why else ""
    return (f"the recording at n = {size_n} was stopped{after}{because}: its profile holds "
            "only what was sampled until then")


__all__ = ["Finished", "cut_note", "run_bounded"]
