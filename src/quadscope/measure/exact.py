"""The exact meter's executors (`--meter instructions`, `meters.instructions`): the same count every run.

Contract: `InstructionMeter(timed, runner, tool, command=, metric=)` is an
`Executor` wrapping any other: each job is run once by `timed` (its wall
time, rusage and whatever it counts: the time headline stays a real run's)
and once more by `runner` under `tool`, an argv prefix whose output files (in
a fresh folder, one per process the command runs) give the instruction count,
merged into the measurement as the registry's `instructions` (or the
`metric=` a meter counting something else with another tool names). A run
that failed or timed out in either half has `instructions` None. The counted
run gets the same timeout as the timed one (a batch of a Python function's calls
counted under one start, `counts_many`: what its jobs' timeouts add up to, less
what their timed runs took; a start cut short there keeps the calls it counted,
each a dump of its own); `command` turns a run's argv into
a context manager holding the argv counted, open while that run lasts
(`pycount.count_command`'s child Python for a function, whose pickled function
lives that long; `as_is` for a program).
`HeldStill(inner)` runs every argv held still on `inner`, for a meter that
counts with the CPU's counter on the timed run itself.
`counted_alone(executor)` is the executor that counts a run *in place of* its
timed run (accumulate mode's launches, `run.accumulate`: a launch leaves state
behind, so it may run only once): for an `InstructionMeter` its `CountedAlone`
(the counted run alone, its wall time Valgrind's, which is what the count
cost), for any other (one counting on the run itself) the executor as it is;
`timed_part(executor)` is the executor that times a run without counting it;
`spares=` gives an `InstructionMeter` of a program more runners to count on: a
batch of several jobs (an exact sweep's first sizes, `run.counting`; a fixed
sweep's runs) has its counts run at once, as many jobs at a time as there are
runners (`measure.concurrent`; an exact count does not depend on what else
runs), then those jobs' timed runs one at a time with nothing else of
quadscope's running, each job yielded as its timed run ends;
`counted_by(executor, label)` what `Sweep.counters` records for the runs it
counted ("qemu", or "valgrind" where Valgrind took over from QEMU before its
first count, or "qemu, then valgrind").

Why the same metric as perf's `instructions`, not an `instructions_exact`
entry: both count the user-space instructions the program retires (Valgrind
counts the guest's, perf `instructions:u` the CPU's), so a gate such as
`--fail-above instructions=n` written on a laptop with counters holds on a CI
VM counting under Valgrind. Where the count came from is recorded per sweep
(`Sweep.meter` = "instructions", `Sweep.counters` = "valgrind" or "perf").

Exact runs hold everything else still (`hold_still`): ASLR off for the child
(`setarch -R`), `PYTHONHASHSEED=0`, glibc's memcpy and memset in vector loops at
every size (`NO_REP_STRINGS`: a `rep movsb` is counted per byte by Valgrind and
once by the CPU, so a count per byte that steps at glibc's threshold is the
meter's, not the program's), and the argv plus a padding variable
always the same number of bytes modulo a page, so the digits of n do not
shift the child's stack alignment in step with n. The prefix is
`env PYTHONHASHSEED=0 GLIBC_TUNABLES=... QUADSCOPE_PAD=... setarch -R`: each exec replaces the
last, so the program sees only its own argv and the padded environment.

Tools: `measure.qemu.Qemu` (QEMU's user-mode emulator with quadscope's
plugin: a count of `true` in 0.03 s against Cachegrind's 0.26 s) for a
program, with `fallback=Cachegrind` counting from the first run QEMU saw
only part of (`PartCounted`: the program started another process or a
thread) or died under by a signal, and every run after it, so one sweep's
counts come from one tool wherever the command's shape allows; `Cachegrind`
(`--cache-sim=no`: the cheapest exact count under Valgrind, 0.83 s for the sort
workload at n = 10⁶ against callgrind's 3.2 s on the 2-core VM), which follows
every process a command starts; `Callgrind` with instrumentation off at start,
for a Python call counted alone between two client requests (see `pycount`).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Protocol

from quadscope.errors import ToolMissingError
from quadscope.measure import qemu
from quadscope.measure.concurrent import each_on
from quadscope.measure.launcher import Executor, Job, SerialExecutor, run_untimed
from quadscope.measure.qemu import PartCounted
from quadscope.model import Measurement
from quadscope.scratch import scratch_dir

PAGE_BYTES = 4096
HASH_SEED = "0"
# glibc copies and fills with `rep movsb` / `rep stosb` above a few KiB and with vector
# loops below. Valgrind counts a rep-string instruction once per byte, the CPU's counter
# once in all: either way the count per byte steps at the threshold, and a program whose
# copies cross it reads a growth it does not have. Measured under Cachegrind, mawk
# `s = s "x"` at n = 2500..40000 counted 2.66M, 5.78M, 28.6M, 187M, 805M instructions
# (×5, ×6.5 a doubling: "n³"); with these thresholds out of reach 2.67M, 5.78M, 13.8M,
# 36.9M, 111M (×2.6, ×2.9, ×3.2, rising to ×4: n² beside a linear term). The timed runs
# keep glibc's own choice.
NO_REP_STRINGS = ("glibc.cpu.x86_rep_movsb_threshold=1099511627776:"
                  "glibc.cpu.x86_rep_stosb_threshold=1099511627776")
# The run `_count_with` stands in for a count refused before it started (`PartCounted`).
_NOT_COUNTED = Measurement(wall_s=0.0, exit_code=-1, stderr_tail="not the whole command")
_VALGRIND_INSTALL = "install it with `apt-get install valgrind` (scripts/setup does)"


def tunables(environ: Mapping[str, str] | None = None) -> str:
    """GLIBC_TUNABLES for a counted run: the user's own, then ours (`NO_REP_STRINGS`)."""
    own = (os.environ if environ is None else environ).get("GLIBC_TUNABLES", "")
    return ":".join(t for t in (own, NO_REP_STRINGS) if t)


