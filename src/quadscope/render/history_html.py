"""The history page: one self-contained HTML document of `quadscope history`.

Contract: `history_html(history) -> bytes` returns a complete UTF-8 HTML
page: a plot of the fitted cost at the reference n per sweep in commit order
(log scale, 95% interval bars, changes in red) drawn here as inline SVG, its
labels placed so that none touches a point or another label, and the table the
terminal prints. On a narrow screen the plot and the table scroll sideways in
their boxes rather than shrinking to unreadable text or a word a line. It has no script and loads nothing (its
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
from quadscope.analyse.history import History, HistoryPoint, growth_label
from quadscope.units import fmt_value

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:84em;color:#222;
padding:0 12px}h1{overflow-wrap:anywhere}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;
text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.change td{color:#b00}
.mono{font-family:ui-monospace,monospace}svg text{font-size:11px;fill:#444}
.wide{overflow-x:auto}.wide td{white-space:nowrap}
.wide td.wrap{white-space:normal;min-width:10em}
svg{max-width:100%;min-width:560px;height:auto}"""

_W, _H = 760, 260
_TOP, _BOTTOM, _RIGHT = 48, 48, 16  # margins around the plot area (px)
_INSET = 14  # points keep this far inside the axes, clear of the axis labels (px)
_GAP = 8  # the least space between two labels, or a label and the plot area (px)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _mark(p: HistoryPoint) -> str:
    parts = ([f"class {p.class_changed}"] if p.class_changed else []) + (
        [f"cost ×{p.step:.3g}"] if p.step is not None else [])
    return "; ".join(parts)


def _text_px(text: str, mono: bool = False) -> float:
    """A generous width of `text` at 11 px: DejaVu Sans, the widest common fallback,
    averages 0.64 em a character in numbers and units, its mono face 0.60 em."""
    return len(text) * (6.7 if mono else 7.2)


def _spread(centres: list[tuple[int, float, float]], lo: float, hi: float
            ) -> dict[int, float]:
    """Labels placed so none overlaps another: each (priority, centre, width) is shifted
    inside [lo, hi] and kept only if it clears every label already kept by `_GAP`,
    highest priority (lowest number) first. Returns index → centre of the kept ones."""
    kept: dict[int, tuple[float, float]] = {}
    order = sorted(range(len(centres)), key=lambda j: (centres[j][0], j))
    for j in order:
        _, c, w = centres[j]
        c = min(max(c, lo + w / 2), hi - w / 2)
        a, b = c - w / 2, c + w / 2
        if all(b + _GAP <= a2 or b2 + _GAP <= a for a2, b2 in kept.values()):
            kept[j] = (a, b)
    return {j: (a + b) / 2 for j, (a, b) in kept.items()}


