"""Report data: what the HTML and PNG renderers draw, derived once from an `Analysis`.

Contract: `report_data(analysis) -> ReportData` is a pure function. It never
fits: curves use the stored `Fit` coefficients with the class's `evaluate`, the
linearised plot its `linearise` (see `quadscope.classes`), and ratios come from
`analysis.comparison`. Both renderers draw the same `ReportData.plots` with the
same `PALETTE`, so the HTML page and the PNGs show identical plots. Numbers
are rounded to 6 significant digits, None for NaN, and `to_json_obj()` is
JSON-ready, because the HTML page embeds it as one JSON document.

Runs are stored once, as columns (`runs`: n, repeat, exit, seq, variant) plus
one value column per plotted metric (`values`). Named row sets (`rowsets`: "A",
"B" for the measured runs, "A_fail", "B_fail" for failed non-warm-up runs)
index into them. The plots are typed records (`render.plotmodel`: a `Plot`
and its `Points`, `Line`, `Area`, `HLine` and `VLine` layers), grouped in one
`Section` per metric; `to_json_obj` is what the page's script reads, each
record's `to_dict()`. Renderers drop points that cannot be drawn (None, and
non-positive values on a log axis); `plot_point_count` says how many remain,
for tests.

One metric's plots (cost with a 95% prediction band, the growing part y − a
on log-log, the linearised panel, residuals) are built by `render.panels`
from the curves and bands analyse computed (`analyse.curves`, whose
docstring gives the statistics). Every user string (name, command, host,
stderr) is passed through `textsafe.visible`.

The host is shown as kernel, CPU, cores, libc and the boot flags that change
performance (`measure.host.boot_flags`), never the whole kernel command line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from quadscope.analyse.analysis import Analysis, peaks
from quadscope.analyse.curves import drawn
from quadscope.analyse.headline import class_text, exponent_text
from quadscope.measure.host import shown_host
from quadscope.model import METRICS, Fit
from quadscope.render.extras import PALETTE as PALETTE
from quadscope.render.extras import (
    DoctorRow,
    culprits_table,
    doctor_rows,
    flame_svg,
    flame_tree,
    rnd,
    rnd_list,
    rnd_tuple,
    sanitise_svg,
)
from quadscope.render.panels import metric_plots, metric_verdict
from quadscope.render.plotmodel import Area, HLine, Layer, Line, Plot, Points, VLine
from quadscope.textsafe import command_text, visible, visible_lines
from quadscope.units import fmt_exit, fmt_value

BAND_ALPHA = 0.18
POINT_ALPHA = 0.55
# Metrics whose section is open on load; the others are one click away.
OPEN_METRICS: tuple[str, ...] = ("wall_s", "user_s", "sys_s", "max_rss_bytes")

@dataclass(frozen=True, slots=True)
class Section:
    """One metric's part of the report: its verdict, whether it is open on load, its plots."""

    metric: str
    open: bool
    verdict: str
    plots: tuple[Plot, ...]


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
    sections: tuple[Section, ...]  # one per metric
    comparison: tuple[dict[str, Any], ...]  # {"metric", "summary", "change", "class_a", ...}
    change: dict[str, str] | None  # the A/B headline (analyse.change): text, direction
    failures: tuple[dict[str, Any], ...]
    culprits: tuple[dict[str, str], ...] = ()
    flame_svg: str | None = None
    flame_tree: dict[str, Any] | None = None  # the interactive flame graph's data
    doctor: tuple[DoctorRow, ...] = ()
    size_word: str = "n"
    extra: dict[str, Any] = field(default_factory=dict)
    culprit_sentence: str | None = None  # the user's function, from Callgrind's exact counts

    @property
    def plots(self) -> list[Plot]:
        out: list[Plot] = []
        for s in self.sections:
            out.extend(s.plots)
        out.extend(p.plot for p in self.doctor if p.plot is not None)
        return out

    @property
    def failures_drawn(self) -> int:
        """How many failed runs' points the plots draw (the "<variant>_fail" row sets): none
        when nothing was fitted, as no cost plot is made, though runs failed."""
        return sum(len(layer_points(self, plot, layer)[0]) for plot in self.plots
                   for layer in plot.layers
                   if isinstance(layer, Points) and (layer.rows or "").endswith("_fail"))

    def to_json_obj(self) -> dict[str, Any]:
        """What the HTML page embeds for its script: runs once, then each plot's `to_dict()`."""
        return {
            "runs": self.runs,
            "values": self.values,
            "rowsets": self.rowsets,
            "plots": [p.to_dict() for p in self.plots],
            "palette": PALETTE,
            "band_alpha": BAND_ALPHA,
            "point_alpha": POINT_ALPHA,
            "size_word": self.size_word,
        }