def hold_still(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """`argv` run with ASLR off, a fixed hash seed, glibc's copies in loops (`tunables`) and
    argv + environment of a constant size."""
    tuned = f"GLIBC_TUNABLES={tunables(environ)}"
    argv_bytes = sum(len(a.encode()) + 1 for a in argv) + len(tuned.encode()) + 1
    pad = "x" * (PAGE_BYTES - argv_bytes % PAGE_BYTES)
    return ["env", f"PYTHONHASHSEED={HASH_SEED}", tuned, f"QUADSCOPE_PAD={pad}", "setarch",
            "-R", *argv]


class CountingTool(Protocol):
    """An argv prefix that counts the program it runs into files in a folder, and their
    total; either may raise `PartCounted` (the count would not be the whole command's)."""

    def prefix(self, out_dir: str) -> list[str]: ...  # the argv prefix writing into out_dir

    def total(self, out_dir: str) -> int | None: ...  # the count its files in out_dir hold


def _summary(text: str, key: str) -> int | None:
    for line in text.splitlines():
        if line.startswith(key):
            return int(line.split()[1])
    return None


def _sum_files(out_dir: str, key: str) -> int | None:
    """The sum of every output file's `key` count in out_dir; None when no file holds one."""
    counts = []
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), errors="replace") as f:
            count = _summary(f.read(), key)
        if count is not None:
            counts.append(count)
    return sum(counts) if counts else None


# Valgrind options that change how fast it translates, not what it counts: without
# following branches into a superblock (`--vex-guest-chase`, Valgrind 3.17+) a count of
# a CPython script cost 11% less CPU (medians of 5, 2.98 s against 3.34 s, the same
# instructions counted; BENCHMARKS.md §6), most of a short program's count being
# translation.
FASTER = ("--vex-guest-chase=no",)


@dataclass(frozen=True, slots=True)
class Cachegrind:
    """Counts every instruction of the command: the sum of `summary: N` over each process's file.

    `--trace-children=yes` follows every process the command starts and every
    exec (a `python3` that is a pyenv shim execs a shell, which execs Python;
    `sh -c 'a | b'` forks both), one output file per process image (`%p.%n`),
    so the count is the whole command's, never only its first program's.
    """

    valgrind: str = "valgrind"

    def prefix(self, out_dir: str) -> list[str]:
        return [self.valgrind, "-q", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                *FASTER, f"--cachegrind-out-file={out_dir}/cachegrind.%p.%n"]

    def read(self, text: str) -> int | None:
        return _summary(text, "summary:")

    def total(self, out_dir: str) -> int | None:
        return _sum_files(out_dir, "summary:")


