"""JSON export: `Analysis.to_dict()`, documented in docs/schema.md (`"schema": 2`).

A doctor summary (`analysis.doctor` is a `DoctorReport`) is written as the
report's own dict (`kind: doctor`, `probes`, `machine`), the file
`quadscope doctor --vs` reads. `render_fleet` writes `doctor --fleet`'s result
(`render.fleet`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quadscope.doctor.records import DoctorReport
from quadscope.render.base import Renderer
from quadscope.render.safe import finite

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.fleet.outliers import FleetDoctor


class JsonRenderer(Renderer):
    name = "json"
    flag = "--json"
    metavar = "FILE"
    help = "write the JSON report"
    extension = ".json"
    folder = False
    writes_fleet = True  # render_fleet: doctor --fleet's result as one document
    renders_multi = True  # render_multi: a sweep over several sizes

    def __init__(self, indent: int | None = 2) -> None:
        self.indent = indent

    def render(self, analysis: Analysis) -> bytes:
        doc = (analysis.doctor.to_dict() if isinstance(analysis.doctor, DoctorReport)
               else analysis.to_dict())
        text = json.dumps(finite(doc), indent=self.indent, allow_nan=False) + "\n"
        return text.encode("utf-8")

    def render_fleet(self, fleet: FleetDoctor) -> bytes:
        from quadscope.render.fleet import fleet_dict

        text = json.dumps(finite(fleet_dict(fleet)), indent=self.indent, allow_nan=False)
        return (text + "\n").encode("utf-8")

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> bytes:
        """A sweep over several sizes: its own document (`render.multi.to_json`)."""
        from quadscope.render.multi import to_json

        return to_json(report)
