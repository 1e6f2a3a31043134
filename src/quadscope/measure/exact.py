"""The exact meter's executors (`--meter instructions`, `meters.instructions`): the same count every run.

Contract: `InstructionMeter(timed, runner, tool, command=, metric=)` is an
`Executor` wrapping any other: each job is run once by `timed` (its wall
time, rusage and whatever it counts: the time headline stays a real run's)
and once more by `runner` under `tool`, an argv prefix whose output files (in
a fresh folder, one per process the command runs) give the instruction count,
merged into the measurement as the registry's `instructions` (or the
`metric=` a meter counting something else with another tool names). A run
that failed or timed out in either half has `instructions` None. The counted
run gets the same timeout as the timed one; `command` turns a run's argv into
the argv counted (`pycount.count_command`'s child Python for a function).
`HeldStill(inner)` runs every argv held still on `inner`, for a meter that
counts with the CPU's counter on the timed run itself.

Why the same metric as perf's `instructions`, not an `instructions_exact`
entry: both count the user-space instructions the program retires (Valgrind
counts the guest's, perf `instructions:u` the CPU's), so a gate such as
`--fail-above instructions=n` written on a laptop with counters holds on a CI
VM counting under Valgrind. Where the count came from is recorded per sweep
(`Sweep.meter` = "instructions", `Sweep.counters` = "valgrind" or "perf").

Exact runs hold everything else still (`hold_still`): ASLR off for the child
(`setarch -R`), `PYTHONHASHSEED=0`, and the argv plus a padding variable
always the same number of bytes modulo a page, so the digits of n do not
shift the child's stack alignment in step with n. The prefix is
`env PYTHONHASHSEED=0 QUADSCOPE_PAD=... setarch -R`: each exec replaces the
last, so the program sees only its own argv and the padded environment.

Tools: `Cachegrind` (`--cache-sim=no`: the cheapest exact count, 0.83 s for
the sort workload at n = 10⁶ against callgrind's 3.2 s on the 2-core VM) for
programs; `Callgrind` with instrumentation off at start, for a Python call
counted alone between two client requests (see `pycount`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from quadscope.errors import ToolMissingError
from quadscope.measure.launcher import Executor, SerialExecutor
from quadscope.model import Measurement

PAGE_BYTES = 4096
HASH_SEED = "0"
_VALGRIND_INSTALL = "install it with `apt-get install valgrind` (scripts/setup does)"


def hold_still(argv: Sequence[str]) -> list[str]:
    """`argv` run with ASLR off, a fixed hash seed and argv + environment of a constant size."""
    argv_bytes = sum(len(a.encode()) + 1 for a in argv)
    pad = "x" * (PAGE_BYTES - argv_bytes % PAGE_BYTES)
    return ["env", f"PYTHONHASHSEED={HASH_SEED}", f"QUADSCOPE_PAD={pad}", "setarch", "-R",
            *argv]


class CountingTool(Protocol):
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
                f"--cachegrind-out-file={out_dir}/cachegrind.%p.%n"]

    def read(self, text: str) -> int | None:
        return _summary(text, "summary:")

    def total(self, out_dir: str) -> int | None:
        return _sum_files(out_dir, "summary:")


@dataclass(frozen=True, slots=True)
class Callgrind:
    """Counts only what runs between the program's client requests (`totals: N`)."""

    valgrind: str = "valgrind"

    def prefix(self, out_dir: str) -> list[str]:
        return [self.valgrind, "-q", "--tool=callgrind", "--instr-atstart=no",
                "--collect-atstart=no", f"--callgrind-out-file={out_dir}/callgrind.out"]

    def read(self, text: str) -> int | None:
        return _summary(text, "totals:")

    def total(self, out_dir: str) -> int | None:
        return _sum_files(out_dir, "totals:")


def find_valgrind() -> str:
    """Valgrind's path; ToolMissingError saying how to install it."""
    found = shutil.which("valgrind")
    if found is None:
        raise ToolMissingError(f"valgrind is not installed: {_VALGRIND_INSTALL}")
    return found


class InstructionMeter(SerialExecutor):
    """Time from `timed`, instructions from `command(argv)` run by `runner` under `tool`."""

    def __init__(self, timed: Executor, runner: Executor, tool: CountingTool, *,
                 command: Callable[[Sequence[str]], list[str]] = list,
                 metric: str = "instructions") -> None:
        self._metric = metric  # another counting meter (a Cachegrind miss count) names its own
        self._timed = timed
        self._runner = runner
        self._tool = tool
        self._command = command

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        m = self._timed.execute(argv, timeout_s)
        count = self.count(argv, timeout_s) if m.ok else None
        return replace(m, values={**m.values, self._metric: count})

    def count(self, argv: Sequence[str], timeout_s: float | None) -> int | None:
        """The instructions of one counted run of `argv`; None when it failed."""
        with tempfile.TemporaryDirectory(prefix="quadscope-count-") as out:
            counted = self._runner.execute(
                hold_still([*self._tool.prefix(out), *self._command(argv)]), timeout_s)
            return self._tool.total(out) if counted.ok else None


class HeldStill(SerialExecutor):
    """Runs every argv through `hold_still` on `inner` (counters read by `inner` itself)."""

    def __init__(self, inner: Executor) -> None:
        self._inner = inner

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self._inner.execute(hold_still(argv), timeout_s)
