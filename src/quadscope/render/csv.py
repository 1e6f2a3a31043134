"""CSV export: one row per run, columns in `Run.to_dict()` order (docs/schema.md), UTF-8.

Every cell of text from outside (a run's stderr tail, an axis's or a machine's
name) goes through `cell`: its control and bidi characters written as escapes
(`textsafe.visible`), in a file as on a terminal, so `--csv -` never sends a
program's ANSI or OSC sequences to the terminal raw and a stderr tail stays one
line; the JSON export keeps the text exactly.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quadscope.model import RUN_KEYS
from quadscope.render.base import Renderer
from quadscope.render.safe import cell

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.fleet.outliers import FleetDoctor


def columns() -> list[str]:
    return list(RUN_KEYS)


class CsvRenderer(Renderer):
    name = "csv"
    flag = "--csv"
    metavar = "FILE"
    help = "write one CSV row per run"
    extension = ".csv"
    folder = False
    writes_fleet = True  # render_fleet: doctor --fleet as one row per machine × probe
    renders_multi = True  # render_multi: a sweep over several sizes

    def render(self, analysis: Analysis) -> bytes:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns(), lineterminator="\n")
        writer.writeheader()
        for run in analysis.runs:
            row = run.to_dict()
            writer.writerow({k: cell(v) for k, v in row.items()})
        return out.getvalue().encode("utf-8")

    def render_fleet(self, fleet: FleetDoctor) -> bytes:
        """`doctor --fleet`: one row per machine × probe (`render.fleet`)."""
        from quadscope.render.fleet import fleet_csv

        return fleet_csv(fleet)

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> bytes:
        """A sweep over several sizes: one row per run, a column per axis (`multi_csv`)."""
        from quadscope.render.multi_csv import csv_bytes

        return csv_bytes(report)
