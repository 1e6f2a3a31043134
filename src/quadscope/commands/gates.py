"""The CI gate options of the command line: `--fail-above`, `--strict-gate`, `--fail-on`.

Contract: the only home of these options. `add_gate_option(parser)` and
`add_fail_on_option(parser)` declare them; `check_gates(args, analysis)` and
`apply_fail_on(rules, analysis)` hand their values to the pure judges
(`analyse.gate`, `analyse.ab_gate`), print one sentence per gate on stderr
and return the exit code (0, GATE_FAILED_EXIT 8, GATE_UNDECIDED_EXIT 9).
`junit_cases(args, analysis)` is the same judgement as one JUnit testcase per
`--fail-above` value and per `--fail-on` outcome, each with its evidence, for a
renderer that declares `reads_gates`. The judges
are imported inside the functions: building the parser stays cheap (cli.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT
from quadscope.notice import notice
from quadscope.textsafe import visible

if TYPE_CHECKING:
    from quadscope.analyse.ab_gate import AbRule
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.gate import GateOutcome
    from quadscope.render.junit import GateCase

GATE_HELP = (f"exit {GATE_FAILED_EXIT} when a metric surely grows faster than CLASS (95%%), "
             f"0 when it surely does not, {GATE_UNDECIDED_EXIT} when the data cannot tell yet; "
             "without METRIC= it gates the headline (the work where the meter counts it "
             "exactly, else the time), e.g. 'n log n' or 'max_rss_bytes=n' (repeatable)")
FAIL_ON_HELP = ("gate CI on the change from A to B: 'class' (B surely grows faster than A, "
                "judged on the headline metric; 'class=METRIC' names one) or 'slower=1.1' "
                "(B/A's 95%% interval above 1.1); exit 8 fails, 9 undecided (repeatable)")


def add_gate_option(p: Any) -> None:
    """`--fail-above [METRIC=]CLASS` (repeatable) and `--strict-gate`."""
    p.add_argument("--fail-above", action="append", default=[], metavar="[METRIC=]CLASS",
                   help=GATE_HELP)
    p.add_argument("--strict-gate", action="store_true",
                   help=f"an undecided gate exits {GATE_FAILED_EXIT} too, not {GATE_UNDECIDED_EXIT}")


def add_fail_on_option(p: Any) -> None:
    """`--fail-on RULE` for the commands that compare a B with an A (`compare`, `run --vs`)."""
    p.add_argument("--fail-on", action="append", default=[], metavar="RULE", help=FAIL_ON_HELP)


def _outcomes(args: argparse.Namespace, analysis: Analysis) -> list[GateOutcome]:
    from quadscope.analyse.gate import judge_gates, parse_gates

    gates = parse_gates(getattr(args, "fail_above", None) or [])
    return judge_gates(gates, analysis, strict=bool(getattr(args, "strict_gate", False)))


def check_gates(args: argparse.Namespace, analysis: Analysis) -> int:
    """Judge every `--fail-above` gate on A's fits; print one sentence each; the worst exit code."""
    from quadscope.analyse.gate import worst_exit

    outcomes = _outcomes(args, analysis)
    for o in outcomes:
        notice(o.sentence)  # notice makes it visible
    return worst_exit(o.exit_code for o in outcomes)


def junit_cases(args: argparse.Namespace, analysis: Analysis) -> list[GateCase]:
    """Every gate option as JUnit testcases: each `--fail-above` value, then each `--fail-on`
    outcome. Failed (or undecided under `--strict-gate`) is a failure, passed passes,
    undecided is skipped; each carries its sentence and `sides.gate_evidence`."""
    from quadscope.analyse.ab_gate import decide, judged_metrics, parse_fail_on
    from quadscope.analyse.gate import parse_gates
    from quadscope.analyse.sides import gate_evidence
    from quadscope.render.junit import FAILED, PASSED, GateCase

    strict = bool(getattr(args, "strict_gate", False))
    label = analysis.sweep.name or "sweep"
    cases = []
    gates = parse_gates(getattr(args, "fail_above", None) or [])
    for gate, o in zip(gates, _outcomes(args, analysis), strict=True):
        outcome = (PASSED if o.exit_code == 0 else FAILED if o.exit_code == GATE_FAILED_EXIT
                   else "undecided")
        cases.append(GateCase(f"{label}: --fail-above {gate.text}", outcome, o.sentence,
                              gate_evidence(analysis, gate.metric), analysis.sweep.id))
    rules = parse_fail_on(getattr(args, "fail_on", None) or [])
    judged = [(rule, metric) for rule in rules for metric in judged_metrics(rule, analysis)]
    for (rule, metric), ab in zip(judged, decide(analysis, rules), strict=True):
        outcome = {"pass": PASSED, "fail": FAILED}.get(ab.outcome, "undecided")
        if outcome == "undecided" and strict:
            outcome = FAILED
        named = "=" + ",".join(rule.metrics) if rule.metrics else ""
        name = (f"{label}: --fail-on class{named} ({metric})" if rule.kind == "class"
                else f"{label}: --fail-on slower={rule.limit:g} ({metric})")
        said = {"pass": "passed", "fail": "failed"}.get(ab.outcome, ab.outcome)
        cases.append(GateCase(name, outcome, f"gate {said}: {ab.sentence}",
                              gate_evidence(analysis, metric), analysis.sweep.id))
    return cases


def apply_fail_on(rules: Sequence[AbRule], analysis: Analysis) -> int:
    """Judge each `--fail-on` rule (`analyse.ab_gate`), one sentence each; the exit code."""
    from quadscope.analyse.ab_gate import decide, exit_code

    outcomes = decide(analysis, rules)
    for o in outcomes:
        notice(f"gate {o.outcome}: {visible(o.sentence)}")
    return exit_code(outcomes)


__all__ = ["FAIL_ON_HELP", "GATE_HELP", "add_fail_on_option", "add_gate_option", "apply_fail_on",
           "check_gates", "junit_cases"]
