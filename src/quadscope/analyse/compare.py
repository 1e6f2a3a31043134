"""A versus B: how a metric changed between two commands swept over the same sizes.

Contract: pure functions of stored observations and their `Fit`s; no I/O, no
printing, deterministic for a given seed. `compare_metric` returns a
`MetricComparison`, `compare` a `Comparison` over the metrics both sides have;
`size_ratios` the per-size B/A with its interval alone (several sizes number
their shared points as sizes: `analyse/multi_compare`).

Method:
- Per common size, the ratio of medians B/A with a 95% percentile bootstrap
  interval, runs resampled within each size and side independently (Efron &
  Tibshirani, An Introduction to the Bootstrap, 1993, §8 and §13).
- `change`: "class" when the exponent intervals are more than `EXPONENT_GAP`
  apart (when both fits are confident, only if neither class is "1"), or both
  fits are confident and their classes differ, or (a side not settled) when
  one side's slowest supported class (`Fit.at_least`; a settled class is its own
  bracket) is faster than the other's fastest (`Fit.at_most`), neither class
  being "1" unless the metric is counted exactly (`exact`: a timed flat class
  scatters — tick-quantised user time reads "1" for a growing program — but a
  count that does not grow is flat): B surely outgrows a bracketed A, or surely
  grows slower; otherwise, with both confident,
  both sides are refitted with the shared class and bootstrapped: "constant"
  when the 95% interval of b_B/b_A excludes 1, "offset" when only a_B − a_A's
  interval excludes 0, "none" when neither does. With an inconclusive side and
  intervals not apart, "none" when every size's ratio interval holds 1 and is
  bounded (an interval reaching 0 or infinity detects nothing), else "inconclusive".
- `crossover_n`: the first n ≥ the smallest measured size, up to 1e12, where
  the fitted curves cross (brentq on a log grid), for "class" and "constant".
- Changes smaller than `MIN_EFFECT` are reported as "none" even when the
  intervals exclude equality.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from scipy.optimize import brentq

from quadscope.analyse.classfit import bootstrap_class
from quadscope.analyse.stats import bootstrap_medians, group_medians, group_runs
from quadscope.classes import REGISTRY
from quadscope.model import METRICS, Comparison, Fit, MetricComparison, SizeRatio

N_BOOT = 500
MAX_CROSSOVER_N = 1e12
# Smallest change worth reporting: 5% of the growing part (b), or of the cost at the
# smallest size for a constant offset. Below this a "significant" change is usually
# drift between two sessions on one machine, not a difference between programs.
MIN_EFFECT = 0.05
# Exponent intervals must be this far apart to call a class change on their own:
# the free exponent drifts by a few hundredths with the offset alone.
EXPONENT_GAP = 0.1


def _ratios(
    sizes_a: Sequence[float],
    values_a: Sequence[float],
    sizes_b: Sequence[float],
    values_b: Sequence[float],
    rng: np.random.Generator,
) -> tuple[SizeRatio, ...]:
    ga, gb = group_runs(sizes_a, values_a), group_runs(sizes_b, values_b)
    common, ia, ib = np.intersect1d(ga.sizes, gb.sizes, return_indices=True)
    if common.size == 0:
        return ()
    med_a = group_medians(ga.padded, ga.counts)[ia]
    med_b = group_medians(gb.padded, gb.counts)[ib]
    boot_a = bootstrap_medians(ga, rng, N_BOOT)[:, ia]
    boot_b = bootstrap_medians(gb, rng, N_BOOT)[:, ib]
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        # Zero against zero (e.g. no sys time on either side) is "the same": ratio 1.
        warnings.simplefilter("ignore", RuntimeWarning)
        ratio = np.where((med_a == 0) & (med_b == 0), 1.0, med_b / med_a)
        boot = np.where((boot_a == 0) & (boot_b == 0), 1.0, boot_b / boot_a)
        lo, hi = np.nanpercentile(boot, [2.5, 97.5], axis=0)
        # Interpolating between two infinite ratios (A's median 0 in a resample) gives NaN:
        # the end is infinite then, not unknown.
        lo, hi = (np.where(np.isnan(end) & np.isinf(boot).any(axis=0), np.inf, end)
                  for end in (lo, hi))
    return tuple(
        SizeRatio(int(n), float(r), float(min(lo_, r)), float(max(hi_, r)))
        for n, r, lo_, hi_ in zip(common, ratio, lo, hi, strict=True)
    )


def size_ratios(sizes_a: Sequence[float], values_a: Sequence[float], sizes_b: Sequence[float],
                values_b: Sequence[float], *, seed: int = 0) -> tuple[SizeRatio, ...]:
    """B/A per size both measured, with `compare_metric`'s 95% bootstrap interval; for a caller
    that groups runs its own way (several sizes: each shared point numbered as one size)."""
    return _ratios(sizes_a, values_a, sizes_b, values_b, np.random.default_rng(seed))


def _value_at(fit: Fit, cls: str, n: np.ndarray) -> float:
    """The fitted curve of class `cls` with `fit`'s coefficients, at n[0]."""
    growth = REGISTRY.of(cls, fit.coefficients) or REGISTRY[cls]
    return float(growth.evaluate(fit.coefficients["a"], fit.coefficients["b"], n)[0])


