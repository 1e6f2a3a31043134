"""Call stacks with weights, one `StackProfile` per profiled size, and folded-stack files.

Contract: a stack is a tuple of `Frame`s, root first (main or the kernel entry
at index 0, the sampled function last). A `StackProfile` maps each distinct
stack to its summed weight in the event's unit (nanoseconds of CPU for
cpu-clock/task-clock, sample counts for py-spy) and carries `reference_s`, the
measured time that its weights are scaled to. Folded stacks follow Brendan
Gregg's flamegraph.pl / speedscope format, one `frame;frame;frame weight` line
per stack, kernel frames suffixed `_[k]` as stackcollapse-perf.pl does. Nothing
here runs a process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KERNEL_DSO = "[kernel.kallsyms]"
UNKNOWN = "[unknown]"
VSYSCALL_DSO = "[vsyscall]"
VSYSCALL_START = 0xFFFFFFFFFF600000
VSYSCALL_END = 0xFFFFFFFFFF601000


@dataclass(frozen=True, slots=True, order=True)
class Frame:
    """One function: its symbol and the object it lives in (path, `[kernel.kallsyms]`, ...)."""

    symbol: str
    dso: str

    @property
    def kernel(self) -> bool:
        return self.dso.startswith("[kernel") or self.dso.endswith(".ko")

    @property
    def known(self) -> bool:
        return self.symbol != UNKNOWN and not self.symbol.startswith("0x")

    def label(self) -> str:
        """The name shown to people and written to folded files."""
        if self.known:
            name = self.symbol
        elif self.dso and self.dso != UNKNOWN:
            name = f"[{os.path.basename(self.dso)}]" if self.symbol == UNKNOWN else self.symbol
        else:
            name = self.symbol
        return f"{name}_[k]" if self.kernel else name

    def to_dict(self) -> dict[str, str]:
        return {"symbol": self.symbol, "dso": self.dso}


Stack = tuple[Frame, ...]


@dataclass(frozen=True, slots=True)
class StackProfile:
    """Everything sampled at one size.

    `samples` counts perf samples; `weights` are in the event's unit and sum to
    `total_weight`. `reference_s` is the measured time at this size that the
    weights are scaled to (see `seconds`); `wall_s` is the profiled run's own
    wall time, perf included. `notes` are limits found while sampling.
    """

    size_n: int
    stacks: Mapping[Stack, int]
    samples: int
    event: str
    reference_s: float
    wall_s: float = 0.0
    repeats: int = 1
    notes: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total_weight(self) -> int:
        return sum(self.stacks.values())

    def seconds_per_weight(self) -> float:
        total = self.total_weight
        return self.reference_s / total if total else 0.0


def fold_line(stack: Stack, weight: int) -> str:
    # ';' separates frames and the last space separates the count, so a symbol
    # holding ';' (rare: some C++ and Rust demanglings) would shift every frame.
    names = [f.label().replace(";", ":") for f in stack]
    return f"{';'.join(names)} {weight}"


def fold(stacks: Mapping[Stack, int]) -> list[str]:
    """Folded lines, merged by label and sorted, so equal profiles fold to equal files."""
    merged: dict[str, int] = {}
    for stack, weight in stacks.items():
        line = fold_line(stack, 0)
        key = line[: line.rfind(" ")]
        merged[key] = merged.get(key, 0) + weight
    return [f"{k} {v}" for k, v in sorted(merged.items()) if v > 0]


def write_folded(path: Path, stacks: Mapping[Stack, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in fold(stacks)))
    return path


def read_folded(lines: Iterable[str]) -> dict[Stack, int]:
    """Parse folded lines back; kernel frames (`_[k]`) get `[kernel.kallsyms]`, others no dso."""
    return parse_folded(lines, lambda names: tuple(
        Frame(name[:-4], KERNEL_DSO) if name.endswith("_[k]") else Frame(name, "")
        for name in names))


def parse_folded(lines: Iterable[str], stack_of: Callable[[list[str]], Stack]) -> dict[Stack, int]:
    """Folded lines (`name;name;name count`, blank ones skipped) summed by stack:
    `stack_of` makes a line's frame names, root first, into its stack."""
    out: dict[Stack, int] = {}
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        names, _, count = line.rpartition(" ")
        stack = stack_of(names.split(";"))
        out[stack] = out.get(stack, 0) + int(count)
    return out
