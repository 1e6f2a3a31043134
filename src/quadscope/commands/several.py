"""The report files of several sweeps at once: `quadscope import` of a file holding several.

Contract: `check_several(args, count)` refuses, before anything is stored, an
output option that would write several documents into standard output (`--json -`
with two sweeps): one sentence naming it. `write_several(args, analyses)` writes
every output option's file: a renderer that declares `renders_several` writes one
document holding every sweep (a summary of their answers first, then a section
each; the gates of every sweep for one that `reads_gates`); any other writes one
file per sweep, the sweep's id before the extension (`out.json` -> `out-12.json`,
a folder renderer's `DIR` -> `DIR/sweep-12`), and says so. With one sweep both are
`common.write_outputs`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope import render
from quadscope.commands.common import STDOUT, asked_outputs, emit, write_output, write_outputs
from quadscope.errors import UsageError

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis


def check_several(args: argparse.Namespace, count: int) -> None:
    """UsageError when `count` sweeps would go to stdout as `count` documents of one option."""
    if count < 2:
        return
    for r, path in asked_outputs(args):
        if path == STDOUT and not r.renders_several:
            raise UsageError(f"{r.flag} - would write {count} documents (one per sweep) into "
                             f"one stream; give a file name instead, and each sweep gets its "
                             f"own file")


def per_sweep_path(r: type[render.Renderer], path: str, sweep_id: int) -> str:
    """Where renderer `r` writes sweep `sweep_id` of several: its id before the extension."""
    if r.folder:
        return str(Path(path) / f"sweep-{sweep_id}")
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{sweep_id}{p.suffix}"))


def write_several(args: argparse.Namespace, analyses: Sequence[Analysis]) -> None:
    """Every output option's file(s) for all of `analyses` (see the contract)."""
    if len(analyses) == 1:
        write_outputs(args, analyses[0])
        return
    check_several(args, len(analyses))
    for r, path in asked_outputs(args):
        if not r.renders_several:
            for a in analyses:
                write_output(r, per_sweep_path(r, path, a.sweep.id), a, args)
            continue
        options: dict[str, Any] = {}
        if r.reads_gates:
            from quadscope.commands.gates import junit_cases

            options["gates"] = [case for a in analyses for case in junit_cases(args, a)]
        make: Callable[..., render.Renderer] = r  # each renderer takes its own options
        emit(r, path, make(**options).render_several(analyses))
