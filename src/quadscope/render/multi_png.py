"""A sweep over several sizes as one PNG: the HTML page's plots in one matplotlib figure.

Contract: `png_files(report, dpi=) -> {file name: PNG bytes}` holds one file,
`<metric>.png` (e.g. `wall_s.png`): the verdict sentence as its title, the
heat map of the median cost over the first two axes (two axes only) on the
left, and one log-log plot per axis beside it, drawn by `render/multi_plots.py`
exactly as the HTML page draws them; empty when nothing was fitted (the CLI
then says no file was written). The figure is a `matplotlib.figure.Figure` on
its own Agg canvas (no pyplot state); text from outside through `mpl_text`.
"""

from __future__ import annotations

import io
import textwrap

from quadscope.analyse.multi_sweep import MultiReport
from quadscope.render.safe import safe_name
from quadscope.textsafe import mpl_text


def png_files(report: MultiReport, *, dpi: int = 110) -> dict[str, bytes]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from quadscope.render.multi_html import headline
    from quadscope.render.multi_plots import draw_heat, draw_line, has_heat, heat_size

    v = report.verdict
    if v is None:
        return {}
    heat = has_heat(report)
    heat_w, heat_h = heat_size(report) if heat else (0.0, 0.0)
    lines = len(v.lines)
    rows = (lines + 1) // 2 if lines > 2 else 1
    cols = min(lines, 2)
    width = heat_w + 4.6 * cols
    height = max(heat_h, 3.6 * rows) + 0.8
    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    # Room between panels: the heat map's colour-bar label and the next plot's y label.
    fig.get_layout_engine().set(wspace=0.08)  # type: ignore[union-attr, call-arg]
    title = "\n".join(textwrap.wrap(mpl_text(headline(report)), int(width * 13)))
    fig.suptitle(title, fontsize=10, ha="left", x=0.01)
    grid = fig.add_gridspec(rows, cols + (1 if heat else 0),
                            width_ratios=([heat_w] if heat else []) + [4.6] * cols)
    if heat:
        draw_heat(fig, fig.add_subplot(grid[:, 0]), report)
    for k, line in enumerate(v.lines):
        draw_line(fig.add_subplot(grid[k // 2 if lines > 2 else 0,
                                       (k % 2 if lines > 2 else k) + (1 if heat else 0)]),
                  report, line)
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "quadscope"})
    return {f"{safe_name(report.metric)}.png": buf.getvalue()}


__all__ = ["png_files"]
