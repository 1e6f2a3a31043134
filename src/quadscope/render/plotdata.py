"""Report data: what the HTML and PNG renderers draw, derived once from an `Analysis`.

Contract: `report_data(analysis) -> ReportData` is a pure function. It never
fits: curves use the stored `Fit` coefficients with the class's `evaluate`, the
linearised plot its `linearise` (see `quadscope.classes`), and ratios come from
`analysis.comparison`. Both renderers draw the same `ReportData.plots` with the
same `PALETTE`, so the HTML page and the PNGs show identical plots. Everything
here is JSON-ready (plain dicts, lists, floats rounded to 6 significant digits,
None for NaN), because the HTML page embeds it as one JSON document.

Runs are stored once, as columns (`runs`: n, repeat, exit, seq, variant) plus
one value column per plotted metric (`values`). Named row sets (`rowsets`: "A",
"B" for the measured runs, "A_fail", "B_fail" for failed non-warm-up runs)
index into them. A plot is a dict

    {"id", "kind": cost|loglog|linear|resid|ratio|probe, "title", "xlabel",
     "ylabel", "xlog", "ylog", "metric", "layers": [...]}

and a layer one of

    {"type": "points", "rows": <rowset>, "y": <metric> | [values aligned with
        rows, None to skip], "color", "label", "marker": "o" | "x", "name"}
    {"type": "points", "x": [...], "y": [...], ...}   (points not tied to runs)
    {"type": "line", "x": [...], "y": [...], "color", "label", "dash"}
    {"type": "band", "x": [...], "lo": [...], "hi": [...], "color", "label"}
    {"type": "hline", "y": v, ...} / {"type": "vline", "x": v, ...}

Renderers drop points that cannot be drawn (None, and non-positive values on
a log axis); `plot_point_count` says how many remain, for tests.

The 95% band around a fitted curve a + b·f(n) is a weighted-least-squares
confidence band for the mean cost with the class taken as given: with X = [1,
f(n_i)] and weights w_i = 1/ŷ_i² (timing noise grows with the cost, so errors
are taken as relative, as in Draper & Smith, *Applied Regression Analysis*,
3rd ed., §9.2), Cov(a, b) = s²·(XᵀWX)⁻¹ with s² = Σ w_i·r_i² / (N − 2), and the
band at n is ŷ(n) ± t₀.₉₇₅,N−2 · √(gᵀ·Cov·g), g = [1, f(n)]. The stored a and b
are used as they are; only their covariance is estimated from the residuals.
It does not include the uncertainty of choosing the class (inconclusive fits are
drawn dashed and labelled) nor the spread of single runs (the runs are drawn).
The log-log plot's reference lines have the fitted exponent k and the ends of
its bootstrap interval as slopes, anchored at the geometric mean of the
per-size medians: they show slopes, not a second fit of the intercept.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quadscope.analyse.analysis import Analysis
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import METRICS, Fit, Run
from quadscope.render.extras import PALETTE as PALETTE
from quadscope.render.extras import (
    culprits_table,
    doctor_rows,
    flame_svg,
    rnd,
    rnd_list,
    sanitise_svg,
)
from quadscope.units import fmt_value

BAND_ALPHA = 0.18
POINT_ALPHA = 0.55
# Metrics whose section is open on load; the others are one click away.
OPEN_METRICS: tuple[str, ...] = ("wall_s", "user_s", "sys_s", "max_rss_bytes")
CURVE_SAMPLES = 120

@dataclass(frozen=True, slots=True)
class ReportData:
    title: str
    verdict: str
    facts: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    table: tuple[dict[str, Any], ...]
    runs: dict[str, list[Any]]
    values: dict[str, list[float | None]]
    rowsets: dict[str, list[int]]
    sections: tuple[dict[str, Any], ...]  # one per metric: {"metric", "open", "plots"}
    comparison: tuple[dict[str, Any], ...]  # {"metric", "summary", "change", "class_a", ...}
    failures: tuple[dict[str, Any], ...]
    culprits: tuple[dict[str, str], ...] = ()
    flame_svg: str | None = None
    doctor: tuple[dict[str, Any], ...] = ()  # {"name", "cells": {column: text}, "plot"}
    size_word: str = "n"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def plots(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for s in self.sections:
            out.extend(s["plots"])
        out.extend(p["plot"] for p in self.doctor if p.get("plot"))
        return out

    def to_json_obj(self) -> dict[str, Any]:
        """What the HTML page embeds for its script: runs once, then plot specs."""
        return {
            "runs": self.runs,
            "values": self.values,
            "rowsets": self.rowsets,
            "plots": self.plots,
            "palette": PALETTE,
            "band_alpha": BAND_ALPHA,
            "point_alpha": POINT_ALPHA,
            "size_word": self.size_word,
        }


def command_text(argv: Sequence[str], shell: bool) -> str:
    return argv[0] if shell and len(argv) == 1 else shlex.join(argv)


def unit_label(metric: str) -> str:
    if metric.endswith("_s"):
        return f"{metric} (s)"
    if metric.endswith("_bytes"):
        return f"{metric} (bytes)"
    return metric


def _coeffs(fit: Fit) -> tuple[str, float, float] | None:
    """(class, a, b) drawn for a fit: the chosen class, or the best one when inconclusive."""
    cls = fit.cls if fit.cls != INCONCLUSIVE else (fit.best or "")
    a, b = fit.coefficients.get("a"), fit.coefficients.get("b")
    if a is None or b is None:
        cand = next((c for c in fit.candidates if c.cls == cls), None)
        if cand is None:
            return None
        a, b = cand.a, cand.b
    if cls not in REGISTRY or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return cls, float(a), float(b)


def curve_band(
    cls: str, a: float, b: float, sizes: np.ndarray, values: np.ndarray, ns: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ŷ, lo, hi at `ns`: the WLS confidence band described in the module docstring."""
    from scipy.stats import t as student_t

    growth = REGISTRY[cls]
    fx = np.asarray(growth.f(sizes), dtype=float)
    fn = np.asarray(growth.f(ns), dtype=float)
    yhat_i = growth.evaluate(a, b, sizes)
    yhat = growth.evaluate(a, b, ns)
    n_pts = len(values)
    if n_pts < 3:
        return yhat, yhat.copy(), yhat.copy()
    floor = max(float(np.median(np.abs(values))) * 1e-9, 1e-300)
    w = 1.0 / np.maximum(np.abs(yhat_i), floor) ** 2
    design = np.column_stack([np.ones_like(fx), fx])
    xtwx = design.T @ (w[:, None] * design)
    s2 = float(np.sum(w * (values - yhat_i) ** 2)) / (n_pts - 2)
    cov = s2 * np.linalg.pinv(xtwx)
    g = np.column_stack([np.ones_like(fn), fn])
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", g, cov, g), 0.0))
    half = float(student_t.ppf(0.975, n_pts - 2)) * se
    return yhat, yhat - half, yhat + half


