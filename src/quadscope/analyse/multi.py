"""The verdict on a cost that grows in several sizes: per-axis classes and separability (pure).

Contract: `analyse_points(axes, points, metric=, seed=, n_boot=, registry=)`
fits the product model a + b·Π x^p and the additive model a + Σ b·x^q
(`analyse/multifit`), reads each axis's class from its exponent's 95%
interval (`analyse/multiclass`: one class where the interval allows one, the
bracket of the classes around it otherwise, never a class it excludes), tests
separability by AICc and returns a `MultiVerdict` with one sentence:
"quadratic in rows, linear in cols; the cost is not separable: rows²·cols fits
better than rows² + cols". Separability (Burnham & Anderson 2002, §2.6: an AICc
difference above 2 is support): the product model wins by more than
SEPARATION (the cost is not separable: the growth in one size depends on the
other), the sum wins by more (separable), or neither (not decided at these
points); not asked where an axis does not grow (class "1") or fewer than
MIN_POINTS points were measured. Each axis's exponent and interval are the
winning model's (the sum's where the cost is separable, else the product's),
but where the other model is not ruled out (AICc within NO_SUPPORT, beyond which
Burnham & Anderson 2002, §2.6, find "essentially no support") the interval is
the union of both models' intervals for that axis: which model holds is itself
uncertain (their §4.3, model selection uncertainty), and a class read from one
model's interval alone was confidently wrong where the noise made the other
model look better (bench/multi_calibration.py, BENCHMARKS §15). Lower terms
(issue 25): a per-row overhead plus per-cell work, rows²·(α + β·cols), is no
product (it reads cols^0.8) and no sum; the product with lower terms
a + b·Π x^p + Σ c·x^p (`analyse/multifit`) takes the verdict where its AICc
beats both the product's and the sum's by more than SEPARATION (the sum's by
more than NO_SUPPORT where the sum already beat the product: it nests the sum
with one coefficient more, and a gap above 2 arises by chance in about 5% of
sums, χ²₁ > 4; bench/multi_calibration.py called 4 of 360 sums not separable
at SEPARATION) and both its
interaction and its lower terms carry at least MATERIAL of the cost somewhere
(the same support rule, Burnham & Anderson 2002, §2.6, for one more nesting
level); then the cost is not separable, each axis's exponent and interval are
its own (joined with the product's while that one is within NO_SUPPORT), and
the sentence names it: "rows²·cols plus a rows² term fits better than
rows²·cols". Only then is it bootstrapped. `lines(...)` are the medians along each axis
through the base point and the chosen fit's curve there (the product's unless
the lower terms won), which the renderers draw.
`to_dict()` is the JSON form (docs/schema.md, "several sizes").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadscope.analyse.multiclass import AxisClass, axis_class, class_label, nearest
from quadscope.analyse.multifit import GridPoint, Models, fit_models, medians, nest_intervals
from quadscope.classes import REGISTRY, Registry

SEPARATION = 2.0  # AICc units
NO_SUPPORT = 10.0  # AICc units: the losing model is ruled out beyond this
MIN_POINTS = 8  # the sum has 2k + 2 parameters (k = 2) and AICc one more
MATERIAL = 0.05  # share of the fitted cost a term must carry at some point to count


@dataclass(frozen=True, slots=True)
class AxisVerdict:
    """One axis: its sizes, exponent p with its 95% interval, and its class or bracket."""

    axis: str
    sizes: tuple[int, ...]
    exponent: float
    interval: tuple[float, float]
    growth: AxisClass

    def to_dict(self) -> dict[str, Any]:
        return {"axis": self.axis, "sizes": list(self.sizes), "exponent": self.exponent,
                "interval": list(self.interval), "class": self.growth.name,
                "at_least": self.growth.at_least, "at_most": self.growth.at_most}


@dataclass(frozen=True, slots=True)
class Line:
    """The medians along one axis with the other axes at `fixed`, and the fit's values there."""

    axis: str
    fixed: tuple[tuple[str, int], ...]
    sizes: tuple[int, ...]
    medians: tuple[float, ...]
    fitted: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class MultiVerdict:
    metric: str
    axes: tuple[AxisVerdict, ...]
    models: Models
    separable: str  # "no" (product), "yes" (sum), "undecided", "not tested"
    product_text: str
    sum_text: str
    sentence: str
    lines: tuple[Line, ...]
    points: tuple[tuple[tuple[int, ...], float], ...]  # (sizes, median) of every point
    nest_text: str = ""  # the product with lower terms, "rows²·cols plus a rows² term"
    nested: bool = False  # whether it won (then the axes are its own)

    def to_dict(self) -> dict[str, Any]:
        m = self.models
        return {
            "metric": self.metric,
            "axes": [a.to_dict() for a in self.axes],
            "product": {"model": self.product_text, "exponents": list(m.product.exponents),
                        "coefficients": list(m.product.coef), "aicc": m.product.aicc},
            "sum": {"model": self.sum_text, "exponents": list(m.additive.exponents),
                    "coefficients": list(m.additive.coef), "aicc": m.additive.aicc},
            **({} if m.nest is None else {"nest": {
                "model": self.nest_text or None, "exponents": list(m.nest.exponents),
                "coefficients": list(m.nest.coef), "aicc": m.nest.aicc}}),
            "separable": self.separable,
            "model": "nest" if self.nested else ("sum" if self.separable == "yes" else "product"),
            "interval_method": "bootstrap of runs within each point plus wild residuals",
            "n_boot": m.n_boot,
            "verdict": self.sentence,
            "points": [{"sizes": list(s), "median": v} for s, v in self.points],
        }


