"""A against B over several sizes as terminal text and JSON: draws `MultiComparison`.

Contract: `terminal(comp, width=80) -> str`, every line at most `width`
columns: the two sweeps, the headline (wrapped), one row per size (A's class
and exponent with its 95% interval, B's, and the change), for two axes whose
grid fits the width the B/A ratio per shared point as a table (rows: the
first axis), then each side's own verdict sentence and each sweep's note on
counting the work (which says why the metric is time where it is). `to_json(comp) -> bytes`
is the document (`format` quadscope.multi-compare/1: both sweeps, the metric,
the headline, per-axis change with both sides' exponents, intervals and
classes, and every shared point's ratio with its interval). It computes
nothing; every text from outside (commands, axis names) goes through `textsafe`.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from quadscope.analyse.multi_compare import MultiComparison, class_text
from quadscope.analyse.multi_sweep import MultiReport
from quadscope.render.safe import finite
from quadscope.textsafe import command_text, shorten, visible

SCHEMA = "quadscope.multi-compare/1"


def _side(label: str, r: MultiReport, width: int) -> str:
    sw = r.sweep
    cmd = sw.vs_command if r.variant == "B" and sw.vs_command else sw.command
    shell = sw.vs_shell if r.variant == "B" and sw.vs_command else sw.shell
    head = f"{label}: sweep {sw.id}" + (" (--vs)" if r.variant == "B" else "") + ": "
    return shorten(head + visible(command_text(cmd, shell)), width)


def _k(a: Any) -> str:
    return f"{a.exponent:.2f} [{a.interval[0]:.2f}, {a.interval[1]:.2f}]"


def _grid(comp: MultiComparison, width: int) -> list[str]:
    if len(comp.a.sweep.axes) != 2 or not comp.ratios:
        return []
    cell = {r.sizes: f"{r.ratio:.3g}×" for r in comp.ratios}
    rows = sorted({s[0] for s in cell})
    cols = sorted({s[1] for s in cell})
    head = max(len(f"{r:,}") for r in rows)
    col_w = max([len(t) for t in cell.values()] + [len(f"{c:,}") for c in cols]) + 2
    names = [visible(n) for n in comp.a.sweep.axis_names]
    if head + 2 + col_w * len(cols) > width:
        return [shorten(f"  ({len(cols)} columns of {names[1]} do not fit {width} columns: "
                        "see --json)", width)]
    out = [shorten(f"  B/A of {comp.metric} per shared point ({names[0]} down, {names[1]} "
                   "across):", width),
           " " * (head + 2) + "".join(f"{c:,}".rjust(col_w) for c in cols)]
    for r in rows:
        out.append(f"{r:,}".rjust(head + 2)
                   + "".join(cell.get((r, c), "·").rjust(col_w) for c in cols))
    return out


def terminal(comp: MultiComparison, width: int = 80) -> str:
    lines = [_side("A", comp.a, width), _side("B", comp.b, width), ""]
    lines += textwrap.wrap(f"{comp.metric}: {visible(comp.summary)}", width,
                           subsequent_indent="  ")
    if comp.axes:
        size_w = min(10, max(4, *(len(visible(c.axis)) for c in comp.axes)))
        cls_w = min(16, max(7, *(len(visible(class_text(v))) for c in comp.axes
                                 for v in (c.a, c.b))))
        # The intervals go first when the row would not fit: each side's k stays.
        wide = 2 + size_w + 2 * (2 + cls_w + 2 + 17) + 2 + len("undecided") <= width
        k_w = 17 if wide else 5

        def k(a: Any) -> str:
            return _k(a) if wide else f"{a.exponent:.2f}"

        row = f"  {{:<{size_w}}}  {{:<{cls_w}}}  {{:<{k_w}}}  {{:<{cls_w}}}  {{:<{k_w}}}  {{}}"
        lines += ["", shorten(row.format("size", "class A", "k A [95%]" if wide else "k A",
                                         "class B", "k B [95%]" if wide else "k B", "change"),
                              width)]
        for c in comp.axes:
            lines.append(shorten(row.format(
                shorten(visible(c.axis), size_w), shorten(visible(class_text(c.a)), cls_w),
                k(c.a), shorten(visible(class_text(c.b)), cls_w), k(c.b), c.direction),
                width))
    grid = _grid(comp, width)
    if grid:
        lines += ["", *grid]
    for label, r in (("A", comp.a), ("B", comp.b)):
        said = r.verdict.sentence if r.verdict else f"nothing fitted: {r.refusal}"
        lines += [""] if label == "A" else []
        lines += textwrap.wrap(f"{label}: {visible(said)}", width, subsequent_indent="   ")
    # Why the work was (or was not) counted: it says which metric the sides share.
    notes = side_notes(comp.a.sweep.counters_note, comp.b.sweep.counters_note)
    lines += [""] if notes else []
    for note in notes:
        lines += textwrap.wrap(f"note: {visible(note)}", width, subsequent_indent="  ")
    return "\n".join(lines) + "\n"


def side_notes(a: str, b: str) -> list[str]:
    """Each side's note on its counters, said once: "A and B: …" when they are the same,
    else "A: …" and "B: …" (a note on its own names no side it belongs to)."""
    if a == b:
        return [f"A and B: {a}"] if a else []
    return [f"{side}: {note}" for side, note in (("A", a), ("B", b)) if note]


def to_json(comp: MultiComparison) -> bytes:
    def side(r: MultiReport) -> dict[str, Any]:
        return {"sweep": r.sweep.to_dict(), "variant": r.variant, "runs": r.n_runs,
                "failed": r.n_failed,
                **({"verdict": r.verdict.sentence} if r.verdict else {"refusal": r.refusal})}

    doc = {"format": SCHEMA, "a": side(comp.a), "b": side(comp.b), **comp.to_dict()}
    return (json.dumps(finite(doc), indent=2, allow_nan=False) + "\n").encode()


__all__ = ["SCHEMA", "side_notes", "terminal", "to_json"]
