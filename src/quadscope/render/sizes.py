"""The per-size table of `show --sizes` and `-v`: n, runs, min, median, max, spread.

Contract: `sizes_tables(analysis, metric, width, limit=None)` yields one rich
table per variant (titled "A: …" and "B: …" in an A/B sweep) of
`analyse.sizestats.size_stats` over the variant's measured runs, every size
(`limit` None) or at most `limit` of them spread over the sweep with a line
saying how many more `--sizes` shows. `shown_metric(analysis, asked)` is the
metric the table is about: the one asked for, else the one the headline leads
with (the A/B change's, else `headline.lead_fit`'s), else wall time.
`known_metrics(runs)` are the metrics some measured run counted, for
checking `--metric`. Values are written in their metric's unit
(`units.fmt_value`); the spread is MAD/median in percent. Nothing is computed
here that `analyse` does not return.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from quadscope.analyse.headline import lead_fit
from quadscope.analyse.sizestats import shown_sizes, size_stats
from quadscope.metrics import NAMES
from quadscope.units import fmt_count, fmt_value

if TYPE_CHECKING:
    from rich.console import RenderableType

    from quadscope.analyse.analysis import Analysis
    from quadscope.model import Run

DEFAULT_METRIC = "wall_s"


def shown_metric(analysis: Analysis, asked: str | None = None) -> str:
    """The metric the per-size table shows (see the module docstring)."""
    if asked:
        return asked
    if (change := analysis.change) is not None:
        return change.metric
    fit = lead_fit(analysis.fits.get("A", {}), analysis.work_metric)
    return fit.metric if fit is not None else DEFAULT_METRIC


def known_metrics(runs: Sequence[Run]) -> tuple[str, ...]:
    """The metrics some measured run (no warm-up, exit 0) of `runs` counted, in registry
    order."""
    measured = [r for r in runs if not r.warmup and r.measurement.ok]
    return tuple(m for m in NAMES if any(r.value(m) is not None for r in measured))


def sizes_tables(analysis: Analysis, metric: str, width: int, limit: int | None = None
                 ) -> Iterator[RenderableType]:
    """One table per variant of each size's runs of `metric` (see the module docstring)."""
    from quadscope.render.columns import Column, _line, fit_columns

    word = analysis.size_word
    two = bool(analysis.fits.get("B"))
    cols = [Column(word, 9, True), Column("runs", 8, True), Column("min", 5, True),
            Column("median", 10, True), Column("max", 5, True),
            Column("MAD/median", 7, True)]
    for variant in ("A", "B") if two else ("A",):
        stats = size_stats(analysis.metric_runs(variant, metric), metric)
        if not stats:
            continue
        shown = stats if limit is None else shown_sizes(stats, limit)
        rows = [[fmt_count(s.size_n), str(s.runs), fmt_value(metric, s.min),
                 fmt_value(metric, s.median), fmt_value(metric, s.max),
                 "—" if s.spread is None else f"{100 * s.spread:.1f}%"] for s in shown]
        title = f"{variant}: {metric} per size" if two else f"{metric} per size"
        yield fit_columns(title, cols, rows, width)
        if len(shown) < len(stats):
            yield _line(f"{len(shown)} of {len(stats)} sizes shown; --sizes shows every one",
                        "dim")
