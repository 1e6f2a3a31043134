"""The history page: one self-contained HTML document of `quadscope history`.

Contract: `history_html(history) -> bytes` returns a complete UTF-8 HTML
page: a plot of the fitted cost at the reference n per sweep in commit order
(log scale, 95% interval bars, changes in red) drawn here as inline SVG, and
the table the terminal prints. It has no script and loads nothing (its
Content-Security-Policy allows only its inline style). Every string from the
store (names, branches, machines, classes) is written with `html.escape`.
It is not in the renderer registry: the registry's renderers take one
sweep's `Analysis`, a history is many sweeps.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from html import escape

from quadscope import __version__
from quadscope.analyse.change import class_label
from quadscope.analyse.history import History, HistoryPoint
from quadscope.units import fmt_value

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;
text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.change td{color:#b00}
.mono{font-family:ui-monospace,monospace}svg text{font-size:11px;fill:#444}
.wide{overflow-x:auto}svg{max-width:100%;height:auto}"""

_W, _H, _PAD = 760, 260, 48


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _mark(p: HistoryPoint) -> str:
    parts = ([f"class {p.class_changed}"] if p.class_changed else []) + (
        [f"cost ×{p.step:.3g}"] if p.step is not None else [])
    return "; ".join(parts)


def _plot(history: History) -> str:
    pts = [(i, p) for i, p in enumerate(history.points) if p.cost]
    if not pts:
        return "<p>No sweep has a positive cost at the reference n to plot.</p>"
    values = [v for _, p in pts for v in (p.cost, p.cost_lo, p.cost_hi) if v and v > 0]
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    count = max(len(history.points) - 1, 1)

    def x(i: int) -> float:
        return _PAD + (_W - 2 * _PAD) * i / count

    def y(v: float) -> float:
        return _H - _PAD + (2 * _PAD - _H) * (math.log10(v) - lo) / (hi - lo)

    out = [f"<svg viewBox=\"0 0 {_W} {_H}\" width=\"{_W}\" height=\"{_H}\" role=\"img\" "
           f"aria-label=\"cost at n={history.ref_n} per commit\">",
           f"<line x1=\"{_PAD}\" y1=\"{_H - _PAD}\" x2=\"{_W - _PAD}\" y2=\"{_H - _PAD}\" "
           "stroke=\"#999\"/>",
           f"<text x=\"{_PAD}\" y=\"{_PAD - 20}\">{_e(history.metric)} at n={history.ref_n} "
           "(log scale)</text>"]
    for v in (min(values), max(values)):
        out.append(f"<text x=\"2\" y=\"{y(v):.1f}\">{_e(fmt_value(history.metric, v))}</text>")
    line = " ".join(f"{x(i):.1f},{y(p.cost):.1f}" for i, p in pts if p.cost)
    out.append(f"<polyline points=\"{line}\" fill=\"none\" stroke=\"#4a7\"/>")
    for i, p in pts:
        assert p.cost is not None
        colour = "#b00" if _mark(p) else "#264"
        if p.cost_lo and p.cost_hi:
            out.append(f"<line x1=\"{x(i):.1f}\" x2=\"{x(i):.1f}\" y1=\"{y(p.cost_lo):.1f}\" "
                       f"y2=\"{y(p.cost_hi):.1f}\" stroke=\"{colour}\"/>")
        out.append(f"<circle cx=\"{x(i):.1f}\" cy=\"{y(p.cost):.1f}\" r=\"4\" fill=\"{colour}\">"
                   f"<title>{_e(p.commit[:10])} {_e(class_label(p.cls))} {_e(_mark(p))}</title></circle>")
        out.append(f"<text x=\"{x(i) - 20:.1f}\" y=\"{_H - _PAD + 16}\" class=\"mono\">"
                   f"{_e(p.commit[:7] or p.sweep_id)}</text>")
    out.append("</svg>")
    return "".join(out)


def _rows(history: History) -> Iterable[str]:
    for p in history.points:
        k = "—" if p.exponent is None or p.exponent_ci is None else \
            f"{p.exponent:.2f} [{p.exponent_ci[0]:.2f}, {p.exponent_ci[1]:.2f}]"
        cost = "—" if p.cost is None else (
            f"{fmt_value(history.metric, p.cost)} [{fmt_value(history.metric, p.cost_lo)}, "
            f"{fmt_value(history.metric, p.cost_hi)}]")
        when = dt.datetime.fromtimestamp(p.created_at).strftime("%Y-%m-%d %H:%M")
        cells = [str(p.sweep_id), (p.commit[:10] or "—") + ("+dirty" if p.dirty else ""),
                 p.branch, when, p.machine, class_label(p.cls), k, cost, _mark(p)]
        cls = " class=\"change\"" if _mark(p) else ""
        yield f"<tr{cls}>" + "".join(
            f"<td class=\"{'mono' if j == 1 else 'num' if j in (6, 7) else ''}\">{_e(c)}</td>"
            for j, c in enumerate(cells)) + "</tr>"


def history_html(history: History) -> bytes:
    """The whole page, UTF-8."""
    title = f"{history.name}: {history.metric} across commits"
    order = "git's commit order" if history.order == "git" else "time order (no repository)"
    head = ("sweep", "commit", "branch", "when", "machine", "class", "k [95%]",
            f"cost at n={history.ref_n} [95%]", "change")
    changes = len(history.changes)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n"
        f"<meta name=\"generator\" content=\"quadscope {_e(__version__)}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n<p>{len(history.points)} sweeps in {_e(order)}; "
        f"{changes} change(s) marked: a class change, or a step in the constant found by "
        "a changepoint test (optimal partitioning, BIC penalty) on the log cost at "
        f"n={history.ref_n}.</p>\n{_plot(history)}\n<div class=\"wide\"><table><thead><tr>"
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr></thead><tbody>" + "".join(_rows(history)) + "</tbody></table></div>\n"
        "</body>\n</html>\n"
    ).encode()
