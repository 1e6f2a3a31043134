"""What machine a sweep ran on: enough to tell two machines apart in a comparison.

Contract: `host_info()` reads only cheap local facts (uname, /proc, libc) and
never fails: a fact it cannot read is left out. `this_process()` is the
`Owner` record of the calling process and `is_alive(owner)` whether that
process still runs: same host, same boot, and a process with that pid and the
same start time in /proc (a reused pid has another start time). A process on
another host cannot be checked and counts as alive.
"""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path

from quadscope.model import Owner


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def host_info() -> dict[str, str]:
    info = {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cpus": str(os.cpu_count() or 0),
        "python": platform.python_version(),
    }
    libc, version = platform.libc_ver()
    if libc:
        info["libc"] = f"{libc} {version}"
    with contextlib.suppress(OSError):
        info["cmdline"] = Path("/proc/cmdline").read_text().strip()[:500]
    return info


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (after the parenthesised name, which may hold spaces)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def this_process(since: float = 0.0) -> Owner:
    """This process as the owner of a sweep."""
    pid = os.getpid()
    return Owner(pid=pid, host=platform.node(), boot_id=_boot_id(),
                 start_ticks=_start_ticks(pid) or 0, since=since)


def is_alive(owner: Owner) -> bool:
    """Whether `owner` still runs. On another host (or without /proc) we cannot tell: True."""
    if owner.host != platform.node():
        return True
    if owner.boot_id and _boot_id() and owner.boot_id != _boot_id():
        return False  # the machine rebooted since
    ticks = _start_ticks(owner.pid)
    if ticks is None:
        return not Path("/proc/self/stat").exists() and _pid_exists(owner.pid)
    return ticks == owner.start_ticks or owner.start_ticks == 0


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
