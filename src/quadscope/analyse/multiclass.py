"""One axis's growth class read from its exponent's interval (pure).

Contract: `axis_class(sizes, interval, registry=)` returns an `AxisClass`:
the one class of the registry whose effective exponent over `sizes` lies in
the exponent's 95% interval (± TOL) while the whole interval stays nearer that
class than either neighbour (within its basin: up to the midpoints of the
effective exponents on each side), or else the bracket (`at_least` …
`at_most`) of the classes that enclose the whole interval, never a class the
interval excludes. The basin rule is what keeps a settled class honest: an
interval of 1.25–2.2 holds only n²'s exponent, but also 1.3 and 1.5, which are
no n²; naming n² there is confidently wrong about every exponent the interval
allows nearer n log n (bench/multi_calibration.py, BENCHMARKS §15). A class is judged on its effective
exponent, as `analyse/verdict` judges a one-size fit: the slope of log f(x)
against log x over the axis's own sizes (n log n reads about 1.2 over two
decades, √n 0.5, log n about 0.3), so "n log n" is not refused for a k of
1.2, nor "n" kept for it. Classes that outgrow every power (cⁿ) take part
only as the bracket's top beyond MAX_POWER. "1" is the exponent 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quadscope.classes import REGISTRY, GrowthClass, Registry

TOL = 0.05  # half a printed digit of the exponent, as verdict.COHERENCE_TOL
MAX_POWER = 4.0  # past this exponent the axis outgrows the powers the fit searches


@dataclass(frozen=True, slots=True)
class AxisClass:
    """An axis's verdict: `name` when settled, else the bracket `at_least` … `at_most`."""

    axis: str
    name: str | None
    at_least: str
    at_most: str

    @property
    def settled(self) -> bool:
        return self.name is not None


def effective_exponent(growth: GrowthClass, sizes: Sequence[float]) -> float:
    """The least squares slope of log f(x) on log x over `sizes` (0 for "1")."""
    if not growth.growing:
        return 0.0
    x = np.asarray(sorted({float(s) for s in sizes if s >= 1}))
    if x.size < 2:
        return float(growth.order[0])
    f = growth.evaluate(0.0, 1.0, x)
    ok = np.isfinite(f) & (f > 0)  # log n is 0 at n = 1: its slope is read from n = 2 up
    if np.count_nonzero(ok) < 2:
        return float(growth.order[0])
    return float(np.polyfit(np.log(x[ok]), np.log(f[ok]), 1)[0])


def exponents(sizes: Sequence[float], registry: Registry = REGISTRY) -> tuple[tuple[str, float], ...]:
    """Each power-like class's effective exponent over `sizes`, slowest first.

    Ordered by the exponent, not the registry: over small sizes (1..8) log n
    climbs faster than √n, and a basin is judged between the exponents'
    neighbours on this scale (the sort is stable, so ties keep registry order).
    """
    table = [(g.name, effective_exponent(g, sizes)) for g in registry if not g.outgrows_powers]
    return tuple(sorted(table, key=lambda ce: ce[1]))


def axis_class(axis: str, sizes: Sequence[float], interval: tuple[float, float],
               registry: Registry = REGISTRY) -> AxisClass:
    """The class (or bracket) the exponent's `interval` allows over `sizes` (module docstring)."""
    lo, hi = interval
    table = exponents(sizes, registry)
    inside = [i for i, (_, e) in enumerate(table) if lo - TOL <= e <= hi + TOL]
    if len(inside) == 1 and _in_basin(table, inside[0], lo, hi):
        name = table[inside[0]][0]
        return AxisClass(axis, name, name, name)
    below = [c for c, e in table if e <= lo + TOL]
    above = [c for c, e in table if e >= hi - TOL]
    floor = below[-1] if below else table[0][0]
    if above:
        ceiling = above[0]
    else:
        beyond = [g.name for g in registry if g.outgrows_powers]
        ceiling = beyond[0] if beyond and hi > MAX_POWER else table[-1][0]
    order = [g.name for g in registry]
    if order.index(floor) > order.index(ceiling):  # the sizes reorder the scale: say it slow first
        floor, ceiling = ceiling, floor
    return AxisClass(axis, None, floor, ceiling)


def _in_basin(table: Sequence[tuple[str, float]], i: int, lo: float, hi: float) -> bool:
    """Whether [lo, hi] lies nearer class i's effective exponent than either neighbour's."""
    e = [x for _, x in table]
    low = (e[i - 1] + e[i]) / 2 if i > 0 else -np.inf
    high = (e[i] + e[i + 1]) / 2 if i + 1 < len(e) else np.inf
    return bool(low <= lo and hi <= high)


def class_label(name: str, axis: str, registry: Registry = REGISTRY) -> str:
    """A class's label with its size written as the axis ("n²" -> "rows²")."""
    import re

    return re.sub(r"n", axis, registry[name].label) if name != "1" else "1"


def nearest(exponent: float, sizes: Sequence[float], registry: Registry = REGISTRY) -> str:
    """The class whose effective exponent over `sizes` is nearest `exponent` (for the sum's terms)."""
    table = exponents(sizes, registry)
    return min(table, key=lambda ce: abs(ce[1] - exponent))[0]
