"""`quadscope report RUN`: the report files of a stored sweep, comparison or doctor run.

Contract: reads the sweep, its runs and its attached results (profile, doctor,
each probe's plot lines) from the store (`common.analyse_stored`), analyses
once and hands the `Analysis` to the renderers the output options ask for;
nothing is re-run. A sweep over several sizes gets its own report, as `export`
writes it (`commands.multi.export_multi`). With no output option it writes `quadscope-<id>` with the
extension of `render.DEFAULT_REPORT` (the HTML page) in the current directory.
"""

from __future__ import annotations

import argparse
from typing import Any

from quadscope import render
from quadscope.commands.common import (
    add_output_options,
    add_store_option,
    analyse_stored,
    asked_outputs,
    open_store,
    write_outputs,
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        description="Reads RUN (an id, a name, or 'last') from the results database and writes "
        "the report files the output options ask for; with none, quadscope-<id>.html.",
    )
    p.add_argument("run", metavar="RUN", help="sweep id, name, or 'last'")
    add_output_options(p)
    add_store_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args, readonly=True)
    sweep = store.get_sweep(args.run)
    if not asked_outputs(args):
        default = render.renderer_class(render.DEFAULT_REPORT)
        setattr(args, default.name, f"quadscope-{sweep.id}{default.extension}")
    if sweep.axes:  # several sizes: their own report, as `export` writes it (commands/multi.py);
        from quadscope.commands.multi import export_multi  # the one-size page read one axis

        return export_multi(args, store, sweep)
    write_outputs(args, analyse_stored(store, sweep))
    return 0
