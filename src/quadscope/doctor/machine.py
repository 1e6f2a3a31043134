"""What this machine is, as far as the doctor's findings depend on it.

Contract: `machine_info()` reads cheap local facts (uname, glibc, /proc/cpuinfo,
/proc/cmdline, /proc/self/maps, the clock source, transparent huge pages, the
file system of the temp directory) and never fails: a fact it cannot read is
"". The parsers (`vsyscall_mode_from_maps`, `vsyscall_param`, `fs_type_of`) are
pure so they are tested on fixed text.

vsyscall modes (Documentation/admin-guide/kernel-parameters.txt, `vsyscall=`):
`emulate` maps the page readable and executable (`r-xp`); `xonly` maps it
execute-only (`--xp`), so each call traps and the kernel emulates it from the
page-fault handler; `none` leaves it unmapped, so a call is SIGSEGV.
"""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from quadscope.measure.host import boot_flags

VSYSCALL_MODES = ("emulate", "xonly", "none")


@dataclass(frozen=True, slots=True)
class MachineInfo:
    kernel: str = ""  # uname -r
    kernel_version: str = ""  # uname -v
    machine: str = ""
    libc: str = ""
    cpu: str = ""
    cpus: int = 0
    cmdline: str = ""  # the performance boot flags only (measure.host.boot_flags)
    vsyscall_mode: str = ""  # emulate | xonly | none, from /proc/self/maps
    vsyscall_param: str = ""  # vsyscall= on the kernel command line, "" when absent
    clocksource: str = ""
    thp: str = ""  # transparent_hugepage/enabled, the selected value
    tmp_dir: str = ""
    tmp_fs: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MachineInfo:
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


def vsyscall_mode_from_maps(maps_text: str) -> str:
    """emulate / xonly / none from the permissions of the `[vsyscall]` line of a maps file."""
    for line in maps_text.splitlines():
        if line.rstrip().endswith("[vsyscall]"):
            perms = line.split()[1] if len(line.split()) > 1 else ""
            return "emulate" if perms.startswith("r") else "xonly"
    return "none"


def vsyscall_param(cmdline: str) -> str:
    """The value of `vsyscall=` on a kernel command line, or "" (the kernel's default)."""
    value = ""
    for word in cmdline.split():
        if word == "--":  # what follows belongs to init, not the kernel
            break
        if word.startswith("vsyscall="):
            value = word.split("=", 1)[1]
    return value


def fs_type_of(path: str, mounts_text: str) -> str:
    """The file system type of the longest mount point containing `path`."""
    best, best_type = "", ""
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        inside = path == mnt or path.startswith(mnt.rstrip("/") + "/") or mnt == "/"
        if inside and len(mnt) >= len(best):
            best, best_type = mnt, parts[2]
    return best_type


def selected(sysfs_text: str) -> str:
    """The bracketed choice of a sysfs multiple-choice file: `always [madvise] never` → madvise."""
    for word in sysfs_text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return sysfs_text.strip()


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def libc_version() -> str:
    """glibc's own answer (gnu_get_libc_version), else the first line of `ldd --version`."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        fn = libc.gnu_get_libc_version
        fn.restype = ctypes.c_char_p
        v = fn()
        if v:
            return f"glibc {v.decode()}"
    except (OSError, AttributeError):
        pass
    try:
        out = subprocess.run(
            ["ldd", "--version"], capture_output=True, text=True, timeout=5, check=False
        )
        text = (out.stdout or out.stderr).splitlines()
        return text[0].strip() if text else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _cpu_model(cpuinfo: str) -> str:
    for line in cpuinfo.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def machine_info() -> MachineInfo:
    u = platform.uname()
    cmdline = _read("/proc/cmdline").strip()
    tmp = tempfile.gettempdir()
    return MachineInfo(
        kernel=u.release,
        kernel_version=u.version,
        machine=u.machine,
        libc=libc_version(),
        cpu=_cpu_model(_read("/proc/cpuinfo")),
        cpus=os.cpu_count() or 0,
        cmdline=boot_flags(cmdline),  # only the performance flags: never the whole line
        vsyscall_mode=vsyscall_mode_from_maps(_read("/proc/self/maps")),
        vsyscall_param=vsyscall_param(cmdline),
        clocksource=_read(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource"
        ).strip(),
        thp=selected(_read("/sys/kernel/mm/transparent_hugepage/enabled")),
        tmp_dir=tmp,
        tmp_fs=fs_type_of(os.path.realpath(tmp), _read("/proc/self/mounts")),
    )