def _fitted_class(fit: Fit) -> str:
    return fit.cls if fit.confident else fit.best


def crossover(fit_a: Fit, fit_b: Fit, n_from: float) -> float | None:
    """First n in [n_from, 1e12] where a_A + b_A·f_A(n) = a_B + b_B·f_B(n), or None."""
    ca, cb = _fitted_class(fit_a), _fitted_class(fit_b)
    if not ca or not cb:
        return None
    aa, ba = fit_a.coefficients.get("a", 0.0), fit_a.coefficients.get("b", 0.0)
    ab, bb = fit_b.coefficients.get("a", 0.0), fit_b.coefficients.get("b", 0.0)

    def diff(log_n: float | np.ndarray) -> np.ndarray:
        n = np.atleast_1d(np.exp(log_n))
        grow_b = REGISTRY.of(cb, fit_b.coefficients) or REGISTRY[cb]
        grow_a = REGISTRY.of(ca, fit_a.coefficients) or REGISTRY[ca]
        with np.errstate(invalid="ignore", over="ignore"):  # inf − inf far out: no crossing there
            return grow_b.evaluate(ab, bb, n) - grow_a.evaluate(aa, ba, n)

    grid = np.linspace(np.log(max(n_from, 1.0)), np.log(MAX_CROSSOVER_N), 600)
    d = diff(grid)
    ok = np.isfinite(d)
    sign = np.sign(d)
    for i in range(grid.size - 1):
        if ok[i] and ok[i + 1] and sign[i] != 0 and sign[i] != sign[i + 1]:
            root = brentq(lambda x: float(diff(x)[0]), grid[i], grid[i + 1], xtol=1e-9)
            return float(np.exp(root))
    return None


