"""A sweep over several sizes as CSV: one row per run, as the one-size CSV (render/csv.py).

Contract: `csv_bytes(report) -> bytes` (UTF-8) has the one-size CSV's columns
(`model.RUN_KEYS`: sweep_id, seq, variant, repeat, warmup, started_at, then
every measurement key) with its `size_n` replaced by one column per axis, in
the sweep's axis order, named `size_<axis>` (`size_n` for an axis named n,
as a one-size sweep's), so a spreadsheet or pandas pivots on them directly.
Every stored run is a row (warm-ups and failed runs too, as in the one-size
CSV); empty cells for values not measured. `runs_csv(names, sides)` is the same
for the runs of several sweeps over the same sizes (a comparison's A and B).
Axis names from a stored sweep are text from outside: made visible
(`textsafe.visible`) before they head a column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from quadscope.analyse.multi_sweep import MultiReport
from quadscope.model import RUN_KEYS, Run, Sweep
from quadscope.render.safe import cell
from quadscope.textsafe import visible


def size_columns(names: tuple[str, ...]) -> list[str]:
    return [f"size_{visible(n)}" for n in names]


def columns(names: tuple[str, ...]) -> list[str]:
    at = RUN_KEYS.index("size_n")
    return [*RUN_KEYS[:at], *size_columns(names), *RUN_KEYS[at + 1:]]


def csv_bytes(report: MultiReport) -> bytes:
    return runs_csv(report.sweep.axis_names, [(report.sweep, report.runs)])


def runs_csv(names: tuple[str, ...], sides: Sequence[tuple[Sweep, Sequence[Run]]]) -> bytes:
    """Every run of each (sweep, runs), one row each, a `size_<axis>` column per name of
    `names`: each sweep's runs read by its own axis order (a comparison's B may list the
    same sizes in another order; its rows carry its own sweep_id)."""
    heads = size_columns(names)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns(names), lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    for sweep, runs in sides:
        first = sweep.axis_names[0] if sweep.axis_names else "n"
        for run in runs:
            row = {k: cell(v) for k, v in run.to_dict().items()}
            sizes = {first: run.size_n, **dict(run.axes)}
            row.update(zip(heads, (sizes.get(n, "") for n in names), strict=True))
            writer.writerow(row)
    return out.getvalue().encode("utf-8")

__all__ = ["columns", "csv_bytes", "runs_csv"]
