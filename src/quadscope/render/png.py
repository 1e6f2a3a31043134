"""PNG plots: the HTML report's plots as files, through matplotlib's Agg canvas.

Contract: `PngRenderer(dpi=).render(analysis) -> dict[str, bytes]` maps a file
name to PNG bytes and writes nothing; `--png DIR` writes them into DIR.
It draws `plotdata.report_data(analysis)`, the same plot records and `PALETTE` as
the HTML page, and never re-fits. Files:

  `<metric>.png`          per fitted metric: cost against n with the fitted curve
                          and its 95% band, log-log with the exponent's slopes,
                          linearised f⁻¹((y − a)/b) against n with residuals beneath,
                          and, for a comparison, B/A against n with its band
  `doctor-<probe>.png`    per doctor probe that carries a series

Figures are built on `matplotlib.figure.Figure` with their own Agg canvas, not
pyplot, so no global state is touched and the backend need not be chosen.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from quadscope.render.base import Renderer
from quadscope.render.safe import safe_name
from quadscope.textsafe import mpl_text
from quadscope.units import fmt_bytes, fmt_count, fmt_seconds

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.render.plotdata import ReportData, Section
    from quadscope.render.plotmodel import Plot


class PngRenderer(Renderer):
    """`render(analysis) -> {file name: PNG bytes}`."""

    name = "png"
    flag = "--png"
    metavar = "DIR"
    help = "write PNG plots into DIR"
    extension = ".png"
    folder = True
    renders_multi = True  # render_multi: a sweep over several sizes

    def __init__(self, *, dpi: int = 110) -> None:
        self.dpi = dpi

    def render(self, analysis: Analysis) -> dict[str, bytes]:
        # matplotlib and the plot data (numpy) are imported here, not at the top: the CLI
        # imports every renderer to build its options, and pays for them only for PNGs.
        from matplotlib.figure import Figure

        from quadscope.render.plotdata import report_data

        data = report_data(analysis)
        out: dict[str, bytes] = {}
        for section in data.sections:
            out[f"{safe_name(section.metric)}.png"] = self._metric_figure(data, section)
        for probe in data.doctor:
            if probe.plot is not None:
                fig = Figure(figsize=(4.2, 2.8), dpi=self.dpi, layout="constrained")
                draw_plot(fig.add_subplot(), data, probe.plot)
                out[f"doctor-{safe_name(probe.name)}.png"] = self._png(fig)
        return out

    def _metric_figure(self, data: ReportData, section: Section) -> bytes:
        from matplotlib.figure import Figure

        plots = {p.kind: p for p in section.plots}
        ratio = plots.get("ratio")
        cols = 3 if ratio else 2
        fig = Figure(figsize=(5.2 * cols, 8.2), dpi=self.dpi, layout="constrained")
        grid = fig.add_gridspec(3, cols, height_ratios=[3, 2.2, 1.1])
        fig.suptitle(mpl_text(f"{section.metric} — {section.verdict}"), fontsize=10,
                     ha="left", x=0.01)
        draw_plot(fig.add_subplot(grid[0, 0]), data, plots["cost"])
        draw_plot(fig.add_subplot(grid[0, 1]), data, plots["loglog"])
        if ratio:
            draw_plot(fig.add_subplot(grid[0, 2]), data, ratio)
        if "linear" in plots:
            ax = fig.add_subplot(grid[1, 0:2])
            draw_plot(ax, data, plots["linear"])
            res = fig.add_subplot(grid[2, 0:2], sharex=ax)
        else:
            res = fig.add_subplot(grid[1:, 0:2])
        if "resid" in plots:
            draw_plot(res, data, plots["resid"])
        return self._png(fig)

    def _png(self, fig: Figure) -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=self.dpi, metadata={"Software": "quadscope"})
        return buf.getvalue()

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> dict[str, bytes]:
        """A sweep over several sizes: one figure, the HTML page's plots (`multi_png`)."""
        from quadscope.render.multi_png import png_files

        return png_files(report, dpi=self.dpi)


