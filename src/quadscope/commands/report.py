"""`quadscope report RUN`: the HTML page and PNG plots of a stored sweep, comparison or doctor run.

Contract: reads the sweep, its runs and its attached results (profile, doctor)
from the store, calls `analysis.analyse` once and hands the `Analysis` to the
HTML and PNG renderers; nothing is re-run. Doctor probes carry the series of
their small plots (`common.load_extras`). With neither `--html`
nor `--png`, writes `quadscope-<id>.html` in the current directory.
"""

from __future__ import annotations

import argparse
from typing import Any

from quadscope.analyse.analysis import analyse
from quadscope.commands.common import add_store_option, load_extras, open_store, write_outputs


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write an HTML report and/or PNG plots of a stored sweep (nothing is re-run)",
        description="Reads RUN (an id, a name, or 'last') from the results database and writes "
        "a self-contained HTML page (--html) and/or PNG plots (--png DIR).",
    )
    p.add_argument("run", metavar="RUN", help="sweep id, name, or 'last'")
    p.add_argument("--html", metavar="FILE", default=None, help="write the HTML report to FILE")
    p.add_argument("--png", metavar="DIR", default=None, help="write PNG plots into DIR")
    add_store_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    sweep = store.get_sweep(args.run)
    analysis = analyse(sweep, store.runs(sweep.id), extras=load_extras(store, sweep.id))
    if not args.html and not args.png:
        args.html = f"quadscope-{sweep.id}.html"
    write_outputs(args, analysis)
    return 0
