"""Which combinations of sizes a sweep over several axes measures (pure).

Contract: `design(axes, max_points=)` takes each axis's sizes (`Axis`, in the
order the user gave them) and returns the points to measure, each a tuple of
sizes in axis order, sorted and distinct:
  * the full grid when it has at most `max_points` points;
  * otherwise a star: every size of each axis along a line through the base
    point (each axis's middle size, so every line sees both halves of the
    other axes' effect), plus the off-axis corners (smallest and largest of
    every axis, at most OFF_AXIS of them). The lines alone cannot tell the
    product a + b·n^p·m^q from the sum a + b·n^p + c·m^q: along each line
    both are a constant plus one power. The corners can: at (n_max, m_max)
    the product grows by both factors at once and the sum by their sum.
    An axis with more sizes than `max_points` allows is thinned to evenly
    spaced ones, its smallest and largest kept.
`grid_size(axes)` is the full grid's count. A design with fewer than
MIN_POINTS points, or an axis with fewer than MIN_AXIS_SIZES sizes, raises
`SizesError` with one sentence.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.errors import SizesError

MAX_POINTS = 36  # the default: a 6 × 6 grid, or lines of up to 16 sizes each
OFF_AXIS = 4
MIN_AXIS_SIZES = 3  # an exponent needs three sizes to be told from an offset
MIN_POINTS = 8  # the sum model has 6 parameters; AICc needs two more


@dataclass(frozen=True, slots=True)
class Axis:
    """One size parameter: its placeholder's name ("n", "rows") and its sizes, ascending."""

    name: str
    sizes: tuple[int, ...]


Point = tuple[int, ...]


def grid_size(axes: Sequence[Axis]) -> int:
    return math.prod(len(a.sizes) for a in axes)


def _thin(sizes: tuple[int, ...], keep: int) -> tuple[int, ...]:
    """`keep` sizes evenly spread over the list, both ends included."""
    if len(sizes) <= keep:
        return sizes
    picks = {round(i * (len(sizes) - 1) / (keep - 1)) for i in range(keep)}
    return tuple(sizes[i] for i in sorted(picks))


def _star(axes: Sequence[Axis], max_points: int) -> list[Point]:
    k = len(axes)
    corners = list(itertools.product(*[(a.sizes[0], a.sizes[-1]) for a in axes]))
    per_line = max(MIN_AXIS_SIZES, (max_points - min(OFF_AXIS, len(corners)) - 1) // k + 1)
    thinned = [_thin(a.sizes, per_line) for a in axes]
    base = tuple(s[len(s) // 2] for s in thinned)
    points: set[Point] = set()
    for i, sizes in enumerate(thinned):
        for s in sizes:
            points.add((*base[:i], s, *base[i + 1:]))
    # The far corner first: where product and sum differ most.
    corners.sort(key=lambda c: -sum(c[i] == a.sizes[-1] for i, a in enumerate(axes)))
    points.update([c for c in corners if c not in points][:OFF_AXIS])
    return sorted(points)


def design(axes: Sequence[Axis], max_points: int = MAX_POINTS) -> tuple[Point, ...]:
    """The points to measure (see the module docstring)."""
    for a in axes:
        if len(a.sizes) < MIN_AXIS_SIZES:
            raise SizesError(f"--sizes {a.name}= gives {len(a.sizes)} size(s); each axis needs "
                             f"at least {MIN_AXIS_SIZES} to tell its exponent from an offset")
    if grid_size(axes) <= max_points:
        points = sorted(itertools.product(*[a.sizes for a in axes]))
    else:
        points = _star(axes, max_points)
    if len(points) < MIN_POINTS:
        raise SizesError(f"the sizes give {len(points)} points; at least {MIN_POINTS} are needed "
                         "to fit the cost in several sizes and test whether they interact; "
                         "give more sizes")
    return tuple(points)