def _ratio_plot(mc: Any, word: str) -> Plot:
    rs = sorted(mc.ratios, key=lambda r: r.size_n)
    xs = [r.size_n for r in rs]
    ys = [r.ratio for r in rs]
    layers: list[Layer] = [
        Area(rnd_tuple(xs), rnd_tuple(r.lo for r in rs), rnd_tuple(r.hi for r in rs),
             PALETTE["ratio"], "95% interval"),
        Line(rnd_tuple(xs), rnd_tuple(ys), PALETTE["ratio"], "B/A (ratio of medians)"),
        Points(PALETTE["ratio"], "B/A at each size", "B/A", y=rnd_tuple(ys), x=rnd_tuple(xs)),
        HLine(1, PALETTE["ref"], "same cost", dash=True),
    ]
    title = f"{mc.metric}: B/A against {word}"
    if mc.crossover_n is not None and math.isfinite(mc.crossover_n):
        layers.append(VLine(rnd(mc.crossover_n), PALETTE["cross"],
                            f"crossover at {word} ≈ {mc.crossover_n:.4g}", dash=True))
        title += f" — crossover at {word} ≈ {mc.crossover_n:.4g}"
    pos = all(y is not None and y > 0 for y in ys) and ys
    ylog = bool(pos) and max(ys) / min(ys) > 20
    return Plot(f"{mc.metric}-ratio", "ratio", mc.metric, title, word, "B/A", False, ylog,
                "count", "", tuple(layers))


def _table(analysis: Analysis, word: str) -> list[dict[str, Any]]:
    rows = []
    for v, fits in analysis.fits.items():
        top = peaks(analysis.measured(v))
        for metric in METRICS:
            fit = fits.get(metric)
            if fit is None:
                continue
            # The terminal's exponent cell ("1.24 [0.00, 3.30]", "—" flat, "≥ 4" at the
            # search's edge): "0.28 ± 2.00 [0.00, 4.00]" read as a symmetric interval.
            k = exponent_text(fit, top.get(metric)) or "—"
            co = drawn(fit)
            pred = "—"
            if fit.prediction is not None:
                p = fit.prediction
                pred = (f"{fmt_value(metric, p.value)} at {word} = {p.size_n} "
                        f"(95% {fmt_value(metric, p.lo)} – {fmt_value(metric, p.hi)})")
            rows.append({
                "variant": v, "metric": metric,
                # As the terminal, the headline and the A/B table write it: "1", "n²",
                # "n or n log n" (the row is marked unsettled).
                "class": class_text(fit, word),
                "confident": fit.confident, "k": k,
                "a": "—" if co is None else fmt_value(metric, co[1]),
                "b": "—" if co is None else f"{co[2]:.4g}",
                "r2": "—" if fit.r2 is None else f"{fit.r2:.4f}",
                "prediction": pred, "reason": fit.reason,
                "points": str(fit.n_points),
            })
    return rows


def _exit_word(code: int) -> str:
    """A run's exit in the plots' hover text: "exit 0", "killed by SIGABRT (signal 6)"."""
    said = fmt_exit(code)
    return said if code < 0 else f"exit {said}"


def _runs_columns(analysis: Analysis, metrics: Sequence[str]) -> tuple[
    dict[str, list[Any]], dict[str, list[float | None]], dict[str, list[int]]
]:
    runs = analysis.runs
    cols: dict[str, list[Any]] = {
        "n": [r.size_n for r in runs],
        "repeat": [r.repeat for r in runs],
        "exit": [r.measurement.exit_code for r in runs],
        "exit_text": [_exit_word(r.measurement.exit_code) for r in runs],
        "timeout": [1 if r.measurement.timed_out else 0 for r in runs],
        "seq": [r.seq for r in runs],
        "variant": [r.variant for r in runs],
    }
    # A launch counted in place of its timed run shows its count, never the counter's time.
    apart, count = analysis.counted_in_place, analysis.work_metric or "instructions"
    values = {m: rnd_list(None if m != count and r.seq in apart else r.value(m) for r in runs)
              for m in metrics}
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
    facts = [("sweep", f"#{s.id} {visible(s.name)}".strip()),
             ("command", command_text(s.command, s.shell))]
    if s.vs_command is not None:
        facts.append(("vs (B)", command_text(s.vs_command, s.vs_shell)))
    sizes = sorted({r.size_n for r in analysis.runs if not r.warmup}) or list(s.sizes)
    start = s.startup_n if s.startup_n in sizes and len(sizes) > 1 else None
    sizes = [n for n in sizes if n != start]
    if sizes:
        shown = ", ".join(map(str, sizes[:12])) + (" …" if len(sizes) > 12 else "")
        facts.append(("sizes", f"{len(sizes)}: {shown}"
                      + ("" if start is None else f" (and {start}: the start-up)")))
    facts += [
        ("mode", s.mode), ("repeat", str(s.repeat)), ("warm-up", str(s.warmup)),
        ("runs", f"{len(analysis.runs)} ({len(analysis.failures)} failed)"),
        ("counters", s.counters + (f" — {visible(s.counters_note)}" if s.counters_note else "")),
        ("meter", s.meter),
        ("status", s.status),
    ]
    if host := shown_host(s.host, vs_host=s.vs_host):
        facts.append(("host", visible(host)))
    return facts


