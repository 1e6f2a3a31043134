"""The table `quadscope history` prints: one line per sweep, fitted to the terminal.

Contract: `history_table(history, width) -> rich Table` is never wider than
`width` and wraps no cell. At 80 columns it shows each sweep's commit (7
characters), class, exponent, cost at the reference n and what changed there
in short ("n → n²; ×14.9"), and the commit's subject in the room left (cut
at its end with "…", dropped below `MIN_SUBJECT` characters). Wider
terminals add, in this order (`UPGRADES`), the 95% intervals of k and of the
cost and the change in words ("class n → n²; cost ×14.9") where the subject
keeps `ROOMY_SUBJECT` characters, then the commit's ten characters, the
sweep's id, its date and its branch where it stays whole. `mark(point, short)` is the change
cell. Branch names and subjects are the user's: made visible
(`textsafe.visible`) and put in a `Text`, never parsed as markup.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quadscope.textsafe import visible

if TYPE_CHECKING:
    from rich.table import Table

    from quadscope.analyse.history import History, HistoryPoint

MIN_SUBJECT = 12
ROOMY_SUBJECT = 30
_BORDER = 3  # a column's padding (one each side) and its border on the right
# What a wider terminal adds, in order: each a set of options `_cells` reads.
UPGRADES = ("intervals", "words", "long_commit", "sweep", "when", "branch")
ROOMY_UPGRADES = 2  # the first UPGRADES leave the subject ROOMY_SUBJECT; the rest, whole


def mark(p: HistoryPoint, short: bool = False) -> str:
    """What changed at this point: "class n → n²; cost ×14.9" ("n → n²; ×14.9" `short`)."""
    parts = []
    if p.class_changed:
        parts.append(p.class_changed if short else f"class {p.class_changed}")
    if p.step is not None:
        parts.append(f"×{p.step:.3g}" if short else f"cost ×{p.step:.3g}")
    return "; ".join(parts)


def commit_label(p: HistoryPoint, chars: int = 10) -> str:
    return (p.commit[:chars] or "—") + ("+dirty" if p.dirty else "")


def _cells(p: HistoryPoint, metric: str, opts: frozenset[str]) -> dict[str, str]:
    from quadscope.analyse.history import growth_label
    from quadscope.units import fmt_value

    wide = "intervals" in opts
    k = "—" if p.exponent is None or p.exponent_ci is None else f"{p.exponent:.2f}" + (
        f" [{p.exponent_ci[0]:.2f}, {p.exponent_ci[1]:.2f}]" if wide else "")
    cost = "—" if p.cost is None else fmt_value(metric, p.cost) + (
        f" [{fmt_value(metric, p.cost_lo or 0)}, {fmt_value(metric, p.cost_hi or 0)}]"
        if wide else "")
    return {
        "sweep": str(p.sweep_id),
        "commit": commit_label(p, 10 if "long_commit" in opts else 7),
        "branch": visible(p.branch),
        "when": dt.datetime.fromtimestamp(p.created_at).strftime("%Y-%m-%d %H:%M"),
        "class": growth_label(p), "k [95%]" if wide else "k": k,
        "cost at n [95%]" if wide else "cost at n": cost,
        "change": mark(p, short="words" not in opts),
        "subject": visible(p.subject),
    }


def _columns(opts: frozenset[str], subjects: bool) -> list[str]:
    wide = "intervals" in opts
    cols = [c for c, o in (("sweep", "sweep"), ("commit", ""), ("when", "when"),
                           ("branch", "branch")) if not o or o in opts]
    cols += ["class", "k [95%]" if wide else "k", "cost at n [95%]" if wide else "cost at n",
             "change"]
    return [*cols, "subject"] if subjects else cols


def _width(cols: Sequence[str], rows: Sequence[dict[str, str]]) -> int:
    """The table's width without the subject's cells (their border counted)."""
    return 1 + sum(max([len(c), *(len(r[c]) for r in rows)]) + _BORDER for c in cols
                   if c != "subject") + (_BORDER if "subject" in cols else 0)


def _layout(history: History, width: int
            ) -> tuple[list[str], list[dict[str, str]], int]:
    """The columns, their cells and the subject's width (0: no subject column)."""
    subjects = any(p.subject for p in history.points)
    want = max((len(visible(p.subject)) for p in history.points), default=0)

    def trial(opts: frozenset[str]) -> tuple[list[str], list[dict[str, str]], int]:
        rows = [_cells(p, history.metric, opts) for p in history.points]
        cols = _columns(opts, subjects)
        return cols, rows, width - _width(cols, rows)

    opts: frozenset[str] = frozenset()
    cols, rows, room = trial(opts)
    for i, upgrade in enumerate(UPGRADES):
        more = trial(opts | {upgrade})
        keep = min(want, ROOMY_SUBJECT if i < ROOMY_UPGRADES else want)
        if more[2] < (keep if subjects else 0):
            break
        opts = opts | {upgrade}
        cols, rows, room = more
    if subjects and room < MIN_SUBJECT:  # too narrow for a useful subject: its room to the rest
        cols = [c for c in cols if c != "subject"]
        room = 0
    return cols, rows, max(0, min(room, want))


def history_table(history: History, width: int) -> Table:
    """The table of `history`'s points fitted to `width` (see the module docstring)."""
    from rich.table import Table
    from rich.text import Text

    cols, rows, subject = _layout(history, width)
    title = visible(f"{history.name}: {history.metric} at n={history.ref_n}, in "
                    f"{'commit' if history.order == 'git' else 'time'} order")
    table = Table(title=Text(title), title_justify="left")
    for c in cols:
        table.add_column(c, no_wrap=True, overflow="ellipsis",
                         max_width=subject if c == "subject" else None)
    for row in rows:
        if "subject" in cols and len(row["subject"]) > subject:
            row = {**row, "subject": row["subject"][:max(subject - 1, 0)] + "…"}
        table.add_row(*(Text(row[c], style="bold red" if c == "change" and row[c] else "")
                        for c in cols))
    return table


__all__ = ["UPGRADES", "commit_label", "history_table", "mark"]
