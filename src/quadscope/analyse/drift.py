"""A machine that drifts while a sweep runs: estimated from repeats, taken out of the runs.

Contract: `detrend(sizes, values)` takes one metric's runs in the order they
ran and returns the values with a steady drift over that order taken out
(multiplicatively, to the first run's level), or the values unchanged when
the runs do not show one. Pure numpy; fitting calls it for times only (counts
of events do not drift).

Why: an adaptive sweep measures its sizes in increasing order, so a machine
that slows by 10% over the sweep makes the largest sizes 10% dearer and tilts
k upward; with 1% noise the exponent's interval is narrow enough to miss the
true k (calibration: 47% coverage). Within a size, runs measured at different
times carry the drift and nothing else, so the drift is the within-size
regression of log value on run order: log v = μ(size) + δ·t. It is
identifiable only where a size was measured at separate times (the rounds of
a fixed sweep, adaptive mode's later repeats at earlier sizes); a sweep whose
every size ran in one burst gives no estimate, and nothing is changed.
Robust to one wild run: runs whose residual is beyond OUTLIER_MADS median
absolute deviations are left out of the estimate. The drift is taken out
only when it is significant (|δ| > DRIFT_Z standard errors), so noise is not
turned into a trend, and plausible for a machine (at most MAX_DRIFT over the
sweep).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DRIFT_Z = 3.0
OUTLIER_MADS = 5.0
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
    t = np.arange(v.size, dtype=float)
    y = np.log(v)
    _, inverse = np.unique(n, return_inverse=True)
    use = np.ones(v.size, dtype=bool)
    for first in (True, False):  # estimate, drop wild runs, estimate again
        counts = np.bincount(inverse[use], minlength=inverse.max() + 1)
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
        if first:
            mad = float(np.median(np.abs(resid))) * 1.4826
            if mad <= 0:
                return None
            use = np.abs(resid) <= OUTLIER_MADS * mad
    dof = int(use.sum()) - int(np.count_nonzero(np.bincount(inverse[use]))) - 1
    if dof < 3:
        return None
    s2 = float((resid[use] ** 2).sum()) / dof
    return delta, float(np.sqrt(s2 / stt))


def detrend(sizes: Sequence[float], values: Sequence[float]) -> list[float]:
    """`values` with a significant steady drift over the run order taken out (see module)."""
    rate = drift_rate(sizes, values)
    if rate is None or abs(rate[0]) <= DRIFT_Z * rate[1]:
        return list(values)
    delta = rate[0]
    if abs(delta) * max(len(values) - 1, 0) > np.log(MAX_DRIFT):
        return list(values)  # not a steady drift of the machine (see MAX_DRIFT)
    return [float(v) * float(np.exp(-delta * i)) for i, v in enumerate(values)]


__all__ = ["DRIFT_Z", "MAX_DRIFT", "detrend", "drift_rate"]
