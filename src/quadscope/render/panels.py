"""One metric's plots: cost, growing part on log-log, linearised, residuals (`plotmodel` records).

Contract: `metric_plots(analysis, metric, word)` returns the `Plot`s of one
metric (`render.plotmodel`), drawn from the stored fits and the bands analyse
computed, never re-fitted; `metric_verdict` is the sentence each metric's
plots are titled with. Panels:

- cost: every run, the fitted curve a + b·f(n), and the 95% prediction band:
  where single runs are expected to fall, not only the mean (below).
- loglog ("growth"): the growing part y − a against n on log-log axes, where a
  power law is a straight line; the fitted b·f(n) and a reference line whose
  slope is the free exponent k (labelled with its 95% interval). A run at or
  below the offset (y ≤ a) has no place on a log axis of y − a: it is drawn on
  the panel's floor with a "v" marker and counted in the legend, never
  dropped. A constant fit has no growing part: the panel shows y itself on
  log-log with the constant as a line, and no slope.
- linear: f⁻¹((y − a)/b) against n — a straight line y = n when the class is
  right (√t against n for n²); both axes are logarithmic when the sizes are
  geometric, so they spread evenly instead of crowding at the left.
- resid: relative residuals (y − fit)/fit in %.

Every plot carries `xunit`/`yunit` ("s", "bytes", "count", "") so both
renderers write ticks in human units (ms, MiB, 64k).

The curve and its band are the fit's, as analyse drew them (`Analysis.bands`,
`analyse.curves`, whose docstring gives the statistics): this module computes
no statistic of its own; the growing part, the linearised values and the
residuals are each run against the fit's own curve. An inconclusive fit is
drawn dashed and labelled.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from quadscope import metrics
from quadscope.analyse.analysis import Analysis
from quadscope.analyse.change import class_label
from quadscope.analyse.curves import geometric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Run
from quadscope.render.extras import PALETTE, rnd_tuple
from quadscope.render.plotmodel import Area, HLine, Layer, Line, Plot, Points, with_floors


def unit_of(metric: str) -> str:
    known = metrics.find(metric)
    if known is not None:
        return known.unit
    return "s" if metric.endswith("_s") else "bytes" if metric.endswith("_bytes") else "count"


def metric_verdict(fits: dict[str, Fit], word: str) -> str:
    """"grows as n² (k = 1.95 ± 0.20)", "constant", "not settled: n…n log n" — per variant."""
    def one(fit: Fit) -> str:
        if fit.confident and fit.cls == "1":
            return "constant"
        if fit.confident:
            k = ""
            if fit.exponent is not None and fit.exponent_ci is not None:
                k = f" (k = {fit.exponent:.2f} ± {(fit.exponent_ci[1] - fit.exponent_ci[0]) / 2:.2f})"
            return f"grows as {class_label(fit.cls, word)}{k}"
        if fit.at_least and fit.at_most and fit.at_least != fit.at_most:
            return (f"not settled: between {class_label(fit.at_least, word)} and "
                    f"{class_label(fit.at_most, word)}")
        return f"not settled (best {class_label(fit.best, word)})" if fit.best else "not settled"

    if len(fits) == 1:
        return one(next(iter(fits.values())))
    return "; ".join(f"{v}: {one(f)}" for v, f in fits.items())


def _series(runs: Sequence[Run], metric: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = [(r.size_n, v) for r in runs if (v := r.value(metric)) is not None]
    if not pairs:
        return np.zeros(0), np.zeros(0)
    arr = np.asarray(pairs, dtype=float)
    return arr[:, 0], arr[:, 1]


def _aligned(runs: Sequence[Run], metric: str,
             hidden: Collection[int] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(n, value) per run of the rowset, NaN where the metric was not measured or the run
    is `hidden` (a seq: a launch counted in place, whose time is the counter's)."""
    vals = [None if r.seq in hidden else r.value(metric) for r in runs]
    return (np.array([r.size_n for r in runs], dtype=float),
            np.array([np.nan if x is None else x for x in vals], dtype=float))