def _lower_word(metric: str, lower: bool) -> str:
    if metric.endswith("_s"):
        return "faster" if lower else "slower"
    return "lower" if lower else "higher"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def compare_metric(
    metric: str,
    sizes_a: Sequence[float],
    values_a: Sequence[float],
    fit_a: Fit,
    sizes_b: Sequence[float],
    values_b: Sequence[float],
    fit_b: Fit,
    *,
    seed: int = 0,
    exact: bool = False,
) -> MetricComparison:
    """How B differs from A for one metric (see the module docstring); `exact`: the metric
    is counted exactly, so a settled "1" is judged against the other side's bracket."""
    rng = np.random.default_rng(seed)
    ratios = _ratios(sizes_a, values_a, sizes_b, values_b, rng)
    ratio_span = (
        f"B/A between {_fmt(min(r.ratio for r in ratios))} and {_fmt(max(r.ratio for r in ratios))} "
        f"across {len(ratios)} sizes"
        if ratios
        else "no size was measured on both sides"
    )
    n_from = float(min(np.min(sizes_a), np.min(sizes_b)))
    n_top = float(max(np.max(sizes_a), np.max(sizes_b)))

    def result(change: str, summary: str, cross: float | None = None) -> MetricComparison:
        return MetricComparison(metric, change, fit_a.cls, fit_b.cls, ratios, cross, summary)

    ci_a, ci_b = fit_a.exponent_ci, fit_b.exponent_ci
    if not (fit_a.confident and fit_b.confident):
        # An interval unbounded at either end (a side's median 0 in resamples) detects
        # nothing either way: "none" needs every size's interval bounded and holding 1.
        all_hold_one = bool(ratios) and all(0.0 < r.lo <= 1.0 <= r.hi < np.inf for r in ratios)
        return result(*_unsettled(metric, fit_a, fit_b, all_hold_one, ratio_span, exact))
    disjoint = (
        ci_a is not None
        and ci_b is not None
        and "1" not in (fit_a.cls, fit_b.cls)
        and (ci_a[1] + EXPONENT_GAP < ci_b[0] or ci_b[1] + EXPONENT_GAP < ci_a[0])
    )
    if fit_a.cls != fit_b.cls or disjoint:
        cross = crossover(fit_a, fit_b, n_from)
        return result("class", _changed_class(metric, fit_a, fit_b, cross), cross)
    same = _same_class(metric, fit_a, (sizes_a, values_a), fit_b, (sizes_b, values_b),
                       n_from, n_top, seed)
    return result(*same) if same is not None else result(
        "none", f"{metric}: no change detected ({ratio_span})")


def _unsettled(metric: str, fit_a: Fit, fit_b: Fit, all_hold_one: bool,
               ratio_span: str, exact: bool = False) -> tuple[str, str]:
    """(change, summary) when a side's class is not settled."""
    ci_a, ci_b = fit_a.exponent_ci, fit_b.exponent_ci
    side = "A" if not fit_a.confident else "B"
    if (ci_a is not None and ci_b is not None
            and (ci_a[1] + EXPONENT_GAP < ci_b[0] or ci_b[1] + EXPONENT_GAP < ci_a[0])):
        # A class is unsettled, yet the exponents' intervals do not even touch: the
        # growth changed, whichever class each side turns out to be.
        return "class", (f"{metric}: B grows with exponent {fit_b.exponent:.2f} "
                         f"[{ci_b[0]:.2f}, {ci_b[1]:.2f}] where A's is {fit_a.exponent:.2f} "
                         f"[{ci_a[0]:.2f}, {ci_a[1]:.2f}] ({side}'s class is not settled); "
                         f"{ratio_span}")
    apart = _brackets_apart(fit_a, fit_b, exact)
    if apart is not None:
        return "class", (f"{metric}: B grows as {apart} ({side}'s class is not settled); "
                         f"{ratio_span}")
    if all_hold_one:
        return "none", f"{metric}: no change detected ({ratio_span})"
    return "inconclusive", f"{metric}: {side}'s growth class is inconclusive; {ratio_span}"


def _bracket(fit: Fit) -> tuple[str, str] | None:
    lo = fit.cls if fit.confident else fit.at_least
    hi = fit.cls if fit.confident else fit.at_most
    return (lo, hi) if lo in REGISTRY and hi in REGISTRY else None


def _label(cls: str) -> str:
    """A class as every report writes it in a sentence: "n²", not its name "n^2"."""
    growth = REGISTRY.get(cls)
    return growth.label if growth is not None else cls


def _brackets_apart(fit_a: Fit, fit_b: Fit, exact: bool = False) -> str | None:
    """"n² or faster where A grows as n log n at most" when the two sides' brackets of
    supported classes do not overlap, else None. A timed flat side scatters (as for
    exponents, "1" is not judged this way); an exact count's "1" is flat (`exact`)."""
    ba, bb = _bracket(fit_a), _bracket(fit_b)
    if ba is None or bb is None or (not exact and "1" in (fit_a.cls, fit_b.cls)):
        return None
    if REGISTRY.index(bb[0]) > REGISTRY.index(ba[1]):
        return f"{_label(bb[0])} or faster where A grows as {_label(ba[1])} at most"
    if REGISTRY.index(bb[1]) < REGISTRY.index(ba[0]):
        return f"{_label(bb[1])} at most where A grows as {_label(ba[0])} or faster"
    return None


