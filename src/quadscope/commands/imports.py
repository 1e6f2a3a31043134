"""`quadscope import FILE`: hyperfine or pytest-benchmark JSON stored as sweeps, then reported.

Contract: reads FILE (`interop.read_sweeps` knows the formats), stores each
sweep it holds with all its runs, then fits and prints each like `quadscope
show` and judging `--fail-above` on each (the worst exit code wins), then
writes the output options' files of every sweep it stored
(`commands.several`: one page, markdown or JUnit document for them all, the
summary first; one file per sweep for the other formats); the sweeps are
then compared, reported and followed by `history` like any other. A file
that cannot be read (bounded: `jsonfile.read_json`), is not one of the
formats, or holds a number that is not a time, an exit code or a size, is
one sentence, exit 2, and nothing of it is stored; each sweep is stored with
all its runs in one transaction (`Store.store_sweep`). `--name` is checked as
`run --name` is; names and paths from the file are printed made visible.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from quadscope.commands.common import (
    add_output_options,
    add_store_option,
    add_view_options,
    check_outputs,
    open_store,
)
from quadscope.commands.gates import add_gate_option, check_gates
from quadscope.jsonfile import read_json
from quadscope.notice import notice
from quadscope.run.spec import check_name
from quadscope.textsafe import visible


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import",
        description="Reads `hyperfine --parameter-scan N ... --export-json FILE` or "
        "`pytest --benchmark-json FILE` (rounds included with --benchmark-save-data) and "
        "stores it as sweeps, fitted and reported like any other.")
    p.add_argument("file", metavar="FILE", help="the JSON file to import")
    p.add_argument("--param", metavar="NAME", default=None,
                   help="the parameter that is n, when the file has several numeric ones")
    p.add_argument("--name", default="", help="store the sweep under this name [from the file]")
    add_store_option(p)
    add_output_options(p)
    add_view_options(p)  # -v / --quiet, for each sweep's report as for `show`
    add_gate_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from quadscope.analyse.brief import KEY, brief
    from quadscope.analyse.gate import parse_gates, worst_exit
    from quadscope.commands.common import analyse_stored, print_analysis
    from quadscope.commands.several import check_several, write_several
    from quadscope.interop import read_sweeps
    from quadscope.model import Run

    check_name(args.name)
    check_outputs(args)
    parse_gates(args.fail_above)  # a bad gate is refused before anything is stored
    data = read_json(args.file, args.file)
    # Every number is checked here, before the store is opened: a bad file stores nothing.
    imported = read_sweeps(data, source=args.file, now=time.time(), param=args.param)
    check_several(args, len(imported))
    code = 0
    with open_store(args) as store:
        analyses = []
        for i, item in enumerate(imported):
            sweep = item.sweep
            if args.name:
                sweep = dataclasses.replace(sweep, name=args.name if len(imported) == 1
                                            else f"{args.name}:{sweep.name}")
            repeats: dict[int, int] = {}
            runs = []
            for seq, (n, m) in enumerate(item.runs):
                repeats[n] = repeats.get(n, -1) + 1
                runs.append(Run(sweep_id=0, seq=seq, variant="A", size_n=n, repeat=repeats[n],
                                warmup=False, started_at=sweep.created_at, measurement=m))
            # One transaction: a store that fails part way keeps nothing of this sweep.
            stored = store.store_sweep(sweep, runs)
            notice(f"imported sweep {stored.id} ({visible(stored.name)}, {len(item.runs)} runs "
                   f"at {len(repeats)} sizes) from {visible(args.file)}")
            analysis = analyse_stored(store, stored)
            store.put_blob(stored.id, KEY, brief(analysis, len(runs)).to_dict())  # for `list`
            print_analysis(analysis, args, gap=i > 0)  # a blank line between reports
            code = worst_exit((code, check_gates(args, analysis)))
            analyses.append(analysis)
        if analyses:
            write_several(args, analyses)
    return code
