"""Page faults as a cost: what kind they are, who causes them, one sentence each. Pure.

Contract: `classify_faults(data, size_n, resolver=None, interpreted=False) -> FaultReport` reads
fault samples (the `exceptions:page_fault_user` tracepoint, whose
`error_code` tells writes from reads, or the `page-faults` software event with
`-d` data addresses) plus the mmap records of the same recording, and puts
every fault in one kind:

  vsyscall     the address is in the legacy vsyscall page
               (0xffffffffff600000–0xffffffffff601000); with vsyscall=xonly
               each call there traps and the kernel emulates it
  demand-zero  first touch of anonymous memory (heap, stack, //anon mmaps, or
               no mapping at all: brk'd heap is not an mmap event)
  file-backed  a page of a mapped file (code, read-only data, mmap'd files)
  copy-on-write  a write to a private file mapping, or a write to a present
               anonymous page (shared with a forked parent)
  other        no address

Weights are sample periods, so a recording with `-c 1000` counts 1000 faults
per sample. `sentences` are the diagnosis shown to people, largest kind first;
their advice is for the target's kind: a native program is told about its own
buffers and MAP_POPULATE, a program run by an interpreter (`interpreted`, a
Python command) about the objects it keeps, which the interpreter allocates.
"""

from __future__ import annotations

from quadscope.profile.callsite import CallSiteResolver
from quadscope.profile.perfscript import MmapRecord, PerfData, PerfSample, sample_stack
from quadscope.profile.records import FaultReport as FaultReport
from quadscope.profile.stacks import VSYSCALL_END, VSYSCALL_START, Frame

KINDS = ("vsyscall", "demand-zero", "file-backed", "copy-on-write", "other")
_ANON_NAMES = ("//anon", "[stack]", "[heap]", "/dev/zero", "/SYSV", "/memfd:", "[anon")
MIN_KIND_SHARE = 0.1  # kinds below this share of all faults get no sentence
PF_PRESENT, PF_WRITE = 0x1, 0x2


def fault_kind(sample: PerfSample, mmaps: tuple[MmapRecord, ...]) -> str:
    addr = sample.addr
    if addr is None:
        return "other"
    if VSYSCALL_START <= addr < VSYSCALL_END:
        return "vsyscall"
    code = sample.trace.get("error_code")
    write = code is not None and bool(code & PF_WRITE)
    present = code is not None and bool(code & PF_PRESENT)
    # The newest mapping covering the address wins: a later mmap replaces an older one.
    mapping = next((m for m in reversed(mmaps) if m.pid == sample.pid and m.contains(addr)), None)
    if mapping is None or mapping.name.startswith(_ANON_NAMES) or not mapping.name.startswith("/"):
        return "copy-on-write" if write and present else "demand-zero"
    if write and mapping.prot.endswith("p"):
        return "copy-on-write"
    return "file-backed"


def _caller(stack: tuple[Frame, ...]) -> str | None:
    for f in reversed(stack):
        if not f.kernel and f.known and f.symbol != "[vsyscall]":
            return f.symbol
    return None


def fmt_rate(r: float) -> str:
    return f"{r:.0f}" if r >= 10 else f"{r:.2g}"


def classify_faults(
    data: PerfData, size_n: int, *, resolver: CallSiteResolver | None = None,
    exclude_pids: tuple[int, ...] = (), interpreted: bool = False,
) -> FaultReport:
    by_kind: dict[str, int] = {}
    callers: dict[str, dict[str, int]] = {}
    for s in data.samples:
        if s.pid in exclude_pids:
            continue
        kind = fault_kind(s, data.mmaps)
        by_kind[kind] = by_kind.get(kind, 0) + s.period
        who = _caller(sample_stack(s, resolver)) or "an unknown caller"
        c = callers.setdefault(kind, {})
        c[who] = c.get(who, 0) + s.period
    top = {k: max(v.items(), key=lambda kv: (kv[1], kv[0]))[0] for k, v in callers.items()}
    total = sum(by_kind.values())
    ordered = {k: by_kind[k] for k in sorted(by_kind, key=lambda k: (-by_kind[k], KINDS.index(k)))}
    sentences = tuple(
        _sentence(kind, count, size_n, top.get(kind, "an unknown caller"), interpreted)
        for kind, count in ordered.items()
        if total and count / total >= MIN_KIND_SHARE and kind != "other"
    )
    return FaultReport(size_n, total, ordered, top, sentences)


def _sentence(kind: str, count: int, size_n: int, caller: str, interpreted: bool = False) -> str:
    r = count / size_n if size_n else 0.0
    faults = "page fault" if fmt_rate(r) == "1" else "page faults"
    if kind == "vsyscall":
        return (
            f"about {fmt_rate(r)} {faults} per call, at the vsyscall page, from {caller}: this "
            "kernel maps [vsyscall] execute-only, so every call through 0xffffffffff600400 traps "
            "and is emulated; call time()/gettimeofday() through libc (the vDSO) instead"
        )
    if kind == "demand-zero" and interpreted:
        return (
            f"{count} first-touch faults on anonymous memory (about {fmt_rate(r)} per n) from "
            f"{caller}: the interpreter takes fresh pages for the objects the program keeps, "
            "and each is zeroed on first touch; keep fewer objects alive, or reuse one "
            "container (a bytearray or array.array) instead of building new ones"
        )
    if kind == "demand-zero":
        return (
            f"{count} first-touch faults on anonymous memory (about {fmt_rate(r)} per n) from "
            f"{caller}: every new page is zeroed on first touch; reuse buffers instead of "
            "allocating fresh ones, or pre-fault with MAP_POPULATE"
        )
    if kind == "file-backed":
        return (
            f"{count} faults on file-backed pages (about {fmt_rate(r)} per n) from {caller}: "
            "code or mmap'd file pages are read in on first use; touch fewer distinct pages or "
            "read the file sequentially"
        )
    return (
        f"{count} copy-on-write faults (about {fmt_rate(r)} per n) from {caller}: writes to "
        "private file mappings or to memory shared with a forked parent copy a page each; "
        "write to fresh anonymous memory or avoid fork before writing"
    )
