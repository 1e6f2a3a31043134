"""A machine that drifts while a sweep runs: estimated from repeats, taken out of the runs.

Contract: `drift_to_take_out(sizes, values)` takes one metric's runs in the
order they ran and returns the steady drift over that order, as (δ, standard
error) of log value per run, or None when the runs cannot show one;
`without_drift(values, δ)` takes it out (multiplicatively, to the first
run's level), and `detrend` does both. Pure numpy; fitting calls it for times
only (counts of events do not drift), and carries the standard error into
the interval of the exponent k (`fitting._DriftError.k_error`).

Why: an adaptive sweep measures its sizes in increasing order, so a machine
that slows by 10% over the sweep makes the largest sizes 10% dearer and tilts
k upward; with 1% noise the exponent's interval is narrow enough to miss the
true k (calibration: 47% coverage). Within a size, runs measured at different
times carry the drift and nothing else, so the drift is the within-size
regression of log value on run order: log v = μ(size) + δ·t. It is
identifiable only where a size was measured at separate times (the rounds of
a fixed sweep, adaptive mode's later repeats at earlier sizes): a size's
consecutive runs count as one point, their median (`_bursts`), so a sweep
whose every size ran in one burst gives no estimate, and nothing is changed.
Robust to one wild run: a first estimate is the median of pairwise slopes
(`_robust_slope`), and runs whose residual about it is beyond OUTLIER_MADS
median absolute deviations are left out of the least-squares one.

The drift is taken out whenever it is identifiable and plausible for a
machine (at most MAX_DRIFT over the sweep), significant or not, and its
error goes into k's interval. Taking it out only when significant (as
before, at 3 standard errors) left the unbiased estimate of a 10% drift
unused at 5% noise nine times in ten, and k's interval then held the true k
82% of the time (bench/calibration.py, adaptive, law n); estimating it
always and carrying its error gave 94%, and no drift costs a slightly wider
interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

OUTLIER_MADS = 5.0
ROBUST_RUNS = 200  # a size's bursts the robust first estimate looks at, at most
MIN_LEVERAGE = 4  # runs at a size measured apart from the rest of that size, at least
# The most a machine's steady drift moves a time over one sweep (×1.25 or ÷1.25). An
# estimate beyond it is something else, such as the smallest size of a start-up-bound
# program running 30% faster once caches are warm (seen: insertion sort, whose anchor
# runs at n = 1000 fell from 1.45 to 1.0 ms while its 64k runs held); taking it out
# would tilt the growth by the whole amount, so nothing is changed.
MAX_DRIFT = 1.25


def drift_rate(sizes: Sequence[float], values: Sequence[float]) -> tuple[float, float] | None:
    """(δ, standard error) of log value per run, within sizes; None when not identifiable."""
    n = np.asarray(sizes, dtype=float)
    v = np.asarray(values, dtype=float)
    keep = np.isfinite(n) & np.isfinite(v) & (v > 0)
    if keep.sum() < 6 or keep.sum() != v.size:
        return None  # zeros or gaps: not a positive time series to detrend
    t, y, points_n = _bursts(n, np.log(v))
    # Only a size with two bursts or more shows drift (the others' residuals are all 0).
    _, inverse, seen = np.unique(points_n, return_inverse=True, return_counts=True)
    again = seen[inverse] >= 2
    if not again.any():
        return None
    t, y = t[again], y[again]
    _, inverse = np.unique(points_n[again], return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(inverse))[:-1])
    # A first, robust estimate drops wild points (see _robust_slope); least squares on
    # the rest then gives the drift and its standard error.
    robust = _robust_slope(t, y, groups)
    if robust is None:
        return None
    level = y - robust * t
    resid = level - np.array([np.median(level[g]) for g in groups])[inverse]
    mad = float(np.median(np.abs(resid))) * 1.4826
    if mad <= 0:
        return None
    use = np.abs(resid) <= OUTLIER_MADS * mad
    counts = np.bincount(inverse[use], minlength=len(groups))
    t_mean = np.bincount(inverse[use], t[use], minlength=counts.size) / np.maximum(counts, 1)
    y_mean = np.bincount(inverse[use], y[use], minlength=counts.size) / np.maximum(counts, 1)
    dt = np.where(use, t - t_mean[inverse], 0.0)
    dy = np.where(use, y - y_mean[inverse], 0.0)
    stt = float((dt * dt).sum())
    # Leverage comes from sizes measured at separate times, not from consecutive repeats.
    if stt <= 0 or np.count_nonzero(np.abs(dt) > 2.0) < MIN_LEVERAGE:
        return None
    delta = float((dt * dy).sum()) / stt
    resid = dy - delta * dt
    dof = int(use.sum()) - int(np.count_nonzero(counts)) - 1
    if dof < 3:
        return None
    s2 = float((resid[use] ** 2).sum()) / dof
    return delta, float(np.sqrt(s2 / stt))


def _bursts(n: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(run index, log value, size) of each burst: a stretch of consecutive runs at one size,
    as its median at its middle.

    Runs of one burst differ by what happens between consecutive runs (a first
    run slower than the next, caches warming), not by the machine's drift: a
    sweep of 7 repeats a size, each size in one burst and its first run 15%
    slower, read as a drift of −0.4% a run and a confident n log n for an n.
    Only a size measured again later carries the drift.
    """
    starts = np.flatnonzero(np.r_[True, n[1:] != n[:-1]])
    ends = np.r_[starts[1:], n.size]
    middle = (starts + ends - 1) / 2.0
    value = y[starts].copy()
    for i in np.flatnonzero(ends - starts > 1):
        value[i] = np.median(y[starts[i]:ends[i]])
    return middle, value, n[starts]