def _changed_class(metric: str, fit_a: Fit, fit_b: Fit, cross: float | None) -> str:
    """The summary of a change of class (or of exponent within one class)."""
    if fit_a.cls != fit_b.cls:
        text = f"{metric}: B grows as {_label(fit_b.cls)} where A grows as {_label(fit_a.cls)}"
    else:
        text = (
            f"{metric}: both fit {_label(fit_a.cls)}, but B's exponent {fit_b.exponent:.2f} differs "
            f"from A's {fit_a.exponent:.2f}"
        )
    if cross is not None:
        beyond = np.array([cross * 2.0])
        lower = _value_at(fit_b, fit_b.cls, beyond) < _value_at(fit_a, fit_a.cls, beyond)
        text += f"; B is {_lower_word(metric, lower)} beyond n ≈ {_fmt(cross)}"
    return text


def _same_class(metric: str, fit_a: Fit, data_a: tuple[Sequence[float], Sequence[float]],
                fit_b: Fit, data_b: tuple[Sequence[float], Sequence[float]], n_from: float,
                n_top: float, seed: int) -> tuple[str, str, float | None] | None:
    """(change, summary, crossover) when the same class's coefficient or offset changed."""
    cls = fit_a.cls
    a_a, b_a, as_a, bs_a = bootstrap_class(cls, *data_a, seed=seed)
    a_b, b_b, as_b, bs_b = bootstrap_class(cls, *data_b, seed=seed + 1)
    if cls != "1":
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.log(bs_b) - np.log(bs_a)
        log_ratio = log_ratio[np.isfinite(log_ratio)]
        if log_ratio.size and b_a > 0 and b_b > 0:
            lo, hi = np.exp(np.percentile(log_ratio, [2.5, 97.5]))
            if (lo > 1.0 or hi < 1.0) and abs(np.log(b_b / b_a)) >= np.log1p(MIN_EFFECT):
                cross = crossover(fit_a, fit_b, n_from)
                if cross is not None and cross > 1e3 * n_top:
                    cross = None  # parallel-looking curves "meeting" far away is an artefact
                factor = b_b / b_a
                text = (
                    f"{metric}: same growth ({cls}), B's growing part is {_fmt(factor)}× A's "
                    f"(95% interval {_fmt(lo)}–{_fmt(hi)})"
                )
                if cross is not None:
                    beyond = np.array([cross * 2.0])
                    lower = _value_at(fit_b, cls, beyond) < _value_at(fit_a, cls, beyond)
                    text += f"; B is {_lower_word(metric, lower)} beyond n ≈ {_fmt(cross)}"
                return "constant", text, cross
    d_lo, d_hi = np.percentile(as_b - as_a, [2.5, 97.5])
    smallest = float(np.min(REGISTRY[cls].evaluate(a_a, b_a, np.array([n_from]))))
    if (d_lo > 0 or d_hi < 0) and abs(a_b - a_a) >= MIN_EFFECT * abs(smallest):
        delta = a_b - a_a
        word = "adds" if delta > 0 else "saves"
        return ("offset", f"{metric}: same growth ({cls}), B {word} a constant "
                f"{_fmt(abs(delta))} (95% interval {_fmt(d_lo)} to {_fmt(d_hi)})", None)
    return None


def compare(
    label_a: str,
    data_a: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    fits_a: Mapping[str, Fit],
    label_b: str,
    data_b: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    fits_b: Mapping[str, Fit],
    *,
    seed: int = 0,
    exact: Collection[str] = (),
) -> Comparison:
    """Compare every metric that both sides measured and fitted, in `METRICS` order;
    `exact` names the metrics counted exactly (the work)."""
    both = set(data_a) & set(data_b) & set(fits_a) & set(fits_b)
    order = [m for m in METRICS if m in both] + sorted(both - set(METRICS))
    metrics = tuple(
        compare_metric(
            m, *data_a[m], fits_a[m], *data_b[m], fits_b[m], seed=seed, exact=m in exact
        )
        for m in order
    )
    return Comparison(label_a, label_b, metrics)