def plot_point_count(data: ReportData, plot: Plot) -> int:
    """How many points a renderer draws in `plot` (None and non-positive-on-log dropped)."""
    return sum(len(layer_points(data, plot, layer)[0])
               for layer in plot.layers if isinstance(layer, Points))


def layer_points(
    data: ReportData, plot: Plot, layer: Points
) -> tuple[list[float], list[float], list[int]]:
    """(xs, ys, run indices or -1) of the drawable points of one points layer."""
    if layer.rows is not None:
        rows = data.rowsets.get(layer.rows, [])
        xs_all = [data.runs["n"][i] for i in rows]
        ys_all = data.values[layer.y] if isinstance(layer.y, str) else None
        ys_src = [ys_all[i] for i in rows] if ys_all is not None else list(layer.y)
        idx = list(rows)
    else:
        xs_all, ys_src = list(layer.x or ()), list(layer.y)
        idx = [-1] * len(xs_all)
    xs, ys, ids = [], [], []
    for x, y, i in zip(xs_all, ys_src, idx, strict=True):
        if x is None or y is None:
            continue
        if (plot.xlog and x <= 0) or (plot.ylog and y <= 0):
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
    ratio_plots: dict[str, Plot] = {}
    if analysis.comparison is not None:
        fits_a, fits_b = analysis.fits.get("A", {}), analysis.fits.get("B", {})

        def shown(fit: Fit | None, stored: str) -> str:
            # As the headline and the terminal write it: "n²", a bracket "n or n log n".
            return stored if fit is None else class_text(fit, word)

        comparison = tuple(
            {"metric": mc.metric, "summary": mc.summary, "change": mc.change,
             "class_a": shown(fits_a.get(mc.metric), mc.class_a),
             "class_b": shown(fits_b.get(mc.metric), mc.class_b),
             "crossover": "—" if mc.crossover_n is None else f"{word} ≈ {mc.crossover_n:.4g}"}
            for mc in sorted(analysis.comparison.metrics,
                             key=lambda mc: METRICS.index(mc.metric)
                             if mc.metric in METRICS else len(METRICS))
        )
        ratio_plots = {mc.metric: _ratio_plot(mc, word)
                       for mc in analysis.comparison.metrics if mc.ratios}
    sections = tuple(
        Section(m, m in OPEN_METRICS or len(metrics) <= 3,
                metric_verdict({v: fs[m] for v, fs in analysis.fits.items() if m in fs}, word),
                tuple(metric_plots(analysis, m, word)
                      + ([ratio_plots[m]] if m in ratio_plots else [])))
        for m in metrics
    )
    failures = tuple(
        {"seq": r.seq, "variant": r.variant, "size_n": r.size_n, "repeat": r.repeat,
         "exit_code": r.measurement.exit_code, "timed_out": r.measurement.timed_out,
         "stderr_tail": visible_lines(r.measurement.stderr_tail)}
        for r in analysis.failures
    )
    title = f"quadscope — {visible(s.name) or 'sweep'} #{s.id}"
    change = analysis.change
    return ReportData(
        title=title,
        verdict=visible(analysis.verdict),
        change=None if change is None else change.to_dict(),
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
        flame_tree=flame_tree(analysis.profile),
        doctor=tuple(doctor_rows(analysis.doctor, analysis.probe_series)),
        size_word=word,
        culprit_sentence=analysis.profile.culprit_sentence if analysis.profile else None,
    )


__all__ = [
    "BAND_ALPHA", "PALETTE", "POINT_ALPHA", "ReportData", "Section", "layer_points",
    "plot_point_count", "report_data", "rnd", "sanitise_svg",
]