def _words(c: AxisClass, registry: Registry) -> str:
    if c.name is not None:
        return registry[c.name].words
    if c.at_least == c.at_most:
        return registry[c.at_least].words
    return f"{registry[c.at_least].words} to {registry[c.at_most].words}"


def _term(name: str, axis: str, registry: Registry) -> str:
    return class_label(name, axis, registry)


def _product_text(axes: Sequence[AxisVerdict], registry: Registry) -> str:
    terms = []
    for a in axes:
        name = a.growth.name or nearest(a.exponent, a.sizes, registry)
        if name != "1":
            terms.append(_term(name, a.axis, registry))
    return "·".join(terms) or "1"


def _sum_text(axes: Sequence[AxisVerdict], models: Models, registry: Registry) -> str:
    terms = []
    for a, q, b in zip(axes, models.additive.exponents, models.additive.coef[1:], strict=True):
        name = nearest(q, a.sizes, registry)
        if name != "1" and b > 0:
            terms.append(_term(name, a.axis, registry))
    return " + ".join(terms) or "1"


def _nest_text(axes: Sequence[AxisVerdict], models: Models, product: str,
               registry: Registry, x: np.ndarray) -> str:
    """The product with lower terms in words: "rows²·cols plus a rows² term"; "" where no lower
    term, or not the product term, carries MATERIAL of the fitted cost at any point (then it
    is the product or the sum again)."""
    nest = models.nest
    if nest is None:
        return ""
    e, coef = np.array(nest.exponents), np.array(nest.coef)
    powers = x ** e
    total = coef[0] + coef[1] * np.prod(powers, axis=1) + powers @ coef[2:]
    lower = []
    for i, (a, p, c) in enumerate(zip(axes, nest.exponents, nest.coef[2:], strict=True)):
        name = nearest(p, a.sizes, registry)
        if name != "1" and float(np.max(c * powers[:, i] / total)) >= MATERIAL:
            lower.append(_term(name, a.axis, registry))
    if not lower or float(np.max(coef[1] * np.prod(powers, axis=1) / total)) < MATERIAL:
        return ""  # the product or the sum again, listed as such
    head = product
    if len(lower) == 1:
        return f"{head} plus a {lower[0]} term"
    return f"{head} plus {', '.join(lower[:-1])} and {lower[-1]} terms"


def _shares(x: np.ndarray, models: Models) -> tuple[float, float]:
    """The largest share of the nest's fitted cost its interaction term carries at any point,
    and the largest any one of its lower terms carries."""
    nest = models.nest
    assert nest is not None
    e, coef = np.array(nest.exponents), np.array(nest.coef)
    powers = x ** e
    inner = coef[1] * np.prod(powers, axis=1)
    lower = powers * coef[2:]
    total = coef[0] + inner + lower.sum(axis=1)
    return float(np.max(inner / total)), float(np.max(lower / total[:, None]))


def _nest_wins(x: np.ndarray, models: Models) -> bool:
    """Whether the product with lower terms takes the verdict (see the module docstring)."""
    nest = models.nest
    if nest is None or models.n_points < MIN_POINTS:
        return False
    separable = models.additive.aicc < models.product.aicc - SEPARATION
    if not nest.aicc < models.product.aicc - SEPARATION:
        return False
    if not nest.aicc < models.additive.aicc - (NO_SUPPORT if separable else SEPARATION):
        return False
    return min(_shares(x, models)) >= MATERIAL


def _separable(axes: Sequence[AxisVerdict], models: Models) -> str:
    if models.n_points < MIN_POINTS:
        return "not tested"
    gap = models.additive.aicc - models.product.aicc
    if gap < -SEPARATION:  # the sum's extra term is real: it cannot win where a size is flat
        return "yes"
    if any(_may_be_flat(a) for a in axes):
        return "not tested"  # with one size flat, the product and the sum are one model
    return "no" if gap > SEPARATION else "undecided"


def _may_be_flat(a: AxisVerdict) -> bool:
    """Whether the axis's verdict allows that the cost does not grow with it."""
    return a.growth.name == "1" or (a.growth.name is None and a.growth.at_least == "1")


