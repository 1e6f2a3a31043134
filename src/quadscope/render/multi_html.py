"""A sweep over several sizes as one HTML page: a heat map of the cost and a plot per axis.

Contract: `html(report) -> bytes` is a self-contained page (no script, no
network): the verdict sentence, the per-axis table, both models, a heat map
of the median cost over the first two axes (log colour scale; points not
measured left blank; each cell labelled with its value) and one log-log plot
per axis: the medians along the axis's line (the other axes at the sizes the
line shares, `analyse.multi.Line`) and the product fit there. Figures are
matplotlib `Figure`s on their own Agg canvas (no pyplot state), inlined as
SVG. Every text from outside is escaped (`textsafe.html_text`, `textsafe.mpl_text`).
"""

from __future__ import annotations

import io

from quadscope.analyse.multi import Line, MultiVerdict
from quadscope.analyse.multi_sweep import MultiReport
from quadscope.render.multi import axis_class_text, sizes_text
from quadscope.textsafe import command_text, html_text, mpl_text
from quadscope.units import fmt_value

_STYLE = ("body{font-family:system-ui,sans-serif;max-width:1200px;margin:1em auto;padding:0 1em}"
          "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}"
          "th{border-bottom:1px solid #999}.figs{display:flex;flex-wrap:wrap;gap:1em}"
          ".verdict{font-size:1.2em;font-weight:600}")


def _svg(fig: object) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")  # type: ignore[attr-defined]
    text = buf.getvalue()
    return text[text.find("<svg"):]


def _heat(report: MultiReport, v: MultiVerdict) -> str:
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    rows, cols = v.axes[0].sizes, v.axes[1].sizes
    grid = np.full((len(rows), len(cols)), np.nan)
    for sizes, median in v.points:
        grid[rows.index(sizes[0]), cols.index(sizes[1])] = median
    fig = Figure(figsize=(1.2 + 0.9 * len(cols), 1.0 + 0.55 * len(rows)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    shown = grid[np.isfinite(grid)]
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis",
                      norm=LogNorm(vmin=shown.min(), vmax=max(shown.max(), shown.min() * 1.001)))
    ax.set_xticks(range(len(cols)), [f"{c:,}" for c in cols], rotation=45)
    ax.set_yticks(range(len(rows)), [f"{r:,}" for r in rows])
    ax.set_xlabel(mpl_text(v.axes[1].axis))
    ax.set_ylabel(mpl_text(v.axes[0].axis))
    lo, hi = np.log(shown.min()), np.log(max(shown.max(), shown.min() * 1.001))
    for i in range(len(rows)):
        for j in range(len(cols)):
            if np.isfinite(grid[i, j]):
                # viridis turns yellow near its top: dark text there
                bright = (np.log(grid[i, j]) - lo) / (hi - lo) > 0.6
                ax.text(j, i, fmt_value(report.metric, float(grid[i, j])), ha="center",
                        va="center", fontsize=7, color="black" if bright else "white")
    fig.colorbar(image, ax=ax, label=report.metric)
    ax.set_title(f"median {report.metric} per point")
    return _svg(fig)


def _line(report: MultiReport, line: Line) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fig = Figure(figsize=(4.2, 3.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.loglog(line.sizes, line.medians, "o", label="median")
    ax.loglog(line.sizes, line.fitted, "-", label="product fit")
    ax.set_xticks(line.sizes, [f"{x:,}" for x in line.sizes])
    # 1, 2 and 5 of each decade, in the metric's unit: a range within one decade
    # still gets several labelled ticks.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=8))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: fmt_value(report.metric, y)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.minorticks_off()
    ax.set_xlabel(mpl_text(line.axis))
    ax.set_ylabel(report.metric)
    fixed = ", ".join(f"{mpl_text(n)} = {s:,}" for n, s in line.fixed)
    ax.set_title(f"along {mpl_text(line.axis)} ({fixed})", fontsize=9)
    ax.legend(fontsize=8)
    return _svg(fig)


def html(report: MultiReport) -> bytes:
    e = html_text
    sw = report.sweep
    parts = [f"<!doctype html><meta charset=utf-8><title>quadscope sweep {sw.id}</title>",
             f"<style>{_STYLE}</style>",
             f"<h1>sweep {sw.id}: <code>{e(command_text(sw.command, sw.shell))}</code></h1>",
             f"<p>{report.n_runs} runs at {len(sw.points)} points"
             f"{f', {report.n_failed} failed' if report.n_failed else ''}</p>"]
    v = report.verdict
    if v is None:
        parts.append(f"<p class=verdict>nothing fitted: {e(report.refusal)}</p>")
        return "\n".join(parts).encode()
    parts.append(f"<p class=verdict>{e(report.metric)}: {e(v.sentence)}</p>")
    rows = "".join(f"<tr><td>{e(a.axis)}</td><td>{a.exponent:.2f}</td>"
                   f"<td>{a.interval[0]:.2f} – {a.interval[1]:.2f}</td><td>{e(axis_class_text(a))}</td>"
                   f"<td>{sizes_text(a.sizes)}</td></tr>"
                   for a in v.axes)
    parts.append("<table><tr><th>size</th><th>exponent</th><th>95% interval</th>"
                 f"<th>class</th><th>sizes</th></tr>{rows}</table>")
    m = v.models
    parts.append(f"<p>AICc: product {e(v.product_text)} {m.product.aicc:.1f}, "
                 f"sum {e(v.sum_text)} {m.additive.aicc:.1f}; separable: {e(v.separable)}</p>")
    figs = ([_heat(report, v)] if len(v.axes) == 2 else []) + [_line(report, li) for li in v.lines]
    parts.append("<div class=figs>" + "".join(f"<div>{f}</div>" for f in figs) + "</div>")
    return "\n".join(parts).encode()
