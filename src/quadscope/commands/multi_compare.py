"""`compare A B` and `run --vs` over several sizes: the comparison printed, written and gated.

Contract (not a sub-command: `compare` and `run` call it). `compare_sweeps(args,
a, b)` takes two loaded (sweep, runs) pairs of which at least one is over
several sizes: it refuses, in one sentence, a pair over different sizes (a
sweep over one size against one over several, or other axis names), and
outputs other than --json, --html and --csv (both sides' runs); else fits both on a metric both measured
(`analyse.multi_compare.shared_metric`), prints the comparison
(`render/multi_compare.py`) unless an output goes to stdout, writes --json
and --html (`render/multi_compare_html.py`), and
judges `--fail-on` per axis (`analyse.multi_compare.decide`), one sentence
each on stderr: exit 8 when B surely grows faster than A in some size, 9 when
it cannot tell, 0 otherwise. `finish_vs(args, store, sweep, remember=)` is
the same for a sweep run with `--vs` (A and B in one sweep), plus
`--fail-above AXIS=CLASS` judged on A, and `export_vs` its outputs alone
(`quadscope export`); `remember` keeps `list`'s brief
(`brief(sweep, runs)`: "worse: n·m → n²·m"). `refuse_outputs(args)` is the
check `run` makes before a sweep with --vs starts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from quadscope.errors import GATE_FAILED_EXIT, FitRefusedError, UsageError
from quadscope.notice import notice
from quadscope.textsafe import visible

if TYPE_CHECKING:
    from quadscope.analyse.brief import Brief
    from quadscope.analyse.multi_compare import MultiComparison
    from quadscope.model import Run, Sweep

OUTPUTS = ("json", "html", "csv")


def refuse_outputs(args: argparse.Namespace, vs: bool = True) -> None:
    """A comparison over several sizes writes --json, --html and --csv yet: refuse the others.
    `vs`: A and B are one sweep's (--vs), which `show` does not split."""
    from quadscope.commands.common import asked_outputs

    other = [r.flag for r, _ in asked_outputs(args) if r.name not in OUTPUTS]
    if other:
        where = ("sweep each command on its own and `quadscope show` writes its " if vs
                 else "`quadscope show A` and `show B` write each side's ")
        raise UsageError(f"a comparison over several sizes writes --json, --html and --csv, not "
                         f"{', '.join(other)} yet; {where}{', '.join(other)}")


def _fail_on(args: argparse.Namespace, metric: str) -> list[Any]:
    from quadscope.analyse.ab_gate import parse_fail_on

    rules = parse_fail_on(getattr(args, "fail_on", None) or [])
    for rule in rules:
        named = [m for m in rule.metrics if m != metric]
        if rule.kind == "class" and named:
            raise UsageError(f"--fail-on class={','.join(rule.metrics)}: this comparison "
                             f"over several sizes fits {metric} alone; use --fail-on class")
    return rules


def compare_pair(a: tuple[Sweep, Sequence[Run], str],
                 b: tuple[Sweep, Sequence[Run], str]) -> MultiComparison:
    """Both sides fitted on one metric, then compared (each: sweep, runs, variant)."""
    from quadscope.analyse.multi_compare import compare_multi, shared_metric
    from quadscope.analyse.multi_sweep import analyse_multi

    metric = shared_metric(*a, *b)
    ra = analyse_multi(a[0], a[1], variant=a[2], metric=metric)
    rb = analyse_multi(b[0], b[1], variant=b[2], metric=metric)
    return compare_multi(ra, rb, seed=a[0].seed)


def _report(args: argparse.Namespace, comp: MultiComparison, terminal_too: bool = True) -> None:
    from quadscope.commands.common import STDOUT, asked_outputs, emit, terminal_width
    from quadscope.render import multi_compare_html
    from quadscope.render.multi_compare import terminal, to_json

    outputs = asked_outputs(args)
    if terminal_too and not any(path == STDOUT for _, path in outputs):
        width = terminal_width()
        sys.stdout.write(terminal(comp, width))
        sys.stdout.flush()
    for r, path in outputs:
        emit(r, path, multi_compare_html.html(comp) if r.name == "html" else
             _csv(comp) if r.name == "csv" else to_json(comp))