def _plot(history: History) -> str:
    """The cost per sweep on a log axis. Value labels sit left of the y axis, right-aligned,
    and commit labels under the x axis, thinned so no two touch; points keep `_INSET` inside
    both axes, so no label can overlap a point."""
    pts = [(i, p) for i, p in enumerate(history.points) if p.cost]
    if not pts:
        return "<p>No sweep has a positive cost at the reference n to plot.</p>"
    values = [v for _, p in pts for v in (p.cost, p.cost_lo, p.cost_hi) if v and v > 0]
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    count = max(len(history.points) - 1, 1)
    ticks = [(v, fmt_value(history.metric, v)) for v in sorted({min(values), max(values)})]
    left = max(_text_px(t) for _, t in ticks) + 2 * _GAP
    bottom = _H - _BOTTOM

    def x(i: int) -> float:
        return left + _INSET + (_W - _RIGHT - left - 2 * _INSET) * i / count

    def y(v: float) -> float:
        return bottom - _INSET - (bottom - _TOP - 2 * _INSET) * (math.log10(v) - lo) / (hi - lo)

    out = [f"<svg viewBox=\"0 0 {_W} {_H}\" width=\"{_W}\" height=\"{_H}\" role=\"img\" "
           f"aria-label=\"cost at n={history.ref_n} per commit\">",
           f"<polyline points=\"{left:.1f},{_TOP} {left:.1f},{bottom} {_W - _RIGHT},{bottom}\" "
           "fill=\"none\" stroke=\"#999\"/>",
           f"<text x=\"{left:.1f}\" y=\"{_TOP - 20}\">{_e(history.metric)} at n={history.ref_n} "
           "(log scale)</text>"]
    for v, text in ticks:  # the least and the greatest: a plot's height apart, never touching
        out.append(f"<text class=\"tick\" x=\"{left - _GAP:.1f}\" y=\"{y(v):.1f}\" "
                   f"dy=\"0.35em\" text-anchor=\"end\">{_e(text)}</text>")
    line = " ".join(f"{x(i):.1f},{y(p.cost):.1f}" for i, p in pts if p.cost)
    out.append(f"<polyline points=\"{line}\" fill=\"none\" stroke=\"#4a7\"/>")
    for i, p in pts:
        assert p.cost is not None
        colour = "#b00" if _mark(p) else "#264"
        if p.cost_lo and p.cost_hi:
            out.append(f"<line x1=\"{x(i):.1f}\" x2=\"{x(i):.1f}\" y1=\"{y(p.cost_lo):.1f}\" "
                       f"y2=\"{y(p.cost_hi):.1f}\" stroke=\"{colour}\"/>")
        out.append(f"<circle cx=\"{x(i):.1f}\" cy=\"{y(p.cost):.1f}\" r=\"4\" fill=\"{colour}\">"
                   f"<title>{_e(p.commit[:10])} {_e(growth_label(p))} {_e(_mark(p))}</title></circle>")
    # Commit labels: the changes first, then the ends, then the rest; one that would touch
    # a label already placed is left out (the table below lists every sweep).
    names = [p.commit[:7] or str(p.sweep_id) for p in history.points]
    first, last = 0, len(names) - 1
    wanted = [(0 if _mark(p) else 1 if i in (first, last) else 2, x(i), _text_px(names[i], True))
              for i, p in enumerate(history.points)]
    for i, c in sorted(_spread(wanted, 2, _W - 2).items()):
        out.append(f"<text class=\"mono\" x=\"{c:.1f}\" y=\"{bottom + 16}\" "
                   f"text-anchor=\"middle\">{_e(names[i])}</text>")
    out.append("</svg>")
    return "".join(out)


def _cells(history: History) -> Iterable[tuple[list[str], bool]]:
    """Each point's cells in `_HEAD`'s order, and whether it marks a change."""
    for p in history.points:
        k = "—" if p.exponent is None or p.exponent_ci is None else \
            f"{p.exponent:.2f} [{p.exponent_ci[0]:.2f}, {p.exponent_ci[1]:.2f}]"
        cost = "—" if p.cost is None else (
            f"{fmt_value(history.metric, p.cost)} [{fmt_value(history.metric, p.cost_lo)}, "
            f"{fmt_value(history.metric, p.cost_hi)}]")
        when = dt.datetime.fromtimestamp(p.created_at).strftime("%Y-%m-%d %H:%M")
        # The answer (class, k, cost, change) before where and when: at 1280 px the change
        # was scrolled out of sight behind branch, date and machine.
        cells = [str(p.sweep_id), (p.commit[:10] or "—") + ("+dirty" if p.dirty else ""),
                 p.subject, growth_label(p), k, cost, _mark(p), p.branch, when, p.machine]
        yield cells, bool(_mark(p))


# Columns left out when no sweep has a value in them: an empty branch column (bisect's
# detached worktrees) pushed "when" and "machine" behind a scroll bar at 1280 px.
_OPTIONAL = ("branch", "machine")


def _table(history: History) -> str:
    head = ["sweep", "commit", "subject", "class", "k [95%]",
            f"cost at n={history.ref_n} [95%]", "change", "branch", "when", "machine"]
    rows = list(_cells(history))
    keep = [j for j, h in enumerate(head)
            if h not in _OPTIONAL or any(cells[j] for cells, _ in rows)]
    style = {1: "mono", 4: "num", 5: "num", 2: "wrap", 6: "wrap", 9: "wrap"}
    body = "".join(
        ("<tr class=\"change\">" if marked else "<tr>") + "".join(
            f"<td class=\"{style.get(j, '')}\">{_e(cells[j])}</td>" for j in keep) + "</tr>"
        for cells, marked in rows)
    return ("<table><thead><tr>" + "".join(f"<th>{_e(head[j])}</th>" for j in keep)
            + "</tr></thead><tbody>" + body + "</tbody></table>")


def history_html(history: History) -> bytes:
    """The whole page, UTF-8."""
    title = f"{history.name}: {history.metric} across commits"
    order = "git's commit order" if history.order == "git" else "time order (no repository)"
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
        f"n={history.ref_n}.</p>\n<div class=\"wide\">{_plot(history)}</div>\n"
        f"<div class=\"wide\">{_table(history)}</div>\n"
        "</body>\n</html>\n"
    ).encode()
