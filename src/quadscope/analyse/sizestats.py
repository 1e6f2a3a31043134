"""Each size's runs summarised, as hyperfine and pytest-benchmark print them.

Contract: `size_stats(runs, metric) -> tuple[SizeStats, ...]` is a pure
function of runs (the measured ones: `Analysis.measured`), one row per size
in increasing order: how many runs counted the metric there, their minimum,
median and maximum, and their spread, the median absolute deviation over the
median (MAD/median; the MAD unscaled, as pyperf's `stats` prints it:
Hampel 1974, "The influence curve and its role in robust estimation", JASA
69:383), robust to the one slow run a mean and a standard deviation are not.
One run has no spread (None), nor has a median of 0. A size where no run
counted the metric has no row. `shown_sizes(stats,
limit)` picks at most `limit` rows spread evenly over the sweep, the first
and the last kept, for the terminal's `-v`. Standard library only.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.model import Run


@dataclass(frozen=True, slots=True)
class SizeStats:
    size_n: int
    runs: int
    min: float
    median: float
    max: float
    spread: float | None  # MAD / median; None from one run, or when the median is 0

    def to_dict(self) -> dict[str, float | int | None]:
        return {"n": self.size_n, "runs": self.runs, "min": self.min, "median": self.median,
                "max": self.max, "mad_over_median": self.spread}


def size_stats(runs: Sequence[Run], metric: str) -> tuple[SizeStats, ...]:
    """One `SizeStats` per size of `runs` at which `metric` was counted (see the docstring)."""
    by_size: dict[int, list[float]] = {}
    for r in runs:
        v = r.value(metric)
        if v is not None:
            by_size.setdefault(r.size_n, []).append(float(v))
    out = []
    for n in sorted(by_size):
        values = by_size[n]
        med = statistics.median(values)
        mad = statistics.median(abs(v - med) for v in values)
        out.append(SizeStats(n, len(values), min(values), med, max(values),
                             mad / abs(med) if med and len(values) > 1 else None))
    return tuple(out)


def shown_sizes(stats: Sequence[SizeStats], limit: int) -> tuple[SizeStats, ...]:
    """At most `limit` (≥ 2) of `stats`, evenly spaced by index, the first and last kept."""
    if len(stats) <= limit:
        return tuple(stats)
    picks = sorted({round(i * (len(stats) - 1) / (limit - 1)) for i in range(limit)})
    return tuple(stats[i] for i in picks)


__all__ = ["SizeStats", "shown_sizes", "size_stats"]
