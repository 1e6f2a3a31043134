"""A sweep over several sizes as one line per axis through its base point, to profile. Pure.

Contract: `axis_lines(sweep, runs)` returns one `AxisLine` per axis of a
sweep over several sizes (`Sweep.axes`): the axis's name, the base point
(every other axis's size, held fixed), and a one-size `Sweep` and its `Run`s
along that axis, which `profile.driver.profile_sweep` and Callgrind's count
take as they take any sweep over n. The line's command has the other axes'
placeholders filled with the base sizes and the axis's own placeholder
written `{n}`; its runs are the stored runs whose point lies on the line,
their `size_n` the axis's size. An axis whose line holds fewer than
`MIN_LINE_SIZES` measured sizes is left out (nothing to fit).

`axis_sentence(sentence, axis)` writes a culprit sentence of a line in its
axis's name: after the verb ("makes it grow", "does the most growing work"),
each size variable `n` becomes the axis (`n^2.1` → `cols^2.1`, `at n = 8k` →
`at cols = 8k`); the function's name before the verb is left as it is.

The base point is the measured point whose lines hold the most points in
all (the star design's centre, `run/design.py`; for a full grid, the middle
size of each axis among equals), so each axis is profiled where the sweep
measured it most.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.model import Run, Sweep
from quadscope.run.axes import fill

MIN_LINE_SIZES = 3
Point = tuple[int, ...]
_VERB = re.compile(r" (makes it grow|does the most growing work)")
_SIZE_VARIABLE = re.compile(r"(?<![A-Za-z0-9_.])n(?![A-Za-z0-9_(])")  # not \w: "²" is one


@dataclass(frozen=True, slots=True)
class AxisLine:
    axis: str
    base: tuple[tuple[str, int], ...]  # the other axes' sizes, held fixed
    sweep: Sweep  # one size: `{n}` is this axis
    runs: tuple[Run, ...]

    def where(self) -> str:
        """`m = 300, k = 8`: the sizes held fixed, for a heading."""
        return ", ".join(f"{name} = {size}" for name, size in self.base)


def run_point(run: Run) -> Point:
    """A run's sizes in the sweep's axis order (its `size_n` is the first axis's)."""
    return (run.size_n, *(size for _, size in run.axes))


def _on_line(p: Point, base: Point, i: int) -> bool:
    return all(p[j] == base[j] for j in range(len(p)) if j != i)


def base_point(points: Sequence[Point]) -> Point:
    """The point whose lines (one per axis through it) hold the most points; ties go to the
    middle of the tied points in sorted order."""
    unique = sorted(set(points))
    dims = len(unique[0])

    def score(p: Point) -> int:
        return sum(sum(1 for q in unique if _on_line(q, p, i)) for i in range(dims))

    best = max(score(p) for p in unique)
    tied = [p for p in unique if score(p) == best]
    return tied[len(tied) // 2]


def _line_command(command: Sequence[str], axis: str,
                  fixed: dict[str, int]) -> tuple[str, ...]:
    filled = fill(command, fixed)
    return tuple(a.replace("{" + axis + "}", "{n}") for a in filled)


def axis_lines(sweep: Sweep, runs: Sequence[Run]) -> tuple[AxisLine, ...]:
    """One line per axis through the base point (see the module docstring)."""
    names = sweep.axis_names
    mine = [r for r in runs if r.variant == "A"]
    points = [run_point(r) for r in mine if len(r.axes) == len(names) - 1] or list(sweep.points)
    if not names or not points:
        return ()
    base = base_point(points)
    out = []
    for i, axis in enumerate(names):
        fixed = {n: base[j] for j, n in enumerate(names) if j != i}
        on = [r for r in mine if len(r.axes) == len(names) - 1 and _on_line(run_point(r), base, i)]
        line_runs = tuple(dataclasses.replace(r, size_n=run_point(r)[i], axes=()) for r in on)
        sizes = tuple(sorted({r.size_n for r in line_runs}))
        if len(sizes) < MIN_LINE_SIZES:
            continue
        line = dataclasses.replace(sweep, command=_line_command(sweep.command, axis, fixed),
                                   sizes=sizes, axes=(), points=())
        out.append(AxisLine(axis, tuple(fixed.items()), line, line_runs))
    return tuple(out)


def axis_sentence(sentence: str, axis: str) -> str:
    """The sentence with its size variable named by the axis (see the module docstring)."""
    verb = _VERB.search(sentence)
    if verb is None or axis == "n":
        return sentence
    head, tail = sentence[:verb.end()], sentence[verb.end():]
    return head + _SIZE_VARIABLE.sub(axis, tail)


__all__ = ["MIN_LINE_SIZES", "AxisLine", "axis_lines", "axis_sentence", "base_point",
           "run_point"]
