"""JUnit files checked against the Jenkins/Ant JUnit schema (tests/fixtures/junit/junit-10.xsd).

Contract: `valid_junit(data)` validates a JUnit document (bytes, as quadscope
writes it) against the schema CI reporters read, then checks what a schema
cannot say: each count attribute (tests, failures, errors, skipped) equals
what the suite's testcases hold, summed at the root (which the schema lets
carry tests, failures and errors alone), and every failure or skip has a
message. It returns the testcases, in document order.
"""

from __future__ import annotations

import functools
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema

XSD = Path(__file__).parent / "fixtures" / "junit" / "junit-10.xsd"


@functools.cache
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def valid_junit(data: bytes) -> list[ET.Element]:
    """Validate against the schema and the counts; the testcases."""
    errors = [f"{e.path}: {e.reason}" for e in schema().iter_errors(io.BytesIO(data))]
    assert not errors, errors
    root = ET.fromstring(data)
    everything: list[ET.Element] = []
    totals = dict.fromkeys(("tests", "failures", "errors"), 0)
    for suite in root:
        cases = suite.findall("testcase")
        assert [c.tag for c in suite if c.tag != "properties"] == ["testcase"] * len(cases)
        kinds = []
        for case in cases:
            assert case.attrib["name"] and case.attrib["classname"]
            outcome = [c for c in case if c.tag in ("failure", "error", "skipped")]
            assert len(outcome) <= 1
            if outcome:
                assert outcome[0].attrib["message"]
            kinds.append(outcome[0].tag if outcome else "passed")
        counts = {"tests": len(cases), "failures": kinds.count("failure"),
                  "errors": kinds.count("error"), "skipped": kinds.count("skipped")}
        assert {k: int(suite.attrib[k]) for k in counts} == counts
        totals = {k: totals[k] + counts[k] for k in totals}
        everything += cases
    assert {k: int(root.attrib[k]) for k in totals} == totals
    return everything
