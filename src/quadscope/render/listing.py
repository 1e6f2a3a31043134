"""The table `quadscope list` prints: one line per stored sweep, fitted to the terminal.

Contract: `list_table(title, rows, width) -> rich Table` never wider than
`width` and never wrapping a cell. At 80 columns it shows the sweep's id, its
name (shell-quoted, so it can be pasted after `quadscope show`, and cut in the
middle with "…", where two commands that differ only in their arguments still
differ), the headline verdict in a few words (`analyse.brief`: coloured red
or green when an A/B change is worse or better) and when it was created;
wider terminals add, in this order, its status, its runs and its sizes
where name and verdict keep 30 characters each (`ROOMY`), then its meter,
its kind and its mode where both are left whole (`EXTRAS`). Where the status column does not fit,
a sweep that did not complete says so in its verdict cell ("died: n²").
`middle_cut(text, width)` is the name's cut. Every string in a `Listed` is
the user's or the store's: it is made visible (`textsafe.visible`) and put in
a `Text`, never parsed as markup.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quadscope.textsafe import visible

if TYPE_CHECKING:
    from rich.table import Table

BASE = ("id", "name", "verdict", "when")
EXTRAS = ("status", "runs", "sizes", "meter", "kind", "mode")  # added as the width allows
# What the name and the verdict keep before another column is added, and at the least.
ROOMY = {"name": 30, "verdict": 30}
ROOMY_EXTRAS = 3  # the first EXTRAS that leave ROOMY; the others leave name and verdict whole
SMALLEST = {"name": 12, "verdict": 16}
_BORDER = 3  # a column's padding (one each side) and its border on the right
_STYLE = {"worse": "red", "better": "green"}


@dataclass(frozen=True, slots=True)
class Listed:
    """One stored sweep as `list` shows it; `verdict` "" when none is known."""

    id: int
    name: str
    verdict: str
    direction: str  # the A/B change's ("worse", "better", ...) or ""
    status: str
    runs: int
    sizes: str  # "1k..32k (6)", or "" when none were planned
    meter: str
    kind: str
    mode: str
    created_at: float


def middle_cut(text: str, width: int) -> str:
    """`text` in at most `width` characters: its start and its end kept, "…" between."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = width // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _cells(item: Listed, with_status: bool) -> dict[str, str]:
    verdict = item.verdict or "—"
    if not with_status and item.status != "complete":
        verdict = f"{item.status}: {verdict}" if item.verdict else item.status
    return {
        "id": str(item.id), "name": shlex.quote(visible(item.name)) if item.name else "''",
        "verdict": visible(verdict), "status": item.status, "runs": str(item.runs),
        "sizes": item.sizes or "—", "meter": item.meter, "kind": item.kind, "mode": item.mode,
        "when": dt.datetime.fromtimestamp(item.created_at).strftime("%Y-%m-%d %H:%M"),
    }


def _need(col: str, rows: Sequence[dict[str, str]]) -> int:
    return max([len(col), *(len(r[col]) for r in rows)])


def _layout(rows_of: dict[bool, list[dict[str, str]]], width: int
            ) -> tuple[list[str], dict[str, int]]:
    """The columns to show and the widths of name and verdict (see the module docstring):
    a column beyond `BASE` only where name and verdict still get `ROOMY` characters."""
    def fixed(cols: list[str]) -> int:
        rows = rows_of["status" in cols]
        return sum(_need(c, rows) + _BORDER for c in cols if c not in ROOMY) + 1 + 2 * _BORDER

    def least(cols: list[str], low: dict[str, int]) -> dict[str, int]:
        rows = rows_of["status" in cols]
        return {c: min(_need(c, rows), low[c]) for c in ROOMY}

    whole = {c: 10_000 for c in ROOMY}
    cols = list(BASE)
    for i, extra in enumerate(EXTRAS):
        # status, runs and sizes leave name and verdict ROOMY; the rest only room to be whole
        low = ROOMY if i < ROOMY_EXTRAS else whole
        if fixed([*cols, extra]) + sum(least([*cols, extra], low).values()) > width:
            break
        cols.append(extra)
    rows = rows_of["status" in cols]
    want = {c: _need(c, rows) for c in ROOMY}
    room = least(cols, SMALLEST)
    spare = width - fixed(cols) - sum(room.values())
    if spare < 0:  # narrower than the smallest cells allow: rich cuts the rest
        room = {c: max(4, room[c] + spare // 2) for c in room}
    # The answer first (up to ROOMY), then as much of the name as fits, then the rest.
    for c, upto in (("verdict", ROOMY["verdict"]), ("name", want["name"]),
                    ("verdict", want["verdict"])):
        grow = max(0, min(spare, min(upto, want[c]) - room[c]))
        room[c] += grow
        spare -= grow
    return cols, room


def list_table(title: str, items: Sequence[Listed], width: int) -> Table:
    """The table of `items` fitted to `width` columns (see the module docstring)."""
    from rich.table import Table
    from rich.text import Text

    rows_of = {s: [_cells(i, s) for i in items] for s in (False, True)}
    cols, room = _layout(rows_of, width)
    rows = rows_of["status" in cols]
    table = Table(title=Text(visible(title)), title_justify="left")
    for col in cols:
        table.add_column(col, no_wrap=True, overflow="ellipsis",
                         justify="right" if col in ("id", "runs") else "left")
    for item, row in zip(items, rows, strict=True):
        row = {**row, "name": middle_cut(row["name"], room["name"]),
               "verdict": _end_cut(row["verdict"], room["verdict"])}
        table.add_row(*(Text(row[c], style=_STYLE.get(item.direction, "") if c == "verdict"
                             else "") for c in cols))
    return table


def _end_cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


__all__ = ["BASE", "EXTRAS", "Listed", "list_table", "middle_cut"]
