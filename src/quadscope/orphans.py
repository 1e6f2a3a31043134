"""No process a child starts outlives it, even one that left the child's session.

Contract: `adopting()` is a context manager around running a child (a profiler
with the user's program under it, a build without the launcher): while it is
open quadscope is a child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux 3.4+),
so every process the child starts that outlives its parent — a `setsid` daemon,
a double fork — becomes quadscope's child instead of init's. When the block
ends, however it ends, `adopting` SIGKILLs and reaps every such process (and
what each of them started, adopted in turn), then turns the attribute off. The
caller first kills the child's own session or group as before; the processes
quadscope already had as children when the block began (the resident launcher,
its watchdog) are never touched. Where prctl is unavailable it does nothing
and says so in `Adoption.works`. Standard library only (ctypes, /proc).

Why: `profile` ran its samplers in a session of their own and killed that
session afterwards, but a program that starts a daemon with `setsid` (a server
under test, a build's compiler server) left one running after each sampled run:
31 `sleep` processes after one `quadscope profile` of such a script. The
measured runs never did (the launcher's cgroup or subreaper kills them).
Limit: adoption ends with quadscope, so a SIGKILLed quadscope leaves what it had
not yet killed; `profile/child` and `run/worktree` therefore run through the
launcher where one can be built, and come here only without a C compiler.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

PR_SET_CHILD_SUBREAPER = 36
SETTLE_S = 2.0  # how long a killed session's processes get to exit, and orphan theirs
MAX_ROUNDS = 64  # killing an adopted daemon orphans its children to us: a few rounds at most


@dataclass(slots=True)
class Adoption:
    """One `adopting` block: whether adoption works here, the sessions the caller's child
    led (`watch(pid)`: waited for until empty before the last look), and the pids killed."""

    works: bool
    killed: list[int] = field(default_factory=list)
    sessions: set[int] = field(default_factory=set)

    def watch(self, session: int) -> None:
        """The child leads session `session`: its processes orphan theirs as they die."""
        self.sessions.add(session)


def _set_subreaper(on: bool) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def processes() -> list[tuple[int, str, int, int]]:
    """Every process as (pid, state, ppid, session), from /proc."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 3:
            found.append((int(entry.name), fields[0].decode(), int(fields[1]), int(fields[3])))
    return found


def children() -> set[int]:
    """The pids whose parent is quadscope."""
    me = os.getpid()
    return {pid for pid, _, ppid, _ in processes() if ppid == me}


def _kill_and_reap(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


@contextlib.contextmanager
def adopting() -> Iterator[Adoption]:
    """Adopt what the child leaves behind while the block runs; kill it all at its end."""
    before = children()
    adoption = Adoption(_set_subreaper(True))
    try:
        yield adoption
    finally:
        if adoption.works:
            try:
                _reap_adopted(before, adoption)
            finally:
                _set_subreaper(False)


def _reap_adopted(before: set[int], adoption: Adoption) -> None:
    """Kill and reap every child of ours that was not one when the block began, until the
    watched sessions are empty (or SETTLE_S passed) and no such child is left."""
    me = os.getpid()
    deadline = time.monotonic() + SETTLE_S
    rounds = 0
    while True:
        procs = processes()
        adopted = {pid for pid, _, ppid, _ in procs if ppid == me and pid not in before}
        if adopted and rounds < MAX_ROUNDS:  # bounded: a fork bomb is not chased forever
            rounds += 1
            _kill_and_reap(adopted)
            adoption.killed.extend(sorted(adopted))
            continue
        dying = any(sid in adoption.sessions and state != "Z" for _, state, _, sid in procs)
        if not dying or time.monotonic() >= deadline:
            return
        time.sleep(0.02)  # the killed session's processes still exiting orphan theirs


__all__ = ["Adoption", "adopting", "children", "processes"]
