"""The real sampler: `perf record -g` on a software clock, parsed from `perf script`.

Contract: `detect_perf()` returns a `PerfSetup` (the perf binary, the clock
event that works here, whether kernel frames are permitted, the fault event)
or raises `ToolMissingError` with the fix; each limit it finds is one sentence
in `PerfSetup.notes`. `PerfSampler(setup)` implements `sampler.Sampler`.

Sampling plan: hardware counters are often missing (VMs), so the clock is
`cpu-clock` (else `task-clock`), at one frequency for every size of a sweep
(the first recording's, meant to give `target_samples` there, at most
`FREQ_CAP_HZ`); a run too short for that is repeated inside one `perf record`
(a /bin/sh loop, whose own samples are dropped by pid), because perf record
itself costs about a second to start. Why one frequency: each sample's
interrupt is charged to the task's clock, about 20 µs a sample on this VM, so a
recording at f Hz reads 1/(1 - f·20 µs) of the run's CPU time: pair_count at
n = 4000 read 51–77 ms at 50 kHz, 13 ms at 20 kHz, 9.2 ms at 5 kHz and 8.0 ms at
1 kHz. Planned per size, the short runs got the high frequencies, so the
smallest sizes were inflated most and a quadratic read k = 1.04–1.25 (the test's
pair_count, under load); at one frequency the inflation is one factor for every
size and the growth is the run's. Only a run so long that the frequency would
write more than `MAX_SAMPLES` samples is recorded slower.

Call graphs use frame pointers (`--call-graph fp`): DWARF unwinding copies
8 KiB of stack per sample and is 10–50× heavier; the callers fp walks skip at
leaves are put back by `callsite`. The exception is Python
3.12+ under `-X perf` (`python_perf`): CPython is built without frame
pointers, so an fp walk stops at the leaf (`list_insert`, no Python frame
above it); DWARF unwinding (`DWARF_CALL_GRAPH`, at most `DWARF_MAX_FREQ_HZ`)
reaches the `py::func:file` trampoline frames, which `trampoline.python_stacks`
turns into Python frames with the C functions they call right under them. A native program built
without frame pointers (`gcc -O2`) is found by its first recording, whose
stacks stop short of main (`unwind.needs_dwarf`): that size is recorded again
and every later one too with DWARF, and the profile's note says which
unwinder was used and how to rebuild to avoid it; when even DWARF leaves the
stacks short, the note says to rebuild with -g -fno-omit-frame-pointer.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from quadscope.errors import ToolMissingError
from quadscope.profile.callsite import ElfCallSites
from quadscope.profile.child import cut_note, run_bounded
from quadscope.profile.faults import FaultReport, classify_faults
from quadscope.profile.kallsyms import KernelSymbols, read_kernel_symbols
from quadscope.profile.perfscript import SCRIPT_FIELDS, PerfData, parse, stacks
from quadscope.profile.python import python_argv
from quadscope.profile.sampler import Overhead
from quadscope.profile.stacks import Stack, StackProfile
from quadscope.profile.trampoline import UNWINDER_NOTE, python_stacks
from quadscope.profile.unwind import broken_share, dwarf_note, needs_dwarf, rebuild_note
from quadscope.scratch import scratch_dir

INSTALL_PERF = "install linux-perf (`apt-get install linux-perf`); the sweep's results still stand"
DWARF_CALL_GRAPH = "dwarf,16384"
DWARF_MAX_FREQ_HZ = 2000  # 16 KiB of stack per sample: keep perf.data to tens of MiB
DWARF_SHORT_FREQ_HZ = 5000  # a native program's DWARF recordings: one run each, as FREQ_CAP_HZ
# The fastest sampling a sweep starts at: 1/(1 - f·c) with c ≈ 20 µs a sample on a VM is
# 1.1× at 5 kHz (module docstring); the same factor at every size, as the frequency is.
FREQ_CAP_HZ = 5000
MAX_SAMPLES = 200_000  # a longer run at the sweep's frequency is sampled slower: perf.data size
_TIMED_SH = 's=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo "$s $e"'
_REPEAT_SH = 'i=0; while [ "$i" -lt "$0" ]; do "$@" >/dev/null; i=$((i+1)); done'


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True, slots=True)
class PerfSetup:
    perf: str
    event: str  # "cpu-clock" or "task-clock", with ":u" when kernel frames are not permitted
    kernel: bool
    max_freq_hz: int
    fault_event: str | None  # "exceptions:page_fault_user" or "page-faults"
    notes: tuple[str, ...] = ()


def _try_record(perf: str, args: Sequence[str]) -> str | None:
    """None when `perf record ARGS -- true` works, else perf's first error line."""
    with scratch_dir("perf") as tmp:
        proc = subprocess.run(
            [perf, "record", "-q", "-B", "-N", "-o", f"{tmp}/probe.data", *args, "--", "true"],
            capture_output=True, text=True, check=False, timeout=60,
        )
    if proc.returncode == 0:
        return None
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    return lines[0] if lines else f"perf record exited {proc.returncode}"


