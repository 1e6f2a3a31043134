"""Adaptive mode over several sizes: which step comes next (pure decisions, no fitting).

Contract: `base_axes(starts)` is the base design's sizes, each axis's start
times 1, 2 and 4 (MIN_AXIS_SIZES sizes, so every exponent can be told from an
offset at the first look), and `base_points(axes)` its points (`run/design.py`
within BASE_POINTS: the 3 × 3 grid for two sizes, lines and corners for more).
`extension(points, i)` is what doubling axis i adds: its largest size doubled,
at every combination of the other axes' smallest and largest sizes (the far
corner is where the product and the sum of powers differ most).
`price_s(point, measured_s, model)` predicts a point's time from the measured
point whose time the fitted cost law says is nearest to it, scaled by the law
(a + b·Π x^p, `analyse/multifit`): the law is fitted on what the sweep measures
(time, or an exact count, which the time follows).

`flat_open(sizes, spent_s=, budget_s=)` is whether an axis read as constant
("1") stays open: growth hidden under the other sizes' cost (or a start-up
cost) shows only where its own work outgrows them, so, as in one-size
adaptive mode (`run/adaptive`, FLAT_SPAN and FLAT_SPEND), a flat axis keeps
growing until its sizes span FLAT_SPAN or FLAT_SPEND of the budget is spent;
doubling a flat axis costs next to nothing.

`decide(axes, previous=, prices_s=, confirm_s=, remaining_s=, spent_s=)` picks the next
`Step` from the look just taken (each axis's `AxisState`: its interval, class
or bracket, whether it can still grow):
  * stop, when every axis's class or bracket read the same at this look and
    the one before (stopping at the first good-looking verdict is optional
    stopping: Armitage, McPherson & Rowe, JRSS A 132, 1969) and either every
    axis is settled or no axis that is not can be grown within the budget;
  * extend the open axis whose exponent interval is widest for the seconds
    its extension is predicted to cost (width / price: a wide interval bought
    cheaply first; only axes still open are candidates, and only those whose
    step fits in STEP_SHARE of what is left; once the verdict read the same
    twice, a step that would sharpen a bracket of two neighbouring classes
    (`narrow`) also costs at most DECIDE_SPEND
    times what the sweep has spent, as in one-size adaptive mode, `run/adaptive`:
    the bracket already answers most of the question);
  * confirm: one more run at the noisiest points (priced `confirm_s`) when
    every axis is settled but the verdict has not yet read the same twice, or
    when no open axis can grow within the budget (repeats narrow an interval
    too, as one-size adaptive mode refines once growth is over), unless each
    open axis is a bracket of two neighbouring classes that read the same twice;
  * stop when nothing affordable is left.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quadscope.run.adaptive import FLAT_SPAN, FLAT_SPEND
from quadscope.run.design import MIN_AXIS_SIZES, Axis, Point, design
from quadscope.run.sizes import MAX_EXACT_SIZE

BASE_POINTS = 9  # the 3 × 3 grid of two sizes: one more than design.MIN_POINTS
BASE_FACTORS = (1, 2, 4)
STEP_SHARE = 0.5  # a step may take at most this share of the budget left: the next look needs some
DECIDE_SPEND = 1.0  # run/adaptive's: sharpening a stable bracket is worth what was spent so far


@dataclass(frozen=True, slots=True)
class AxisState:
    """One axis at a look: its measured sizes, exponent interval, verdict text and whether
    it is settled (one class) and may still grow (no failed or cut-off runs at its top)."""

    name: str
    sizes: tuple[int, ...]
    interval: tuple[float, float]
    verdict: str  # the class, or "at_least…at_most": what two looks must agree on
    settled: bool
    can_grow: bool = True
    narrow: bool = False  # a bracket of two neighbouring classes ("n … n log n")

    @property
    def width(self) -> float:
        return self.interval[1] - self.interval[0]


@dataclass(frozen=True, slots=True)
class Step:
    """What comes next: "extend" an axis, "confirm" (repeats at the noisiest points), "stop"."""

    kind: str
    axis: str = ""
    reason: str = ""


def base_axes(starts: Sequence[tuple[str, int]]) -> tuple[Axis, ...]:
    """Each axis's start × 1, 2, 4 (a start of 0 starts at 1: no power of 0 is fitted)."""
    return tuple(Axis(name, tuple(max(s, 1) * f for f in BASE_FACTORS)) for name, s in starts)