def _floor_layer(xs: np.ndarray, color: str, what: str) -> Points | None:
    if not len(xs):
        return None
    return Points(color, f"{len(xs)} run(s) with {what}: drawn on the floor", what,
                  y=(None,) * len(xs), x=rnd_tuple(xs), marker="v", floor=True)


def metric_plots(analysis: Analysis, metric: str, word: str) -> list[Plot]:
    variants = [v for v in analysis.fits if metric in analysis.fits[v]]
    two = len(variants) > 1
    cost: list[Layer] = []
    growth: list[Layer] = []
    lin: list[Layer] = []
    resid: list[Layer] = []
    slopes: list[str] = []
    growing_any = False
    settled_flat = True  # every flat panel drawn is a settled fit, not a candidate's b = 0
    sizes_all = [float(r.size_n) for v in variants for r in analysis.measured(v)]
    geo = geometric(sizes_all)
    for v in variants:
        fit = analysis.fits[v][metric]
        color = PALETTE.get(v, PALETTE["A"])
        suffix = f" ({v})" if two else ""
        measured = analysis.measured(v)  # the row set's runs, aligned with `rows=v`
        shown = analysis.metric_runs(v, metric)
        hidden = {r.seq for r in measured} - {r.seq for r in shown}
        sizes, _ = _series(shown, metric)
        label = f"{v} runs" if two else "runs"
        band = analysis.bands.get(v, {}).get(metric)
        cost.append(Points(color, label, metric, y=metric, rows=v))
        if analysis.failures and any(r.variant == v for r in analysis.failures):
            cost.append(Points(PALETTE["fail"], f"failed runs ({v}, not fitted)", metric,
                               y=metric, rows=f"{v}_fail", marker="x"))
        if band is None:
            continue
        cls, a, b = band.cls, band.a, band.b
        # The fit's own class, with its fitted base when it is an exponential.
        shape = REGISTRY.of(cls, fit.coefficients) or REGISTRY[cls]
        ns, yhat, lo, hi = band.ns, band.mean, band.lo, band.hi
        dash = fit.cls == INCONCLUSIVE
        name = class_label(cls, word)
        # A candidate whose growing part was fitted 0 is drawn flat: its name alone read as
        # a growing line ("best candidate n log n" on a level dash).
        flat = " with b = 0" if dash and shape.growing and b <= 0 else ""
        flabel = (f"best candidate {name}{flat} (not settled)" if dash
                  else "fit: constant" if cls == "1" else f"fit: a + b·{name}") + suffix
        # Every metric is a time, a size or a count: a run cannot fall below 0.
        cost.insert(0, Area(rnd_tuple(ns), rnd_tuple(np.maximum(lo, 0.0)), rnd_tuple(hi), color,
                            "95% of single runs fall here" + suffix))
        cost.insert(1, Line(rnd_tuple(ns), rnd_tuple(yhat), color, flabel, dash))
        ns_run, arr = _aligned(measured, metric, hidden)
        with np.errstate(all="ignore"):
            fit_at = shape.evaluate(a, b, ns_run)
            tiny = 1e-12 * max(float(np.nanmax(np.abs(arr))), 1e-300)
            rel = (arr - fit_at) / np.maximum(np.abs(fit_at), tiny) * 100.0
        if np.any(np.abs(fit_at) > tiny):  # against a fit of 0, a relative error is 1e14 %: noise
            resid.append(Points(color, label, "residual %", y=rnd_tuple(rel), rows=v,
                                metric=metric))
        if not shape.growing or b <= 0:
            settled_flat = settled_flat and not dash
            positive = arr > 0
            growth.append(Points(color, label, metric, y=rnd_tuple(np.where(positive, arr, np.nan)),
                                 rows=v, metric=metric))
            if (floor := _floor_layer(ns_run[~positive & np.isfinite(arr)], color, "y = 0")) is not None:
                growth.append(floor)
            if np.nanmin(yhat) > 1e-6 * float(np.nanmax(arr, initial=0.0)):
                # A fit of (nearly) 0 has no place on a log axis: it would stretch it over decades.
                growth.append(Line(rnd_tuple(ns), rnd_tuple(yhat), color, flabel, dash))
            continue
        growing_any = True
        part = arr - a
        above = part > 0
        growth.append(Points(color, f"{label}: y − a", "y − a",
                             y=rnd_tuple(np.where(above, part, np.nan)), rows=v, metric=metric))
        floor = _floor_layer(ns_run[~above & np.isfinite(part)], color, "y ≤ a")
        if floor is not None:
            growth.append(floor)
        growth.append(Line(rnd_tuple(ns), rnd_tuple(yhat - a), color, f"fit: b·{name}{suffix}",
                           dash))
        growth.insert(0, Area(rnd_tuple(ns), rnd_tuple(np.where(lo - a > 0, lo - a, np.nan)),
                              rnd_tuple(hi - a), color, "95% of single runs fall here" + suffix,
                              floor_lo=True))
        if fit.exponent is not None and fit.exponent_ci is not None:
            # Anchored on the fit at the largest size, where the growing part dominates.
            xs = np.array([float(sizes.min()), float(sizes.max())])
            gx, gy = xs[1], float(shape.evaluate(0.0, b, xs[1:])[0])
            k, (klo, khi) = fit.exponent, fit.exponent_ci
            text = f"slope k = {k:.2f} (95% {klo:.2f}–{khi:.2f})"
            slopes.append(f"{v} k = {k:.2f}" if two else text)
            growth.append(Line(rnd_tuple(xs), rnd_tuple(gy * (xs / gx) ** k), PALETTE["ref"],
                               text + suffix, dash=True, width=1))
        inverse = shape.inverse
        if inverse is not None:
            with np.errstate(all="ignore"):
                linv = np.asarray(inverse(np.where(above, part / b, np.nan)), dtype=float)
            good = np.isfinite(linv) & (linv > 0 if geo else True)
            lin.append(Points(color, f"{label}: f⁻¹((y − a)/b), f = {name}",
                              f"f⁻¹((y − a)/b), f = {name}",
                              y=rnd_tuple(np.where(good, linv, np.nan)), rows=v, metric=metric))
            bad = ns_run[~good & np.isfinite(arr)]
            if (floor := _floor_layer(bad, color, "y ≤ a")) is not None:
                lin.append(floor)
    unit = unit_of(metric)
    ylab = metric  # the ticks carry the unit (ms, MiB)
    plots = [Plot(f"{metric}-cost", "cost", metric,
                  f"{metric} against {word}: every run, the fit, where 95% of runs fall",
                  word, ylab, False, False, "count", unit, tuple(cost))]
    if growing_any:
        title = f"growing part y − a, log-log: {', '.join(slopes) or 'no exponent fitted'}"
        ylabel = f"{metric} − a (log)"
    else:
        title = (f"log-log: {metric} is constant, no slope to draw" if settled_flat else
                 f"log-log: no growing part was fitted to {metric}, no slope to draw "
                 "(not settled)")
        ylabel = f"{ylab} (log)"
    plots.append(with_floors(Plot(f"{metric}-loglog", "loglog", metric, title, f"{word} (log)",
                                  ylabel, True, True, "count", unit, tuple(growth))))
    if lin and sizes_all:
        fs = {layer.name.rsplit("f = ", 1)[-1] for layer in lin
              if isinstance(layer, Points) and not layer.floor}
        ends = (min(sizes_all), max(sizes_all))
        lin.insert(0, Line(ends, ends, PALETTE["ref"], f"y = {word}: on it, the class is right",
                           dash=True, width=1))
        plots.append(with_floors(Plot(
            f"{metric}-linear", "linear", metric,
            f"linearised {metric}: f⁻¹((y − a)/b) against {word}", word + (" (log)" if geo else ""),
            "f⁻¹((y − a)/b)" + (f", f = {fs.pop()}" if len(fs) == 1 else "")
            + (" (log)" if geo else ""), geo, geo, "count", "count", tuple(lin))))
    if resid:
        resid.insert(0, HLine(0, PALETTE["ref"], "no error", dash=True))
        plots.append(Plot(f"{metric}-resid", "resid", metric,
                          f"residuals of {metric}: a pattern means the wrong class",
                          word + (" (log)" if geo else ""), "residual (y − fit)/fit, %", geo, False,
                          "count", "", tuple(resid), small=True))
    return plots


__all__ = ["metric_plots", "metric_verdict", "unit_of"]
