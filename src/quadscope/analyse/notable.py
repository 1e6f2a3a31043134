"""Which metrics a compact report shows, and each metric's median at the largest size.

Contract: pure functions of fits and stored runs, computed once by
`analysis.analyse` and carried by the `Analysis` (`notable`, `at_max`), so a
renderer reads what matters instead of deciding it. The measured runs are
those that count (not warm-up, exited 0, not timed out), as they were taken
(accumulate mode's single launches, not their pools).

- `medians_by_size(runs, metric)`: the median of one metric at each size
  where it was measured (the probes' plot lines read it too).
- `medians_at_max(runs)`: per variant, each metric's median over the runs at
  that variant's largest measured size: the median the fits use
  (`stats.median_by_size`, the mean of the two middle runs of an even count).
- `notable_metrics(fits, runs, lead=)`: time and memory (`ALWAYS_SHOWN`) and
  the metric the headline leads with (`lead`: CPU time, say, which the registry
  does not let lead on its own, so a table under "CPU time grows as n²" shows
  that row) always,
  and any other metric the registry lets lead (`Metric.leads`) when, for some
  variant, its fit says it grows (`grows`), the growing part is at least
  `headline.MATERIAL_GROWTH` of the fitted cost at A's largest size, and its
  medians do rise by that much from the smallest size to the largest: a count
  that is 0 at the largest size grows in no sense a person cares about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quadscope import metrics
from quadscope.analyse.headline import MATERIAL_GROWTH, growth_fraction
from quadscope.classes import REGISTRY
from quadscope.model import METRICS, Fit, Run

ALWAYS_SHOWN = ("wall_s", "max_rss_bytes")  # time and memory: shown even when constant
# The free exponent's interval must clear 0 by this much before an unsettled fit counts as
# growing: k's interval on a flat metric scatters a little above 0.
K_CLEAR = 0.2


def _measured(runs: Sequence[Run], variant: str) -> list[Run]:
    return [r for r in runs if r.variant == variant and not r.warmup and r.measurement.ok]


def medians_by_size(runs: Sequence[Run], metric: str) -> dict[int, float]:
    """The median of `metric` at each size where it was measured (`stats.median_by_size`)."""
    pairs = [(r.size_n, v) for r in runs if (v := r.value(metric)) is not None]
    if not pairs:
        return {}
    # Imported here: numpy, which the parser (reading `analysis` for its types) must not load.
    from quadscope.analyse.stats import median_by_size

    sizes, medians, _ = median_by_size([float(n) for n, _ in pairs], [v for _, v in pairs])
    return {int(n): float(m) for n, m in zip(sizes, medians, strict=True)}


def medians_at_max(runs: Sequence[Run]) -> dict[str, dict[str, float]]:
    """variant -> metric -> median at that variant's largest measured size (where measured)."""
    out: dict[str, dict[str, float]] = {}
    for variant in sorted({r.variant for r in runs}):
        good = _measured(runs, variant)
        if not good:
            continue
        n_max = max(r.size_n for r in good)
        at_top = [r for r in good if r.size_n == n_max]
        row = {m: med for m in METRICS
               if (med := medians_by_size(at_top, m).get(n_max)) is not None}
        out[variant] = row
    return out


def grows(fit: Fit) -> bool:
    """Settled as growing, or bracketed above constant, or an exponent interval clear of 0."""
    if fit.confident:
        return fit.cls != "1"
    low = REGISTRY.get(fit.at_least)
    if low is not None and low.growing:
        return True
    return fit.exponent_ci is not None and fit.exponent_ci[0] > K_CLEAR and fit.best != "1"


def _rises(runs: Sequence[Run], metric: str) -> bool:
    """The medians rise materially from the smallest size measured to the largest."""
    if not runs:
        return False
    medians = medians_by_size(runs, metric)
    lo = medians.get(min(r.size_n for r in runs))
    hi = medians.get(max(r.size_n for r in runs))
    return lo is not None and hi is not None and hi > max(lo, 0.0) * (1 + MATERIAL_GROWTH)


def notable_metrics(fits: Mapping[str, Mapping[str, Fit]], runs: Sequence[Run],
                    lead: str | None = None) -> tuple[str, ...]:
    """The metrics a compact report shows, in `METRICS` order (see the module docstring)."""
    n_max = max((r.size_n for r in _measured(runs, "A")), default=None)
    at = None if n_max is None else float(n_max)
    shown = []
    for metric in METRICS:
        by_variant = {v: fs[metric] for v, fs in fits.items() if metric in fs}
        if not by_variant:
            continue
        known = metrics.find(metric)
        leads = known is None or known.leads
        material = any(grows(f) and growth_fraction(f, at) >= MATERIAL_GROWTH
                       and _rises(_measured(runs, v), metric)
                       for v, f in by_variant.items())
        if metric in ALWAYS_SHOWN or metric == lead or (leads and material):
            shown.append(metric)
    return tuple(shown)


__all__ = ["ALWAYS_SHOWN", "grows", "medians_at_max", "medians_by_size", "notable_metrics"]
