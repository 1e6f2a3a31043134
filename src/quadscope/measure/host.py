"""What machine a sweep ran on: enough to tell two machines apart in a comparison.

Contract: `host_info()` is a `Host` record (`quadscope.host`) of cheap local
facts (uname, /proc, libc, the L2 and last-level caches' sizes from sysfs,
`l2_bytes` and `llc_bytes`) and never fails: a fact it cannot read is left
out. `this_process()` is the `Owner` record of the calling process and
`is_alive(owner)` whether that process still runs: same host, same boot, and
a process with that pid and the same start time in /proc (a reused pid has
another start time). A process on another host cannot be checked and counts
as alive. Of the kernel command line it keeps only the boot flags that change
performance (`boot_flags`, an allow-list): the rest (root devices, cloud
images, tokens) is nobody's business in a shared report. `shown_host(host,
vs_host=)` is the one line reports show: kernel, CPU, cores, libc and those
flags (and, given B's machine in a comparison, that B ran elsewhere), also
for sweeps stored before the allow-list, whose whole `cmdline` it filters the
same way.
"""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path

from quadscope.host import Host
from quadscope.model import Owner


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# Boot parameters that change what a program costs: syscall and timer paths,
# speculation mitigations, huge pages, CPU isolation, frequency and idle states.
PERF_BOOT_FLAGS: tuple[str, ...] = (
    "vsyscall", "mitigations", "transparent_hugepage", "isolcpus", "nohz_full", "nohz",
    "rcu_nocbs", "clocksource", "tsc", "intel_pstate", "amd_pstate", "idle",
    "intel_idle.max_cstate", "processor.max_cstate", "nosmt", "spectre_v2", "pti",
    "hugepages", "default_hugepagesz", "numa_balancing", "preempt", "threadirqs",
)


def boot_flags(cmdline: str) -> str:
    """The allow-listed performance flags of a kernel command line, in their order."""
    kept = []
    for word in cmdline.split():
        if word == "--":  # what follows belongs to init, not the kernel
            break
        if word.split("=", 1)[0] in PERF_BOOT_FLAGS:
            kept.append(word)
    return " ".join(kept)


def shown_host(host: Host, *, vs_host: str = "") -> str:
    """kernel, CPU ×cores, libc and the performance boot flags, as one line.

    `vs_host` is B's machine in a comparison of sweeps from two machines."""
    parts = []
    if host.kernel:
        parts.append(f"Linux {host.kernel}" if host.machine is None
                     else f"Linux {host.kernel} {host.machine}")
    if host.cpu or host.cpus is not None:
        parts.append(f"{host.cpu or 'CPU'} ×{'?' if host.cpus is None else host.cpus}")
    if host.libc:
        parts.append(host.libc)
    flags = host.boot_flags or boot_flags(host.cmdline or "")
    if flags:
        parts.append(f"boot: {flags}")
    if vs_host:
        parts.append("B on another host")
    return ", ".join(parts)


CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"


def cache_size_bytes(text: str) -> int | None:
    """A sysfs cache size ("32K", "512K", "32768K", "1M") in bytes; None if unreadable."""
    text = text.strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() else None


def cache_levels(cache_dir: Path = Path(CACHE_DIR)) -> dict[int, int]:
    """CPU 0's data or unified caches: {level: bytes}, {} when sysfs does not say."""
    levels: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for index in cache_dir.glob("index*"):
            try:
                if (index / "type").read_text().strip() == "Instruction":
                    continue
                level = int((index / "level").read_text())
                size = cache_size_bytes((index / "size").read_text())
            except (OSError, ValueError):
                continue
            if size:
                levels[level] = size
    return levels


def host_info() -> Host:
    """This machine's facts; one it cannot read is left out (None)."""
    levels = cache_levels()
    libc, version = platform.libc_ver()
    flags = ""
    with contextlib.suppress(OSError):
        flags = boot_flags(Path("/proc/cmdline").read_text())
    return Host(
        hostname=platform.node(),
        kernel=platform.release(),
        machine=platform.machine(),
        cpu=_cpu_model(),
        cpus=os.cpu_count() or 0,
        python=platform.python_version(),
        # What analyse.memory reads a working set against.
        llc_bytes=levels[max(levels)] if levels else None,
        l2_bytes=levels.get(2) if levels else None,
        libc=f"{libc} {version}" if libc else None,
        boot_flags=flags or None,
    )


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
    # A zombie is gone too: killed, and not yet reaped (a container whose init reaps nothing).
    return (ticks == owner.start_ticks or owner.start_ticks == 0) and pid_runs(owner.pid)


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_runs(pid: int) -> bool:
    """Whether process `pid` of this machine runs: a zombie (dead, not yet reaped) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        return _pid_exists(pid)
    return stat.rpartition(")")[2].split()[:1] != ["Z"]