def _sentence(axes: Sequence[AxisVerdict], separable: str, product: str, total: str,
              registry: Registry, n_points: int) -> str:
    parts = ", ".join(f"{_words(a.growth, registry)} in {a.axis}" for a in axes)
    if separable == "nest":
        return f"{parts}; the cost is not separable: {total} fits better than {product}"
    if separable == "no":
        return f"{parts}; the cost is not separable: {product} fits better than {total}"
    if separable == "yes":
        return f"{parts}; the cost is separable: {total} fits better than {product}"
    if separable == "undecided":
        return (f"{parts}; {product} and {total} fit these points equally well, "
                "so whether the sizes interact is not decided")
    flat = [a.axis for a in axes if a.growth.name == "1"]
    if flat:
        return f"{parts}; the cost does not grow with {' or '.join(flat)}"
    if any(_may_be_flat(a) for a in axes):
        return f"{parts}; whether the sizes interact is not tested while a size may not count"
    return f"{parts}; {n_points} points are too few to test whether the sizes interact"


def _fixed_for(points: Sequence[GridPoint], i: int) -> tuple[int, ...]:
    """The other axes' sizes with the most points along axis i (ties: the larger)."""
    others = Counter(p.sizes[:i] + p.sizes[i + 1:] for p in points)
    return max(others, key=lambda o: (others[o], o))


def lines(names: Sequence[str], points: Sequence[GridPoint], models: Models,
          nested: bool = False) -> tuple[Line, ...]:
    """Each axis's line through the point the most runs share (see the module docstring)."""
    x, y = medians(points)
    fit = models.nest if nested and models.nest is not None else models.product
    e = np.array(fit.exponents)
    powers = x ** e
    fitted = fit.coef[0] + fit.coef[1] * np.prod(powers, axis=1)
    if len(fit.coef) > 2:  # the lower terms
        fitted = fitted + powers @ np.array(fit.coef[2:])
    out = []
    for i, name in enumerate(names):
        fixed = _fixed_for(points, i)
        on = sorted((p.sizes[i], j) for j, p in enumerate(points)
                    if p.sizes[:i] + p.sizes[i + 1:] == fixed)
        others = tuple(zip((*names[:i], *names[i + 1:]), fixed, strict=True))
        out.append(Line(name, others, tuple(s for s, _ in on),
                        tuple(float(y[j]) for _, j in on), tuple(float(fitted[j]) for _, j in on)))
    return tuple(out)


def _axes(names: Sequence[str], points: Sequence[GridPoint], exponents: Sequence[float],
          intervals: Sequence[tuple[float, float]], registry: Registry) -> list[AxisVerdict]:
    out = []
    for i, name in enumerate(names):
        sizes = tuple(sorted({p.sizes[i] for p in points}))
        out.append(AxisVerdict(name, sizes, exponents[i], intervals[i],
                               axis_class(name, sizes, intervals[i], registry)))
    return out


def axis_intervals(models: Models, use_sum: bool,
                   nested: bool = False) -> tuple[tuple[float, float], ...]:
    """Each axis's interval: the chosen model's, joined with the other's while that one is not
    ruled out (AICc gap within NO_SUPPORT; see the module docstring). With the lower terms
    chosen, the other is the product they nest."""
    chosen, other = ((models.sum_intervals, models.intervals) if use_sum
                     else (models.intervals, models.sum_intervals))
    gap = abs(models.additive.aicc - models.product.aicc)
    if nested and models.nest is not None:
        chosen, other = models.nest_intervals, models.intervals
        gap = abs(models.product.aicc - models.nest.aicc)
    if not gap <= NO_SUPPORT:  # also an infinite or undefined AICc: nothing to join
        return chosen
    return tuple((min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(chosen, other, strict=True))


def analyse_points(names: Sequence[str], points: Sequence[GridPoint], *, metric: str = "wall_s",
                   seed: int = 0, n_boot: int = 400,
                   registry: Registry = REGISTRY) -> MultiVerdict:
    """The verdict on `points` over axes `names` (each point's sizes in that order)."""
    models = fit_models(points, seed=seed, n_boot=n_boot)
    axes = _axes(names, points, models.product.exponents, models.intervals, registry)
    separable = _separable(axes, models)
    product_axes = axes
    x, y = medians(points)
    nested = _nest_wins(x, models)
    if nested:  # the lower terms are real: their exponents, bootstrapped only now
        models = nest_intervals(points, models, seed=seed)
        assert models.nest is not None
        axes = _axes(names, points, models.nest.exponents, axis_intervals(models, False, True),
                     registry)
        separable = "no"
    else:
        use_sum = separable == "yes"  # each size's growth is the sum's term in it
        axes = _axes(names, points, (models.additive if use_sum else models.product).exponents,
                     axis_intervals(models, use_sum), registry)
    product, total = _product_text(axes, registry), _sum_text(axes, models, registry)
    nest = _nest_text(axes, models, product, registry, x)
    if nested:  # the product model's own words, from its own exponents
        product = _product_text(product_axes, registry)
    sentence = (_sentence(axes, "nest", product, nest or product, registry, models.n_points)
                if nested
                else _sentence(axes, separable, product, total, registry, models.n_points))
    return MultiVerdict(
        metric, tuple(axes), models, separable, product, total, sentence,
        lines(names, points, models, nested),
        tuple((p.sizes, float(v)) for p, v in zip(points, y, strict=True)), nest, nested)
