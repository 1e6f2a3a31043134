"""`run` and `show` over several sizes: `--sizes n=SPEC --sizes m=SPEC` read, reported, gated.

Contract (not a sub-command: `run` and `show` call it): `read_sizes(args)`
turns `run`'s repeated `--sizes` into `args.sizes` (the one SPEC of a sweep
over n, as before) and `args.axes` (two or more `run.design.Axis`, else ());
`refuse_other_placeholders(commands)` refuses a one-size program command
holding `{m}`; `refuse_unsupported(args)` refuses, in one sentence, the options a sweep over
several sizes does not take yet (--fleet, output
formats whose renderer does not declare `renders_multi`; with --vs, outputs
other than --json: `commands/multi_compare.py`);
`design_points(args)` is the design (`run/design.py`) within `--max-points`; `finish_multi(args,
store, sweep)` analyses the stored sweep (`analyse/multi_sweep.py`; one run with
--vs goes to `commands/multi_compare.finish_vs`), prints
the terminal report (unless an output goes to stdout), writes every output
asked through its renderer's `render_multi` (`--json`, `--csv`, `--html`,
`--png`, `--markdown`, `--junit`: one testcase per axis gate) and judges
`--fail-above AXIS=CLASS` (or CLASS: every axis), one sentence each on
stderr, returning the exit code (8 a failed gate, 9 an undecided one,
`--strict-gate` making undecided 8). `export_multi(args, store,
sweep)` writes the same outputs without the terminal report or the gates
(`quadscope export`). `refuse_compare(ref, axes)` is the one sentence `compare`
answers a sweep over several sizes with.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT, FitRefusedError, UsageError
from quadscope.model import Sweep
from quadscope.notice import notice
from quadscope.run.design import MAX_POINTS, Axis


def read_sizes(args: argparse.Namespace) -> None:
    """`args.sizes` (str | None) and `args.axes` from the `--sizes` values (module docstring)."""
    from quadscope.run.axes import DEFAULT_AXIS, is_multi, parse_axes

    items = args.sizes if isinstance(args.sizes, list) else (
        [] if args.sizes is None else [args.sizes])
    args.axes = ()
    if not items:
        args.sizes = None
        return
    if len(items) == 1 and "=" not in items[0]:
        args.sizes = items[0]
        return
    axes = parse_axes(items)
    if not is_multi(axes):
        if axes[0].name != DEFAULT_AXIS:
            raise UsageError(f"--sizes {items[0]!r} names one axis; a sweep over one size uses "
                             f"{{n}}: write --sizes {items[0].split('=', 1)[1].strip()} and put "
                             "{n} in the command, or give a second axis")
        args.sizes = items[0].split("=", 1)[1]
        return
    args.sizes = None
    args.axes = axes


def refuse_other_placeholders(commands: Sequence[tuple[tuple[str, ...] | None, bool]]) -> None:
    """A one-size sweep's program arguments holding `{m}` (a placeholder no --sizes gives).

    Shell commands are left alone: `{print}` there is awk's, or the shell's."""
    from quadscope.run.axes import placeholders

    for cmd, shell in commands:
        extra = sorted(placeholders(cmd) - {"n", "i"}) if cmd and not shell else []
        if extra:
            raise UsageError(f"`{' '.join(cmd or ())}` holds {{{extra[0]}}} but no --sizes gives "
                             f"it: add --sizes n=SPEC --sizes {extra[0]}=SPEC for a sweep over "
                             "several sizes")


def refuse_unsupported(args: argparse.Namespace) -> None:
    from quadscope.commands.common import asked_outputs, split_command

    vs = (args.vs is not None or args.vs_shell is not None
          or split_command(args.command)[1] is not None)
    if vs:  # A against B over several sizes (commands/multi_compare.py)
        from quadscope.commands.multi_compare import refuse_outputs

        refuse_outputs(args)
    given = [flag for flag, on in (
        ("--accumulate", args.accumulate),
        ("--fleet", getattr(args, "fleet", None))) if on]
    given += [r.flag for r, _ in asked_outputs(args) if not r.renders_multi]
    if given:
        flags = supported_flags()
        raise UsageError(f"a sweep over several sizes does not take {', '.join(given)} yet; "
                         f"it writes {', '.join(flags[:-1])} and {flags[-1]} and gates with "
                         "--fail-above AXIS=CLASS")


def design_points(args: argparse.Namespace, axes: tuple[Axis, ...]) -> tuple[tuple[int, ...], ...]:
    from quadscope.run.design import design

    budget = getattr(args, "max_points", None) or MAX_POINTS
    if budget < 8:
        raise UsageError(f"--max-points {budget}: at least 8 points are needed to fit the cost "
                         "in several sizes")
    return design(axes, max_points=budget)


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _write(outputs: Sequence[tuple[Any, str]], report: Any, judged: Sequence[Any] = ()) -> None:
    """Each asked output of `report`, by its renderer's `render_multi`; `judged` the axis
    gates' outcomes (for a renderer that reads gates: --junit)."""
    from quadscope.commands.common import emit

    for r, path in outputs:
        emit(r, path, r().render_multi(report, judged))


