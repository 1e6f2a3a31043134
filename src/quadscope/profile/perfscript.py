"""Parse `perf script` text into samples, mmap records and exec records.

Contract: `parse(lines)` reads the output of
`perf script -F comm,pid,tid,period,event,ip,sym,dso[,addr|,trace]` for a
recording made with `-g`, optionally with `--show-mmap-events
--show-task-events`, and returns a `PerfData`. Each `PerfSample` has its
callchain leaf first, as perf prints it. `stacks(data, event=, exclude_pids=,
resolver=)` turns samples into root-first `Frame` stacks with summed periods,
and returns them with the number of samples counted. Pure: no process is run here,
so the recorded fixtures in tests/fixtures/perf pin the format down.

The field list is fixed (see `SCRIPT_FIELDS`) because perf's default layout
changes between versions and with the recorded events; with an explicit list a
sample header is always `comm pid/tid period event: [rest]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from quadscope.profile.callsite import CallSiteResolver
from quadscope.profile.kallsyms import KernelSymbols
from quadscope.profile.stacks import (
    KERNEL_DSO,
    UNKNOWN,
    VSYSCALL_DSO,
    VSYSCALL_END,
    VSYSCALL_START,
    Frame,
    Stack,
)

SCRIPT_FIELDS = "comm,pid,tid,period,event,ip,sym,dso"

# comm may hold spaces ("Web Content"), event may hold a colon
# ("exceptions:page_fault_user"), so anchor on pid/tid and the trailing colon.
_HEADER = re.compile(
    r"^(?P<comm>.*?)\s+(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+(?P<period>\d+)"
    r"\s+(?P<event>\S+?):(?:\s+(?P<rest>.*))?$"
)
_MMAP = re.compile(
    r"PERF_RECORD_MMAP2? (?P<pid>-?\d+)/\d+: \[(?P<start>0x[0-9a-f]+)\((?P<len>0x[0-9a-f]+)\) @ \S+"
    r"(?: [0-9a-f]+:[0-9a-f]+ \d+ \d+)?\]: (?P<prot>\S+) (?P<name>.*)$"
)
_EXEC = re.compile(r"PERF_RECORD_COMM exec: .*?:(?P<pid>\d+)/\d+")
_TRACE_FIELD = re.compile(r"(\w+)=(0x[0-9a-fA-F]+|-?\d+)")


@dataclass(frozen=True, slots=True)
class PerfSample:
    comm: str
    pid: int
    tid: int
    period: int
    event: str
    chain: tuple[tuple[int, str, str], ...]  # (ip, symbol, dso), leaf first
    addr: int | None = None  # the data address (-d, or a fault tracepoint's address=)
    trace: dict[str, int] = field(default_factory=dict)  # a tracepoint's numeric fields


@dataclass(frozen=True, slots=True)
class MmapRecord:
    pid: int
    start: int
    length: int
    prot: str  # "r-xp", "rw-s", ...: the last letter says private or shared
    name: str  # a path, "//anon", "[stack]", "[heap]", "[vdso]", ...

    def contains(self, addr: int) -> bool:
        return self.start <= addr < self.start + self.length


@dataclass(frozen=True, slots=True)
class PerfData:
    samples: tuple[PerfSample, ...]
    mmaps: tuple[MmapRecord, ...] = ()
    exec_pids: tuple[int, ...] = ()  # pids in the order they exec'd; [0] is perf's own child


def _frame_line(line: str) -> tuple[int, str, str] | None:
    body = line.strip()
    ip_text, _, rest = body.partition(" ")
    try:
        ip = int(ip_text, 16)
    except ValueError:
        return None
    # The dso is the last parenthesised group that opens with / or [: C++ symbols carry
    # their own parens, and a replaced binary's dso ends in " (deleted)".
    idx = rest.rfind(" (")
    while idx > 0 and rest[idx + 2 : idx + 3] not in ("/", "["):
        idx = rest.rfind(" (", 0, idx)
    if idx < 0 or not rest.endswith(")"):
        return ip, rest or UNKNOWN, UNKNOWN
    return ip, rest[:idx] or UNKNOWN, rest[idx + 2 : -1]


def _named(frame: tuple[int, str, str] | None,
           kernel: KernelSymbols | None) -> tuple[int, str, str] | None:
    """The frame with its kernel symbol filled in from `kernel` when perf left it unknown."""
    if kernel is None or frame is None or frame[1] != UNKNOWN or frame[2] != KERNEL_DSO:
        return frame
    named = kernel.lookup(frame[0])
    return frame if named is None else (frame[0], *named)


def _sample(header: str, raw_chain: tuple[str, ...],
            frames: dict[str, tuple[int, str, str] | None],
            kernel: KernelSymbols | None) -> PerfSample | None:
    """The sample of one header line and its callchain lines, or None for no header."""
    head = _HEADER.match(header.rstrip("\n"))
    if head is None:
        return None
    chain: list[tuple[int, str, str]] = []
    for raw in raw_chain:
        try:
            frame = frames[raw]
        except KeyError:
            frame = frames[raw] = _named(_frame_line(raw), kernel)
        if frame is not None:
            chain.append(frame)
    comm, pid, tid, period, event, rest = head.groups()
    rest = rest or ""
    addr = None
    trace: dict[str, int] = {}
    if "=" in rest:
        trace = {k: int(v, 0) for k, v in _TRACE_FIELD.findall(rest)}
        addr = trace.get("address")
    elif rest:
        first = rest.split(" ", 1)[0]
        try:
            addr = int(first, 16)
        except ValueError:
            addr = None
        if not chain:  # recorded without -g: ip sym (dso) sit on the header line
            frame = _named(_frame_line(rest), kernel)
            if frame is not None:
                chain.append(frame)
    return PerfSample(comm, int(pid), int(tid), int(period), event, tuple(chain), addr, trace)


def parse(lines: Iterable[str], kernel: KernelSymbols | None = None) -> PerfData:
    """Samples, mmaps and execs from `perf script` text, in file order.

    Streams: `lines` may be a pipe from perf script, read while perf writes.
    With `kernel`, kernel frames perf printed as [unknown] are named from it
    (the sampler runs perf script with `--kallsyms /dev/null`: see `kallsyms`).
    """
    samples: list[PerfSample] = []
    mmaps: list[MmapRecord] = []
    execs: list[int] = []
    header: str | None = None
    raw_chain: list[str] = []
    # A profile repeats a few hundred distinct frame lines, and a few thousand
    # distinct (header, callchain) samples, tens of thousands of times: each is
    # parsed once and the same frozen PerfSample shared (stacks() relies on it).
    frames: dict[str, tuple[int, str, str] | None] = {}
    made: dict[tuple[str, tuple[str, ...]], PerfSample | None] = {}

    def flush() -> None:
        if header is None:
            return
        key = (header, tuple(raw_chain))
        try:
            sample = made[key]
        except KeyError:
            sample = made[key] = _sample(header, key[1], frames, kernel)
        if sample is not None:
            samples.append(sample)

    for raw in lines:
        if not raw:
            continue
        if raw[0] in " \t":  # a callchain frame, or a blank line (parsed as no frame)
            if header is not None and not raw.isspace():
                raw_chain.append(raw)
            continue
        if raw.isspace():
            continue
        flush()
        raw_chain = []
        header = None
        if "PERF_RECORD_" in raw:
            if m := _MMAP.search(raw):
                mmaps.append(
                    MmapRecord(int(m.group("pid")), int(m.group("start"), 16),
                               int(m.group("len"), 16), m.group("prot"), m.group("name").strip())
                )
            elif m := _EXEC.search(raw):
                execs.append(int(m.group("pid")))
            continue
        header = raw
    flush()
    return PerfData(tuple(samples), tuple(mmaps), tuple(execs))


def frame_of(ip: int, symbol: str, dso: str) -> Frame:
    if VSYSCALL_START <= ip < VSYSCALL_END:
        return Frame("[vsyscall]", VSYSCALL_DSO)
    return Frame(symbol, dso)


_START_MAIN = ("__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl")


def sample_stack(sample: PerfSample, resolver: CallSiteResolver | None = None) -> Stack:
    """Root-first frames; perf's repeated entry ip and trailing zero frames dropped.

    With a `resolver`, the caller that a frame-pointer walk skips at the first
    user frame is put back (see `callsite`).
    """
    chain: list[tuple[int, str, str]] = []
    for ip, sym, dso in sample.chain:
        if ip == 0:
            continue
        # perf repeats the user ip at the top of a user callchain after a kernel
        # entry; a repeated *unknown* frame is that artefact, not recursion.
        if chain and ip == chain[-1][0] and sym == UNKNOWN:
            continue
        chain.append((ip, sym, dso))
    if resolver is not None:
        chain = _repair(chain, resolver)
    return tuple(frame_of(ip, sym, dso) for ip, sym, dso in reversed(chain))


def _repair(chain: list[tuple[int, str, str]], resolver: CallSiteResolver) -> list[tuple[int, str, str]]:
    u = next((i for i, (_, _, dso) in enumerate(chain) if not is_kernel_dso(dso)), None)
    if u is None or u + 1 >= len(chain):
        return chain
    _, sym, dso = chain[u]
    ret_ip, caller_sym, caller_dso = chain[u + 1]
    if not caller_dso.startswith("/"):
        return chain
    callee = resolver.callee_at(caller_dso, ret_ip)
    if callee is None and caller_sym in _START_MAIN and sym != "main" and dso.startswith("/") \
            and ".so" not in dso.rsplit("/", 1)[-1]:
        # libc reaches main through a pointer, so no call site names it; a
        # frame of the executable itself right above libc's start is main's.
        callee = "main"
    if callee is None or callee == sym:
        return chain
    return [*chain[: u + 1], (-1, callee, caller_dso if callee != "main" else dso), *chain[u + 1 :]]


def stacks(
    data: PerfData,
    *,
    event: str | None = None,
    exclude_pids: Iterable[int] = (),
    resolver: CallSiteResolver | None = None,
) -> tuple[dict[Stack, int], int]:
    """Summed period per root-first stack, and the number of samples counted."""
    skip = set(exclude_pids)
    # parse() shares one chain tuple among equal samples: keyed by identity (the
    # chains live in `data`, so no id is reused), each becomes a stack once and
    # periods add up without hashing a stack of Frames per sample.
    made: dict[int, Stack] = {}
    sums: dict[int, tuple[Stack, int]] = {}
    n = 0
    for s in data.samples:
        if s.pid in skip or (event is not None and s.event != event):
            continue
        st = made.get(id(s.chain))
        if st is None:
            st = made[id(s.chain)] = sample_stack(s, resolver) or (Frame(UNKNOWN, UNKNOWN),)
        acc = sums.get(id(st))
        sums[id(st)] = (st, s.period if acc is None else acc[1] + s.period)
        n += 1
    out: dict[Stack, int] = {}
    for st, period in sums.values():  # equal stacks from different chains meet here
        out[st] = out.get(st, 0) + period
    return out, n


def is_kernel_dso(dso: str) -> bool:
    return dso == KERNEL_DSO or dso.startswith("[kernel")
