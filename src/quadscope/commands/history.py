"""`quadscope history NAME`: how a named sweep's growth moved from commit to commit.

Contract: reads every stored sweep called NAME (nothing is re-run), orders
them by git's commit order in --repo (the working directory by default; by
time when it is not a repository), fits each at the reference n
(`analyse.history.reference_n`: the largest size they all measured), and
prints one row per sweep: commit, class, exponent, the fitted cost at the
reference n with its 95% interval, and a mark where the class changed or the
constant stepped (`analyse.history`'s changepoint test). `--html FILE` writes
the same as a self-contained page (`render.history_html`). A name no sweep
has is one sentence and exit 5.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope.commands.common import add_store_option, open_store
from quadscope.errors import UnknownRunError, UsageError
from quadscope.metrics import NAMES as METRICS
from quadscope.textsafe import visible

if TYPE_CHECKING:
    from quadscope.analyse.history import History, HistoryPoint


def register(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        description="Lines up every stored sweep called NAME in git's commit order and marks "
        "where the growth class changed or the constant stepped (a changepoint test).")
    p.add_argument("name", metavar="NAME", help="the --name the sweeps were stored under")
    p.add_argument("--metric", default="wall_s", choices=METRICS, metavar="METRIC",
                   help="the metric to follow [wall_s]")
    p.add_argument("--repo", metavar="DIR", default=None,
                   help="the git repository whose commit order to use [the working directory]")
    p.add_argument("--html", metavar="FILE", default=None, help="also write the history as HTML")
    add_store_option(p)
    p.set_defaults(func=run)


def load_history(store: Any, name: str, metric: str, repo: Path) -> History:
    """The History of every sweep named `name` in `store`, in `repo`'s commit order."""
    from quadscope.analyse.analysis import analyse
    from quadscope.analyse.history import build_history, order_sweeps, reference_n
    from quadscope.measure.provenance import commit_order

    sweeps = [s for s, count in store.list_sweeps()
              if s.name == name and s.kind == "sweep" and count]
    if not sweeps:
        raise UnknownRunError(f"no stored sweep is named {name!r}; `quadscope list` shows them")
    runs = {s.id: store.runs(s.id) for s in sweeps}
    sizes = [sorted({r.size_n for r in runs[s.id]
                     if r.variant == "A" and not r.warmup and r.measurement.ok}) for s in sweeps]
    ref_n = reference_n(sizes)
    commits = commit_order(repo)
    entries = []
    for sweep in order_sweeps(sweeps, commits):
        analysis = analyse(dataclasses.replace(sweep, predict_n=ref_n), runs[sweep.id])
        entries.append((sweep, analysis.fits.get("A", {}).get(metric)))
    return build_history(entries, name=name, metric=metric, ref_n=ref_n,
                         order="git" if commits is not None else "time")


def commit_label(p: HistoryPoint) -> str:
    return (p.commit[:10] or "—") + ("+dirty" if p.dirty else "")


def mark(p: HistoryPoint) -> str:
    """What changed at this point, in words: the class, the constant, or both."""
    parts = []
    if p.class_changed:
        parts.append(f"class {p.class_changed}")
    if p.step is not None:
        parts.append(f"cost ×{p.step:.3g}")
    return "; ".join(parts)


def _history_row(p: HistoryPoint, metric: str, narrow: bool) -> list[str]:
    """One sweep's cells; narrow drops the 95% intervals so the row fits 80 columns."""
    from quadscope.analyse.change import class_label
    from quadscope.units import fmt_value

    k = "—" if p.exponent is None or p.exponent_ci is None else f"{p.exponent:.2f}" + (
        "" if narrow else f" [{p.exponent_ci[0]:.2f}, {p.exponent_ci[1]:.2f}]")
    cost = "—" if p.cost is None else fmt_value(metric, p.cost) + (
        "" if narrow else f" [{fmt_value(metric, p.cost_lo or 0)}, {fmt_value(metric, p.cost_hi or 0)}]")
    when = dt.datetime.fromtimestamp(p.created_at).strftime("%Y-%m-%d %H:%M")
    return [str(p.sweep_id), commit_label(p), p.branch, when, class_label(p.cls), k, cost,
            mark(p)]


def _fitting_columns(heads: list[str], rows: list[list[str]], width: int) -> list[int]:
    """The columns to show: `when`, then `branch`, then `sweep` go first when the terminal is narrow."""
    keep = list(range(len(heads)))
    for drop in (3, 2, 0):
        need = sum(max([len(heads[i]), *(len(r[i]) for r in rows)]) + 3 for i in keep) + 1
        if need <= width:
            break
        keep.remove(drop)
    return keep


def run(args: argparse.Namespace) -> int:
    from rich.console import Console  # here, not at the top: `quadscope --help` stays instant
    from rich.table import Table
    from rich.text import Text

    repo = Path(args.repo) if args.repo else Path.cwd()
    if args.repo and not repo.is_dir():
        raise UsageError(f"--repo {args.repo}: no such directory")
    history = load_history(open_store(args, readonly=True), args.name, args.metric, repo)
    console = Console(highlight=False)
    rows = [_history_row(p, history.metric, console.width < 80) for p in history.points]
    heads = ["sweep", "commit", "branch", "when", "class", "k [95%]", "cost at n", "change"]
    keep = _fitting_columns(heads, rows, console.width)
    title = Text(visible(f"{history.name}: {history.metric} at n={history.ref_n}, in "
                         f"{'commit' if history.order == 'git' else 'time'} order"))
    table = Table(title=title, title_justify="left")
    for i in keep:
        table.add_column(heads[i], no_wrap=True, overflow="ellipsis")
    for p, row in zip(history.points, rows, strict=True):
        # Branch names and sweep names are the user's: shown literally, never as markup.
        cells = [Text(visible(c), style="bold red" if i == 7 and mark(p) else "") for i, c in enumerate(row)]
        table.add_row(*(cells[i] for i in keep))
    console = Console(highlight=False)
    console.print(table)
    if history.order == "time":
        console.print(Text(f"note: {visible(str(repo))} is not a git repository: sweeps are in time order "
                      "(give --repo to order them by commit)", style="dim"))
    if args.html:
        from quadscope.render.history_html import history_html

        try:
            Path(args.html).write_bytes(history_html(history))
        except OSError as exc:
            raise UsageError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        print(f"quadscope: wrote {args.html}", file=sys.stderr)
    return 0