def _samples(lo: float, hi: float) -> np.ndarray:
    if lo > 0 and hi > lo:
        return np.geomspace(lo, hi, CURVE_SAMPLES)
    return np.linspace(lo, hi, CURVE_SAMPLES)


def _series(runs: Sequence[Run], metric: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = [(r.size_n, v) for r in runs if (v := r.value(metric)) is not None]
    if not pairs:
        return np.zeros(0), np.zeros(0)
    arr = np.asarray(pairs, dtype=float)
    return arr[:, 0], arr[:, 1]


def _fit_label(fit: Fit, cls: str, word: str) -> str:
    name = REGISTRY.rename(cls, word)
    if fit.cls == INCONCLUSIVE:
        return f"best candidate {name} (inconclusive)"
    return f"fit: a + b·{name}" if cls != "1" else "fit: constant"


def _metric_plots(analysis: Analysis, metric: str, word: str) -> list[dict[str, Any]]:
    variants = [v for v in analysis.fits if metric in analysis.fits[v]]
    cost: list[dict[str, Any]] = []
    loglog: list[dict[str, Any]] = []
    lin: list[dict[str, Any]] = []
    resid: list[dict[str, Any]] = []
    slopes: list[str] = []
    have_lin = False
    for v in variants:
        fit = analysis.fits[v][metric]
        color = PALETTE.get(v, PALETTE["A"])
        measured = analysis.measured(v)
        sizes, values = _series(measured, metric)
        label = f"{v} runs" if len(variants) > 1 else "runs"
        coeffs = _coeffs(fit)
        if coeffs is not None and len(sizes):
            cls, a, b = coeffs
            ns = _samples(float(sizes.min()), float(sizes.max()))
            with np.errstate(all="ignore"):
                yhat, lo, hi = curve_band(cls, a, b, sizes, values, ns)
            dash = fit.cls == INCONCLUSIVE
            flabel = _fit_label(fit, cls, word) + (f" ({v})" if len(variants) > 1 else "")
            band = {"type": "band", "x": rnd_list(ns), "lo": rnd_list(lo), "hi": rnd_list(hi),
                    "color": color, "label": "95% band of the fitted curve"
                    + (f" ({v})" if len(variants) > 1 else "")}
            line = {"type": "line", "x": rnd_list(ns), "y": rnd_list(yhat), "color": color,
                    "label": flabel, "dash": dash}
            cost += [band, line]
            loglog.append(dict(line))
            # Per-run linearised values and relative residuals, aligned with the rowset.
            vals = [r.value(metric) for r in measured]
            ok = np.array([x is not None for x in vals])
            arr = np.array([np.nan if x is None else x for x in vals], dtype=float)
            ns_run = np.array([r.size_n for r in measured], dtype=float)
            with np.errstate(all="ignore"):
                fit_at = REGISTRY[cls].evaluate(a, b, ns_run)
                tiny = 1e-12 * max(float(np.nanmax(np.abs(arr))), 1e-300)
                scale = np.maximum(np.abs(fit_at), tiny)
                rel = np.where(ok, (arr - fit_at) / scale * 100.0, np.nan)
            resid.append({"type": "points", "rows": v, "y": rnd_list(rel), "color": color,
                          "label": label, "marker": "o", "name": "residual %", "metric": metric})
            if cls != "1":
                try:
                    with np.errstate(all="ignore"):
                        linv = REGISTRY[cls].linearise(a, b, arr)
                except (ValueError, ZeroDivisionError, FloatingPointError):
                    linv = None
                if linv is not None:
                    have_lin = True
                    name = f"f⁻¹((y − a)/b), f = {cls}"
                    lin.append({"type": "points", "rows": v, "y": rnd_list(linv), "color": color,
                                "label": f"{label} (f = {cls})", "marker": "o", "name": name,
                                "metric": metric})
        cost.append({"type": "points", "rows": v, "y": metric, "color": color, "label": label,
                     "marker": "o", "name": metric})
        loglog.append({"type": "points", "rows": v, "y": metric, "color": color, "label": label,
                       "marker": "o", "name": metric})
        if analysis.failures and any(r.variant == v for r in analysis.failures):
            cost.append({"type": "points", "rows": f"{v}_fail", "y": metric,
                         "color": PALETTE["fail"], "label": f"failed runs ({v}, not fitted)",
                         "marker": "x", "name": metric})
        if fit.exponent is not None and fit.exponent_ci is not None and len(sizes):
            pos = (sizes > 0) & (values > 0)
            if pos.any():
                meds = [float(np.median(values[pos & (sizes == s)])) for s in np.unique(sizes[pos])]
                us = np.unique(sizes[pos])
                gx, gy = float(np.exp(np.log(us).mean())), float(np.exp(np.log(meds).mean()))
                xs = np.array([us.min(), us.max()])
                k, (klo, khi) = fit.exponent, fit.exponent_ci
                slopes.append(f"{v}: k = {k:.2f}, 95% [{klo:.2f}, {khi:.2f}]")
                suffix = f" ({v})" if len(variants) > 1 else ""
                for kk, dash, lab in ((k, False, f"slope k = {k:.2f}{suffix}"),
                                      (klo, True, "slopes at the ends of k's 95% interval"),
                                      (khi, True, "slopes at the ends of k's 95% interval")):
                    loglog.append({"type": "line", "x": rnd_list(xs),
                                   "y": rnd_list(gy * (xs / gx) ** kk), "color": PALETTE["ref"],
                                   "label": lab, "dash": dash, "width": 1})
    ylab = unit_label(metric)
    plots = [
        {"id": f"{metric}-cost", "kind": "cost", "metric": metric, "xlog": False, "ylog": False,
         "title": f"{metric} against {word}: every run, fitted curve, 95% band",
         "xlabel": word, "ylabel": ylab, "layers": cost},
        {"id": f"{metric}-loglog", "kind": "loglog", "metric": metric, "xlog": True, "ylog": True,
         "title": f"log-log: {'; '.join(slopes) or 'no exponent fitted'}",
         "xlabel": f"{word} (log)", "ylabel": f"{ylab} (log)", "layers": loglog},
    ]
    if have_lin:
        names = {x["name"] for x in lin if x["type"] == "points"}
        lin.insert(0, {"type": "line", "x": [], "y": [], "identity": True, "color": PALETTE["ref"],
                       "label": f"y = {word}: a straight line is the proof", "dash": True,
                       "width": 1})
        plots.append({"id": f"{metric}-linear", "kind": "linear", "metric": metric,
                      "xlog": False, "ylog": False, "xlabel": word,
                      "ylabel": names.pop() if len(names) == 1 else "f⁻¹((y − a)/b)",
                      "layers": lin,
                      "title": f"linearised {metric}: f⁻¹((y − a)/b) against {word}"})
    if resid:
        resid.insert(0, {"type": "hline", "y": 0, "color": PALETTE["ref"], "dash": True,
                         "label": "no error"})
        plots.append({"id": f"{metric}-resid", "kind": "resid", "metric": metric,
                      "xlog": False, "ylog": False, "xlabel": word,
                      "ylabel": "residual (y − fit)/fit, %", "layers": resid, "small": True,
                      "title": f"residuals of {metric}: a pattern means the wrong class"})
    # The identity line spans the measured sizes.
    sizes_all = [r.size_n for v in variants for r in analysis.measured(v)]
    if sizes_all:
        for layer in lin:
            if layer.get("identity"):
                layer["x"] = [min(sizes_all), max(sizes_all)]
                layer["y"] = [min(sizes_all), max(sizes_all)]
    return plots


def _ratio_plot(mc: Any, word: str) -> dict[str, Any]:
    rs = sorted(mc.ratios, key=lambda r: r.size_n)
    xs = [r.size_n for r in rs]
    ys = [r.ratio for r in rs]
    layers: list[dict[str, Any]] = [
        {"type": "band", "x": rnd_list(xs), "lo": rnd_list(r.lo for r in rs),
         "hi": rnd_list(r.hi for r in rs), "color": PALETTE["ratio"], "label": "95% interval"},
        {"type": "line", "x": rnd_list(xs), "y": rnd_list(ys), "color": PALETTE["ratio"],
         "label": "B/A (ratio of medians)", "dash": False},
        {"type": "points", "x": rnd_list(xs), "y": rnd_list(ys), "color": PALETTE["ratio"],
         "label": "B/A at each size", "marker": "o", "name": "B/A"},
        {"type": "hline", "y": 1, "color": PALETTE["ref"], "dash": True, "label": "same cost"},
    ]
    title = f"{mc.metric}: B/A against {word}"
    if mc.crossover_n is not None and math.isfinite(mc.crossover_n):
        layers.append({"type": "vline", "x": rnd(mc.crossover_n), "color": PALETTE["cross"],
                       "dash": True, "label": f"crossover at {word} ≈ {mc.crossover_n:.4g}"})
        title += f" — crossover at {word} ≈ {mc.crossover_n:.4g}"
    pos = all(y is not None and y > 0 for y in ys) and ys
    ylog = bool(pos) and max(ys) / min(ys) > 20
    return {"id": f"{mc.metric}-ratio", "kind": "ratio", "metric": mc.metric, "xlog": False,
            "ylog": ylog, "title": title, "xlabel": word, "ylabel": "B/A", "layers": layers}


def _table(analysis: Analysis, word: str) -> list[dict[str, Any]]:
    rows = []
    for v, fits in analysis.fits.items():
        for metric in METRICS:
            fit = fits.get(metric)
            if fit is None:
                continue
            k = "—"
            if fit.exponent is not None:
                k = f"{fit.exponent:.2f}"
                if fit.exponent_ci is not None:
                    lo, hi = fit.exponent_ci
                    k += f" ± {(hi - lo) / 2:.2f} [{lo:.2f}, {hi:.2f}]"
            co = _coeffs(fit)
            pred = "—"
            if fit.prediction is not None:
                p = fit.prediction
                pred = (f"{fmt_value(metric, p.value)} at {word} = {p.size_n} "
                        f"(95% {fmt_value(metric, p.lo)} – {fmt_value(metric, p.hi)})")
            rows.append({
                "variant": v, "metric": metric,
                "class": fit.cls if fit.cls != INCONCLUSIVE else f"inconclusive (best {fit.best})",
                "confident": fit.confident, "k": k,
                "a": "—" if co is None else fmt_value(metric, co[1]),
                "b": "—" if co is None else f"{co[2]:.4g}",
                "r2": "—" if fit.r2 is None else f"{fit.r2:.4f}",
                "prediction": pred, "reason": fit.reason,
                "points": str(fit.n_points),
            })
    return rows


def _runs_columns(analysis: Analysis, metrics: Sequence[str]) -> tuple[
    dict[str, list[Any]], dict[str, list[float | None]], dict[str, list[int]]
]:
    runs = analysis.runs
    cols: dict[str, list[Any]] = {
        "n": [r.size_n for r in runs],
        "repeat": [r.repeat for r in runs],
        "exit": [r.measurement.exit_code for r in runs],
        "timeout": [1 if r.measurement.timed_out else 0 for r in runs],
        "seq": [r.seq for r in runs],
        "variant": [r.variant for r in runs],
    }
    values = {m: rnd_list(r.value(m) for r in runs) for m in metrics}
    rowsets: dict[str, list[int]] = {}
    failed = {id(r) for r in analysis.failures}
    for v in sorted({r.variant for r in runs}):
        rowsets[v] = [i for i, r in enumerate(runs)
                      if r.variant == v and not r.warmup and r.measurement.ok]
        rowsets[f"{v}_fail"] = [i for i, r in enumerate(runs)
                                if r.variant == v and id(r) in failed]
    return cols, values, rowsets


def _facts(analysis: Analysis) -> list[tuple[str, str]]:
    s = analysis.sweep
    facts = [("sweep", f"#{s.id} {s.name}".strip()), ("command", command_text(s.command, s.shell))]
    if s.vs_command is not None:
        facts.append(("vs (B)", command_text(s.vs_command, s.vs_shell)))
    sizes = sorted({r.size_n for r in analysis.runs if not r.warmup}) or list(s.sizes)
    if sizes:
        shown = ", ".join(map(str, sizes[:12])) + (" …" if len(sizes) > 12 else "")
        facts.append(("sizes", f"{len(sizes)}: {shown}"))
    facts += [
        ("mode", s.mode), ("repeat", str(s.repeat)), ("warm-up", str(s.warmup)),
        ("runs", f"{len(analysis.runs)} ({len(analysis.failures)} failed)"),
        ("counters", s.counters + (f" — {s.counters_note}" if s.counters_note else "")),
        ("meter", s.meter),
        ("status", s.status),
    ]
    if s.host:
        facts.append(("host", ", ".join(f"{k}={v}" for k, v in s.host.items())))
    return facts


def plot_point_count(data: ReportData, plot: Mapping[str, Any]) -> int:
    """How many points a renderer draws in `plot` (None and non-positive-on-log dropped)."""
    return sum(len(layer_points(data, plot, layer)[0])
               for layer in plot["layers"] if layer["type"] == "points")


def layer_points(
    data: ReportData, plot: Mapping[str, Any], layer: Mapping[str, Any]
) -> tuple[list[float], list[float], list[int]]:
    """(xs, ys, run indices or -1) of the drawable points of one points layer."""
    if "rows" in layer:
        rows = data.rowsets.get(layer["rows"], [])
        xs_all = [data.runs["n"][i] for i in rows]
        ys_all = (data.values[layer["y"]] if isinstance(layer["y"], str) else None)
        ys_src = [ys_all[i] for i in rows] if ys_all is not None else list(layer["y"])
        idx = list(rows)
    else:
        xs_all, ys_src = list(layer["x"]), list(layer["y"])
        idx = [-1] * len(xs_all)
    xs, ys, ids = [], [], []
    for x, y, i in zip(xs_all, ys_src, idx, strict=True):
        if x is None or y is None:
            continue
        if (plot.get("xlog") and x <= 0) or (plot.get("ylog") and y <= 0):
            continue
        xs.append(x)
        ys.append(y)
        ids.append(i)
    return xs, ys, ids


def report_data(analysis: Analysis) -> ReportData:
    s = analysis.sweep
    word = "i" if s.mode == "accumulate" else "n"
    metrics = [m for m in METRICS if any(m in fs for fs in analysis.fits.values())]
    cols, values, rowsets = _runs_columns(analysis, metrics)
    comparison: tuple[dict[str, Any], ...] = ()
    ratio_plots: dict[str, dict[str, Any]] = {}
    if analysis.comparison is not None:
        comparison = tuple(
            {"metric": mc.metric, "summary": mc.summary, "change": mc.change,
             "class_a": mc.class_a, "class_b": mc.class_b,
             "crossover": "—" if mc.crossover_n is None else f"{word} ≈ {mc.crossover_n:.4g}"}
            for mc in sorted(analysis.comparison.metrics,
                             key=lambda mc: METRICS.index(mc.metric)
                             if mc.metric in METRICS else len(METRICS))
        )
        ratio_plots = {mc.metric: _ratio_plot(mc, word)
                       for mc in analysis.comparison.metrics if mc.ratios}
    sections = tuple(
        {"metric": m, "open": m in OPEN_METRICS or len(metrics) <= 3,
         "plots": _metric_plots(analysis, m, word)
         + ([ratio_plots[m]] if m in ratio_plots else [])}
        for m in metrics
    )
    failures = tuple(
        {"seq": r.seq, "variant": r.variant, "size_n": r.size_n, "repeat": r.repeat,
         "exit_code": r.measurement.exit_code, "timed_out": r.measurement.timed_out,
         "stderr_tail": r.measurement.stderr_tail}
        for r in analysis.failures
    )
    title = f"quadscope — {s.name or 'sweep'} #{s.id}"
    return ReportData(
        title=title,
        verdict=analysis.verdict,
        facts=tuple(_facts(analysis)),
        notes=tuple(analysis.notes),
        table=tuple(_table(analysis, word)),
        runs=cols,
        values=values,
        rowsets=rowsets,
        sections=sections,
        comparison=comparison,
        failures=failures,
        culprits=tuple(culprits_table(analysis.profile)),
        flame_svg=flame_svg(analysis.profile),
        doctor=tuple(doctor_rows(analysis.doctor, analysis.probe_series)),
        size_word=word,
    )


__all__ = [
    "BAND_ALPHA", "PALETTE", "POINT_ALPHA", "ReportData", "curve_band", "layer_points",
    "plot_point_count", "report_data", "rnd", "sanitise_svg",
]
