"""A sweep over several sizes' gates as JUnit XML: one testcase per axis gate judged.

Contract: `junit(report, outcomes) -> bytes` is the JUnit document of
`render.junit` (one `<testsuites>` holding one `<testsuite>` named after the
sweep, counts as there, valid against the Jenkins/Ant `junit-10.xsd`) with one
`<testcase>` per `AxisGateOutcome` (`analyse.multi_sweep.judge_axis_gates`:
a bare `--fail-above CLASS` is one per axis), named after the option and the
axis it judged. A passed gate carries its evidence in `<system-out>`, a failed
one a `<failure>`, an undecided one a `<skipped>` naming why, so undecided is
neither green nor red; the message is the gate's sentence then the axis's
exponent, interval and sizes. The suite's properties hold the sweep id and the
verdict sentence. No gates gives a suite of zero tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from quadscope.analyse.gate import FAIL, PASS
from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
from quadscope.render.junit_doc import FAILED, PASSED, GateCase, junit_document
from quadscope.render.multi import axis_class_text, sizes_text


def cases(report: MultiReport, outcomes: Sequence[AxisGateOutcome]) -> tuple[GateCase, ...]:
    """Each judged axis gate as a `GateCase` with its axis's evidence."""
    axes = {a.axis: a for a in report.verdict.axes} if report.verdict else {}
    out = []
    for o in outcomes:
        a = axes.get(o.axis)
        evidence = () if a is None else (
            f"{a.axis}: {axis_class_text(a)}",
            f"exponent {a.exponent:.2f}, 95% interval {a.interval[0]:.2f}–{a.interval[1]:.2f}",
            f"sizes {sizes_text(a.sizes)}")
        outcome = {PASS: PASSED, FAIL: FAILED}.get(o.outcome, o.outcome)
        name = f"--fail-above {o.gate.text}" + (f" ({o.axis})" if o.axis else "")
        out.append(GateCase(name, outcome, o.sentence, evidence))
    return tuple(out)


def junit(report: MultiReport, outcomes: Sequence[AxisGateOutcome]) -> bytes:
    sw = report.sweep
    verdict = report.verdict.sentence if report.verdict else f"nothing fitted: {report.refusal}"
    label = sw.name or " ".join(sw.command)
    return junit_document([(label, (("sweep", str(sw.id)), ("verdict", verdict),
                                     ("git_commit", sw.git_commit), ("machine", sw.machine)),
                            cases(report, outcomes))])
