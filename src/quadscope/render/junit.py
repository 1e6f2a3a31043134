"""JUnit XML of the CI gates: one testcase per gate, for CI systems that show test results.

Contract: `JunitRenderer(gates=...).render(analysis) -> bytes` is a JUnit XML
document (the schema Jenkins, GitLab and GitHub test reporters read: a
`<testsuites>` holding one `<testsuite>` named after the sweep) with one
`<testcase>` per `GateCase`. A gate that passed is an empty testcase, one
that failed holds `<failure message=...>`, and any other outcome (the gate
could not be decided, or an outcome this module does not know yet) holds
`<skipped message=...>`, so an undecided gate is neither green nor red. No
gates gives a suite of zero tests. The renderer declares `reads_gates`: the
CLI judges the gate options (`commands.gates.junit_cases`) and passes them in. Text is
escaped by ElementTree.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quadscope.render.base import Renderer

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis

PASSED = "passed"
FAILED = "failed"


@dataclass(frozen=True, slots=True)
class GateCase:
    """One gate as a test: its name (the option as given), outcome and the sentence why."""

    name: str
    outcome: str  # PASSED, FAILED, or anything else (e.g. "undecided"): written as skipped
    message: str = ""


class JunitRenderer(Renderer):
    name = "junit"
    flag = "--junit"
    metavar = "FILE"
    help = "write the --fail-above gates as JUnit XML (one testcase per gate)"
    extension = ".xml"
    folder = False
    reads_gates = True  # the CLI passes gates=[GateCase, ...]

    def __init__(self, gates: Sequence[GateCase] = ()) -> None:
        self.gates = tuple(gates)

    def render(self, analysis: Analysis) -> bytes:
        sweep = analysis.sweep
        label = sweep.name or " ".join(sweep.command)
        failures = sum(g.outcome == FAILED for g in self.gates)
        skipped = sum(g.outcome not in (PASSED, FAILED) for g in self.gates)
        counts = {"tests": str(len(self.gates)), "failures": str(failures), "errors": "0",
                  "skipped": str(skipped)}
        root = ET.Element("testsuites", {"name": "quadscope", **counts})
        suite = ET.SubElement(root, "testsuite", {"name": f"quadscope: {label}", **counts,
                                                  "time": "0"})
        props = ET.SubElement(suite, "properties")
        for key, value in (("sweep", str(sweep.id)), ("verdict", analysis.verdict),
                           ("git_commit", sweep.git_commit), ("machine", sweep.machine)):
            if value:
                ET.SubElement(props, "property", {"name": key, "value": value})
        for gate in self.gates:
            case = ET.SubElement(suite, "testcase", {"classname": f"quadscope.{label}",
                                                     "name": gate.name, "time": "0"})
            if gate.outcome == FAILED:
                ET.SubElement(case, "failure", {"message": gate.message,
                                                "type": "growth"}).text = gate.message
            elif gate.outcome != PASSED:
                ET.SubElement(case, "skipped", {"message": gate.message or gate.outcome})
        ET.indent(root)
        return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
