"""One metric's plots: cost, growing part on log-log, linearised, residuals (plotdata's format).

Contract: `metric_plots(analysis, metric, word)` returns the plot specs of one
metric (see `plotdata` for the spec format), drawn from the stored fits and
the bands analyse computed, never re-fitted; `metric_verdict` is the sentence each metric's plots are
titled with. Panels:

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
no statistic, it only lays out what analyse computed. An inconclusive fit is
drawn dashed and labelled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from quadscope import metrics
from quadscope.analyse.analysis import Analysis
from quadscope.analyse.change import class_label
from quadscope.analyse.curves import geometric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Run
from quadscope.render.extras import PALETTE, rnd_list

FLOOR_FACTOR = 3.0  # the floor sits this factor below the smallest drawable value


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


def _aligned(runs: Sequence[Run], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(n, value) per run of the rowset, NaN where the metric was not measured."""
    vals = [r.value(metric) for r in runs]
    return (np.array([r.size_n for r in runs], dtype=float),
            np.array([np.nan if x is None else x for x in vals], dtype=float))


def _floor_layer(xs: np.ndarray, color: str, what: str) -> dict[str, Any] | None:
    if not len(xs):
        return None
    return {"type": "points", "x": rnd_list(xs), "y": [None] * len(xs), "color": color,
            "marker": "v", "floor": True, "name": what,
            "label": f"{len(xs)} run(s) with {what}: drawn on the floor"}


def _set_floors(plot: dict[str, Any]) -> None:
    """Put floor points a factor below the smallest positive value drawn in the plot."""
    floors = [layer for layer in plot["layers"] if layer.get("floor") or layer.get("floor_lo")]
    if not floors:
        return
    low = math.inf
    for layer in plot["layers"]:
        if layer.get("floor"):
            continue
        for key in ("y", "lo") if not layer.get("floor_lo") else ("hi",):
            ys = layer.get(key)
            if isinstance(ys, list):
                low = min([low, *(y for y in ys if isinstance(y, int | float) and y > 0)])
    floor = float(f"{(low if math.isfinite(low) else 1.0) / FLOOR_FACTOR:.6g}")
    for layer in floors:
        if layer.get("floor_lo"):  # a band whose lower edge falls below a: down to the floor
            layer["lo"] = [floor if y is None else y for y in layer["lo"]]
        else:
            layer["y"] = [floor] * len(layer["x"])


