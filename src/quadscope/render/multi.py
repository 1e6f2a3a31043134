"""A sweep over several sizes as terminal text and JSON: draws `MultiReport`, computes nothing.

Contract: `terminal(report, width=80) -> str` is the report for a terminal,
every line at most `width` columns (80 when piped): the sweep, the verdict
sentence (wrapped), one row per axis (exponent, 95% interval, class or
bracket, sizes), the two models with their AICc, and, for two axes whose grid
fits the width, the median per point as a table (rows: the first axis).
`to_json(report) -> bytes` is the JSON document (`sweep`, `metric`, `runs`,
`failed`, and the verdict's `to_dict()`: per-axis exponents, intervals,
classes, both models, separability), or the refusal. Text from the user (the
command, names) goes through `textsafe`.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from quadscope.analyse.multi import AxisVerdict, MultiVerdict
from quadscope.analyse.multi_sweep import MultiReport
from quadscope.analyse.multiclass import class_label
from quadscope.analyse.multifit import ModelFit
from quadscope.analyse.text import counting_note
from quadscope.meters import exact_metric
from quadscope.model import Sweep
from quadscope.render.safe import finite
from quadscope.textsafe import command_text, shorten, visible
from quadscope.units import fmt_value

SCHEMA = "quadscope.multi/1"


def axis_class_text(a: AxisVerdict) -> str:
    """The axis's class, or its bracket `lo … hi`, labelled with the axis."""
    g = a.growth
    if g.name is not None:
        return class_label(g.name, a.axis)
    return f"{class_label(g.at_least, a.axis)} … {class_label(g.at_most, a.axis)}"


def sizes_text(sizes: tuple[int, ...]) -> str:
    return f"{sizes[0]:,} … {sizes[-1]:,} ({len(sizes)})"


def fit_text(exponents: tuple[float, ...], names: tuple[str, ...], additive: bool) -> str:
    terms = [f"{n}^{e:.2f}" for n, e in zip(names, exponents, strict=True)]
    if additive:
        return "a + " + " + ".join(f"{c}·{t}" for c, t in zip("bcdefgh", terms, strict=False))
    return "a + b·" + "·".join(terms)


def nest_fit_text(exponents: tuple[float, ...], names: tuple[str, ...]) -> str:
    """The product with lower terms: "a + b·rows^2.00·cols^1.00 + c·rows^2.00 + d·cols^1.00"."""
    terms = [f"{n}^{e:.2f}" for n, e in zip(names, exponents, strict=True)]
    return ("a + b·" + "·".join(terms) + " + "
            + " + ".join(f"{c}·{t}" for c, t in zip("cdefgh", terms, strict=False)))


def model_rows(v: MultiVerdict, names: tuple[str, ...]) -> list[tuple[str, ModelFit, str]]:
    """The models every format lists: (words, fit, formula) of the product, the sum and, where
    it was fitted, the product with lower terms."""
    m = v.models
    rows = [(v.product_text, m.product, fit_text(m.product.exponents, names, False)),
            (v.sum_text, m.additive, fit_text(m.additive.exponents, names, True))]
    if m.nest is not None and v.nest_text:
        rows.append((v.nest_text, m.nest, nest_fit_text(m.nest.exponents, names)))
    return rows


def _grid(report: MultiReport, width: int) -> list[str]:
    v = report.verdict
    assert v is not None
    if len(v.axes) != 2:
        return []
    rows, cols = v.axes[0].sizes, v.axes[1].sizes
    cell = {s: val for s, val in v.points}
    head = max(len(f"{r:,}") for r in rows)
    texts = {k: fmt_value(report.metric, x) for k, x in cell.items()}
    col_w = max([len(t) for t in texts.values()] + [len(f"{c:,}") for c in cols]) + 2
    if head + 2 + col_w * len(cols) > width:
        return [f"  ({len(cols)} columns of {visible(v.axes[1].axis)} do not fit {width} columns: "
                "see --json or --html)"]
    down, across = visible(v.axes[0].axis), visible(v.axes[1].axis)
    out = [f"  median {report.metric} per point ({down} down, {across} across):",
           " " * (head + 2) + "".join(f"{c:,}".rjust(col_w) for c in cols)]
    for r in rows:
        line = f"{r:,}".rjust(head + 2)
        line += "".join(texts.get((r, c), "·").rjust(col_w) for c in cols)
        out.append(line)
    if len(cell) < len(rows) * len(cols):
        out.append(f"  · not measured for {report.metric}"
                   + (" (the work is counted at spanning points only)"
                      if report.metric == "instructions" else ""))
    return out