def draw_plot(ax: Axes, data: ReportData, plot: Plot) -> None:
    """Draw one plot (see plotmodel) on `ax`, layer by layer, as the page's script does."""
    from quadscope.render.plotdata import BAND_ALPHA, POINT_ALPHA, layer_points
    from quadscope.render.plotmodel import Area, HLine, Line, Points, VLine

    drawn = 0  # data-bearing artists: a log axis with none cannot be scaled
    for layer in plot.layers:
        color = layer.color
        label = mpl_text(layer.label) if layer.label else None
        ls = "--" if isinstance(layer, Line | HLine | VLine) and layer.dash else "-"
        if isinstance(layer, Area):
            bands = [(x, lo, hi) for x, lo, hi in zip(layer.x, layer.lo, layer.hi, strict=True)
                     if None not in (x, lo, hi) and not (plot.ylog and (lo <= 0 or hi <= 0))]
            if bands:
                xs, los, his = zip(*bands, strict=True)
                ax.fill_between(xs, los, his, color=color, alpha=BAND_ALPHA, lw=0, label=label)
                drawn += 1
        elif isinstance(layer, Line):
            line = [(x, y) for x, y in zip(layer.x, layer.y, strict=True)
                    if x is not None and y is not None and not (plot.ylog and y <= 0)]
            if line:
                lx, ly = zip(*line, strict=True)
                ax.plot(lx, ly, ls, color=color, lw=(layer.width or 2) * 0.8, label=label)
                drawn += 1
        elif isinstance(layer, Points):
            px, py, _ = layer_points(data, plot, layer)
            drawn += bool(px)
            if layer.marker == "v":
                ax.scatter(px, py, marker="v", s=26, facecolors="none", edgecolors=color,
                           label=label, zorder=3)
            elif layer.marker == "x":
                ax.scatter(px, py, marker="x", s=22, color=color, label=label, zorder=3)
            else:
                ax.scatter(px, py, s=9, color=color, alpha=POINT_ALPHA, lw=0, label=label,
                           zorder=3)
        elif isinstance(layer, HLine):
            ax.axhline(layer.y, color=color, ls=ls, lw=0.9, label=label)
        elif isinstance(layer, VLine):
            ax.axvline(layer.x, color=color, ls=ls, lw=1.2, label=label)
    if not drawn:
        ax.text(0.5, 0.5, "nothing to draw on these axes", transform=ax.transAxes,
                ha="center", va="center", fontsize=8, color="#6b7280")
        ax.set_xticks([])  # an empty panel's default -0.04..0.04 ticks mean nothing
        ax.set_yticks([])
    else:
        if plot.xlog:
            ax.set_xscale("log")
        if plot.ylog:
            ax.set_yscale("log")
    ax.set_title(mpl_text(plot.title), fontsize=9, loc="left")
    ax.set_xlabel(mpl_text(plot.xlabel), fontsize=8)
    ax.set_ylabel(mpl_text(plot.ylabel), fontsize=8)
    if drawn:
        _unit_ticks(ax, plot)
    ax.tick_params(labelsize=7)
    ax.grid(True, color="#e5e7eb", lw=0.6)
    handles, labels = ax.get_legend_handles_labels()
    seen: dict[str, Any] = {}
    for h, lab in zip(handles, labels, strict=True):
        seen.setdefault(lab, h)
    if seen and drawn and not plot.small:
        ax.legend(seen.values(), seen.keys(), fontsize=6.5, loc="best", framealpha=0.8)


_UNIT_FORMAT = {"s": fmt_seconds, "bytes": fmt_bytes, "count": fmt_count}
LOG_125_DECADES = 4.0  # a log axis wider than this is ticked at powers of ten alone
_ZERO = {"s": ("0 s", 1e9, " ns"), "bytes": ("0 B", 1.0, " B"), "count": ("0", 1.0, "")}


def _tick(fmt: Any, unit: str, v: float) -> str:
    """A log axis's tick: as `fmt` writes it, except a positive value `fmt` rounds to zero
    (a fitted 1e-15 s reads "0 s"), which keeps its digits: "1e-06 ns", as the page does."""
    said: str = fmt(v)
    zero, scale, suffix = _ZERO[unit]
    return f"{v * scale:.3g}{suffix}" if v > 0 and said == zero else said


def _unit_ticks(ax: Axes, plot: Plot) -> None:
    """Tick labels in the axis's unit (20 ms, 4 MiB, 64k), never 1.7e+07."""
    from matplotlib.ticker import (
        FixedLocator,
        FuncFormatter,
        LogLocator,
        MaxNLocator,
        NullFormatter,
    )

    for axis, unit, log in ((ax.xaxis, plot.xunit, plot.xlog), (ax.yaxis, plot.yunit, plot.ylog)):
        fmt = _UNIT_FORMAT.get(unit)
        if fmt is None:
            continue
        axis.set_major_formatter(FuncFormatter(lambda v, _pos, f=fmt, u=unit, lg=log:
                                               _tick(f, u, v) if lg else f(v)))
        if log and unit == "bytes":  # 64 KiB, 128 KiB, …: round in the unit shown
            axis.set_major_locator(LogLocator(base=2, numticks=9))
            axis.set_minor_formatter(NullFormatter())
        elif log:
            # 1-2-5 in every decade reads well over a few decades; over more it crowds the
            # axis, and past 7 matplotlib draws no major tick at all with more than one sub
            # (a 1e-15 s floor point left a log-log panel without a single label).
            lo, hi = axis.get_view_interval()
            wide = lo > 0 and hi > 0 and math.log10(hi / lo) > LOG_125_DECADES
            axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0),
                                              numticks=8))
            axis.set_minor_formatter(NullFormatter())
        elif unit == "bytes" and axis.get_scale() == "linear":  # 13 MiB, 14 MiB: not 1e6 steps
            lo, hi = axis.get_view_interval()
            top = max(abs(lo), abs(hi))
            scale = 1024.0 ** max(0, min(4, int(math.log(top, 1024)))) if top >= 1 else 1.0
            nice = MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).tick_values(lo / scale, hi / scale)
            axis.set_major_locator(FixedLocator([t * scale for t in nice]))
        elif unit == "count" and axis.get_scale() == "linear":  # no 0.015 of a fault
            lo, hi = axis.get_view_interval()
            whole = range(math.ceil(lo), math.floor(hi) + 1)
            axis.set_major_locator(FixedLocator(list(whole)) if len(whole) <= 3
                                   else MaxNLocator(nbins="auto", integer=True))


__all__ = ["PngRenderer", "draw_plot", "safe_name"]
