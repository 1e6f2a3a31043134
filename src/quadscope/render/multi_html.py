"""A sweep over several sizes as one HTML page, laid out as the one-size report is.

Contract: `html(report) -> bytes` is a self-contained page built by
`html_page.page` (the main report's CSS and Content-Security-Policy; no
network): the answer first, in the header, as the one-size report
(`html_page.report_body`) does: the title, the verdict sentence in the
report's banner (`verdict_tone`: green when every size's class is settled and
none grows faster than linearly, grey while a size is only bracketed or
nothing was fitted, red otherwise), the facts (command, sizes per axis,
points, runs, meter, host); then the plots (`render/multi_plots.py`: the heat
map of the median cost over the first two axes and one log-log plot per
axis, inlined as SVG); then the details: one row per axis (exponent, 95%
interval, class or bracket, sizes) and both models with their AICc. Figures
are matplotlib `Figure`s on their own Agg canvas (no pyplot state). Every text
from outside is escaped (`textsafe.html_text`, `textsafe.mpl_text`).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

from quadscope import __version__
from quadscope.analyse.multi_sweep import MultiReport
from quadscope.classes import REGISTRY
from quadscope.render.multi import axis_class_text, model_rows, sizes_text
from quadscope.textsafe import command_text, html_text, visible

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from quadscope.model import Sweep


def svg(fig: Figure) -> str:
    """A figure as inline SVG, on its own Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.find("<svg"):]


def figures(report: MultiReport) -> list[tuple[str, str]]:
    """(kind, SVG) of every plot: the heat map ("heat", two axes), then one per axis
    ("line"); each figure carries its own title."""
    from matplotlib.figure import Figure

    from quadscope.render.multi_plots import draw_heat, draw_line, has_heat, heat_size

    v = report.verdict
    if v is None:
        return []
    out = []
    if has_heat(report):
        fig = Figure(figsize=heat_size(report))
        draw_heat(fig, fig.add_subplot(), report)
        out.append(("heat", svg(fig)))
    for line in v.lines:
        fig = Figure(figsize=(4.2, 3.2))
        draw_line(fig.add_subplot(), report, line)
        out.append(("line", svg(fig)))
    return out


def tone(report: MultiReport) -> str:
    """The banner's class, as `html_page.verdict_tone` colours a one-size verdict."""
    v = report.verdict
    if v is None or any(not a.growth.settled for a in v.axes):
        return " open"
    calm = all(REGISTRY[a.growth.name or "1"].linear_or_slower for a in v.axes)
    return " calm" if calm else ""


def headline(report: MultiReport) -> str:
    """The banner's sentence: the verdict, or why nothing was fitted."""
    v = report.verdict
    return (f"{report.metric}: {v.sentence}" if v is not None
            else f"nothing fitted: {report.refusal}")


def design_text(sw: Sweep) -> str:
    """"16 points (4x4 sizes, full grid)": the points measured and how they were chosen."""
    grid = "x".join(str(len(s)) for _, s in sw.axes)
    total = 1
    for _, sizes in sw.axes:
        total *= len(sizes)
    how = ("chosen adaptively" if sw.mode == "adaptive" else
           "full grid" if len(sw.points) == total else "lines and corners")
    return f"{len(sw.points)} points ({grid} sizes, {how})"


def facts(report: MultiReport) -> list[tuple[str, str]]:
    """The header's facts (raw text: the caller escapes)."""
    from quadscope.measure.host import shown_host

    sw = report.sweep
    out = [("sweep", f"#{sw.id} {sw.name}".strip()),
           ("command", command_text(sw.command, sw.shell))]
    if sw.vs_command is not None:
        out.append(("vs (B)", command_text(sw.vs_command, sw.vs_shell)))
    out += [(f"sizes of {name}", sizes_text(sizes)) for name, sizes in sw.axes]
    out += [("points", design_text(sw)),
            ("runs", f"{report.n_runs} ({report.n_failed} failed)"),
            ("meter", sw.meter + (f" — {sw.counters_note}" if sw.counters_note else ""))]
    if host := shown_host(sw.host, vs_host=sw.vs_host):
        out.append(("host", host))
    return out


