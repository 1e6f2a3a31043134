"""Which unwinder perf's call stacks need: frame pointers, or DWARF where they are missing. Pure.

Contract: `broken_share(stacks)` is the share of user-space weight whose stack
never reaches a program's entry (`ENTRY_FRAMES`: `_start`, the libc start
functions, a thread's `start_thread`/`clone`): a frame-pointer walk through
code built without frame pointers (`gcc -O2` omits them) stops after the
leaf, or wanders to `[unknown]`. `needs_dwarf(stacks)` says when that share
is over `MAX_BROKEN_SHARE`: the sampler then records again with
`--call-graph dwarf` (the CPU's LBR call stacks are not available on this
kind of machine: no hardware counters). `dwarf_note(share)` says which
unwinder was used and why; `rebuild_note(share)` is said when even DWARF
leaves most stacks short, naming the flag to rebuild with. Kernel-only
stacks (interrupts), stacks of no user frame, exec's and the dynamic
loader's (a process starting: most of a millisecond program's samples at its
smallest size, and ld.so keeps no frame pointers) are not judged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from quadscope.profile.stacks import UNKNOWN, Stack

ENTRY_FRAMES = frozenset({"_start", "__libc_start_main", "__libc_start_main_impl",
                          "__libc_start_call_main", "start_thread", "clone", "clone3",
                          "_dl_start", "_dl_start_user"})
MAX_BROKEN_SHARE = 0.5  # csvjoin: 0.28 with frame pointers (glibc has none), 0.78 without
REBUILD = "-fno-omit-frame-pointer"


def _user_frames(stack: Stack) -> list[str]:
    """The user-space frames that say where a stack is: not the kernel's, not the dynamic
    loader's (a process starting, unwound or not), not an unknown object's."""
    if any("execve" in f.symbol for f in stack):  # a process being started
        return []
    frames = [f for f in stack if not f.kernel and f.dso != UNKNOWN]
    if all(os.path.basename(f.dso).startswith("ld-") for f in frames):
        return []
    return [f.symbol for f in frames]


def broken_share(stacks: Mapping[Stack, int]) -> float:
    """Share of the user-space weight whose stack has no entry frame (see the docstring)."""
    judged = broken = 0
    for stack, w in stacks.items():
        user = _user_frames(stack)
        if not user:
            continue
        judged += w
        if not ENTRY_FRAMES.intersection(user):
            broken += w
    return broken / judged if judged else 0.0


def needs_dwarf(stacks: Mapping[Stack, int]) -> bool:
    return broken_share(stacks) > MAX_BROKEN_SHARE


def dwarf_note(share: float) -> str:
    return (f"call stacks unwound with DWARF debug information (perf --call-graph dwarf): "
            f"{share:.0%} of the frame-pointer stacks stopped short of main, so the program "
            f"keeps no frame pointers; rebuilt with {REBUILD} it is profiled more cheaply")


def rebuild_note(share: float) -> str:
    return (f"{share:.0%} of the call stacks stop short of main even unwound with DWARF: "
            f"callers shown as [unknown] cannot be named; rebuild the program with -g "
            f"{REBUILD} to name them")


__all__ = ["ENTRY_FRAMES", "MAX_BROKEN_SHARE", "broken_share", "dwarf_note", "needs_dwarf",
           "rebuild_note"]
