"""Regime changes: a cost whose growth changes inside the measured sizes.

Contract: pure numpy on the per-size medians and weights that fitting
prepared; no I/O. `find_regime(n, y, w, singles, *, repeated)`
(`singles`: the (χ², n_coef) of every single model fitted on the same medians)
returns a `Regime` (where the growth changes, the exponents on either side,
how much better the broken law fits) when a broken power law beats every single model,
else None. Fitting (`quadscope.analyse.fitting`) then fits the upper regime on
its own and reports it as the verdict for large n.

Model: a continuous broken power law with a start-up offset,
cost = a + b·g(n), g(n) = (n/n_b)^k1 for n ≤ n_b and (n/n_b)^k2 above — the
segmented regression of Muggeo ("Estimating regression models with unknown
break-points", Statistics in Medicine 22, 2003), whose segments meet at the
breakpoint. Continuity costs one parameter fewer than two free segments, which
matters with the six to twelve sizes of a sweep, and it nests the single
power law (k1 = k2), so the comparison is between nested models. A jump in
cost (a cache level, malloc's mmap threshold) is still caught: between two
sizes it shows as a steep segment, and the upper regime fitted alone then
names the class above it (the same class below and above is a step).

a, b ≥ 0 come from non-negative least squares for every (k1, k2, n_b) of a
grid (k on [0, 4] by 0.1, refined to 0.01; n_b at three points in each gap
between sizes, at least MIN_BELOW sizes below and MIN_ABOVE above). The broken
law must beat the best single model (every class and the free power law) by
ΔQAICc ≥ REGIME_DELTA, with ĉ estimated from the broken law — the most general
model, as Burnham & Anderson (2002, §6.2) advise — and the breakpoint counted
as a parameter. A searched breakpoint makes the usual null distribution
invalid (Davies, Biometrika 74, 1987), so the threshold is calibrated on
simulated single laws instead (`bench/calibration.py`, regime rows): at most
1% false regime changes at 5% noise.

A time whose runs shift level between the small and the large sizes (load
arriving on a shared machine, a frequency change) can beat every single model
by that margin with no growth anywhere: /bin/true under load read "1 … n³
above n ≈ 1,500 (below: k ≈ 0.0)". So for a time, fitting names a change only
when one side of it grows (`fitting._level_shift`: the regime below settles a
growing class or its bracket starts above "1", or the regime above does; with
fewer than three sizes above, their medians exceed the runs below by more than
drift makes); otherwise the whole range is fitted as one, where the rise, if
any, is a doubt. `bench/flat_noise.py` measures how often flat noisy sweeps
still name one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quadscope.analyse.stats import RELATIVE_RESOLUTION, nnls2, qaicc

# ΔQAICc the broken law must gain over every single model (calibrated: see above).
REGIME_DELTA = 10.0
# A bend of less than this in the exponent is curvature, not a change of regime.
MIN_BEND = 0.5
# Sizes a side needs: below, an offset and a slope; above, a slope with one check.
MIN_BELOW = 3
MIN_ABOVE = 2
# The upper regime settles a class only with this many sizes above the change;
# with fewer it is at best a bracket (fitting), and adaptive mode grows n for more.
MIN_UPPER_SIZES = 4
# Coefficients of the broken law: a, b, k1, k2 and the breakpoint.
N_COEF = 5
_K_COARSE = np.linspace(0.0, 4.0, 41)
_GAP_POINTS = (0.25, 0.5, 0.75)  # where in each gap (in log n) a breakpoint is tried
MAX_BREAKS = 36


@dataclass(frozen=True, slots=True)
class Regime:
    """A change of regime: growth n^k_below up to about n_break, n^k_above beyond."""

    n_break: float
    k_below: float
    k_above: float
    delta: float  # ΔQAICc of the broken law over the best single model
    sizes_above: int
    step: str = ""  # the class on both sides when the change is a step (quadscope.analyse.terms)


def breaks_of(n: np.ndarray) -> np.ndarray:
    """The breakpoints tried: three in each gap between sizes, MIN_BELOW below, MIN_ABOVE above."""
    logs = np.log(n)
    out = np.asarray([np.exp(logs[j] + t * (logs[j + 1] - logs[j]))
                      for j in range(MIN_BELOW - 1, n.size - MIN_ABOVE) for t in _GAP_POINTS])
    if out.size > MAX_BREAKS:  # hundreds of launches: a grid even in log n is enough
        out = out[np.unique(np.linspace(0, out.size - 1, MAX_BREAKS).round().astype(int))]
    return out


def _chi(n: np.ndarray, y: np.ndarray, w: np.ndarray, breaks: np.ndarray,
         k1: np.ndarray, k2: np.ndarray) -> np.ndarray:
    """χ² of a + b·g(n) for every breakpoint × k1 × k2 (broadcast), a, b ≥ 0."""
    x = n / breaks[:, None]  # (B, m)
    below = x <= 1.0
    lx = np.log(x)
    g = np.where(below[:, None, None, :], np.exp(k1[None, :, None, None] * lx[:, None, None, :]),
                 np.exp(k2[None, None, :, None] * lx[:, None, None, :]))
    return nnls2(g, y, w)[2]


def broken_fit(n: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float, float, float] | None:
    """(χ², n_b, k1, k2) of the best continuous broken power law, None with too few sizes."""
    breaks = breaks_of(n)
    if breaks.size == 0:
        return None
    chi = np.stack([_chi(n, y, w, breaks[i : i + 1], _K_COARSE, _K_COARSE)[0]
                    for i in range(breaks.size)])
    i, j1, j2 = np.unravel_index(int(np.argmin(chi)), chi.shape)
    nb = breaks[i : i + 1]
    fine1 = np.clip(_K_COARSE[j1] + np.linspace(-0.1, 0.1, 21), 0.0, 4.0)
    fine2 = np.clip(_K_COARSE[j2] + np.linspace(-0.1, 0.1, 21), 0.0, 4.0)
    chi_f = _chi(n, y, w, nb, fine1, fine2)[0]
    f1, f2 = np.unravel_index(int(np.argmin(chi_f)), chi_f.shape)
    return float(chi_f[f1, f2]), float(nb[0]), float(fine1[f1]), float(fine2[f2])


def find_regime(n: np.ndarray, y: np.ndarray, w: np.ndarray,
                singles: Sequence[tuple[float, int]], *, repeated: bool) -> Regime | None:
    """The change of regime the medians support, or None (see the module docstring).

    `singles` holds (χ², n_coef) of every single model fitted on the same
    medians and weights.
    """
    m = int(n.size)
    if m - N_COEF - 1 < 1 or not singles:
        return None
    fit = broken_fit(n, y, w)
    if fit is None:
        return None
    chi_b, nb, k1, k2 = fit
    if abs(k2 - k1) < MIN_BEND:
        return None
    c_hat = chi_b / (m - N_COEF)
    c_hat = max(c_hat, 1.0) if repeated else max(c_hat, RELATIVE_RESOLUTION**2)
    score_b = float(qaicc(chi_b, c_hat, m, N_COEF))
    score_single = min(float(qaicc(chi, c_hat, m, k)) for chi, k in singles)
    delta = score_single - score_b
    if not np.isfinite(delta) or delta < REGIME_DELTA:
        return None
    return Regime(nb, k1, k2, delta, int(np.sum(n > nb)))


__all__ = ["MIN_ABOVE", "MIN_UPPER_SIZES", "N_COEF", "REGIME_DELTA", "Regime", "breaks_of",
           "broken_fit", "find_regime"]