def supported_flags() -> list[str]:
    """The output options a sweep over several sizes writes (renderers' `renders_multi`)."""
    from quadscope.render import file_renderers

    return [r.flag for r in file_renderers() if r.renders_multi]


def _unsupported(outputs: Sequence[tuple[Any, str]]) -> None:
    unsupported = [r.flag for r, _ in outputs if not r.renders_multi]
    if unsupported:
        flags = supported_flags()
        raise UsageError(f"a sweep over several sizes does not write {', '.join(unsupported)} "
                         f"yet; use {', '.join(flags[:-1])} or {flags[-1]}")


def export_multi(args: argparse.Namespace, store: Any, sweep: Sweep) -> int:
    """`quadscope export` of a sweep over several sizes: its outputs, no report, no gates."""
    from quadscope.analyse.multi_sweep import analyse_multi
    from quadscope.commands.common import asked_outputs

    if sweep.vs_command is not None:  # A against B (commands/multi_compare.py)
        from quadscope.commands.multi_compare import export_vs

        return export_vs(args, store, sweep)
    outputs = asked_outputs(args)
    _unsupported(outputs)
    report = analyse_multi(sweep, store.runs(sweep.id))
    _write(outputs, report)
    if report.verdict is None:
        raise FitRefusedError(f"nothing fitted: {report.refusal}")
    return 0


def refuse_compare(ref: str, axes: Sequence[str]) -> UsageError:
    """The one sentence `compare` answers a sweep over several sizes with."""
    from quadscope.textsafe import visible

    named = f" ({', '.join(map(visible, axes))})" if axes else ""
    return UsageError(f"{visible(ref)} is a sweep over several sizes{named}, which compare does "
                      "not take yet; read each with `quadscope show`")


def finish_multi(args: argparse.Namespace, store: Any, sweep: Sweep,
                 remember: bool = False) -> int:
    """Report, write and gate a stored sweep over several sizes (module docstring);
    `remember` (run's writable store) keeps the verdict `list` shows."""
    from quadscope.analyse.gate import worst_exit
    from quadscope.analyse.multi_sweep import analyse_multi, judge_axis_gates, parse_axis_gates
    from quadscope.commands.common import STDOUT, asked_outputs, terminal_width
    from quadscope.render import multi as text

    if sweep.vs_command is not None:  # A against B (commands/multi_compare.py)
        from quadscope.commands.multi_compare import finish_vs

        return finish_vs(args, store, sweep, remember)
    gates = parse_axis_gates(getattr(args, "fail_above", None) or [], sweep.axis_names)
    outputs = asked_outputs(args)
    _unsupported(outputs)
    runs = store.runs(sweep.id)
    report = analyse_multi(sweep, runs)
    if remember:
        from quadscope.analyse.brief import KEY, Brief
        from quadscope.analyse.multi_sweep import brief_text

        store.put_blob(sweep.id, KEY, Brief(brief_text(report), runs=len(runs)).to_dict())
    if not any(path == STDOUT for _, path in outputs):
        _print(text.terminal(report, terminal_width()))
    judged = judge_axis_gates(report, gates)
    _write(outputs, report, judged)
    if report.verdict is None:  # the terminal report said why; the exit says it to scripts
        raise FitRefusedError(f"nothing fitted: {report.refusal}")
    strict = bool(getattr(args, "strict_gate", False))
    for outcome in judged:
        notice(outcome.sentence)
    return worst_exit(GATE_FAILED_EXIT if strict and o.exit_code == GATE_UNDECIDED_EXIT
                      else o.exit_code for o in judged)
