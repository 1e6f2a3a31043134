"""Tests for parsing recorded `perf script` output, folding, call-site repair and faults.

The fixtures in tests/fixtures/perf were recorded on a 2-core VM (perf 6.1,
kernel 6.18, cpu-clock because hardware counters are absent) from the
programs in quadscope.profile.programs; see each test for the command.
"""

from __future__ import annotations

from pathlib import Path

from quadscope.profile.callsite import FakeCallSites, _load_segments
from quadscope.profile.driver import symbol_notes
from quadscope.profile.faults import classify_faults, fault_kind, fmt_rate
from quadscope.profile.perfscript import MmapRecord, PerfSample, parse, sample_stack, stacks
from quadscope.profile.stacks import (
    KERNEL_DSO,
    Frame,
    StackProfile,
    fold,
    read_folded,
    write_folded,
)

FIX = Path(__file__).parent / "fixtures" / "perf"
QUAD_BIN = "/root/.cache/quadscope/bin/qs-prof-quadratic-38e6928a2141ac9f"
VS_BIN = "/root/.cache/quadscope/bin/qs-prof-vsyscall-time-89fbf037ce27b752"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


def _lines(name: str) -> list[str]:
    return (FIX / name).read_text().splitlines(keepends=True)


def test_parse_cpu_clock_samples_exactly() -> None:
    """`perf record -e cpu-clock -F 2000 -g quadratic 3000`: 17 samples of 500 µs, one exec."""
    data = parse(_lines("cpu-quadratic.txt"))
    assert len(data.samples) == 17
    assert data.exec_pids == (4597,)
    assert {s.period for s in data.samples} == {500000}
    last = data.samples[-1]
    assert (last.comm, last.pid, last.tid, last.event) == ("qs-prof-quadrat", 4597, 4597, "cpu-clock")
    assert last.chain == ((4516, "pair_count", QUAD_BIN), (160330, "__libc_start_call_main", LIBC))


def test_parse_reads_mmap_records() -> None:
    """MMAP2 lines become MmapRecords with start, length, protection and file name."""
    data = parse(_lines("cpu-quadratic.txt"))
    exe = [m for m in data.mmaps if m.name == QUAD_BIN]
    assert exe and all(m.pid == 4597 for m in exe)
    assert any(m.prot == "r-xp" for m in exe)


def test_header_with_spaces_in_comm_and_colon_in_event() -> None:
    """A comm with spaces and a tracepoint name with a colon still parse; trace fields are ints."""
    text = [
        "Web Content 12/13 1 exceptions:page_fault_user: address=0x10 ip=0x20 error_code=0x6\n",
        "\tffffffff81000c82 asm_exc_page_fault ([kernel.kallsyms])\n",
        "\t1234 foo(int, char const*) (/usr/bin/x (deleted))\n",
        "\n",
    ]
    (s,) = parse(text).samples
    assert (s.comm, s.pid, s.tid, s.event) == ("Web Content", 12, 13, "exceptions:page_fault_user")
    assert s.trace == {"address": 0x10, "ip": 0x20, "error_code": 6}
    assert s.addr == 0x10
    assert s.chain == ((0xFFFFFFFF81000C82, "asm_exc_page_fault", "[kernel.kallsyms]"),
                       (0x1234, "foo(int, char const*)", "/usr/bin/x (deleted)"))


def test_stacks_root_first_with_main_restored() -> None:
    """libc calls main through a pointer, so the leaf's missing caller is restored as main."""
    st, n = stacks(parse(_lines("cpu-quadratic.txt")), resolver=FakeCallSites({}))
    assert n == 17
    names = {tuple(f.label() for f in k): v for k, v in st.items()}
    assert names == {
        ("__libc_start_call_main", "main", "linear_scan"): 3500000,
        ("__libc_start_call_main", "main", "pair_count"): 5000000,
    }


def test_fold_is_sorted_and_merged() -> None:
    """Folded lines are flamegraph.pl format, sorted, kernel frames suffixed _[k]."""
    st, _ = stacks(parse(_lines("cpu-quadratic.txt")))
    assert fold(st) == [
        "__libc_start_call_main;linear_scan 3500000",
        "__libc_start_call_main;pair_count 5000000",
    ]
    k = {(Frame("main", "/x"), Frame("do_syscall_64", KERNEL_DSO)): 3,
         (Frame("main", "/y"), Frame("do_syscall_64", KERNEL_DSO)): 4}
    assert fold(k) == ["main;do_syscall_64_[k] 7"]


def test_folded_round_trip(tmp_path: Path) -> None:
    """write_folded then read_folded gives the same stacks (kernel dso kept, user dso dropped)."""
    st = {(Frame("main", ""), Frame("a;b", ""), Frame("vfs_write", KERNEL_DSO)): 5}
    path = write_folded(tmp_path / "f.txt", st)
    assert path.read_text() == "main;a:b;vfs_write_[k] 5\n"
    assert read_folded(path.read_text().splitlines()) == {
        (Frame("main", ""), Frame("a:b", ""), Frame("vfs_write", KERNEL_DSO)): 5
    }