def _robust_slope(t: np.ndarray, y: np.ndarray, groups: list[np.ndarray]) -> float | None:
    """The median slope of log value on run order over pairs of bursts at one size measured
    more than two runs apart (Theil 1950, Sen 1968); None without such a pair.

    Least squares would let one wild run tilt it: a ×5 outlier at the last anchor
    run of a 1% sweep made the slope ×20 the drift, every other anchor run then
    failed the MAD test, and nothing was left to estimate from (calibration:
    one in eight such sweeps missed the true k). A size's bursts beyond
    ROBUST_RUNS are thinned evenly, so pairs stay few.
    """
    slopes = []
    for g in groups:
        if g.size > ROBUST_RUNS:
            g = g[np.linspace(0, g.size - 1, ROBUST_RUNS).round().astype(int)]
        gap = t[g][None, :] - t[g][:, None]
        rise = y[g][None, :] - y[g][:, None]
        apart = gap > 2.0
        slopes.append(rise[apart] / gap[apart])
    pooled = np.concatenate(slopes) if slopes else np.empty(0)
    return float(np.median(pooled)) if pooled.size else None


def drift_to_take_out(sizes: Sequence[float], values: Sequence[float]) -> tuple[float, float] | None:
    """(δ, standard error) of the drift `detrend` takes out of `values`, or None (see module)."""
    rate = drift_rate(sizes, values)
    if rate is None:
        return None
    if abs(rate[0]) * max(len(values) - 1, 0) > np.log(MAX_DRIFT):
        return None  # not a steady drift of the machine (see MAX_DRIFT)
    return rate


def without_drift(values: Sequence[float], delta: float) -> list[float]:
    """`values` with a drift of δ in log value per run taken out, to the first run's level."""
    return [float(v) * float(np.exp(-delta * i)) for i, v in enumerate(values)]


def detrend(sizes: Sequence[float], values: Sequence[float]) -> list[float]:
    """`values` with a steady drift over the run order taken out (see module)."""
    rate = drift_to_take_out(sizes, values)
    return list(values) if rate is None else without_drift(values, rate[0])


__all__ = ["MAX_DRIFT", "detrend", "drift_rate", "drift_to_take_out", "without_drift"]
