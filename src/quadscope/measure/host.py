"""What machine a sweep ran on: enough to tell two machines apart in a comparison.

Contract: `host_info()` reads only cheap local facts (uname, /proc, libc) and
never fails: a fact it cannot read is left out.
"""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path


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