def counted_lines(report: MultiReport, width: int) -> list[str]:
    """The one-size report's note on counting (`text.counting_note`), wrapped: why the work
    was counted after timing, at how many points, and what that cost."""
    note = counting_note(report.sweep, report.runs, exact_metric(report.sweep.meter))
    return textwrap.wrap(visible(note), width, initial_indent="  ",
                         subsequent_indent="  ") if note else []


def _design_words(sw: Sweep) -> str:
    """How the points were chosen: adaptive mode's budget, the full grid, or lines and corners."""
    if sw.mode == "adaptive":
        return f", chosen adaptively within {sw.budget_s or 0:g} s"
    return ", full grid" if len(sw.points) == _product(sw) else ", lines and corners"


def terminal(report: MultiReport, width: int = 80) -> str:
    sw = report.sweep
    names = tuple(visible(n) for n in sw.axis_names)
    cmd = shorten(visible(command_text(sw.command, sw.shell)), max(20, width - 30))
    grid = "x".join(str(len(s)) for _, s in sw.axes)
    lines = [f"sweep {sw.id}: {cmd}",
             f"  {report.n_runs} runs at {len(sw.points)} points ({grid} sizes"
             f"{_design_words(sw)})"
             + (f", {report.n_failed} failed" if report.n_failed else ""),
             ""]
    v = report.verdict
    if v is None:
        lines += textwrap.wrap(f"nothing fitted: {visible(report.refusal)}", width)
        return "\n".join(lines) + "\n"
    lines += textwrap.wrap(f"{report.metric}: {visible(v.sentence)}", width,
                           subsequent_indent="  ")
    lines += counted_lines(report, width)
    lines += ["", f"  {'size':<8}{'exponent':>9}  {'95% interval':<14}{'class':<18}sizes"]
    for a in v.axes:
        lo, hi = a.interval
        lines.append(shorten(f"  {visible(a.axis):<8}{a.exponent:>9.2f}  "
                             f"{f'{lo:.2f} – {hi:.2f}':<14}{visible(axis_class_text(a)):<18}"
                             f"{sizes_text(a.sizes)}", width))
    m = v.models
    better = "product" if m.product.aicc <= m.additive.aicc else "sum"
    gap = abs(m.product.aicc - m.additive.aicc)
    if v.nested and m.nest is not None:
        better, gap = "lower terms", min(m.product.aicc, m.additive.aicc) - m.nest.aicc
    rows = [(visible(label), fit, formula) for label, fit, formula in model_rows(v, names)]
    label_w = min(max(24, width - 50), max(len(r[0]) for r in rows))
    lines += ["", f"  models (AICc: lower fits better; {better} by {gap:.1f}):"]
    for label, fit, formula in rows:
        head = f"    {shorten(label, label_w):<{label_w}}  {fit.aicc:>8.1f}"
        if len(head) + 2 + len(formula) <= width:
            lines.append(f"{head}  {formula}")
        else:  # a long formula (the product with lower terms) goes on its own line
            lines += [head, shorten(f"      {formula}", width)]
    grid_lines = _grid(report, width)
    if grid_lines:
        lines += ["", *grid_lines]
    lines += ["", shorten(f"  intervals: {m.n_boot} bootstrap replicates of the runs "
                          "with the fit's residuals", width)]
    return "\n".join(lines) + "\n"


def _product(sw: Any) -> int:
    total = 1
    for _, sizes in sw.axes:
        total *= len(sizes)
    return total


def to_json(report: MultiReport) -> bytes:
    sw = report.sweep
    doc: dict[str, Any] = {
        "format": SCHEMA,
        "sweep": sw.to_dict(),
        "metric": report.metric,
        "runs": report.n_runs,
        "failed": report.n_failed,
    }
    if report.verdict is None:
        doc["refusal"] = report.refusal
    else:
        doc.update(report.verdict.to_dict())
    return (json.dumps(finite(doc), indent=2, allow_nan=False) + "\n").encode()

