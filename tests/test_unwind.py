"""Frame pointers missing: which stacks stop short of main, and what the profile says."""

from __future__ import annotations

from quadscope.profile.stacks import Frame
from quadscope.profile.unwind import broken_share, dwarf_note, needs_dwarf, rebuild_note

PROG, LIBC, K = "/tmp/csvjoin", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]"
WHOLE = (Frame("_start", PROG), Frame("__libc_start_call_main", LIBC), Frame("main", PROG),
         Frame("__strlen_evex", LIBC))
LEAF = (Frame("__strlen_evex", LIBC),)
IRQ = (Frame("handle_softirqs", K),)


def test_a_frame_pointer_build_reaches_main_and_needs_no_dwarf() -> None:
    stacks = {WHOLE: 900, (*LEAF[:0], Frame("[unknown]", "[unknown]"), *LEAF): 50, IRQ: 500}
    assert broken_share(stacks) == 50 / 950  # the kernel-only stack is not judged
    assert not needs_dwarf(stacks)
    # glibc keeps no frame pointers: its own chains break (28% of csvjoin's, built with them)
    assert not needs_dwarf({WHOLE: 72, (Frame("sysmalloc", LIBC),): 28})


def test_stacks_that_stop_at_the_leaf_call_for_dwarf() -> None:
    """gcc -O2 without -fno-omit-frame-pointer: 78% of csvjoin's fp stacks were the leaf alone."""
    stacks = {WHOLE: 220, LEAF: 780}
    assert broken_share(stacks) == 0.78 and needs_dwarf(stacks)
    assert needs_dwarf({LEAF: 1}) and not needs_dwarf({})


def test_the_notes_name_the_unwinder_and_the_rebuild_flag() -> None:
    assert "perf --call-graph dwarf" in dwarf_note(0.78) and "78%" in dwarf_note(0.78)
    assert "-fno-omit-frame-pointer" in rebuild_note(0.5) and "[unknown]" in rebuild_note(0.5)


def test_the_dynamic_loader_s_stacks_are_not_judged() -> None:
    """A -fno-omit-frame-pointer csvjoin at n = 2000 is mostly ld.so starting: 65% of its
    stacks never reached main, and it was unwound with DWARF for nothing."""
    ld = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    loader = (Frame("[unknown]", "[unknown]"), Frame("intel_check_word.constprop.0", ld))
    execve = (Frame("__GI___execve", LIBC), Frame("__x64_sys_execve", K))
    stacks = {loader: 650, (Frame("do_lookup_x", ld),): 100, execve: 300, WHOLE: 250}
    assert broken_share(stacks) == 0.0 and not needs_dwarf(stacks)
