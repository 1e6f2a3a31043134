"""Report data: what the HTML and PNG renderers draw, derived once from an `Analysis`.

Contract: `report_data(analysis) -> ReportData` is a pure function. It never
fits: curves use the stored `Fit` coefficients with `fitting.CLASS_FUNCS`, the
linearised plot uses `fitting.linearise`, and ratios come from
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
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quadscope.analysis import Analysis
from quadscope.fitting import CLASS_FUNCS, linearise
from quadscope.model import INCONCLUSIVE, METRICS, Fit, Run
from quadscope.units import fmt_value

# One palette for every renderer: the HTML CSS/JS and matplotlib read these.
PALETTE: dict[str, str] = {
    "A": "#2563eb",  # blue
    "B": "#ea580c",  # orange
    "fail": "#6b7280",  # grey crosses: failed runs, drawn but never fitted
    "ref": "#111827",  # reference lines: y = n, ratio 1, slopes
    "ratio": "#7c3aed",  # B/A
    "cross": "#16a34a",  # crossover
    "probe": "#0f766e",  # doctor probe series
}
BAND_ALPHA = 0.18
POINT_ALPHA = 0.55
# Metrics whose section is open on load; the others are one click away.
OPEN_METRICS: tuple[str, ...] = ("wall_s", "user_s", "sys_s", "max_rss_bytes")
CURVE_SAMPLES = 120

_SVG_NS = "http://www.w3.org/2000/svg"


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


def rnd(v: Any) -> Any:
    """6 significant digits, ints as ints, NaN/inf as None: compact and JSON-safe."""
    if v is None:
        return None
    f = float(v)
    if not math.isfinite(f):
        return None
    if f.is_integer() and abs(f) < 1e15:
        return int(f)
    return float(f"{f:.6g}")


def rnd_list(vs: Any) -> list[Any]:
    return [rnd(v) for v in vs]


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
    if cls not in CLASS_FUNCS or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return cls, float(a), float(b)


def curve_band(
    cls: str, a: float, b: float, sizes: np.ndarray, values: np.ndarray, ns: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ŷ, lo, hi at `ns`: the WLS confidence band described in the module docstring."""
    from scipy.stats import t as student_t

    f = CLASS_FUNCS[cls]
    fx = np.asarray(f(sizes), dtype=float)
    fn = np.asarray(f(ns), dtype=float)
    yhat_i = a + b * fx
    yhat = a + b * fn
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
    name = cls.replace("n", word) if word != "n" else cls
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
                fit_at = a + b * np.asarray(CLASS_FUNCS[cls](ns_run), dtype=float)
                scale = np.maximum(np.abs(fit_at), 1e-12 * max(float(np.nanmax(np.abs(arr))), 1e-300))
                rel = np.where(ok, (arr - fit_at) / scale * 100.0, np.nan)
            resid.append({"type": "points", "rows": v, "y": rnd_list(rel), "color": color,
                          "label": label, "marker": "o", "name": "residual %", "metric": metric})
            if cls != "1":
                try:
                    with np.errstate(all="ignore"):
                        linv = np.asarray(linearise(cls, a, b, arr), dtype=float)
                except (ValueError, ZeroDivisionError, FloatingPointError):
                    linv = None
                if linv is not None:
                    have_lin = True
                    name = f"f⁻¹((y − a)/b), f = {cls}"
                    lin.append({"type": "points", "rows": v, "y": rnd_list(linv), "color": color,
                                "label": label, "marker": "o", "name": name, "metric": metric})
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
        first = next(x for x in lin if x["type"] == "points")
        lin.insert(0, {"type": "line", "x": [], "y": [], "identity": True, "color": PALETTE["ref"],
                       "label": f"y = {word}: a straight line is the proof", "dash": True,
                       "width": 1})
        plots.append({"id": f"{metric}-linear", "kind": "linear", "metric": metric,
                      "xlog": False, "ylog": False, "xlabel": word,
                      "ylabel": first["name"], "layers": lin,
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
    for v in {r.variant for r in runs}:
        rowsets[v] = [i for i, r in enumerate(runs)
                      if r.variant == v and not r.warmup and r.measurement.ok]
        rowsets[f"{v}_fail"] = [i for i, r in enumerate(runs)
                                if r.variant == v and id(r) in failed]
    return cols, values, rowsets


# --- profile and doctor extras -------------------------------------------------------------

_SVG_ELEMENTS = frozenset({
    "svg", "g", "rect", "text", "tspan", "title", "desc", "line", "polyline", "polygon",
    "path", "circle", "ellipse", "defs", "linearGradient", "radialGradient", "stop",
    "clipPath", "symbol", "use",
})
_SVG_ATTRS = frozenset({
    "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "rx", "ry", "width", "height", "d",
    "points", "fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity",
    "stroke-dasharray", "opacity", "transform", "viewBox", "preserveAspectRatio",
    "font-family", "font-size", "font-weight", "text-anchor", "dominant-baseline", "class",
    "id", "offset", "stop-color", "stop-opacity", "clip-path", "gradientUnits",
    "gradientTransform", "dx", "dy", "version", "style",
})


# Anything that could fetch or run: script URLs, CSS expressions, url() not to a local #id.
_UNSAFE_VALUE = re.compile(r"javascript:|expression\(|url\(\s*['\"]?\s*(?!#)", re.IGNORECASE)


def sanitise_svg(text: str) -> str | None:
    """Whitelist-rebuild an SVG: only drawing elements and attributes survive.

    Scripts, event handlers, `<foreignObject>`, `<style>`, external references and
    `javascript:` URLs are dropped; symbol names stay as text, which ElementTree
    escapes when it serialises. Returns None when the text is not an SVG.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    if _local(root.tag) != "svg":
        return None

    def clean(node: ET.Element) -> ET.Element | None:
        tag = _local(node.tag)
        if tag not in _SVG_ELEMENTS:
            return None
        out = ET.Element(tag)
        for k, val in node.attrib.items():
            name = _local(k)
            if name == "href" and val.startswith("#"):
                out.set("href", val)
            elif name in _SVG_ATTRS and not _UNSAFE_VALUE.search(val):
                out.set(name, val)
        out.text, out.tail = node.text, node.tail
        for child in node:
            c = clean(child)
            if c is not None:
                out.append(c)
            elif child.tail:
                # keep the text that followed a dropped element
                last = out[-1] if len(out) else None
                if last is not None:
                    last.tail = (last.tail or "") + child.tail
                else:
                    out.text = (out.text or "") + child.tail
        return out

    cleaned = clean(root)
    assert cleaned is not None
    cleaned.set("xmlns", _SVG_NS)
    return ET.tostring(cleaned, encoding="unicode", method="xml")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _find_svg(obj: Any, depth: int = 0) -> str | None:
    if isinstance(obj, str):
        s = obj.lstrip()
        return obj if s.startswith(("<svg", "<?xml")) and "<svg" in s else None
    if depth > 2:
        return None
    if isinstance(obj, Mapping):
        for key in ("diff_svg", "flame_svg", "flamegraph_svg", "svg"):
            if key in obj and (found := _find_svg(obj[key], depth + 1)):
                return found
        for val in obj.values():
            if found := _find_svg(val, depth + 1):
                return found
    return None


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list | tuple):
        return ", ".join(_cell(x) for x in v)
    if isinstance(v, Mapping):
        return ", ".join(f"{k}={_cell(x)}" for k, x in v.items())
    return "" if v is None else str(v)


# Culprit fields (profile.attribute.Culprit.to_dict) shown, in order, with their headings.
_CULPRIT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("symbol", "symbol"), ("dso", "object"), ("self_class", "class"),
    ("self_exponent", "k [95%]"), ("share_at_max", "share at max n"),
    ("growth_share", "share of growth"), ("superlinear_share", "superlinear share"),
    ("call_path", "call path"),
)


def _pct(v: Any) -> str:
    return f"{float(v):.1%}" if isinstance(v, int | float) else _cell(v)


def _culprit_row(row: Mapping[str, Any]) -> dict[str, str]:
    if not any(k in row for k, _ in _CULPRIT_COLUMNS):
        return {str(k): _cell(v) for k, v in row.items()}
    out: dict[str, str] = {}
    for key, head in _CULPRIT_COLUMNS:
        if key not in row:
            continue
        v = row[key]
        if key == "self_exponent":
            ci = row.get("self_exponent_ci")
            text = "—" if v is None else f"{float(v):.2f}"
            if v is not None and isinstance(ci, list | tuple) and len(ci) == 2:
                text += f" [{float(ci[0]):.2f}, {float(ci[1]):.2f}]"
            out[head] = text
        elif key.endswith("_share") or key == "share_at_max":
            out[head] = _pct(v)
        elif key == "call_path" and isinstance(v, list | tuple):
            shown = [str(x) for x in v]
            out[head] = " → ".join((["…"] if len(shown) > 5 else []) + shown[-5:])
        else:
            out[head] = _cell(v)
    return out


def _culprits(extras: Mapping[str, Any]) -> list[dict[str, str]]:
    raw: Any = extras.get("culprits")
    prof = extras.get("profile")
    if raw is None and isinstance(prof, Mapping):
        raw = prof.get("culprits")
    if isinstance(raw, Mapping):
        raw = raw.get("culprits", raw.get("rows", []))
    if not isinstance(raw, list):
        return []
    return [_culprit_row(row) for row in raw if isinstance(row, Mapping)]


def _series_of(probe: Mapping[str, Any]) -> tuple[list[float], list[float]] | None:
    """A probe's plottable series: `points` [[x, y], ...], or `sizes`/`values`, or `x`/`y`,
    looked for on the probe, then in its `details`, then in `details["series"]`."""
    places: list[Mapping[str, Any]] = [probe]
    details = probe.get("details")
    if isinstance(details, Mapping):
        places.append(details)
        if isinstance(details.get("series"), Mapping):
            places.append(details["series"])
    for place in places:
        pts = place.get("points") or place.get("series")
        if isinstance(pts, list) and pts and all(
            isinstance(p, list | tuple) and len(p) >= 2 for p in pts
        ):
            try:
                return [float(p[0]) for p in pts], [float(p[1]) for p in pts]
            except (TypeError, ValueError):
                continue
        for xk, yk in (("sizes", "values"), ("x", "y"), ("sizes", "medians")):
            xs, ys = place.get(xk), place.get(yk)
            if isinstance(xs, list) and isinstance(ys, list) and len(xs) == len(ys) and xs:
                try:
                    return [float(x) for x in xs], [float(y) for y in ys]
                except (TypeError, ValueError):
                    continue
    return None


# ProbeResult.to_dict() fields shown, in order, with their headings.
_PROBE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("measured", "measures"), ("class", "class"), ("cost", "cost"), ("verdict", "verdict"),
    ("finding", "finding"),
)


def _doctor(extras: Mapping[str, Any]) -> list[dict[str, Any]]:
    blob: Any = extras.get("doctor")
    if isinstance(blob, Mapping) and "probe" in blob:  # one probe's own sweep
        blob = [blob]
    elif isinstance(blob, Mapping):
        blob = blob.get("probes", blob.get("results", []))
    if isinstance(blob, Mapping):
        blob = [{"probe": k, **v} if isinstance(v, Mapping) else {"probe": k, "finding": v}
                for k, v in blob.items()]
    if not isinstance(blob, list):
        return []
    out = []
    for i, probe in enumerate(p for p in blob if isinstance(p, Mapping)):
        name = str(probe.get("probe") or probe.get("name") or f"probe {i + 1}")
        cells = {head: _cell(probe.get(key)) for key, head in _PROBE_COLUMNS}
        if probe.get("advice"):
            cells["finding"] += " " + _cell(probe["advice"])
        entry: dict[str, Any] = {"name": name, "verdict": _cell(probe.get("verdict")),
                                 "cells": cells, "plot": None}
        many = probe.get("plot_series")
        if isinstance(many, list) and many:
            entry["plot"] = _probe_plot(i, name, probe, many)
            out.append(entry)
            continue
        series = _series_of(probe)
        if series:
            xs, ys = series
            src = probe.get("details") if isinstance(probe.get("details"), Mapping) else probe
            entry["plot"] = {
                "id": f"probe-{i}", "kind": "probe", "metric": name, "xlog": False,
                "ylog": False, "small": True, "title": name,
                "xlabel": str(src.get("x_label") or "n"),
                "ylabel": str(src.get("y_label") or probe.get("measured") or "value"),
                "layers": [
                    {"type": "line", "x": rnd_list(xs), "y": rnd_list(ys),
                     "color": PALETTE["probe"], "label": name, "dash": False},
                    {"type": "points", "x": rnd_list(xs), "y": rnd_list(ys),
                     "color": PALETTE["probe"], "label": "", "marker": "o", "name": "value"},
                ],
            }
        out.append(entry)
    return out


_SERIES_COLORS = ("probe", "A", "B", "ratio", "cross", "fail")


def _probe_plot(i: int, name: str, probe: Mapping[str, Any], many: list[Any]) -> dict[str, Any]:
    """One small plot of several labelled series: `plot_series` = [{"label", "points"}, ...]
    (added by `quadscope report` from the probe's stored sweeps: median per size)."""
    layers: list[dict[str, Any]] = []
    for j, ser in enumerate(s for s in many if isinstance(s, Mapping)):
        pts = [p for p in ser.get("points", []) if isinstance(p, list | tuple) and len(p) >= 2]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        color = PALETTE[_SERIES_COLORS[j % len(_SERIES_COLORS)]]
        label = str(ser.get("label", f"series {j + 1}"))
        layers.append({"type": "line", "x": rnd_list(xs), "y": rnd_list(ys), "color": color,
                       "label": label, "dash": False})
        layers.append({"type": "points", "x": rnd_list(xs), "y": rnd_list(ys), "color": color,
                       "label": "", "marker": "o", "name": str(ser.get("name", "median"))})
    first = many[0] if isinstance(many[0], Mapping) else {}
    return {"id": f"probe-{i}", "kind": "probe", "metric": name, "xlog": False, "ylog": False,
            "small": True, "title": name, "xlabel": str(first.get("x_label", "n")),
            "ylabel": str(first.get("y_label", "median")), "layers": layers}


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
    flame = _find_svg(analysis.extras.get("profile"))
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
        culprits=tuple(_culprits(analysis.extras)),
        flame_svg=sanitise_svg(flame) if flame else None,
        doctor=tuple(_doctor(analysis.extras)),
        size_word=word,
    )


__all__ = [
    "BAND_ALPHA", "PALETTE", "POINT_ALPHA", "ReportData", "curve_band", "layer_points",
    "plot_point_count", "report_data", "sanitise_svg",
]