def detect_perf(*, probe_faults: bool = True) -> PerfSetup:
    perf = shutil.which("perf")
    if perf is None:
        raise ToolMissingError(f"perf is not installed: {INSTALL_PERF}")
    root = os.geteuid() == 0
    notes: list[str] = []
    paranoid = _read_int("/proc/sys/kernel/perf_event_paranoid")
    kernel = root or (paranoid is not None and paranoid <= 1)
    if not kernel:
        notes.append(
            f"kernel stacks are not permitted (kernel.perf_event_paranoid={paranoid}, above 1 for a "
            "non-root user): run `sudo sysctl kernel.perf_event_paranoid=1` to see kernel "
            "functions; only user functions are shown"
        )
    kptr = _read_int("/proc/sys/kernel/kptr_restrict")
    if kernel and kptr is not None and (kptr >= 2 or (kptr == 1 and not root)):
        notes.append(
            f"kernel symbols are hidden (kernel.kptr_restrict={kptr}): run "
            "`sudo sysctl kernel.kptr_restrict=0`; kernel functions show as [unknown]"
        )
    suffix = "" if kernel else ":u"
    errors = []
    event = None
    for cand in ("cpu-clock", "task-clock"):
        err = _try_record(perf, ["-e", cand + suffix, "-g"])
        if err is None:
            event = cand + suffix
            break
        errors.append(f"{cand}: {err}")
    if event is None:
        raise ToolMissingError(
            "perf cannot sample here (" + "; ".join(errors) + "): check "
            "kernel.perf_event_paranoid, or " + INSTALL_PERF
        )
    max_rate = _read_int("/proc/sys/kernel/perf_event_max_sample_rate") or 10000
    fault_event = None
    if probe_faults:
        for cand in ("exceptions:page_fault_user", "page-faults" + suffix):
            if _try_record(perf, ["-e", cand, "-c", "1000"]) is None:
                fault_event = cand
                break
    # perf throttles above about half the limit on a busy machine; stay well below.
    return PerfSetup(perf, event, kernel, max(1000, min(max_rate // 2, 50000)), fault_event,
                     tuple(notes))


def script_argv(perf: str, data_path: Path, fields: str, *,
                own_kernel_symbols: bool = False) -> list[str]:
    """`perf script` as the sampler runs it. --no-inline: inline frames cost an
    addr2line per address on binaries with debug info, and the parser drops them
    (they carry no ip). With `own_kernel_symbols` perf skips loading the kernel's
    symbols (`--kallsyms /dev/null`, about 0.1 s a run) and the parser names kernel
    frames from a table read once (`kallsyms`); also right when kernel frames are
    not recorded at all."""
    argv = [perf, "script", "-i", str(data_path), "-F", fields, "--no-inline",
            "--show-task-events", "--show-mmap-events"]
    return [*argv, "--kallsyms", os.devnull] if own_kernel_symbols else argv


def plan_frequency(expected_s: float | None, target_samples: int, max_freq_hz: int,
                   max_repeats: int, fixed_hz: int | None = None) -> tuple[int, int]:
    """(frequency in Hz, repeats) to get about 1.5 × target samples from a run of expected_s;
    with `fixed_hz` (the sweep's frequency, module docstring) that frequency, unless a run
    would then write more than MAX_SAMPLES samples, and the repeats that make up for it."""
    if fixed_hz is not None:
        freq = fixed_hz
        if expected_s and expected_s * freq > MAX_SAMPLES:
            freq = max(1, math.floor(MAX_SAMPLES / expected_s))
        if not expected_s or expected_s <= 0:
            return freq, 1
        want = 1.5 * target_samples
        return freq, min(max_repeats, max(1, math.ceil(want / (expected_s * freq))))
    if not expected_s or expected_s <= 0:
        return min(max_freq_hz, 10000), 1
    want = 1.5 * target_samples
    freq = min(max_freq_hz, max(1000, math.ceil(want / expected_s)))
    repeats = min(max_repeats, max(1, math.ceil(want / (expected_s * freq))))
    return freq, repeats


class PerfSampler:
    name = "perf"

    def __init__(self, setup: PerfSetup, *, target_samples: int = 1000, max_repeats: int = 20,
                 timeout_s: float | None = 600.0, timeout_why: str = "",
                 python_perf: bool = False) -> None:
        self.setup = setup
        self.notes = (*setup.notes, UNWINDER_NOTE) if python_perf else setup.notes
        self.target_samples = target_samples
        self.max_repeats = max_repeats
        self.timeout_s = timeout_s
        self.timeout_why = timeout_why  # why the limit is what it is, said when one is met
        self.python_perf = python_perf  # insert -X perf (Python 3.12+ trampolines)
        self.resolver = ElfCallSites()
        self.call_graph = DWARF_CALL_GRAPH if python_perf else "fp"
        self.max_freq_hz = min(setup.max_freq_hz, DWARF_MAX_FREQ_HZ) if python_perf \
            else min(setup.max_freq_hz, FREQ_CAP_HZ)
        self.freq_hz: int | None = None  # the sweep's frequency, once the first size set it
        self._kernel_symbols: Future[KernelSymbols | None] | None = None
        self.fp_broken_share: float | None = None  # set when frame pointers were missing

    def _load_kernel_symbols(self) -> None:
        """Start reading the kernel's symbols once, in a thread that overlaps the first
        recording (perf record mostly waits on the workload), unless no kernel frame
        can be recorded."""
        if self._kernel_symbols is not None or not self.setup.kernel:
            return
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quadscope-kallsyms")
        self._kernel_symbols = pool.submit(read_kernel_symbols)
        pool.shutdown(wait=False)

    def _argv(self, argv: Sequence[str], repeats: int) -> list[str]:
        cmd = list(argv)
        # perf record searches PATH itself, with /usr/lib/perf-core put first, and was seen
        # to run /usr/bin/python3.11 where the sweep ran pyenv's python3: resolve the program
        # here, as the launcher does for the timed runs, so both run the same one.
        if cmd and "/" not in cmd[0] and (found := shutil.which(cmd[0])):
            cmd[0] = found
        if self.python_perf:
            cmd = [cmd[0], "-X", "perf", *cmd[1:]]
        if repeats > 1:
            return ["/bin/sh", "-c", _REPEAT_SH, str(repeats), *cmd]
        return cmd

    def _record(self, event_args: Sequence[str], argv: Sequence[str], repeats: int,
                data_path: Path, extra_fields: str = "",
                expected_s: float = 0.0) -> tuple[PerfData, float, float | None]:
        """One recording of `argv` run `repeats` times; bounded by one run's limit
        (`timeout_s`) plus the repeats' expected time 5 times over (`expected_s` a run).
        Returns the data, the wall time and, when the recording met it, that limit."""
        cmd = [self.setup.perf, "record", "-q", "-B", "-N", *event_args, "-o", str(data_path),
               "--", *self._argv(argv, repeats)]
        self._load_kernel_symbols()
        # perf keeps an existing file as `<name>.old`: a re-recording (too few samples, or
        # DWARF after frame pointers) would leave one beside every size it retook.
        data_path.unlink(missing_ok=True)
        limit = None if self.timeout_s is None else self.timeout_s + 5 * repeats * expected_s
        proc = run_bounded(cmd, limit, capture=("stderr",))
        wall_s = proc.wall_s
        if proc.returncode != 0 and not proc.timed_out and not data_path.exists():
            first = next((ln for ln in proc.stderr.splitlines() if ln.strip()), "")
            raise ToolMissingError(f"perf record failed ({first.strip()}): {INSTALL_PERF}")
        return self.script(data_path, extra_fields), wall_s, limit if proc.timed_out else None

    def script(self, data_path: Path, extra_fields: str = "") -> PerfData:
        """`perf script` on one recording streamed into the parser."""
        kernel = None if self._kernel_symbols is None else self._kernel_symbols.result()
        cmd = script_argv(self.setup.perf, data_path, SCRIPT_FIELDS + extra_fields,
                          own_kernel_symbols=kernel is not None or not self.setup.kernel)
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, errors="replace") as proc:
            assert proc.stdout is not None
            data = parse(proc.stdout, kernel)
        return data

    def sample(self, argv: Sequence[str], *, size_n: int, reference_s: float | None,
               out_dir: Path) -> StackProfile:
        out_dir.mkdir(parents=True, exist_ok=True)
        freq, repeats = plan_frequency(reference_s, self.target_samples, self.max_freq_hz,
                                       self.max_repeats, self.freq_hz)
        data_path = out_dir / f"perf-n{size_n}.data"
        for attempt in range(2):
            data, wall_s, cut_at = self._record(
                ["-e", self.setup.event, "-F", str(freq), "--call-graph", self.call_graph],
                argv, repeats, data_path, expected_s=reference_s or 0.0)
            exclude = data.exec_pids[:1] if repeats > 1 else ()
            st, n = stacks(data, exclude_pids=exclude, resolver=self.resolver)
            if self.python_perf:  # py::func:file trampolines read as Python frames
                st = python_stacks(st)
            if n >= self.target_samples or attempt == 1 or repeats >= self.max_repeats \
                    or cut_at is not None:  # ran into it: a second try would wait as long
                break
            # Too few: the run was shorter than the sweep said. Re-plan from what was seen.
            seen_s = max(n, 1) / freq / repeats
            freq, repeats = plan_frequency(seen_s, self.target_samples, self.max_freq_hz,
                                           self.max_repeats, self.freq_hz)
        if self._switch_to_dwarf(argv, st):
            return self.sample(argv, size_n=size_n, reference_s=reference_s, out_dir=out_dir)
        if self.freq_hz is None:
            self.freq_hz = freq  # every later size at this frequency (module docstring)
        total_ns = sum(st.values())
        # cpu-clock periods are nanoseconds of CPU: without a measured time, use theirs.
        ref = reference_s if reference_s else total_ns / 1e9 / repeats
        return StackProfile(size_n, st, n, self.setup.event, ref, wall_s=wall_s / repeats,
                            repeats=repeats, notes=(*self._unwind_notes(st), *(
                                () if cut_at is None
                                else (cut_note(size_n, cut_at, self.timeout_why),))),
                            extra={"frequency_hz": freq, "perf_data": str(data_path),
                                   "unwinder": self.call_graph.split(",")[0]})

    def _switch_to_dwarf(self, argv: Sequence[str], st: Mapping[Stack, int]) -> bool:
        """True once, when frame-pointer stacks stop short of main (`unwind`): from then on
        this sampler unwinds with DWARF. Python is left to its own plan (`native`)."""
        if (self.call_graph != "fp" or self.python_perf or python_argv(argv)
                or not needs_dwarf(st)):
            return False
        self.fp_broken_share = broken_share(st)
        self.call_graph = DWARF_CALL_GRAPH
        # One process per recording: perf 6.1 unwound most processes of a /bin/sh repeat
        # loop to the leaf alone (45-85% of samples, whole processes at a time), and every
        # single-process recording fully. A short run is sampled faster instead; the
        # planned ~1.5 × target samples keep perf.data near 25 MiB (16 KiB each).
        self.max_repeats = 1
        self.max_freq_hz = min(self.setup.max_freq_hz, DWARF_SHORT_FREQ_HZ)
        self.freq_hz = None  # the DWARF recordings' own, set by the first of them
        return True

    def _unwind_notes(self, st: Mapping[Stack, int]) -> tuple[str, ...]:
        if self.fp_broken_share is None:
            return ()
        if needs_dwarf(st):
            return (rebuild_note(broken_share(st)),)
        return (dwarf_note(self.fp_broken_share),)

    def sample_faults(self, argv: Sequence[str], *, size_n: int, expected_faults: int | None,
                      out_dir: Path) -> FaultReport | None:
        ev = self.setup.fault_event
        if ev is None:
            return None
        period = max(1, (expected_faults or 0) // 20000)
        args = ["-e", ev, "-c", str(period), "-g"]
        if not ev.startswith("exceptions:"):
            args.append("-d")
        data, _, _ = self._record(args, argv, 1, out_dir / f"faults-n{size_n}.data",
                               ",trace" if ev.startswith("exceptions:") else ",addr")
        return classify_faults(data, size_n, resolver=self.resolver,
                               interpreted=self.python_perf or python_argv(argv))

    def overhead(self, argv: Sequence[str], *, size_n: int, runs: int = 3) -> Overhead | None:
        """Median wall time of the workload alone, timed by a shell around it, with and
        without perf record; perf's start-up is timed apart on /bin/true."""

        def run(cmd: Sequence[str]) -> tuple[float, float]:
            proc = run_bounded(cmd, self.timeout_s, capture=("stdout",))
            total = proc.wall_s
            try:
                start_ns, end_ns = (int(v) for v in proc.stdout.split()[-2:])
                return (end_ns - start_ns) / 1e9, total
            except ValueError:
                return total, total

        with scratch_dir("perf") as tmp:
            rec = [self.setup.perf, "record", "-q", "-B", "-N", "-e", self.setup.event, "-F",
                   str(min(self.max_freq_hz, 10000)), "--call-graph", self.call_graph, "-o",
                   f"{tmp}/o.data", "--"]
            timed = ["/bin/sh", "-c", _TIMED_SH, "sh", *self._argv(argv, 1)]
            startup = statistics.median(run([*rec, "true"])[1] for _ in range(runs))
            plain = statistics.median(run(timed)[0] for _ in range(runs))
            profiled = statistics.median(run([*rec, *timed])[0] for _ in range(runs))
        return Overhead(size_n, plain, profiled, startup)
