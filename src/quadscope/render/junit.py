"""JUnit XML of the CI gates: one testcase per gate, for CI systems that show test results.

Contract: `JunitRenderer(gates=...).render(analysis) -> bytes` is a JUnit XML
document (the schema Jenkins, GitLab and GitHub test reporters read: a
`<testsuites>` holding one `<testsuite>` named after the sweep, whose `tests`,
`failures`, `errors` and `skipped` counts are its testcases'; the root sums
`tests`, `failures` and `errors` alone, as the Jenkins/Ant schema
`junit-10.xsd` allows no other count there, and tests/fixtures/junit holds
that schema, which every file the tests write is validated against) with one
`<testcase>` per `GateCase` the CLI judged (`commands.gates.junit_cases`: every
`--fail-above` and `--fail-on` gate), then one per doctor probe the analysis
holds (a probe that says "slow" or "pathological" fails with its advice as
the message, "ok" passes, "skipped" is skipped). A gate that passed carries
its evidence in `<system-out>`; one that failed holds `<failure message=...>`,
and any other outcome (undecided, or an outcome this module does not know
yet) holds `<skipped message=...>` naming what would decide it, so an
undecided gate is neither green nor red. Every message is the gate's
sentence then its evidence (verdict, exponent with its interval, sizes).
No gates gives a suite of zero tests. `render_several(analyses)` (it declares
`renders_several`) writes one `<testsuite>` per sweep, each holding the gates
whose `sweep_id` is its sweep's. The renderer declares `reads_gates`:
the CLI passes the judged gates in. The document is valid XML 1.0 whatever a
name holds: ElementTree escapes markup, and characters XML cannot carry at all
(controls, lone surrogates) are written as visible `\\xNN` escapes first.
The document and `GateCase` live in `render/junit_doc.py` (shared with
`render/multi_junit.py`) and are importable from here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from quadscope.render.base import Renderer
from quadscope.render.junit_doc import FAILED, PASSED, SKIPPED, GateCase, junit_document

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.doctor.records import ProbeResult

def probe_case(result: ProbeResult) -> GateCase:
    """A doctor probe as a testcase: "slow" and "pathological" fail with the probe's advice."""
    outcome = {"ok": PASSED, "skipped": SKIPPED}.get(result.verdict, FAILED)
    facts = tuple(f"{k}: {v}" for k, v in (("measured", result.measured), ("class", result.cls),
                                            ("cost", result.cost)) if v)
    said = f"{result.probe} is {result.verdict}"
    return GateCase(f"doctor: {result.probe}", outcome,
                    f"{said}: {result.finding}" if result.finding else said, facts)


def doctor_cases(analysis: Analysis) -> tuple[GateCase, ...]:
    """One testcase per probe of the doctor report (or the one probe) the analysis holds."""
    from quadscope.doctor.records import DoctorReport

    doctor = analysis.doctor
    if doctor is None:
        return ()
    results = doctor.results if isinstance(doctor, DoctorReport) else (doctor,)
    return tuple(probe_case(r) for r in results)


class JunitRenderer(Renderer):
    name = "junit"
    flag = "--junit"
    metavar = "FILE"
    help = ("write every gate (--fail-above, --fail-on, doctor's probes) as JUnit XML, "
            "one testcase each")
    extension = ".xml"
    folder = False
    reads_gates = True  # the CLI passes gates=[GateCase, ...]
    renders_several = True  # render_several: one testsuite per sweep
    renders_multi = True  # render_multi: a sweep over several sizes

    def __init__(self, gates: Sequence[GateCase] = ()) -> None:
        self.gates = tuple(gates)

    def render(self, analysis: Analysis) -> bytes:
        return _document([(analysis, (*self.gates, *doctor_cases(analysis)))])

    def render_several(self, analyses: Sequence[Analysis]) -> bytes:
        """One `<testsuite>` per sweep, each holding the gates judged on it (`sweep_id`)."""
        return _document([(a, (*(g for g in self.gates if g.sweep_id == a.sweep.id),
                               *doctor_cases(a))) for a in analyses])

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> bytes:
        """A sweep over several sizes: one testcase per axis gate judged (`multi_junit`)."""
        from quadscope.render.multi_junit import junit

        return junit(report, gates)


def _document(suites: Sequence[tuple[Analysis, Sequence[GateCase]]]) -> bytes:
    return junit_document([(a.sweep.name or " ".join(a.sweep.command),
                            (("sweep", str(a.sweep.id)), ("verdict", a.verdict),
                             ("git_commit", a.sweep.git_commit), ("machine", a.sweep.machine)),
                            cases) for a, cases in suites])