def _csv(comp: MultiComparison) -> bytes:
    """Both sides' runs (one sweep's once: with --vs its rows say A or B)."""
    from quadscope.render.multi_csv import runs_csv

    sides = [(comp.a.sweep, comp.a.runs)]
    if comp.b.sweep.id != comp.a.sweep.id:
        sides.append((comp.b.sweep, comp.b.runs))
    return runs_csv(comp.a.sweep.axis_names, sides)


def _judge(rules: Sequence[Any], comp: MultiComparison) -> int:
    from quadscope.analyse.ab_gate import exit_code
    from quadscope.analyse.multi_compare import decide

    outcomes = decide(comp, rules)
    for o in outcomes:
        notice(f"gate {o.outcome}: {visible(o.sentence)}")
    return exit_code(outcomes)


def compare_sweeps(args: argparse.Namespace, a: tuple[Sweep, list[Run]],
                   b: tuple[Sweep, list[Run]]) -> int:
    """`quadscope compare A B` where a side is over several sizes (module docstring)."""
    from quadscope.analyse.multi_compare import check_axes

    refused = check_axes(a[0].axis_names, b[0].axis_names)
    if refused:
        raise UsageError(visible(refused))
    refuse_outputs(args, vs=False)
    comp = compare_pair((a[0], a[1], "A"), (b[0], b[1], "A"))
    rules = _fail_on(args, comp.metric)
    _report(args, comp)
    if not comp.axes and not rules:
        raise FitRefusedError(visible(comp.summary))
    return _judge(rules, comp)


def brief(sweep: Sweep, runs: Sequence[Run], comp: MultiComparison | None = None) -> Brief:
    """`list`'s words for a sweep over several sizes run with --vs: the change and the
    models ("worse: n·m → n²·m"); `comp` its comparison when already made."""
    from quadscope.analyse.brief import Brief
    from quadscope.analyse.multi_sweep import brief_text

    comp = comp or compare_pair((sweep, runs, "A"), (sweep, runs, "B"))
    # Brief's words for a change: "undecided" is its "unclear".
    direction = {"undecided": "unclear"}.get(comp.direction, comp.direction) if comp.axes else ""
    text = f"{brief_text(comp.a)} → {brief_text(comp.b)}"
    return Brief(f"{direction}: {text}" if direction else text, direction, runs=len(runs))


def export_vs(args: argparse.Namespace, store: Any, sweep: Sweep) -> int:
    """`quadscope export` of a sweep over several sizes run with --vs: the comparison's
    outputs, no terminal report, no gates."""
    refuse_outputs(args)
    runs = store.runs(sweep.id)
    comp = compare_pair((sweep, runs, "A"), (sweep, runs, "B"))
    _report(args, comp, terminal_too=False)
    if not comp.axes:
        raise FitRefusedError(visible(comp.summary))
    return 0


def finish_vs(args: argparse.Namespace, store: Any, sweep: Sweep, remember: bool = False) -> int:
    """`run --vs` (or `show`) of a sweep over several sizes with a B (module docstring)."""
    from quadscope.analyse.gate import worst_exit
    from quadscope.analyse.multi_sweep import judge_axis_gates, parse_axis_gates
    from quadscope.errors import GATE_UNDECIDED_EXIT

    gates = parse_axis_gates(getattr(args, "fail_above", None) or [], sweep.axis_names)
    refuse_outputs(args)
    runs = store.runs(sweep.id)
    comp = compare_pair((sweep, runs, "A"), (sweep, runs, "B"))
    rules = _fail_on(args, comp.metric)
    if remember:
        from quadscope.analyse.brief import KEY

        store.put_blob(sweep.id, KEY, brief(sweep, runs, comp).to_dict())
    _report(args, comp)
    if not comp.axes and not rules:
        raise FitRefusedError(visible(comp.summary))
    strict = bool(getattr(args, "strict_gate", False))
    judged = judge_axis_gates(comp.a, gates)
    for outcome in judged:
        notice(outcome.sentence)
    code = worst_exit(GATE_FAILED_EXIT if strict and o.exit_code == GATE_UNDECIDED_EXIT
                      else o.exit_code for o in judged)
    ab = _judge(rules, comp)
    return max(code, ab, key=lambda c: (c == GATE_FAILED_EXIT, c))


__all__ = ["brief", "compare_pair", "compare_sweeps", "export_vs", "finish_vs",
           "refuse_outputs"]