def test_kernel_frames_parsed_as_kernel() -> None:
    """Many 1-byte writes: kernel symbols (do_syscall_64, vfs_write) are frames like any other."""
    st, n = stacks(parse(_lines("cpu-kernel-writes.txt")))
    assert n == 53
    leaves: dict[str, int] = {}
    for k, v in st.items():
        leaves[k[-1].label()] = leaves.get(k[-1].label(), 0) + v
    assert leaves["do_syscall_64_[k]"] == 4250000
    assert leaves["vfs_write_[k]"] == 1250000
    kernel = sum(v for k, v in st.items() if k[-1].kernel)
    assert kernel / sum(st.values()) > 0.5


def test_vsyscall_frame_and_caller_repair() -> None:
    """The vsyscall page becomes one [vsyscall] frame and the skipped tick_loop is put back."""
    data = parse(_lines("faults-vsyscall-tracepoint.txt"))
    s = next(x for x in data.samples if x.addr == 0xFFFFFFFFFF600400)
    resolver = FakeCallSites({(VS_BIN, 4204): "tick_loop"})
    assert [f.label() for f in sample_stack(s, resolver)] == [
        "__libc_start_call_main", "main", "tick_loop", "[vsyscall]",
        "asm_exc_page_fault_[k]", "exc_page_fault_[k]",
    ]
    assert [f.label() for f in sample_stack(s)] == [
        "__libc_start_call_main", "main", "[vsyscall]", "asm_exc_page_fault_[k]",
        "exc_page_fault_[k]",
    ]


def test_vsyscall_fault_sentence() -> None:
    """100 calls through the vsyscall page: 100 vsyscall faults and the sentence naming tick_loop."""
    data = parse(_lines("faults-vsyscall-tracepoint.txt"))
    rep = classify_faults(data, 100, resolver=FakeCallSites({(VS_BIN, 4204): "tick_loop"}))
    assert rep.by_kind["vsyscall"] == 100
    assert rep.total == 149
    assert rep.callers["vsyscall"] == "tick_loop"
    assert rep.sentences[0].startswith(
        "about 1 page fault per call, at the vsyscall page, from tick_loop:"
    )


def test_first_touch_faults_are_demand_zero() -> None:
    """malloc + touching 300 pages (page-faults -d): ~1 demand-zero fault per page, from touch."""
    rep = classify_faults(parse(_lines("faults-anon-software.txt")), 300,
                          resolver=FakeCallSites({}))
    assert rep.by_kind == {"demand-zero": 313, "file-backed": 39}
    assert rep.callers["demand-zero"] == "touch"
    assert rep.sentences[0].startswith("313 first-touch faults on anonymous memory (about 1 per n)")
    assert "MAP_POPULATE" in rep.sentences[0] and "interpreter" not in rep.sentences[0]


def test_an_interpreted_program_is_advised_about_its_objects_not_map_populate() -> None:
    """A Python user was told to 'pre-fault with MAP_POPULATE' (issue 26)."""
    rep = classify_faults(parse(_lines("faults-anon-software.txt")), 300,
                          resolver=FakeCallSites({}), interpreted=True)
    assert "MAP_POPULATE" not in rep.sentences[0]
    assert "keep fewer objects alive" in rep.sentences[0]


def _fault(addr: int, code: int | None) -> PerfSample:
    return PerfSample("p", 1, 1, 1, "exceptions:page_fault_user", (), addr,
                      {} if code is None else {"error_code": code})


def test_fault_kinds_from_mapping_and_error_code() -> None:
    """Write to a private file mapping or to a present anon page is COW; reads of files file-backed."""
    maps = (MmapRecord(1, 0x1000, 0x2000, "rw-p", "/lib/x.so"),
            MmapRecord(1, 0x8000, 0x1000, "rw-p", "//anon"),
            MmapRecord(1, 0x9000, 0x1000, "rw-s", "/dev/shm/y"))
    assert fault_kind(_fault(0x1800, 0x6), maps) == "copy-on-write"
    assert fault_kind(_fault(0x1800, 0x4), maps) == "file-backed"
    assert fault_kind(_fault(0x9100, 0x6), maps) == "file-backed"
    assert fault_kind(_fault(0x8100, 0x6), maps) == "demand-zero"
    assert fault_kind(_fault(0x8100, 0x7), maps) == "copy-on-write"
    assert fault_kind(_fault(0x50000, None), maps) == "demand-zero"
    assert fault_kind(_fault(0xFFFFFFFFFF600400, 0x14), maps) == "vsyscall"
    assert fault_kind(PerfSample("p", 1, 1, 1, "page-faults", (), None), maps) == "other"


def test_fmt_rate() -> None:
    """Rates read as people say them: 1, 0.13, 12."""
    assert [fmt_rate(v) for v in (1.0433, 0.13, 12.4, 0.0012)] == ["1", "0.13", "12", "0.0012"]


def test_stripped_binary_note() -> None:
    """A binary whose samples all lack symbols gets the rebuild-with--g sentence."""
    st, n = stacks(parse(_lines("cpu-stripped.txt")))
    notes = symbol_notes(StackProfile(3000, st, n, "cpu-clock", 1.0))
    assert notes == ("/tmp/qsp/stripped has no symbols: rebuild with -g or install its -dbgsym "
                     "package; its code shows as [stripped] instead of function names",)


def test_elf_segments_of_a_real_binary() -> None:
    """The ELF reader finds the PT_LOAD segments of this Python interpreter."""
    import sys

    segs = _load_segments(Path(sys.executable).resolve().read_bytes())
    assert len(segs) >= 2
    assert _load_segments(b"not an elf at all") == []
