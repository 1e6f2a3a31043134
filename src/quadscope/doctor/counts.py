"""Exact counts of a probe helper's system calls, for judges that decide from a count, not a time.

Contract: `parse_summary(text)` (pure) reads `strace -f -c -U calls,errors,name`'s
table into `{syscall: Calls(calls, errors)}`; `count_syscalls(argv, timeout_s)`
runs argv once under strace and returns that table, None when strace is missing
or the run failed (never raises for those: a judge then decides from timing as
before, and says so). `failed_creates(table)` is the number of open/openat/creat
calls that failed: for a helper that creates a file with O_CREAT|O_EXCL, the
names it probed that already existed.

Why: a cost with a countable cause (names probed, page faults, system calls)
is the same number on every run, however busy the machine; its time is not.
spawn-drift's k-th launch costs ~10 µs per name probed over ~1 ms of start-up,
and read "pathological" in one run and "ok" in another minutes apart; the
number of names it probed at launch 1 and at the last launch (0 and K) is not
a matter of noise. strace slows a run (~20 µs per call), so it counts a single
run outside the timed sweep; its time is never used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CREATES = ("open", "openat", "openat2", "creat")


@dataclass(frozen=True, slots=True)
class Calls:
    """How often one system call was made in a run, and how often it failed."""

    calls: int
    errors: int = 0


def parse_summary(text: str) -> dict[str, Calls]:
    """strace `-c -U calls,errors,name` output as {syscall: Calls}; the total row left out."""
    table: dict[str, Calls] = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields or not fields[0].isdigit() or fields[-1] == "total":
            continue
        if len(fields) == 3 and fields[1].isdigit():
            table[fields[2]] = Calls(int(fields[0]), int(fields[1]))
        elif len(fields) == 2:
            table[fields[1]] = Calls(int(fields[0]))
    return table


def failed_creates(table: Mapping[str, Calls]) -> int:
    """Failed open/openat/creat calls: the names a create-if-absent loop found taken."""
    return sum(table[name].errors for name in CREATES if name in table)


def count_syscalls(argv: Sequence[str], timeout_s: float) -> dict[str, Calls] | None:
    """`argv` run once under `strace -f -c`: its system calls; None without strace or when
    the run failed or timed out."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    fd, out = tempfile.mkstemp(prefix="quadscope-strace-")
    os.close(fd)
    try:
        proc = subprocess.run([strace, "-f", "-c", "-U", "calls,errors,name", "-o", out,
                               *argv], capture_output=True, timeout=timeout_s, check=False)
        if proc.returncode != 0:
            return None
        with open(out, errors="replace") as f:
            return parse_summary(f.read())
    except (subprocess.TimeoutExpired, OSError):
        return None
    finally:
        os.unlink(out)


__all__ = ["CREATES", "Calls", "count_syscalls", "failed_creates", "parse_summary"]