@dataclass(frozen=True, slots=True)
class Callgrind:
    """Counts only what runs between the program's client requests (`totals: N`)."""

    valgrind: str = "valgrind"

    def prefix(self, out_dir: str) -> list[str]:
        return [self.valgrind, "-q", "--tool=callgrind", "--instr-atstart=no", *FASTER,
                "--collect-atstart=no", f"--callgrind-out-file={out_dir}/callgrind.out"]

    def read(self, text: str) -> int | None:
        return _summary(text, "totals:")

    def total(self, out_dir: str) -> int | None:
        return _sum_files(out_dir, "totals:")

    def prefix_many(self, out_dir: str) -> list[str]:
        """`prefix`, one output file per process: `count_many_command`'s forked children."""
        return [self.valgrind, "-q", "--tool=callgrind", "--instr-atstart=no", *FASTER,
                "--collect-atstart=no", f"--callgrind-out-file={out_dir}/callgrind.%p.out"]

    def by_size(self, out_dir: str) -> dict[tuple[int, ...], int]:
        """Each dump's count (`summary:`, the events since the last dump) by the sizes its
        description names ("desc: Trigger: Client Request: n=1000", "n=1000,20"); a dump
        without its closing `totals:` line (its writer killed mid-write) is left out."""
        counts: dict[tuple[int, ...], int] = {}
        for name in sorted(os.listdir(out_dir)):
            with open(os.path.join(out_dir, name), errors="replace") as f:
                text = f.read()
            said = next((line.rsplit("n=", 1)[1].strip() for line in text.splitlines()
                         if line.startswith("desc: Trigger: Client Request: n=")), None)
            count = _summary(text, "summary:") if _summary(text, "totals:") is not None else None
            sizes = said.split(",") if said is not None else []
            if sizes and all(s.isdigit() for s in sizes) and count is not None:
                counts[tuple(int(s) for s in sizes)] = count
        return counts


def find_valgrind() -> str:
    """Valgrind's path; ToolMissingError saying how to install it."""
    found = shutil.which("valgrind")
    if found is None:
        raise ToolMissingError(f"valgrind is not installed: {_VALGRIND_INSTALL}")
    return found


def as_is(argv: Sequence[str]) -> AbstractContextManager[list[str]]:
    """The argv counted is the run's own (a program)."""
    return nullcontext(list(argv))