def metric_plots(analysis: Analysis, metric: str, word: str) -> list[dict[str, Any]]:
    variants = [v for v in analysis.fits if metric in analysis.fits[v]]
    two = len(variants) > 1
    cost: list[dict[str, Any]] = []
    growth: list[dict[str, Any]] = []
    lin: list[dict[str, Any]] = []
    resid: list[dict[str, Any]] = []
    slopes: list[str] = []
    growing_any = False
    sizes_all = [float(r.size_n) for v in variants for r in analysis.measured(v)]
    geo = geometric(sizes_all)
    for v in variants:
        fit = analysis.fits[v][metric]
        color = PALETTE.get(v, PALETTE["A"])
        suffix = f" ({v})" if two else ""
        measured = analysis.measured(v)
        sizes, _ = _series(measured, metric)
        label = f"{v} runs" if two else "runs"
        band = analysis.bands.get(v, {}).get(metric)
        cost.append({"type": "points", "rows": v, "y": metric, "color": color, "label": label,
                     "marker": "o", "name": metric})
        if analysis.failures and any(r.variant == v for r in analysis.failures):
            cost.append({"type": "points", "rows": f"{v}_fail", "y": metric,
                         "color": PALETTE["fail"], "label": f"failed runs ({v}, not fitted)",
                         "marker": "x", "name": metric})
        if band is None:
            continue
        cls, a, b = band.cls, band.a, band.b
        # The fit's own class, with its fitted base when it is an exponential.
        shape = REGISTRY.of(cls, fit.coefficients) or REGISTRY[cls]
        ns, yhat, lo, hi = band.ns, band.mean, band.lo, band.hi
        dash = fit.cls == INCONCLUSIVE
        name = class_label(cls, word)
        flabel = (f"best candidate {name} (not settled)" if dash
                  else "fit: constant" if cls == "1" else f"fit: a + b·{name}") + suffix
        # Every metric is a time, a size or a count: a run cannot fall below 0.
        cost.insert(0, {"type": "band", "x": rnd_list(ns), "lo": rnd_list(np.maximum(lo, 0.0)),
                        "hi": rnd_list(hi), "color": color,
                        "label": "95% of single runs fall here" + suffix})
        cost.insert(1, {"type": "line", "x": rnd_list(ns), "y": rnd_list(yhat), "color": color,
                        "label": flabel, "dash": dash})
        ns_run, arr = _aligned(measured, metric)
        with np.errstate(all="ignore"):
            fit_at = shape.evaluate(a, b, ns_run)
            tiny = 1e-12 * max(float(np.nanmax(np.abs(arr))), 1e-300)
            rel = (arr - fit_at) / np.maximum(np.abs(fit_at), tiny) * 100.0
        if np.any(np.abs(fit_at) > tiny):  # against a fit of 0, a relative error is 1e14 %: noise
            resid.append({"type": "points", "rows": v, "y": rnd_list(rel), "color": color,
                          "label": label, "marker": "o", "name": "residual %", "metric": metric})
        if not shape.growing or b <= 0:
            positive = arr > 0
            growth.append({"type": "points", "rows": v, "color": color, "label": label,
                           "marker": "o", "name": metric, "metric": metric,
                           "y": rnd_list(np.where(positive, arr, np.nan))})
            if (floor := _floor_layer(ns_run[~positive & np.isfinite(arr)], color, "y = 0")) is not None:
                growth.append(floor)
            if np.nanmin(yhat) > 1e-6 * float(np.nanmax(arr, initial=0.0)):
                # A fit of (nearly) 0 has no place on a log axis: it would stretch it over decades.
                growth.append({"type": "line", "x": rnd_list(ns), "y": rnd_list(yhat),
                               "color": color, "label": flabel, "dash": dash})
            continue
        growing_any = True
        part = arr - a
        above = part > 0
        growth.append({"type": "points", "rows": v, "color": color, "marker": "o",
                       "label": f"{label}: y − a", "name": "y − a", "metric": metric,
                       "y": rnd_list(np.where(above, part, np.nan))})
        floor = _floor_layer(ns_run[~above & np.isfinite(part)], color, "y ≤ a")
        if floor is not None:
            growth.append(floor)
        growth.append({"type": "line", "x": rnd_list(ns), "y": rnd_list(yhat - a),
                       "color": color, "label": f"fit: b·{name}{suffix}", "dash": dash})
        growth.insert(0, {"type": "band", "x": rnd_list(ns),
                          "lo": rnd_list(np.where(lo - a > 0, lo - a, np.nan)), "floor_lo": True,
                          "hi": rnd_list(hi - a), "color": color,
                          "label": "95% of single runs fall here" + suffix})
        if fit.exponent is not None and fit.exponent_ci is not None:
            # Anchored on the fit at the largest size, where the growing part dominates.
            xs = np.array([float(sizes.min()), float(sizes.max())])
            gx, gy = xs[1], float(shape.evaluate(0.0, b, xs[1:])[0])
            k, (klo, khi) = fit.exponent, fit.exponent_ci
            text = f"slope k = {k:.2f} (95% {klo:.2f}–{khi:.2f})"
            slopes.append(f"{v} k = {k:.2f}" if two else text)
            growth.append({"type": "line", "x": rnd_list(xs), "y": rnd_list(gy * (xs / gx) ** k),
                           "color": PALETTE["ref"], "label": text + suffix, "dash": True,
                           "width": 1})
        inverse = shape.inverse
        if inverse is not None:
            with np.errstate(all="ignore"):
                linv = np.asarray(inverse(np.where(above, part / b, np.nan)), dtype=float)
            good = np.isfinite(linv) & (linv > 0 if geo else True)
            lin.append({"type": "points", "rows": v, "y": rnd_list(np.where(good, linv, np.nan)),
                        "color": color, "label": f"{label}: f⁻¹((y − a)/b), f = {name}",
                        "marker": "o", "name": f"f⁻¹((y − a)/b), f = {name}", "metric": metric})
            bad = ns_run[~good & np.isfinite(arr)]
            if (floor := _floor_layer(bad, color, "y ≤ a")) is not None:
                lin.append(floor)
    unit = unit_of(metric)
    ylab = metric  # the ticks carry the unit (ms, MiB)
    plots = [
        {"id": f"{metric}-cost", "kind": "cost", "metric": metric, "xlog": False, "ylog": False,
         "title": f"{metric} against {word}: every run, the fit, where 95% of runs fall",
         "xlabel": word, "ylabel": ylab, "xunit": "count", "yunit": unit, "layers": cost},
    ]
    if growing_any:
        title = f"growing part y − a, log-log: {', '.join(slopes) or 'no exponent fitted'}"
        ylabel = f"{metric} − a (log)"
    else:
        title = f"log-log: {metric} is constant, no slope to draw"
        ylabel = f"{ylab} (log)"
    plots.append({"id": f"{metric}-loglog", "kind": "loglog", "metric": metric, "xlog": True,
                  "ylog": True, "title": title, "xlabel": f"{word} (log)", "ylabel": ylabel,
                  "xunit": "count", "yunit": unit, "layers": growth})
    _set_floors(plots[-1])
    if lin and sizes_all:
        fs = {layer["name"].rsplit("f = ", 1)[-1] for layer in lin if not layer.get("floor")}
        ends = [min(sizes_all), max(sizes_all)]
        lin.insert(0, {"type": "line", "x": ends, "y": ends, "color": PALETTE["ref"],
                       "label": f"y = {word}: on it, the class is right", "dash": True,
                       "width": 1})
        plot = {"id": f"{metric}-linear", "kind": "linear", "metric": metric, "xlog": geo,
                "ylog": geo, "xlabel": word + (" (log)" if geo else ""),
                "ylabel": "f⁻¹((y − a)/b)" + (f", f = {fs.pop()}" if len(fs) == 1 else "")
                + (" (log)" if geo else ""),
                "xunit": "count", "yunit": "count", "layers": lin,
                "title": f"linearised {metric}: f⁻¹((y − a)/b) against {word}"}
        _set_floors(plot)
        plots.append(plot)
    if resid:
        resid.insert(0, {"type": "hline", "y": 0, "color": PALETTE["ref"], "dash": True,
                         "label": "no error"})
        plots.append({"id": f"{metric}-resid", "kind": "resid", "metric": metric,
                      "xlog": geo, "ylog": False, "xlabel": word + (" (log)" if geo else ""),
                      "xunit": "count",
                      "yunit": "", "ylabel": "residual (y − fit)/fit, %", "layers": resid,
                      "small": True,
                      "title": f"residuals of {metric}: a pattern means the wrong class"})
    return plots


__all__ = ["metric_plots", "metric_verdict", "unit_of"]
