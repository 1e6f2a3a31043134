"""A against B over several sizes as one HTML page, laid out as the one-size A/B report.

Contract: `html(comp) -> bytes` is a self-contained page (`html_page.page`: the
main report's CSS and Content-Security-Policy, no network). The answer first,
as `html_page.report_body` leads an A/B page: the change (`p.change`, red when
some size grows faster in B, green when one grows slower and none faster,
grey otherwise), then each side's own verdict labelled "A:" and "B:" in the
report's banner (`multi_html.tone`), then the facts (both commands, each
sweep's sizes, the metric, each sweep's note on counting). Then the plots
(`render/multi_plots.py`): B/A per shared point as a heat map (two axes), and
per size one log-log plot with A's and B's medians and product fits along
their lines. Then the table: each size's class and exponent interval in A and
in B and the change. It draws `MultiComparison` and computes nothing; every
text from outside is escaped (`textsafe.html_text`, `mpl_text`).
"""

from __future__ import annotations

from collections.abc import Iterator

from quadscope import __version__
from quadscope.analyse.multi_compare import BETTER, WORSE, MultiComparison, class_text
from quadscope.analyse.multi_sweep import MultiReport
from quadscope.render.multi_compare import side_notes
from quadscope.render.multi_html import headline, tone
from quadscope.textsafe import command_text, html_text, visible


def _side(r: MultiReport) -> str:
    sw = r.sweep
    b = r.variant == "B" and sw.vs_command is not None
    return command_text(sw.vs_command or (), sw.vs_shell) if b else command_text(
        sw.command, sw.shell)


def figures(comp: MultiComparison) -> list[tuple[str, str]]:
    """(kind, SVG): B/A per shared point ("heat", two axes), then one plot per size."""
    from matplotlib.figure import Figure

    from quadscope.render.multi_html import svg
    from quadscope.render.multi_plots import draw_grid, draw_lines

    a, b = comp.a.verdict, comp.b.verdict
    if a is None or b is None:
        return []
    out = []
    names = comp.a.sweep.axis_names
    if len(a.axes) == 2 and comp.ratios:
        fig = Figure(figsize=(1.2 + 0.9 * len(a.axes[1].sizes), 1.0 + 0.55 * len(a.axes[0].sizes)))
        draw_grid(fig, fig.add_subplot(), (names[0], a.axes[0].sizes),
                  (names[1], a.axes[1].sizes), {r.sizes: r.ratio for r in comp.ratios},
                  label="B/A", fmt=lambda x: f"{x:.3g}×", title=f"B/A of {comp.metric} per point")
        out.append(("heat", svg(fig)))
    b_lines = {line.axis: line for line in b.lines}
    for line in a.lines:
        fig = Figure(figsize=(4.2, 3.2))
        pair = [("A", line)] + ([("B", b_lines[line.axis])] if line.axis in b_lines else [])
        draw_lines(fig.add_subplot(), comp.metric, pair)
        out.append(("line", svg(fig)))
    return out


def _change_cls(comp: MultiComparison) -> str:
    d = comp.direction
    return f" change-{d}" if d in (WORSE, BETTER) else ""


def body(comp: MultiComparison) -> Iterator[str]:
    e = html_text
    a, b = comp.a.sweep, comp.b.sweep
    title = (f"quadscope — {a.name or 'sweep'} #{a.id} A against B" if a.id == b.id else
             f"quadscope — #{a.id} {a.name} against #{b.id} {b.name}")
    yield f"<header><h1>{e(title)}</h1>"
    yield (f"<p class=\"change{_change_cls(comp)}\" id=\"change\">"
           f"{e(f'{comp.metric}: {comp.summary}')}</p>")
    for label, r, anchor in (("A", comp.a, "verdict"), ("B", comp.b, "verdict-b")):
        yield (f"<p class=\"verdict{tone(r)}\" id=\"{anchor}\">"
               f"{e(f'{label}: {headline(r)}')}</p>")
    yield "<dl class=\"facts\">"
    facts = [("A", _side(comp.a)), ("B", _side(comp.b))]
    facts += [(f"sizes of {n}", ", ".join(f"{s:,}" for s in sizes)) for n, sizes in a.axes]
    facts += [("metric", comp.metric),
              ("runs", f"A {comp.a.n_runs}, B {comp.b.n_runs}"),
              ("shared points", str(len(comp.ratios)))]
    facts += [("note", n) for n in side_notes(a.counters_note, b.counters_note)]
    for k, v in facts:
        cls = " class=\"mono\"" if k in ("A", "B") else ""
        yield f"<dt>{e(k)}</dt><dd{cls}>{e(v)}</dd>"
    yield "</dl></header>"
    plots = figures(comp)
    if plots:
        yield "<h2>Cost over the sizes</h2>"
        yield ("<p class=\"hint\">The heat map is B/A of the medians at each point both "
               "measured; each line plot holds the other sizes fixed and draws A's and B's "
               "medians with their product fits.</p>")
        yield "<div class=\"grid\" id=\"plots\">"
        for kind, fig in plots:
            yield f"<div class=\"mfig {kind}\">{fig}</div>"
        yield "</div>"
    if comp.axes:
        yield "<h2>How each size changed</h2>"
        yield ("<div class=\"wide\"><table><thead><tr><th>size</th><th>class A</th>"
               "<th class=\"num\">k A [95%]</th><th>class B</th><th class=\"num\">k B [95%]</th>"
               "<th>change</th></tr></thead><tbody>")
        for c in comp.axes:
            ka = f"{c.a.exponent:.2f} [{c.a.interval[0]:.2f}, {c.a.interval[1]:.2f}]"
            kb = f"{c.b.exponent:.2f} [{c.b.interval[0]:.2f}, {c.b.interval[1]:.2f}]"
            yield (f"<tr><td>{e(c.axis)}</td><td class=\"cls\">{e(class_text(c.a))}</td>"
                   f"<td class=\"num\">{ka}</td><td class=\"cls\">{e(class_text(c.b))}</td>"
                   f"<td class=\"num\">{kb}</td><td>{e(c.direction)}</td></tr>")
        yield "</tbody></table></div>"


def html(comp: MultiComparison) -> bytes:
    from quadscope.render.html_page import page

    a, b = comp.a.sweep, comp.b.sweep
    parts = [*body(comp),
             f"<footer>quadscope {html_text(__version__)} · report built from the stored "
             "sweeps; nothing was re-run.</footer>"]
    return page(visible(f"quadscope — #{a.id} against #{b.id}"), "\n".join(parts))


__all__ = ["figures", "html"]