def base_points(axes: Sequence[Axis]) -> tuple[Point, ...]:
    return design(axes, max_points=BASE_POINTS)


def extension(points: Sequence[Point], i: int) -> tuple[Point, ...]:
    """The points doubling axis i adds (module docstring); () when it would pass MAX_EXACT_SIZE."""
    k = len(points[0])
    top = max(p[i] for p in points) * 2
    if top > MAX_EXACT_SIZE:
        return ()
    ends = [(min(p[j] for p in points), max(p[j] for p in points)) for j in range(k) if j != i]
    out = []
    for others in itertools.product(*ends):
        out.append((*others[:i], top, *others[i:]))
    return tuple(sorted(set(out)))


def flat_open(sizes: Sequence[int], *, spent_s: float, budget_s: float) -> bool:
    """Whether a constant axis keeps growing (module docstring)."""
    return max(sizes) < FLAT_SPAN * min(sizes) and spent_s < FLAT_SPEND * budget_s


def law(point: Point, exponents: Sequence[float], coef: Sequence[float]) -> float:
    """The product law a + b·Π x^p at `point`."""
    a, b = coef
    return a + b * math.prod(float(x) ** p for x, p in zip(point, exponents, strict=True))


def price_s(point: Point, measured_s: Mapping[Point, float], exponents: Sequence[float],
            coef: Sequence[float]) -> float:
    """`point`'s predicted time: the nearest measured point's (in log size) scaled by the law."""
    if point in measured_s:
        return measured_s[point]
    ref = min(measured_s, key=lambda p: sum(abs(math.log(a) - math.log(b))
                                            for a, b in zip(p, point, strict=True)))
    there, here = law(ref, exponents, coef), law(point, exponents, coef)
    if not (there > 0 and math.isfinite(here)):
        return math.inf
    return measured_s[ref] * max(here / there, 1.0)


def decide(axes: Sequence[AxisState], *, previous: tuple[str, ...] | None,
           prices_s: Mapping[str, float], confirm_s: float,
           remaining_s: float, spent_s: float = math.inf) -> Step:
    """The next step after a look (see the module docstring)."""
    verdict = tuple(a.verdict for a in axes)
    stable = verdict == previous
    if all(a.settled for a in axes):
        if stable:
            return Step("stop", reason="every size's class read the same at two looks")
        return _confirm(confirm_s, remaining_s, "every size's class is settled")
    open_axes = [a for a in axes if not a.settled and a.can_grow
                 and len(a.sizes) >= MIN_AXIS_SIZES]
    def cap_s(a: AxisState) -> float:
        return min(STEP_SHARE * remaining_s,
                   DECIDE_SPEND * spent_s if stable and a.narrow else math.inf)
    affordable = [a for a in open_axes if prices_s.get(a.name, math.inf) <= cap_s(a)]
    if affordable:
        best = max(affordable, key=lambda a: (a.width / max(prices_s[a.name], 1e-9), a.width))
        return Step("extend", best.name,
                    f"{best.name}'s exponent interval is {best.width:.2f} wide; "
                    f"doubling it costs about {prices_s[best.name]:.3g} s")
    if stable and all(a.narrow for a in axes if not a.settled):
        return Step("stop", reason="no open size can grow within the budget, and each open "
                                   "size's bracket of two classes read the same at two looks")
    return _confirm(confirm_s, remaining_s, "no open size can grow within the budget")


def _confirm(confirm_s: float, remaining_s: float, why: str) -> Step:
    if confirm_s <= STEP_SHARE * remaining_s:
        return Step("confirm", reason=f"{why}; one more run at the noisiest points")
    return Step("stop", reason=f"{why}; the budget left affords no second look")
