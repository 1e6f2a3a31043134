"""The JUnit XML document itself: suites of testcases, valid whatever a name holds.

Contract: `GateCase` is one gate as a test (name, outcome PASSED, FAILED or
anything else, written as skipped; its sentence and evidence);
`junit_document(suites)` the document of (label, properties, cases) suites,
as `render/junit.py` describes it (the Jenkins/Ant `junit-10.xsd`; counts per
suite, the root's without `skipped`). `render/junit` (one-size sweeps, the
doctor) and `render/multi_junit` (a sweep over several sizes) both write
through it, and neither imports the other.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.textsafe import visible, visible_lines

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"

# What XML 1.0 cannot hold even escaped (textsafe.visible already shows the controls).
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class GateCase:
    """One gate as a test: its name (the option as given), outcome, the sentence why, evidence."""

    name: str
    outcome: str  # PASSED, FAILED, or anything else (e.g. "undecided"): written as skipped
    message: str = ""
    evidence: tuple[str, ...] = ()  # verdict, exponent and interval, sizes: one fact a line
    sweep_id: int | None = None  # the sweep it judged, when a document holds several

    @property
    def summary(self) -> str:
        """The message attribute: the sentence and the evidence on one line."""
        return "; ".join(x for x in (self.message, *self.evidence) if x)

    @property
    def text(self) -> str:
        """The element's text: the sentence and the evidence, one a line."""
        return "\n".join(x for x in (self.message, *self.evidence) if x)


def _safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", visible(text))


def _safe_lines(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", visible_lines(text))


def _counts(cases: Sequence[GateCase]) -> dict[str, str]:
    failures = sum(g.outcome == FAILED for g in cases)
    skipped = sum(g.outcome not in (PASSED, FAILED) for g in cases)
    return {"tests": str(len(cases)), "failures": str(failures), "errors": "0",
            "skipped": str(skipped)}


def junit_document(suites: Sequence[tuple[str, Sequence[tuple[str, str]], Sequence[GateCase]]]
                   ) -> bytes:
    """The document of suites (label, properties (name, value; empty ones left out), cases);
    `render.multi_junit` writes a sweep over several sizes through it too."""
    every = [g for _, _, cases in suites for g in cases]
    totals = {k: v for k, v in _counts(every).items() if k != "skipped"}  # not in the schema
    root = ET.Element("testsuites", {"name": "quadscope", **totals})
    for label, props, cases in suites:
        _suite(root, _safe(label), props, cases)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _suite(root: ET.Element, label: str, properties: Sequence[tuple[str, str]],
           cases: Sequence[GateCase]) -> None:
    suite = ET.SubElement(root, "testsuite", {"name": f"quadscope: {label}", **_counts(cases),
                                              "time": "0"})
    props = ET.SubElement(suite, "properties")
    for key, value in properties:
        if value:
            ET.SubElement(props, "property", {"name": key, "value": _safe(value)})
    for gate in cases:
        case = ET.SubElement(suite, "testcase", {"classname": f"quadscope.{label}",
                                                 "name": _safe(gate.name), "time": "0"})
        message = _safe(gate.summary or gate.outcome)
        if gate.outcome == FAILED:
            ET.SubElement(case, "failure", {"message": message,
                                            "type": "growth"}).text = _safe_lines(gate.text)
        elif gate.outcome != PASSED:
            ET.SubElement(case, "skipped", {"message": message})
        elif gate.text:
            ET.SubElement(case, "system-out").text = _safe_lines(gate.text)


__all__ = ["FAILED", "PASSED", "SKIPPED", "GateCase", "junit_document"]
