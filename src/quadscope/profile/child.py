"""A profiler's run of the user's program, to its end or its deadline and never beyond.

Contract: `run_bounded(cmd, timeout_s, capture=...)` runs `cmd` (perf record,
py-spy record or valgrind, with the user's program under it) in a new session
with stdin on /dev/null and returns a `Finished`: the exit status (None when it
outlasted `timeout_s`) and, for the streams named in `capture` ("stdout",
"stderr"), what they said. However it ends (done, past the deadline, Ctrl-C,
SIGTERM) every process left in that session is killed, and every process that
left the session (`orphans.adopting`: a `setsid` daemon), so a program that hangs
under the profiler, or forks one that outlives it, is not left running; its
output goes through files, never pipes, so nothing left behind holds quadscope
waiting. A deadline is an outcome, never an exception: `subprocess.run`'s
TimeoutExpired once ended `quadscope profile` with exit 70. `cut_note(size_n,
limit_s, why)` is the one sentence a sampler adds to a profile whose recording
met its deadline.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import IO

from quadscope.orphans import adopting
from quadscope.units import fmt_seconds


@dataclass(frozen=True, slots=True)
class Finished:
    """How a bounded run ended: its exit status (None: killed at the deadline) and output."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def _read(f: IO[bytes] | None) -> str:
    if f is None:
        return ""
    f.seek(0)
    return f.read().decode(errors="replace")


def run_bounded(cmd: Sequence[str], timeout_s: float | None, *,
                capture: Collection[str] = ()) -> Finished:
    """Run `cmd` in its own session until it ends or `timeout_s` passes (see the contract)."""
    with contextlib.ExitStack() as files:
        out = files.enter_context(tempfile.TemporaryFile()) if "stdout" in capture else None
        err = files.enter_context(tempfile.TemporaryFile()) if "stderr" in capture else None
        adoption = files.enter_context(adopting())  # a `setsid` daemon is ours to kill too
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
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return Finished(code, _read(out), _read(err))


def cut_note(size_n: int, limit_s: float | None, why: str = "") -> str:
    """The sentence for a recording at `size_n` stopped at its deadline `limit_s`, `why` so."""
    after = "" if limit_s is None else f" after {fmt_seconds(limit_s)}"
    because = f" ({why})" if why else ""
    return (f"the recording at n = {size_n} was stopped{after}{because}: its profile holds "
            "only what was sampled until then")


__all__ = ["Finished", "cut_note", "run_bounded"]
