"""The plots of a sweep over several sizes, drawn on matplotlib axes the caller owns.

Contract: `draw_heat(fig, ax, report)` draws the heat map of the median cost
over the first two axes (log colour scale, points not measured left blank,
each cell labelled with its value in the metric's unit, a colour bar);
`draw_line(ax, report, line)` one axis's log-log plot: the medians along the
axis's line (`analyse.multi.Line`: the other axes held at the sizes the line
shares) and the product fit there. `has_heat(report)` says whether there is a
heat map to draw (two axes). `render/multi_html.py` saves them as SVG,
`render/multi_png.py` as one PNG figure: the same content, drawn once. They
draw what `analyse/multi` computed and compute nothing; every text from
outside goes through `textsafe.mpl_text`. matplotlib is imported inside each
function: the CLI imports the renderers to build its options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quadscope.textsafe import mpl_text
from quadscope.units import fmt_value

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from quadscope.analyse.multi import Line
    from quadscope.analyse.multi_sweep import MultiReport

BRIGHT = 0.6  # viridis turns yellow above this share of its range: dark labels there


def has_heat(report: MultiReport) -> bool:
    return report.verdict is not None and len(report.verdict.axes) == 2


def heat_size(report: MultiReport) -> tuple[float, float]:
    """A heat map's figure size in inches: wide enough for each column's label."""
    assert report.verdict is not None
    rows, cols = report.verdict.axes[0].sizes, report.verdict.axes[1].sizes
    return 1.2 + 0.9 * len(cols), 1.0 + 0.55 * len(rows)


def draw_heat(fig: Figure, ax: Axes, report: MultiReport) -> None:
    import numpy as np
    from matplotlib.colors import LogNorm

    v = report.verdict
    assert v is not None and len(v.axes) == 2
    rows, cols = v.axes[0].sizes, v.axes[1].sizes
    grid = np.full((len(rows), len(cols)), np.nan)
    for sizes, median in v.points:
        grid[rows.index(sizes[0]), cols.index(sizes[1])] = median
    shown = grid[np.isfinite(grid)]
    lo_v, hi_v = float(shown.min()), float(max(shown.max(), shown.min() * 1.001))
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis",
                      norm=LogNorm(vmin=lo_v, vmax=hi_v))
    ax.set_xticks(range(len(cols)), [f"{c:,}" for c in cols], rotation=45)
    ax.set_yticks(range(len(rows)), [f"{r:,}" for r in rows])
    ax.set_xlabel(mpl_text(v.axes[1].axis))
    ax.set_ylabel(mpl_text(v.axes[0].axis))
    lo, hi = np.log(lo_v), np.log(hi_v)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if np.isfinite(grid[i, j]):
                bright = (np.log(grid[i, j]) - lo) / (hi - lo) > BRIGHT
                ax.text(j, i, fmt_value(report.metric, float(grid[i, j])), ha="center",
                        va="center", fontsize=7, color="black" if bright else "white")
    bar = fig.colorbar(image, ax=ax, label=report.metric)
    _unit_ticks(bar.ax.yaxis, report.metric)
    ax.set_title(f"median {report.metric} per point", fontsize=10)


def _unit_ticks(axis: Any, metric: str) -> None:
    """1, 2 and 5 of each decade, labelled in the metric's unit (20 ms, not 2×10⁻²): a
    range within one decade still gets several labelled ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=8))
    axis.set_major_formatter(FuncFormatter(lambda y, _: fmt_value(metric, y)))
    axis.set_minor_formatter(NullFormatter())


def draw_line(ax: Axes, report: MultiReport, line: Line) -> None:
    ax.loglog(line.sizes, line.medians, "o", label="median")
    ax.loglog(line.sizes, line.fitted, "-", label="product fit")
    ax.set_xticks(line.sizes, [f"{x:,}" for x in line.sizes])
    _unit_ticks(ax.yaxis, report.metric)
    ax.minorticks_off()
    ax.set_xlabel(mpl_text(line.axis))
    ax.set_ylabel(report.metric)
    fixed = ", ".join(f"{mpl_text(n)} = {s:,}" for n, s in line.fixed)
    ax.set_title(f"along {mpl_text(line.axis)} ({fixed})", fontsize=9)
    ax.legend(fontsize=8)


__all__ = ["draw_heat", "draw_line", "has_heat", "heat_size"]