class InstructionMeter(SerialExecutor):
    """Time from `timed`, instructions from `command(argv)` run by `runner` under `tool`."""

    def __init__(self, timed: Executor, runner: Executor, tool: CountingTool, *,
                 command: Callable[[Sequence[str]], AbstractContextManager[list[str]]] = as_is,
                 metric: str = "instructions",
                 many: Callable[[Sequence[Sequence[str]]], AbstractContextManager[list[str]]]
                 | None = None, fallback: CountingTool | None = None,
                 spares: Sequence[Executor] = ()) -> None:
        self._metric = metric  # another counting meter (a Cachegrind miss count) names its own
        self._timed = timed
        self._runner = runner
        self._tool = tool
        self._fallback = fallback  # counts from here on where `tool` saw only a part (QEMU)
        self._before_fallback: int | None = None  # counts `tool` made before the fallback took over
        self._counts = 0  # counts made by the tool counting now
        self._command = command
        self._many = many  # every job of a batch counted under one start (`Callgrind.by_size`)
        self._spares = tuple(spares)  # more runners, to count a batch's jobs at once
        self._switch = threading.Lock()  # the fallback taking over, once, from any thread

    @property
    def counts_many(self) -> bool:
        """Whether a batch's jobs are counted under one Valgrind start (a Python function)."""
        return self._many is not None and isinstance(self._tool, Callgrind)

    @property
    def workers(self) -> int:
        """How many counts this meter may run at once: one per runner (`spares=`)."""
        return 1 if self.counts_many else 1 + len(self._spares)

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]:
        """Each job timed by `timed`; with `many`, the batch's good ones counted in one start;
        with spare runners, a batch's counts at once, then its timed runs (module docstring)."""
        if not self.counts_many:
            jobs = list(jobs)
            if self.workers > 1 and len(jobs) > 1 and not any(
                    j.setup is not None or j.prepare is not None for j in jobs):
                yield from self._counted_first(jobs)
            else:
                yield from super().execute_many(jobs)
            return
        jobs = list(jobs)
        started = time.monotonic()
        timed = list(self._timed.execute_many(jobs))
        good = [j for j, m in zip(jobs, timed, strict=True) if m.ok]
        limit = _total_timeout(good)
        left = None if limit is None else limit - (time.monotonic() - started)
        counts = (self.count_many([j.argv for j in good], left)
                  if good and (left is None or left > 0) else {})
        for job, m in zip(jobs, timed, strict=True):
            count = counts.get(_sizes(job.argv)) if m.ok else None
            yield replace(m, values={**m.values, self._metric: count})

    def _counted_first(self, jobs: Sequence[Job]) -> Iterator[Measurement]:
        """The jobs' counts at once, one per runner, then each job's timed run alone, as
        `execute` merges them, as many jobs at a time as there are runners (what an
        interrupt loses: the jobs in flight, as one at a time it loses the job in flight);
        a job whose count was cut short at its timeout is not timed (the counted run is its
        measurement: the size costs more than its plan allows)."""
        runners = (self._runner, *self._spares)
        for runner in runners:  # each launcher started here: it dies with its thread
            ready = getattr(runner, "ready", None)
            if ready is not None:
                ready()
        for at in range(0, len(jobs), len(runners)):  # no more counts in flight than runners
            yield from self._chunk(jobs[at:at + len(runners)], runners)

    def _chunk(self, jobs: Sequence[Job], runners: Sequence[Executor]) -> Iterator[Measurement]:
        counts = each_on([self._count_call(j) for j in jobs], runners)
        for job, (counted, count) in zip(jobs, counts, strict=True):
            if counted.timed_out:
                yield replace(counted, values={**counted.values, self._metric: None})
                continue
            m = self._timed.execute(job.argv, job.timeout_s)
            yield replace(m, values={**m.values, self._metric: count if m.ok else None})

    def _count_call(self, job: Job) -> Callable[[Executor], tuple[Measurement, int | None]]:
        return lambda runner: self._counted(job.argv, job.timeout_s, runner)

    def count_many(self, argvs: Sequence[Sequence[str]],
                   timeout_s: float | None) -> dict[tuple[int, ...], int]:
        """The instructions of each argv's call, by its sizes, counted under one start, in
        the order given. A start cut short (its timeout) or failing keeps the calls counted
        before it: each call's count is a dump of its own, written whole when it ends."""
        assert self._many is not None and isinstance(self._tool, Callgrind)
        with scratch_dir("count") as out, self._many(argvs) as child:
            self._runner.execute(hold_still([*self._tool.prefix_many(out), *child]), timeout_s)
            return self._tool.by_size(out)

    def run_untimed(self, what: str, argv: Sequence[str], timeout_s: float | None) -> None:
        """A `--setup` or `--prepare` runs as the timed runs do, never counted: under Valgrind
        a setup writing coreutils tac's 16M-line input (`seq 16000000`) took seconds of the
        counting budget for a count no one reads."""
        run_untimed(self._timed, what, argv, timeout_s)

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        m = self._timed.execute(argv, timeout_s)
        count = self.count(argv, timeout_s) if m.ok else None
        return replace(m, values={**m.values, self._metric: count})

    @property
    def timed(self) -> Executor:
        """The executor of the timed half of each job."""
        return self._timed

    @property
    def tool(self) -> CountingTool:
        """The tool counting now: the first one, or the fallback once it took over."""
        return self._tool

    def count_alone(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        """One run of `argv`, the counted one alone: its measurement (the counting tool's
        time) with the count, None when it failed."""
        counted, count = self._counted(argv, timeout_s)
        return replace(counted, values={**counted.values, self._metric: count})

    def count(self, argv: Sequence[str], timeout_s: float | None) -> int | None:
        """The instructions of one counted run of `argv`; None when it failed."""
        return self._counted(argv, timeout_s)[1]

    def _counted(self, argv: Sequence[str], timeout_s: float | None,
                 runner: Executor | None = None) -> tuple[Measurement, int | None]:
        """One counted run and its count, on `runner` (the meter's own when None). Where the
        tool saw only part of the command (`PartCounted`) or the run died of a signal under
        it (an instruction the emulator lacks), the fallback counts it, and every run after
        it: one tool per sweep (counts made at once by the first tool before it took over
        are kept, as counts made before are)."""
        runner = self._runner if runner is None else runner
        tool = self._tool
        counted, count, part = self._count_with(tool, argv, timeout_s, runner)
        died = not counted.ok and not counted.timed_out and counted.exit_code < 0
        if part or died:
            with self._switch:
                if self._tool is tool and self._fallback is not None:
                    self._tool, self._fallback = self._fallback, None
                    self._before_fallback, self._counts = self._counts, 0
            if self._tool is not tool:
                tool = self._tool
                counted, count, _ = self._count_with(tool, argv, timeout_s, runner)
        with self._switch:  # a count by the first tool that ended after the switch: before it
            if count is not None and tool is self._tool:
                self._counts += 1
            elif count is not None:
                self._before_fallback = (self._before_fallback or 0) + 1
        return counted, count

    def counted_by(self, label: str, fallback: str = "valgrind") -> str:
        """What counted this meter's runs, as `Sweep.counters` records it: `label` (the
        first tool's name), or `fallback` once it took over before any count, or both."""
        if self._before_fallback is None:
            return label
        return f"{label}, then {fallback}" if self._before_fallback else fallback

    def _count_with(self, tool: CountingTool, argv: Sequence[str], timeout_s: float | None,
                    runner: Executor) -> tuple[Measurement, int | None, bool]:
        """(the counted run, its count, whether `tool` saw only part of the command)."""
        with scratch_dir("count") as out, self._command(argv) as child:
            try:
                counted = runner.execute(hold_still([*tool.prefix(out), *child]), timeout_s)
                return counted, tool.total(out) if counted.ok else None, False
            except PartCounted:
                return _NOT_COUNTED, None, True


class CountedAlone(SerialExecutor):
    """Each argv run once, counted by `meter`'s tool: the measurement is the counting run's
    (its wall time what counting cost), with the count as `meter`'s metric."""

    def __init__(self, meter: InstructionMeter) -> None:
        self._meter = meter

    @property
    def meter(self) -> InstructionMeter:
        return self._meter

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self._meter.count_alone(argv, timeout_s)

    def run_untimed(self, what: str, argv: Sequence[str], timeout_s: float | None) -> None:
        self._meter.run_untimed(what, argv, timeout_s)  # never counted (InstructionMeter's)


def counted_alone(executor: Executor) -> Executor:
    """The executor counting a run in place of its timed run (see the module docstring)."""
    return CountedAlone(executor) if isinstance(executor, InstructionMeter) else executor


def counted_by(executor: Executor, label: str) -> str:
    """The `Sweep.counters` of a sweep whose runs `executor` counted, first named `label`:
    the tool that took over from QEMU included (`InstructionMeter.counted_by`)."""
    if isinstance(executor, CountedAlone):
        executor = executor.meter
    return executor.counted_by(label) if isinstance(executor, InstructionMeter) else label


def count_price(executor: Executor) -> tuple[float, float] | None:
    """(slowdown, start-up seconds) of one count by the tool `executor` counts with now,
    where it is not Valgrind's, which the instructions meter's `Cost` prices: QEMU's
    (`measure.qemu.SLOWDOWN`, `STARTUP_S`; Valgrind's 30x and 0.3 s would price its
    counts several times too dear, and cap an exact sweep's next count at 16 × 0.3 s)."""
    if isinstance(executor, CountedAlone):
        executor = executor.meter
    if isinstance(executor, InstructionMeter) and isinstance(executor.tool, qemu.Qemu):
        return qemu.SLOWDOWN, qemu.STARTUP_S
    return None


def timed_part(executor: Executor) -> Executor:
    """The executor timing a run without counting it: an `InstructionMeter`'s timed one."""
    return executor.timed if isinstance(executor, InstructionMeter) else executor


def _sizes(argv: Sequence[str]) -> tuple[int, ...]:
    """A function run's sizes: its argv after the target."""
    return tuple(int(a) for a in argv[1:])


def _total_timeout(jobs: Sequence[Job]) -> float | None:
    """What the batch may take in all, its timed calls and its count: the sum of its jobs'
    timeouts (None when one has none); the count gets what the timed calls left of it."""
    limits = [j.timeout_s for j in jobs]
    return None if any(t is None for t in limits) else sum(t for t in limits if t is not None)


class HeldStill(SerialExecutor):
    """Runs every argv through `hold_still` on `inner` (counters read by `inner` itself)."""

    def __init__(self, inner: Executor) -> None:
        self._inner = inner

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self._inner.execute(hold_still(argv), timeout_s)
