"""Terminal tables that fit the width: columns dropped, least kept first, until the table fits.

Contract: `Column(header, keep, right)` declares a column; `fit_columns(title, columns, rows,
width)` is a rich `Table` of `rows` no wider than `width` (the columns with the lowest
`keep` go first, never below two); `_line(text, style)` is one unwrapped line. Shared by
`render.terminal` and `render.sizes`, so neither imports the other.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    keep: int  # higher is kept longer when the table must shrink
    right: bool = False


def fit_columns(title: str | None, columns: Sequence[Column],
                rows: Sequence[Sequence[str | Text]], width: int, *,
                say_dropped: bool = False) -> Table:
    """A table of `rows` that fits `width`: the least-kept columns are dropped until it does.

    `say_dropped` puts a caption under a table that lost columns, naming them: -v's fit
    table at 80 columns once dropped a, b, r² and the --predict column without a word."""
    keep = list(range(len(columns)))
    while True:
        table = _table(title, [columns[i] for i in keep], [[r[i] for i in keep] for r in rows])
        if _natural_width(table) <= width or len(keep) <= 2:
            break
        keep.remove(min(keep[1:], key=lambda i: (columns[i].keep, -i)))
    dropped = [c.header for i, c in enumerate(columns) if i not in keep]
    if say_dropped and dropped:
        from rich.text import Text

        table.caption = Text(f"hidden at {width} columns: {', '.join(dropped)}", style="dim")
        table.caption_justify = "left"
    return table


def _table(title: str | None, columns: Sequence[Column],
           rows: Iterable[Sequence[str | Text]]) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text
    table = Table(title=Text(title) if title else None, title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for col in columns:
        table.add_column(col.header, justify="right" if col.right else "left", no_wrap=True,
                         overflow="ellipsis")
    for row in rows:
        table.add_row(*(c if isinstance(c, Text) else Text(c) for c in row))
    return table


def _natural_width(table: Table) -> int:
    from rich.cells import cell_len
    from rich.console import Console
    buf = io.StringIO()
    Console(file=buf, width=1000, color_system=None).print(table)
    return max((cell_len(line.rstrip()) for line in buf.getvalue().splitlines()), default=0)


def _line(text: str, style: str = "") -> Text:
    from rich.text import Text
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")