def _details(report: MultiReport) -> Iterator[str]:
    e = html_text
    v = report.verdict
    assert v is not None
    yield "<h2>How the cost grows in each size</h2>"
    yield ("<div class=\"wide\"><table><thead><tr><th>size</th><th class=\"num\">exponent</th>"
           "<th class=\"num\">95% interval</th><th>class</th><th class=\"num\">sizes</th>"
           "</tr></thead><tbody>")
    for a in v.axes:
        cls = "cls" if a.growth.settled else "cls open"
        yield (f"<tr><td>{e(a.axis)}</td><td class=\"num\">{a.exponent:.2f}</td>"
               f"<td class=\"num\">{a.interval[0]:.2f} – {a.interval[1]:.2f}</td>"
               f"<td class=\"{cls}\">{e(axis_class_text(a))}</td>"
               f"<td class=\"num\">{e(sizes_text(a.sizes))}</td></tr>")
    yield "</tbody></table></div>"
    m = v.models
    names = tuple(a.axis for a in v.axes)
    better = "product" if m.product.aicc <= m.additive.aicc else "sum"
    gap = abs(m.product.aicc - m.additive.aicc)
    if v.nested and m.nest is not None:
        better, gap = "lower terms", min(m.product.aicc, m.additive.aicc) - m.nest.aicc
    yield "<h2>Models</h2>"
    yield (f"<p class=\"hint\">AICc: lower fits better ({better} by "
           f"{gap:.1f}); separable: {e(v.separable)}. "
           f"Intervals: {m.n_boot} bootstrap replicates of the runs with the fit's "
           "residuals.</p>")
    yield ("<div class=\"wide\"><table><thead><tr><th>model</th><th class=\"num\">AICc</th>"
           "<th>fit</th>"
           "</tr></thead><tbody>")
    for label, fit, formula in model_rows(v, names):
        yield (f"<tr><td>{e(label)}</td><td class=\"num\">{fit.aicc:.1f}</td>"
               f"<td class=\"mono\">{e(formula)}</td></tr>")
    yield "</tbody></table></div>"


def body(report: MultiReport) -> Iterator[str]:
    """The page's body: header with the answer, plots, details, footer."""
    e = html_text
    sw = report.sweep
    yield f"<header><h1>quadscope — {e(sw.name or 'sweep')} #{sw.id}</h1>"
    yield f"<p class=\"verdict{tone(report)}\" id=\"verdict\">{e(headline(report))}</p>"
    yield "<dl class=\"facts\">"
    for k, val in facts(report):
        cls = " class=\"mono\"" if k in ("command", "vs (B)") else ""
        yield f"<dt>{e(k)}</dt><dd{cls}>{e(val)}</dd>"
    yield "</dl></header>"
    if report.verdict is None:
        return
    yield "<h2>Cost over the sizes</h2>"
    yield ("<p class=\"hint\">The heat map is the median per point measured (blank: not "
           "measured); each line plot holds the other sizes fixed and draws the product "
           "fit through its medians.</p>")
    yield "<div class=\"grid\" id=\"plots\">"
    for kind, svg in figures(report):
        yield f"<div class=\"mfig {kind}\">{svg}</div>"
    yield "</div>"
    yield from _details(report)


def html(report: MultiReport) -> bytes:
    from quadscope.render.html_page import page

    sw = report.sweep
    parts = [*body(report),
             f"<footer>quadscope {html_text(__version__)} · report built from the stored "
             "sweep; nothing was re-run.</footer>"]
    return page(visible(f"quadscope — {sw.name or 'sweep'} #{sw.id}"), "\n".join(parts))


__all__ = ["facts", "figures", "headline", "html", "tone"]
