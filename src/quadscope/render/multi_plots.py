"""The plots of a sweep over several sizes, drawn on matplotlib axes the caller owns.

Contract: `draw_heat(fig, ax, report)` draws the heat map of the median cost
over the first two axes (log colour scale, points not measured left blank,
each cell labelled with its value in the metric's unit, a colour bar);
`draw_line(ax, report, line)` one axis's log-log plot: the medians along the
axis's line (`analyse.multi.Line`: the other axes held at the sizes the line
shares) and the product fit there; `draw_lines` several such lines on one plot
(A and B of a comparison) and `draw_grid` any heat map of values over two
sizes (a comparison's B/A per shared point). `has_heat(report)` says whether there is a
heat map to draw (two axes). `render/multi_html.py` saves them as SVG,
`render/multi_png.py` as one PNG figure: the same content, drawn once. They
draw what `analyse/multi` computed and compute nothing; every text from
outside goes through `textsafe.mpl_text`. matplotlib is imported inside each
function: the CLI imports the renderers to build its options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
    v = report.verdict
    assert v is not None and len(v.axes) == 2
    draw_grid(fig, ax, (v.axes[0].axis, v.axes[0].sizes), (v.axes[1].axis, v.axes[1].sizes),
              dict(v.points), label=report.metric,
              fmt=lambda x: fmt_value(report.metric, x),
              title=f"median {report.metric} per point")


def draw_grid(fig: Figure, ax: Axes, rows: tuple[str, Sequence[int]],
              cols: tuple[str, Sequence[int]], cells: Mapping[tuple[int, ...], float], *,
              label: str, fmt: Callable[[float], str], title: str) -> None:
    """A heat map of `cells` (keyed by (row size, column size)) on a log colour scale, each
    cell labelled `fmt(value)`, blank where there is none; the colour bar in `fmt` too."""
    import numpy as np
    from matplotlib.colors import LogNorm

    (down, rs), (across, cs) = rows, cols
    rs, cs = list(rs), list(cs)
    grid = np.full((len(rs), len(cs)), np.nan)
    for sizes, value in cells.items():
        if sizes[0] in rs and sizes[1] in cs and value > 0:
            grid[rs.index(sizes[0]), cs.index(sizes[1])] = value
    shown = grid[np.isfinite(grid)]
    if shown.size == 0:
        ax.text(0.5, 0.5, "nothing to draw", transform=ax.transAxes, ha="center")
        return
    lo_v, hi_v = float(shown.min()), float(max(shown.max(), shown.min() * 1.001))
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis",
                      norm=LogNorm(vmin=lo_v, vmax=hi_v))
    ax.set_xticks(range(len(cs)), [f"{c:,}" for c in cs], rotation=45)
    ax.set_yticks(range(len(rs)), [f"{r:,}" for r in rs])
    ax.set_xlabel(mpl_text(across))
    ax.set_ylabel(mpl_text(down))
    lo, hi = np.log(lo_v), np.log(hi_v)
    for i in range(len(rs)):
        for j in range(len(cs)):
            if np.isfinite(grid[i, j]):
                bright = (np.log(grid[i, j]) - lo) / (hi - lo) > BRIGHT
                ax.text(j, i, fmt(float(grid[i, j])), ha="center",
                        va="center", fontsize=7, color="black" if bright else "white")
    bar = fig.colorbar(image, ax=ax, label=label)
    _unit_ticks(bar.ax.yaxis, fmt)
    # A figure on its own (--png) has no page around it to say what a blank cell is.
    blank = " (blank: not measured)" if not np.isfinite(grid).all() else ""
    ax.set_title(mpl_text(title) + blank, fontsize=10)


def _unit_ticks(axis: Any, fmt: Callable[[float], str]) -> None:
    """1, 2 and 5 of each decade, labelled by `fmt` (20 ms, not 2×10⁻²): a range within
    one decade still gets several labelled ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=8))
    axis.set_major_formatter(FuncFormatter(lambda y, _: fmt(y)))
    axis.set_minor_formatter(NullFormatter())


def draw_line(ax: Axes, report: MultiReport, line: Line) -> None:
    draw_lines(ax, report.metric, [("", line)])


def draw_lines(ax: Axes, metric: str, lines: Sequence[tuple[str, Line]]) -> None:
    """One axis's log-log plot of one or more (label, line): each line's medians and the
    product fit through them ("A median", "A fit", … when labelled)."""
    colors = ("#1f77b4", "#d62728")
    sizes: set[int] = set()
    for k, (label, line) in enumerate(lines):
        c = colors[k % len(colors)]
        lead = f"{mpl_text(label)} " if label else ""
        ax.loglog(line.sizes, line.medians, "o", color=c, label=f"{lead}median")
        ax.loglog(line.sizes, line.fitted, "-", color=c if label else "#ff7f0e",
                  label=f"{lead}{'fit' if label else 'product fit'}")
        sizes |= set(line.sizes)
    first = lines[0][1]
    ticks = sorted(sizes)
    ax.set_xticks(ticks, [f"{x:,}" for x in ticks])
    _unit_ticks(ax.yaxis, lambda y: fmt_value(metric, y))
    ax.minorticks_off()
    ax.set_xlabel(mpl_text(first.axis))
    ax.set_ylabel(metric)
    fixed = ", ".join(f"{mpl_text(n)} = {s:,}" for n, s in first.fixed)
    ax.set_title(f"along {mpl_text(first.axis)} ({fixed})", fontsize=9)
    ax.legend(fontsize=8)

__all__ = ["draw_grid", "draw_heat", "draw_line", "draw_lines", "has_heat", "heat_size"]
