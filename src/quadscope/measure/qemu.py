"""Exact instruction counts under QEMU's user-mode emulator: Valgrind's count, faster.

Contract: `find()` is the `Qemu` counting tool for programs on this machine, or
None where it cannot count here: `QUADSCOPE_NO_QEMU` set, no `qemu-<machine>`
(Debian's qemu-user; scripts/setup installs it), no C compiler to build the
plugin, or a count of `true` under it that does not come back (a container
forbidding its mappings). `Qemu.prefix(out_dir)` is the argv prefix that counts
the program it runs into a file in out_dir; `Qemu.total(out_dir)` is the count,
None when no process wrote one (killed), and raises `PartCounted` when the
program started another process or a thread (the plugin saw clone, fork, vfork,
execve or clone3: an exec'd child runs natively, uncounted, and threads share
one counter): the caller counts that command under Valgrind instead
(`measure.exact.InstructionMeter`'s `fallback`), never reporting a part as
the whole.

Why: with no hardware counter (a VM), Valgrind was the exact meter, and its
start is the floor of every count: 0.20 s for a 1 ms C program, 0.87 s for
`python3 -c pass` on the quiet 2-core VM, where QEMU with this plugin took
0.03 s and 0.24 s (a median 4.9x faster per count over the accuracy suite and three CPython
programs, 1.6-7.4x; BENCHMARKS.md §6).
Both count the guest's user-space instructions one by one, a `rep movsb` once
per byte, and the work added between two sizes alike (to 4 digits on all 24
cases of bench/count_tools.py); QEMU counts about 21,500 fewer at a C
program's start (Valgrind's preloaded runtime), so a sweep keeps one tool
from its first count on.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources

from quadscope.errors import ToolMissingError
from quadscope.scratch import scratch_dir

OPT_OUT = "QUADSCOPE_NO_QEMU"
PLUGIN_FLAGS = ("-O2", "-shared", "-fPIC", "-fvisibility=hidden")
COUNT_FILE = "qemu.count"
PROBE_TIMEOUT_S = 30.0
# What one count under QEMU costs, as `meters.base.Cost` prices a run: its start (a 1 ms
# C program counts in 0.03 s, `python3 -c pass` in 0.24 s) and the slowdown of the run
# itself (3-5x on a C loop, more where the guest runs code once, as Python's start).
# Priced high rather than low: the plan learns the real cost from each count.
STARTUP_S = 0.05
SLOWDOWN = 10.0


class PartCounted(Exception):
    """The program started another process or a thread: its count is not the whole command's."""


@dataclass(frozen=True, slots=True)
class Qemu:
    """Counts one program's instructions under `qemu` with the plugin at `plugin`."""

    qemu: str
    plugin: str

    def prefix(self, out_dir: str) -> list[str]:
        if "," in out_dir:  # QEMU splits a plugin's arguments at commas
            raise PartCounted(f"the count's folder {out_dir!r} holds a comma")
        return [self.qemu, "-plugin", f"{self.plugin},out={out_dir}/{COUNT_FILE}"]

    def total(self, out_dir: str) -> int | None:
        return read_count(os.path.join(out_dir, COUNT_FILE))


def read_count(path: str) -> int | None:
    """The count the plugin wrote at `path` (module docstring); None when none was written."""
    try:
        with open(path, errors="replace") as f:
            lines = [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return None
    if len(lines) > 1 or any(len(w) == 3 and w[2] != "0" for w in lines):
        raise PartCounted("the program started another process or a thread")
    if not lines or len(lines[0]) != 3 or not lines[0][1].isdigit():
        return None  # none written, or a line cut short
    return int(lines[0][1])


def executable() -> str | None:
    """This machine's QEMU user-mode emulator for its own architecture, if installed."""
    return shutil.which(f"qemu-{platform.machine()}")


def plugin_source() -> str:
    return resources.files("quadscope.measure").joinpath("qemu_insns.c").read_text()


def find() -> Qemu | None:
    """The QEMU counting tool, or None where it cannot count here (module docstring)."""
    if os.environ.get(OPT_OUT):
        return None
    qemu = executable()
    if qemu is None:
        return None
    from quadscope.measure.cbuild import compile_c

    try:
        plugin = str(compile_c(plugin_source(), name="quadscope-qemu-insns", flags=PLUGIN_FLAGS))
    except ToolMissingError:
        return None
    tool = Qemu(qemu, plugin)
    return tool if _counts(tool) else None


@functools.lru_cache(maxsize=4)
def _counts(tool: Qemu) -> bool:
    """Whether `true` counted under `tool` gives a count: QEMU runs and loads the plugin here."""
    true = shutil.which("true")
    if true is None:
        return False
    with scratch_dir("qemu-probe") as out:
        try:
            proc = subprocess.run([*tool.prefix(out), true], capture_output=True,
                                  timeout=PROBE_TIMEOUT_S, check=False)
            count = tool.total(out) if proc.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, PartCounted):
            return False
    return bool(count)
