"""Whether following "n = X would decide" decides: the extended sweep simulated and fitted.

Contract: pure numpy given `refit`, the fit itself passed in as a function of (sizes,
values) -> Fit (this module does not import `fitting`, which calls it); deterministic
for a given seed; no I/O, no sentences. `forecast_n` checks the size the power
calculation named (`analyse.decide`) by doing what a user following it does, many times
over: the sweep is extended with the same design (the same repeats per size, sizes
doubling from the largest measured up to the size named, measured last), the new runs
drawn from each hypothesis the runs leave open (`hypotheses`), and the whole sweep,
the runs measured as they are and the new ones, is fitted again by the fit itself, with
every check its verdict applies. The size is kept where each hypothesis settles a class
in at least `decide.POWER` of the draws; else the next doubling, up to FORECAST_DOUBLINGS
more within the price cap (`decide.COST_MULTIPLE` times the runs so far, priced by the
dearest hypothesis); else none, and the meter decides instead.

Why simulate: the power calculation reads each hypothesis through approximations of the
verdict (a likelihood-ratio test, k's asymptotic error), and the verdict applies checks
those approximations leave out (leaving the largest size out, local slopes, a change of
regime found in the extended runs). A forecast by the fit itself is the "simulation-based
power analysis" of Arnold, Hogan, Colford & Hubbard ("Simulation methods to estimate
design power: an overview for applied research", BMC Medical Research Methodology 11,
2011): the probability of deciding is the share of simulated studies whose analysis, the
same as the real one, decides. As in `decide`, it is conditional on the runs so far (they
enter as measured: Lan, Simon & Halperin, 1982), and each hypothesis, were it the truth,
must decide (`decide.tie_n`'s rule).

The hypotheses. Each growing class the verdict's bracket allows that the runs leave open
(a class a doubt names as not told apart, as `decide.tie_n` takes each, or one whose QAICc
is within `evidence.SELECT_DELTA` of the best), with the coefficients fitted on the runs
(a, b ≥ 0; above a change of regime, on the sizes above it); and two shapes no single
class has, each where the medians show it, in χ² over ĉ below every class kept: two growth
terms, a + b·slowest(n) + c·faster(n) (`decide.two_terms`, faster the power just above
the bracket), by LEAN_DELTA, one standard error, as the runs cannot yet show the bend a
faster term hidden at the top makes further on; and each class left open with a negative
offset (`terms.free_offset`: a cost per element that stepped up within the sizes leaves
one), by `decide.MIX_DELTA`, χ²₁'s 95th percentile: one more coefficient believed (Seber &
Wild, Nonlinear Regression, 1989, §5.3). The new runs are log-normal about
the hypothesis's curve with the spread of the runs measured, the drift taken out: the
median over sizes of each size's standard deviation of log run time (timing noise is
roughly multiplicative; the median keeps one outlier from widening it), a parametric
bootstrap (Efron & Tibshirani, An Introduction to the Bootstrap, 1993, §6.5); and the
machine's drift, where the runs show one, goes on over the new runs as it went.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from quadscope.analyse.classfit import Data, prepare
from quadscope.analyse.decide import COST_MULTIPLE, MAX_FACTOR, MIX_DELTA, POWER, two_terms
from quadscope.analyse.drift import detrend, drift_to_take_out, without_drift
from quadscope.analyse.evidence import SELECT_DELTA
from quadscope.analyse.stats import nice_n
from quadscope.analyse.terms import free_offset
from quadscope.classes import GrowthClass, Registry
from quadscope.errors import FitRefusedError
from quadscope.model import Fit

# Simulated followings per hypothesis and size: ceil(POWER · DRAWS) of them must decide
# (13 of 16: a hypothesis deciding 90% of the time passes 93% of the time, one deciding
# 70% of the time 24%). Draws stop as soon as the outcome is known.
DRAWS = 16
# Doublings beyond the size named that the forecast may try before naming the meter.
FORECAST_DOUBLINGS = 2
# Two growth terms are followed where the runs lean to the faster one by a standard error
# of its coefficient: a fall in χ² over ĉ of 1, the edge of its 68.3% profile-likelihood
# interval (Press et al., Numerical Recipes, 3rd ed., 2007, §15.6.5). Followings it sent
# to the meter: n + n² equal at 4× the top, whose bend the runs do not yet show at
# MIX_DELTA, 6 of 8 that did not decide (bench/decide_n.py).
LEAN_DELTA = 1.0

Curve = Callable[[np.ndarray], np.ndarray]
Refit = Callable[[Sequence[float], Sequence[float]], Fit]


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """A curve the runs leave open for the sizes beyond them (`label` says which)."""

    label: str
    curve: Curve


@dataclass(frozen=True, slots=True)
class Design:
    """The runs as measured, in run order, and how following extends them: `repeats` runs
    per new size, log-normal about the truth with standard deviation `sigma_log`, the
    machine drifting on by `drift_log` in log time per run (`analyse.drift`'s δ: the fit
    takes out one steady drift over the whole order, so new runs that stopped drifting
    would bend the runs measured)."""

    sizes: tuple[float, ...]
    values: tuple[float, ...]
    repeats: int
    sigma_log: float
    drift_log: float = 0.0

    @classmethod
    def of(cls, sizes: Sequence[float], values: Sequence[float]) -> Design:
        rate = drift_to_take_out(sizes, values)
        delta = 0.0 if rate is None else rate[0]
        x = np.asarray(sizes, dtype=float)
        v = np.asarray(without_drift(values, delta), dtype=float)
        ok = np.isfinite(x) & np.isfinite(v) & (v > 0)
        spreads, counts = [], []
        for n in np.unique(x[ok]):
            logs = np.log(v[ok & (x == n)])
            counts.append(logs.size)
            if logs.size >= 2:
                spreads.append(float(np.std(logs, ddof=1)))
        repeats = int(np.median(counts)) if counts else 1
        return cls(tuple(sizes), tuple(values), max(repeats, 1),
                   float(np.median(spreads)) if spreads else 0.0, delta)

    @property
    def top(self) -> float:
        return float(np.nanmax(np.asarray(self.sizes, dtype=float)))

    @property
    def spent(self) -> float:
        return float(np.nansum(np.abs(np.asarray(self.values, dtype=float))))


def extension(top: float, n: int) -> list[int]:
    """Sizes doubling from `top` up to `n`, which is measured last (the same design)."""
    out: list[int] = []
    step = 2.0 * top
    while step < n:
        out.append(int(step))
        step *= 2.0
    return [*out, int(n)]


def follow(design: Design, curve: Curve, n: int,
           rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """The runs measured, then `design.repeats` rounds over the extension to n, each run
    log-normal about `curve` (at the first run's level, as the fit's curves are) and
    drifting on (interleaved rounds, as a sweep runs them)."""
    new = extension(design.top, n)
    truth = np.asarray(curve(np.asarray(new, dtype=float)), dtype=float)
    sizes = [float(s) for _ in range(design.repeats) for s in new]
    mean = np.tile(truth, design.repeats)
    order = len(design.values) + np.arange(mean.size)
    noise = np.exp(rng.normal(0.0, design.sigma_log, mean.size) + design.drift_log * order)
    return [*design.sizes, *sizes], [*design.values, *(mean * noise).tolist()]


def decides(refit: Refit, design: Design, curve: Curve, n: int,
            rng: np.random.Generator) -> bool:
    """Whether the sweep followed to n along `curve` settles a class in at least POWER of
    DRAWS simulated followings (stopping once the outcome is certain)."""
    need = int(np.ceil(POWER * DRAWS))
    won = lost = 0
    while won < need and lost <= DRAWS - need:
        sizes, values = follow(design, curve, n, rng)
        if refit(sizes, values).confident:
            won += 1
        else:
            lost += 1
    return won >= need


def _upper(metric: str, sizes: Sequence[float], values: Sequence[float],
           fit: Fit) -> Data | None:
    """The medians the hypotheses are fitted on: above the change of regime, if any."""
    keep = [i for i, s in enumerate(sizes) if fit.regime_n is None or s > fit.regime_n]
    level = detrend(sizes, values)  # the first run's level, as the fit's curves
    try:
        return prepare(metric, [sizes[i] for i in keep], [level[i] for i in keep])
    except FitRefusedError:  # too few sizes above the change: nothing to extend
        return None


def _span(fit: Fit, registry: Registry) -> list[GrowthClass]:
    """The growing classes the verdict allows (its bracket; the best class without one)."""
    lo, hi = fit.at_least or fit.best, fit.at_most or fit.best
    if lo not in registry or hi not in registry:
        return []
    names = registry.names[registry.index(lo):registry.index(hi) + 1]
    return [registry[c] for c in names if registry[c].growing and not registry[c].bases]


# The keys of a doubt's numbers that name the classes it could not tell apart (a tie's
# two, leaving one size out's chosen and other).
_NAMED = ("first", "second", "chosen", "other")


def _open(fit: Fit, span: Sequence[GrowthClass]) -> list[GrowthClass]:
    """The classes of `span` the runs leave open: those a doubt names as not told apart
    (a tie's classes, as `decide.tie_n` takes each, were it true) and those within
    SELECT_DELTA of the best-scoring model's QAICc, the margin selection itself asks
    (`evidence`); the best of `span` where none is (a bracket reaching back across a
    change of regime holds classes the sizes above it rule out)."""
    scores = {c.cls: c.score for c in fit.candidates if np.isfinite(c.score)}
    mine = [g for g in span if g.name in scores]
    if not mine:
        return []
    best = min(scores.values())
    named = {str(d.numbers[k]) for d in fit.doubts for k in _NAMED if d.numbers.get(k)}
    near = [g for g in mine if scores[g.name] - best <= SELECT_DELTA or g.name in named]
    return near or [min(mine, key=lambda g: scores[g.name])]


def _chi2(data: Data, curve: Curve) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        r = data.y - np.asarray(curve(data.n), dtype=float)
    return float((data.w * r * r).sum())


def _class_curve(fit: Fit, growth: GrowthClass) -> Curve | None:
    found = next((c for c in fit.candidates if c.cls == growth.name), None)
    if found is None or not np.isfinite(found.score) or found.b <= 0:
        return None
    a, b = found.a, found.b
    return lambda n: growth.evaluate(a, b, n)


def _offset_curve(growth: GrowthClass, a: float, b: float) -> Curve:
    return lambda n: a + growth.evaluate(0.0, b, n)


def _shapes(data: Data, span: Sequence[GrowthClass], near: Sequence[GrowthClass],
            registry: Registry) -> list[Hypothesis]:
    """Two growth terms (across the bracket `span`) and each class left open (`near`) with
    a negative offset: the candidates `hypotheses` keeps where the medians show them."""
    out: list[Hypothesis] = []
    powers = [g for g in registry if g.growing and not g.outgrows_powers]
    fastest = max(span, key=lambda g: registry.index(g.name))
    if fastest in powers and powers.index(fastest) + 1 < len(powers):
        faster = powers[powers.index(fastest) + 1]
        pair = two_terms(data, span[0], faster)
        if pair is not None and pair[1].name == faster.name:
            out.append(Hypothesis("two terms", pair[0]))
    for g in near:
        a, b, chi = free_offset(g, data.n, data.y, data.w)
        if a < 0 < b and np.isfinite(chi):
            out.append(Hypothesis(f"{g.name}, offset", _offset_curve(g, a, b)))
    return out


def _c_hat(data: Data, chis: Sequence[float]) -> float:
    """ĉ from the best three-coefficient fit, at least 1 with repeats (as `fitting` does)."""
    dof = data.m - 3
    c_hat = min(chis) / dof if dof >= 1 and chis else 1.0
    return max(c_hat, 1.0) if data.honest else max(c_hat, np.finfo(float).tiny)


def hypotheses(metric: str, sizes: Sequence[float], values: Sequence[float], fit: Fit,
               registry: Registry) -> list[Hypothesis]:
    """What the sizes beyond the runs may follow (module docstring)."""
    data = _upper(metric, sizes, values, fit)
    span = _span(fit, registry)
    if data is None or not span:
        return []
    near = _open(fit, span)
    classes = [Hypothesis(g.name, c) for g in near if (c := _class_curve(fit, g)) is not None]
    if not classes:
        return []
    shapes = _shapes(data, span, near, registry)
    c_hat = _c_hat(data, [_chi2(data, h.curve) for h in shapes])
    least = min(_chi2(data, h.curve) for h in classes)
    return classes + [h for h in shapes if (least - _chi2(data, h.curve)) / c_hat
                      >= (LEAN_DELTA if h.label == "two terms" else MIX_DELTA)]


def _affordable(design: Design, hyps: Sequence[Hypothesis], n: int) -> bool:
    """Following to n costs at most COST_MULTIPLE times the runs so far, by every curve."""
    if n > MAX_FACTOR * design.top:
        return False
    new = np.asarray(extension(design.top, n), dtype=float)
    for h in hyps:
        with np.errstate(over="ignore", invalid="ignore"):
            price = float(design.repeats * np.abs(np.asarray(h.curve(new), dtype=float)).sum())
        if not np.isfinite(price) or price > COST_MULTIPLE * design.spent:
            return False
    return True


def forecast_n(refit: Refit, metric: str, sizes: Sequence[float], values: Sequence[float],
               fit: Fit, registry: Registry, seed: int = 0) -> int | None:
    """The size named (`fit.decide_n`) where following it would decide under every
    hypothesis, else the first of FORECAST_DOUBLINGS further doublings that would, within
    the price cap; None where none would (module docstring). `fit.decide_n` as it is where
    the runs leave no hypothesis to simulate."""
    named = fit.decide_n
    if not named:
        return named
    hyps = hypotheses(metric, sizes, values, fit, registry)
    if not hyps:
        return named
    design = Design.of(sizes, values)
    rng = np.random.default_rng([seed, 2011])
    for step in range(FORECAST_DOUBLINGS + 1):
        n = named if step == 0 else nice_n(named * 2.0**step)
        if step and not _affordable(design, hyps, n):
            return None
        if all(decides(refit, design, h.curve, n, rng) for h in hyps):
            return n
    return None


__all__ = ["DRAWS", "FORECAST_DOUBLINGS", "Design", "Hypothesis", "decides", "extension",
           "follow", "forecast_n", "hypotheses"]
