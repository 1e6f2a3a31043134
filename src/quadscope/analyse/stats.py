"""Small statistics shared by fitting and comparison: pure numpy, no I/O.

Contract: every function here is deterministic given its inputs (randomness
comes in as a `numpy.random.Generator`), never prints, never touches disk, and
works on plain arrays. Functions marked "batched" accept leading batch axes, so
a whole bootstrap is one vectorised call instead of a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Relative precision below which two measurements are treated as identical:
# timers and counters never resolve better than one part in a million.
RELATIVE_RESOLUTION = 1e-6


@dataclass(frozen=True, slots=True)
class Groups:
    """Runs grouped by size: `padded[j, :counts[j]]` are the runs at `sizes[j]`."""

    sizes: np.ndarray  # (m,) distinct sizes, ascending
    counts: np.ndarray  # (m,) runs per size
    padded: np.ndarray  # (m, r_max) run values, NaN beyond counts[j]

    @property
    def n_obs(self) -> int:
        return int(self.counts.sum())


def group_runs(sizes: Sequence[float], values: Sequence[float]) -> Groups:
    """Group finite (size, value) pairs by size; pairs with a non-finite member are dropped."""
    n = np.asarray(sizes, dtype=float).ravel()
    y = np.asarray(values, dtype=float).ravel()
    if n.shape != y.shape:
        raise ValueError(f"sizes and values differ in length ({n.size} vs {y.size})")
    keep = np.isfinite(n) & np.isfinite(y)
    n, y = n[keep], y[keep]
    if n.size == 0:
        return Groups(np.zeros(0), np.zeros(0, dtype=np.intp), np.zeros((0, 0)))
    uniq, inverse, counts = np.unique(n, return_inverse=True, return_counts=True)
    r_max = int(counts.max()) if counts.size else 0
    padded = np.full((uniq.size, r_max), np.nan)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    slot = np.arange(n.size) - np.repeat(starts, counts)
    padded[inverse[order], slot] = y[order]
    return Groups(uniq, counts, padded)


def median_by_size(
    sizes: Sequence[float], values: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sizes (ascending), the median value at each, and the spread at each.

    The spread is the sample standard deviation of that size's runs (ddof=1),
    0 where a size has a single run. Non-finite pairs are ignored.
    """
    g = group_runs(sizes, values)
    return g.sizes, group_medians(g.padded, g.counts), group_spreads(g.padded, g.counts)


def group_medians(padded: np.ndarray, counts: np.ndarray) -> np.ndarray:
    if padded.shape[-1] and np.all(counts == padded.shape[-1]):
        return np.median(padded, axis=-1)
    return np.nanmedian(padded, axis=-1)


def group_spreads(padded: np.ndarray, counts: np.ndarray) -> np.ndarray:
    out = np.zeros(counts.shape)
    many = counts > 1
    if np.any(many):
        out[many] = np.nanstd(padded[many], axis=-1, ddof=1)
    return out


def median_variance_factor(counts: np.ndarray) -> np.ndarray:
    """Var(median of r runs) / Var(one run) for normal noise: 1/r for r ≤ 2, π/(2r) beyond.

    The large-sample factor π/(2r) is the classical efficiency of the median
    (e.g. Kendall & Stuart, The Advanced Theory of Statistics, vol. 1, §10.10).
    """
    r = np.maximum(counts.astype(float), 1.0)
    return np.where(r <= 2, 1.0 / r, np.pi / (2.0 * r))


