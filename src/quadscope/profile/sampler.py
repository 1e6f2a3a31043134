"""The sampler protocol: run a command once under a profiler, return its stacks.

Contract: a `Sampler` turns one argv at one size into a `StackProfile`
(`sample`), optionally a `FaultReport` (`sample_faults`, None when it cannot
sample faults) and an `Overhead` (`overhead`: the same run with and without
the profiler). Profiled runs are separate from the sweep's timed runs and are
never stored as runs. `FakeSampler` answers from a function of the size, for
tests; `PerfSampler` (module `perf`), `PySpySampler` (module `python`) and
`PythonNativeSampler` (module `native`: py-spy and perf together) run real
processes; `driver.choose_sampler` picks one for a command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from quadscope.profile.faults import FaultReport
from quadscope.profile.records import Overhead as Overhead
from quadscope.profile.stacks import Stack, StackProfile


class Sampler(Protocol):
    name: str
    notes: tuple[str, ...]  # limits known before sampling (kernel stacks hidden, ...)

    def sample(
        self, argv: Sequence[str], *, size_n: int, reference_s: float | None, out_dir: Path
    ) -> StackProfile: ...

    def sample_faults(
        self, argv: Sequence[str], *, size_n: int, expected_faults: int | None, out_dir: Path
    ) -> FaultReport | None: ...

    def overhead(self, argv: Sequence[str], *, size_n: int) -> Overhead | None: ...


class FakeSampler:
    """Stacks from `stacks_at(size_n)`; times from `seconds_at(size_n)`. Records its calls."""

    name = "fake"

    def __init__(
        self,
        stacks_at: Callable[[int], Mapping[Stack, int]],
        *,
        seconds_at: Callable[[int], float] | None = None,
        faults_at: Callable[[int], FaultReport | None] | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        self._stacks_at = stacks_at
        self._seconds_at = seconds_at
        self._faults_at = faults_at
        self.notes = notes
        self.calls: list[tuple[str, tuple[str, ...], int]] = []

    def sample(
        self, argv: Sequence[str], *, size_n: int, reference_s: float | None, out_dir: Path
    ) -> StackProfile:
        self.calls.append(("sample", tuple(argv), size_n))
        stacks = dict(self._stacks_at(size_n))
        total = sum(stacks.values())
        if reference_s is None:
            reference_s = self._seconds_at(size_n) if self._seconds_at else total / 1e9
        # One sample per 10 µs of weight (ns): perf's cpu-clock at 100 kHz.
        return StackProfile(size_n, stacks, samples=(len(stacks) and total // 10_000) or 0,
                            event="cpu-clock", reference_s=reference_s)

    def sample_faults(
        self, argv: Sequence[str], *, size_n: int, expected_faults: int | None, out_dir: Path
    ) -> FaultReport | None:
        self.calls.append(("faults", tuple(argv), size_n))
        return self._faults_at(size_n) if self._faults_at else None

    def overhead(self, argv: Sequence[str], *, size_n: int) -> Overhead | None:
        self.calls.append(("overhead", tuple(argv), size_n))
        return None