def bootstrap_medians(groups: Groups, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """(n_boot, m) medians of runs resampled with replacement within each size.

    This is the nonparametric "cases within strata" bootstrap (Efron & Tibshirani,
    An Introduction to the Bootstrap, 1993, §8): sizes are fixed by design, runs
    at a size are exchangeable.
    """
    m, r_max = groups.padded.shape
    u = rng.random((n_boot, m, r_max))
    idx = np.minimum((u * groups.counts[None, :, None]).astype(np.intp), groups.counts[None, :, None] - 1)
    draws = groups.padded[np.arange(m)[None, :, None], idx]
    if np.all(groups.counts == r_max):
        return np.median(draws, axis=-1)
    # A size with fewer runs must draw fewer, or its medians would look too precise.
    draws = np.where(np.arange(r_max)[None, None, :] < groups.counts[None, :, None], draws, np.nan)
    return np.nanmedian(draws, axis=-1)


def nnls2(g: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched min Σ w·(y − a − b·g)² subject to a, b ≥ 0; returns (a, b, rss).

    Two-variable non-negative least squares in closed form: the unconstrained
    optimum if feasible, else the better of the two faces a = 0 and b = 0 (the
    problem is a convex quadratic, so its optimum is the best feasible
    stationary point of the interior or a face; Lawson & Hanson, Solving Least
    Squares Problems, 1974, ch. 23). `g`, `y`, `w` broadcast together; the
    last axis runs over points.
    """
    # What depends on g alone (or on y alone) is computed at its own shape, not the
    # broadcast one: a bootstrap of B replicates against a grid of K curves then costs
    # (B, K) sums only where g and y meet. Each row is summed in the same order as
    # over the broadcast arrays, so the results are the same to the last bit.
    gw, wg = np.broadcast_arrays(g, w)
    yw, wy = np.broadcast_arrays(y, w)
    sw_g, sw_y = wg.sum(-1), wy.sum(-1)
    wgv = wg * gw
    gm = wgv.sum(-1) / sw_g
    ym = (wy * yw).sum(-1) / sw_y
    gc = gw - gm[..., None]
    wgc = wg * gc
    sgg = (wgc * gc).sum(-1)
    yc = yw - ym[..., None]
    sgy = (wgc * yc).sum(-1)
    # Both branches of np.where are computed: where sgg is (nearly) 0 the quotient may
    # overflow or be 0/0, and is discarded; no numpy warning may reach the user for it.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b_in = np.where(sgg > 1e-14 * sw_g * np.max(np.abs(gw), axis=-1) ** 2, sgy / sgg, -1.0)
        b_in = np.where(np.isfinite(b_in), b_in, -1.0)  # an overflowed slope is no optimum
        a_in = ym - b_in * gm
        gg = (wgv * gw).sum(-1)
        b_face = np.where(gg > 0, np.maximum((wgv * yw).sum(-1) / gg, 0.0), 0.0)
        b_face = np.where(np.isfinite(b_face), b_face, 0.0)
    a_face = np.maximum(ym, 0.0)

    interior_ok = (a_in >= 0) & (b_in >= 0)
    a_ok = np.where(interior_ok, a_in, 0.0)
    r_in = yw - a_ok[..., None] - np.maximum(b_in, 0.0)[..., None] * gw
    rss_in = np.where(interior_ok, (w * r_in * r_in).sum(-1), np.inf)
    r_a0 = yw - b_face[..., None] * gw  # a = 0 face
    rss_a0 = (w * r_a0 * r_a0).sum(-1)
    r_b0 = yw - a_face[..., None]  # b = 0 face: y − a − 0·g, as long as g is finite
    rss_b0 = np.where(np.all(np.isfinite(gw), axis=-1), (wy * r_b0 * r_b0).sum(-1), np.nan)
    a = np.where(interior_ok, a_in, 0.0)
    b = np.where(interior_ok, b_in, 0.0)
    best = rss_in
    use_a0 = rss_a0 < best
    a, b, best = np.where(use_a0, 0.0, a), np.where(use_a0, b_face, b), np.where(use_a0, rss_a0, best)
    use_b0 = rss_b0 < best
    a, b, best = np.where(use_b0, a_face, a), np.where(use_b0, 0.0, b), np.where(use_b0, rss_b0, best)
    return a, b, best


def qaicc(
    chi2: np.ndarray | float, c_hat: np.ndarray | float, n_obs: int, n_coef: np.ndarray | int
) -> np.ndarray:
    """Quasi-likelihood AICc of a least-squares fit (Burnham & Anderson 2002, §2.4 and §6.2).

    QAICc = χ²/ĉ + 2K + 2K(K+1)/(N − K − 1), with K = n_coef + 1 because the
    variance inflation ĉ is itself estimated. When N − K − 1 < 1 the small-
    sample term uses 1 in the denominator: a deliberate, conservative cap so
    that three or four sizes still rank models rather than dividing by zero.
    """
    k = np.asarray(n_coef) + 1
    return np.asarray(chi2) / c_hat + 2 * k + 2 * k * (k + 1) / np.maximum(n_obs - k - 1, 1)


def akaike_weights(scores: np.ndarray) -> np.ndarray:
    """exp(−Δ/2) normalised, Δ = score − min (Burnham & Anderson 2002, §2.9); inf → 0."""
    s = np.asarray(scores, dtype=float)
    finite = np.isfinite(s)
    out = np.zeros_like(s)
    if not np.any(finite):
        return out
    e = np.exp(-(s[finite] - s[finite].min()) / 2.0)
    out[finite] = e / e.sum()
    return out


def nice_n(n: float) -> int:
    """Round a size up to two significant digits, the way a person would say it (43817 → 44000)."""
    if not np.isfinite(n) or n <= 0:
        return 0
    if n < 100:
        return int(np.ceil(n))
    p = 10 ** (int(np.floor(np.log10(n))) - 1)
    return int(np.ceil(n / p) * p)
