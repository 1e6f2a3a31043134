"""Growth classes: how one metric grows with n, or why that cannot be told yet.

Contract: pure functions of (sizes, values) built on numpy and scipy; no I/O,
no printing, deterministic for a given seed. `fit_metric` returns a `Fit`
(see `quadscope.model`) or raises `FitRefusedError` when there is nothing to fit.
This module computes the statistics; `_fit_range` gathers them into an
`Evidence` record, and the verdict — class, bracket, deciding size, reason and
the `doubts` behind them — is the fold of the checks of
`quadscope.analyse.verdict`. No sentence is written here (`analyse.text`).

Method, in order:
1. Runs are grouped by size and reduced to medians. Each median is weighted by
   1/σ², σ being its standard error from that size's spread shrunk halfway
   towards the relative spread of neighbouring sizes (and never below half of
   it), so that a size whose repeats happen to agree cannot dominate. The
   spread leaves out what every size's r-th run shares (drift between the
   rounds of an interleaved sweep: `_round_free_spreads`). With one
   run per size (accumulate mode) σ is relative to a first power-law fit: timing
   noise is roughly multiplicative.
2. Each class of the registry (`quadscope.classes`) is fitted as a + b·f(n), a, b ≥ 0 (non-negative least
   squares), and a free power law a + b·n^k, k ∈ [0, 4], is fitted alongside.
3. Models are ranked by QAICc (Burnham & Anderson, Model Selection and
   Multimodel Inference, 2nd ed., 2002, §2.4 and §6.2), with the variance
   inflation ĉ estimated from the best 3-parameter fit (floored at 1 when the
   weights came from real repeats). Selection then prefers the simpler class:
   a more complex class must beat every simpler one by ΔQAICc ≥ `SELECT_DELTA`.
   The verdict is `INCONCLUSIVE` whenever another growing class is within that
   margin of the winner, fewer than `MIN_SUPPORT` of bootstrap replicates reach
   the same verdict, or the free exponent's interval contradicts the class;
   in that last case the bracket also holds the classes just below and just
   above k (`_straddle`), so a k of 1.6 reads "n log n … n²", never "n² … n²".
   With repeated runs, a growing verdict must also follow the local slopes of
   the upper half of the sizes (`quadscope.analyse.slopes`): a cost per
   element that rises through the caches, or a staircase of steps, is a
   bracket reaching down to the class of the lowest local slope.
   "1" needs no bootstrap support (it is the null), only a span of a decade.
   A time whose growth adds at most HIDDEN_SHARE across the sizes (at the
   bootstrap's 97.5th percentile) is practically flat: drift between runs
   does as much, so neither the growth nor "1" is settled and the bracket
   runs from "1" to the growth found (`_negligible`).
4. Intervals (exponent k, prediction) come from a bootstrap over runs within
   each size, or over standardised residuals when there is one run per size
   (Efron & Tibshirani, An Introduction to the Bootstrap, 1993, §8–9).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import kendalltau

from quadscope.analyse import text
from quadscope.analyse.drift import drift_to_take_out, without_drift
from quadscope.analyse.regime import MIN_UPPER_SIZES, Regime, find_regime
from quadscope.analyse.slopes import swing
from quadscope.analyse.stats import (
    RELATIVE_RESOLUTION,
    Groups,
    akaike_weights,
    bootstrap_medians,
    group_medians,
    group_runs,
    group_spreads,
    median_variance_factor,
    nice_n,
    nnls2,
    qaicc,
)
from quadscope.analyse.stats import median_by_size as median_by_size
from quadscope.analyse.terms import doubt, find_step, free_offset, pair_chis, step_classes
from quadscope.analyse.verdict import (
    MIN_SUPPORT,
    Evidence,
    Hidden,
    Slopes,
    Tie,
    fold,
    needs_support,
    run_checks,
)
from quadscope.classes import INCONCLUSIVE, REGISTRY, GrowthClass, Registry
from quadscope.errors import FitRefusedError
from quadscope.metrics import find as find_metric
from quadscope.model import Candidate, Doubt, DoubtValue, Fit, Prediction

# Burnham & Anderson (2002, §2.6) read Δ of 4–7 as "considerably less support";
# we take the top of that band: below it the more complex class is not clearly better.
SELECT_DELTA = 6.0
# The exponential's base: rounds of finer grids after the class's own (see `_fit_base`).
BASE_ROUNDS = 3
BASE_POINTS = 33
# How far (in exponent units) the free power law's 95% interval may miss the
# class's own effective exponent before the class is distrusted.
EXPONENT_SLACK = 0.3
# Largest size that `decide_n` may name: beyond it no sweep is practical.
MAX_DECIDE_N = 1e12
K_GRID = np.linspace(0.0, 4.0, 81)
Z95 = 1.959964  # the normal quantile of a two-sided 95% interval
# A "1" verdict is withdrawn when the runs rise with n at this one-sided significance,
TREND_P = 0.01
# or when a growth term of any class this large a share of the cost at n_max cannot be
# ruled out: start-up cost and noise can hide slow growth over any span of sizes.
HIDDEN_SHARE = 0.15


# ---------------------------------------------------------------------------
# Prepared data: medians, weights and the bootstrap replicates shared by all fits.


@dataclass(frozen=True, slots=True)
class _Data:
    groups: Groups
    n: np.ndarray  # (m,) distinct sizes
    y: np.ndarray  # (m,) medians
    w: np.ndarray  # (m,) weights 1/σ² of the medians
    repeated: bool  # True when weights (and the bootstrap) come from real repeats

    @property
    def m(self) -> int:
        return int(self.n.size)


def _prepare(metric: str, sizes: Sequence[float], values: Sequence[float],
             launches: bool = False) -> _Data:
    groups = group_runs(sizes, values)
    if groups.sizes.size < 3:
        raise FitRefusedError(text.refused(metric, int(groups.sizes.size)))
    y = group_medians(groups.padded, groups.counts)
    scale = float(np.max(np.abs(y)))
    if scale == 0:
        floor = np.full(y.shape, RELATIVE_RESOLUTION)
    else:
        floor = RELATIVE_RESOLUTION * np.maximum(np.abs(y), 1e-3 * scale)
    # Pooled launches are not repeats: they share the machine's state of the moment, so
    # each pool's median is one observation whose noise shows in the pools' scatter.
    repeated = bool(np.median(groups.counts) >= 2) and not launches
    if repeated:
        spread = _round_free_spreads(groups)
        if spread is None:
            spread = np.where(groups.counts > 1, group_spreads(groups.padded, groups.counts),
                              np.nan)
        rel = spread / np.maximum(np.abs(y), floor)
        local = np.zeros(y.size)
        for j in range(y.size):
            near = rel[max(0, j - 2) : j + 3]
            local[j] = np.nanmedian(near) if np.any(np.isfinite(near)) else 0.0
        # A size whose repeats happen to agree must not claim to be much more precise
        # than its neighbours; one with a single run borrows its neighbours' spread.
        # Shrink each size's spread halfway to its neighbourhood's: three repeats give a
        # variance good to a factor of several, and noisy weights widen the estimate's
        # true scatter beyond what a fixed-weight bootstrap sees.
        pooled = local * np.abs(y)
        sigma_run = np.sqrt(0.5 * np.nan_to_num(spread, nan=0.0) ** 2 + 0.5 * pooled**2)
        sigma_run = np.fmax(sigma_run, 0.5 * pooled)
        sigma_run = np.where(groups.counts > 1, sigma_run, local * np.abs(y))
        sigma = np.maximum(sigma_run * np.sqrt(median_variance_factor(groups.counts)), floor)
    else:
        sigma = np.maximum(np.abs(y), floor)
        # Relative noise is judged against a smooth curve, not the noisy points themselves.
        k, a, b = _power_grid(groups.sizes, y, 1.0 / sigma**2)
        smooth = a + b * (groups.sizes / groups.sizes[-1]) ** k
        sigma = np.maximum(np.abs(smooth), floor)
    return _Data(groups, groups.sizes, y, 1.0 / sigma**2, repeated)


def _round_free_spreads(groups: Groups) -> np.ndarray | None:
    """Each size's spread of runs once what every size's r-th run shares is taken out.

    Runs are grouped in the order they ran, so a size's r-th run belongs to the
    r-th round of an interleaved sweep (the r-th repeat of a batch in an
    adaptive one). A machine that drifts between rounds moves every size's
    r-th run alike: that part of the spread is the same factor at every size,
    so it cannot bend the curve, yet counted as noise it would weigh every
    size as less precise than it is and hide a growth term that 1% noise shows
    plainly. Fitted in logs, two-way without interaction (size + round; the
    round effect by medians, so one outlier does not move it). None unless
    every size has the same number (≥ 3) of positive runs at ≥ 4 sizes.
    """
    m, r = groups.padded.shape
    if m < 4 or r < 3 or not np.all(groups.counts == r) or not np.all(groups.padded > 0):
        return None
    logs = np.log(groups.padded)
    centred = logs - logs.mean(axis=1, keepdims=True)
    rounds = np.median(centred, axis=0)
    resid = centred - (rounds - rounds.mean())
    # A row's residuals keep (r − 1)(m − 1)/m of its degrees of freedom.
    rel = np.sqrt((resid**2).sum(axis=1) / ((r - 1) * (m - 1) / m))
    return rel * np.abs(group_medians(groups.padded, groups.counts))


def _replicates(data: _Data, fitted: np.ndarray, rng: np.random.Generator, n_boot: int,
                c_hat: float | None = None) -> np.ndarray:
    """(n_boot, m) bootstrap medians: runs within sizes, or residuals when runs are single.

    With `c_hat`, half of the replicates are parametric instead: the fitted
    curve plus normal noise of each median's standard error, inflated by √ĉ for
    lack of fit (the quasi-likelihood scaling of Burnham & Anderson 2002, §6.2).
    Resampling three runs within a size understates how much their median
    varies (it can only return values already seen), and repeats that agree to
    the tick would give no spread at all; the parametric half carries the
    modelled noise and the scatter of the sizes about the curve.
    """
    sigma = 1.0 / np.sqrt(data.w)
    if data.repeated:
        if c_hat is None:
            return bootstrap_medians(data.groups, rng, n_boot)
        half = n_boot // 2
        within = bootstrap_medians(data.groups, rng, n_boot - half)
        scale = sigma * np.sqrt(max(c_hat, 1.0))
        param = fitted[None, :] + scale[None, :] * rng.standard_normal((half, data.m))
        return np.concatenate([within, param])
    z = (data.y - fitted) / sigma
    z = (z - z.mean()) * np.sqrt(data.m / max(data.m - 3, 1))  # residuals of a 3-parameter fit
    pick = rng.integers(0, data.m, size=(n_boot, data.m))
    return fitted[None, :] + sigma[None, :] * z[pick]


# ---------------------------------------------------------------------------
# Free power law a + b·(n/n_max)^k.


def _power_grid(n: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched (over leading axes of y) grid search for k with a parabolic refinement.

    Returns k, a, b with b on the normalised scale (n/n_max)^k.
    """
    x = n / n[-1]
    g = x[None, :] ** K_GRID[:, None]  # (K, m)
    yb = y[..., None, :]
    a, b, rss = nnls2(g, yb, w)
    i = np.argmin(rss, axis=-1)
    i_in = np.clip(i, 1, K_GRID.size - 2)
    take = lambda arr, j: np.take_along_axis(arr, j[..., None], axis=-1)[..., 0]  # noqa: E731
    r0, r1, r2 = take(rss, i_in - 1), take(rss, i_in), take(rss, i_in + 1)
    denom = r0 - 2 * r1 + r2
    step = K_GRID[1] - K_GRID[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(denom > 0, 0.5 * (r0 - r2) / denom, 0.0)
    interior = (i == i_in) & (np.abs(shift) <= 1)
    k = np.where(interior, K_GRID[i_in] + shift * step, K_GRID[i])
    # rss(k) is only roughly quadratic across a grid step; a second, 20× finer
    # parabola keeps the bootstrap spread of k from being flattened onto the grid.
    for h in (step / 20, step / 400):
        ks = np.clip(k[..., None] + h * np.array([-1.0, 0.0, 1.0]), K_GRID[0], K_GRID[-1])
        _, _, rr = nnls2(x ** ks[..., None], y[..., None, :], w)
        d2 = rr[..., 0] - 2 * rr[..., 1] + rr[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            move = np.where(d2 > 0, 0.5 * h * (rr[..., 0] - rr[..., 2]) / d2, 0.0)
        k = np.clip(k + np.clip(move, -2 * h, 2 * h), K_GRID[0], K_GRID[-1])
    a, b, _ = nnls2(x ** k[..., None], y, w)
    return k, a, b


def _power_point(data: _Data) -> tuple[float, float, float, float]:
    """Point estimate (k, a, b_normalised, χ²), polished by bounded least squares."""
    k0, a0, b0 = (float(v) for v in _power_grid(data.n, data.y, data.w))
    x = data.n / data.n[-1]
    sw = np.sqrt(data.w)
    scale = max(float(np.max(np.abs(data.y))), np.finfo(float).tiny)

    def resid(p: np.ndarray) -> np.ndarray:
        return sw * (data.y - scale * (p[0] + p[1] * x ** p[2]))

    start = np.clip([a0 / scale, b0 / scale, k0], [0, 0, 0], [np.inf, np.inf, 4.0])
    sol = least_squares(resid, start, bounds=([0, 0, 0], [np.inf, np.inf, 4.0]), x_scale="jac")
    chi_ls = float(np.sum(sol.fun**2))
    chi_grid = float(np.sum(resid(start) ** 2))
    if chi_ls < chi_grid:
        a, b, k = sol.x
        return float(k), float(a * scale), float(b * scale), chi_ls
    return k0, a0, b0, chi_grid


def _symmetric_interval(point: float, replicates: np.ndarray,
                        extra_se: float = 0.0) -> tuple[float, float]:
    """point ± the larger distance to the 2.5th or 97.5th percentile of the replicates, in [0, 4].

    An error the replicates do not carry (`extra_se`, a standard error) is added to
    that half-width in quadrature, at the same 95%.

    At a bound of the model (the offset a ≥ 0 at zero, as for a program with
    no start-up cost) the replicates can only move one way, and a percentile
    interval then misses the truth just beside the estimate; the symmetric
    interval does not (Efron & Tibshirani 1993, §13.3 on bias at a boundary).
    """
    lo, hi = (float(v) for v in np.percentile(replicates, [2.5, 97.5]))
    half = math.hypot(max(point - lo, hi - point, 0.0), Z95 * extra_se)
    return max(point - half, float(K_GRID[0])), min(point + half, float(K_GRID[-1]))


def _best_curve(data: _Data, fitted_pl: np.ndarray, raw: Mapping[str, _Raw | None]) -> np.ndarray:
    """The fitted medians of whichever model fits best: the power law or one of the classes.

    Parametric replicates are drawn about it, so an exponential (which no power
    law up to n⁴ can follow) is perturbed about its own curve.
    """
    best_chi = float(np.sum(data.w * (data.y - fitted_pl) ** 2))
    curve = fitted_pl
    for v in raw.values():
        if v is not None and v[2] < best_chi:
            best_chi, curve = v[2], v[3].evaluate(v[0], v[1], data.n)
    return np.asarray(curve, dtype=float)


def fit_power_law(
    sizes: Sequence[float], values: Sequence[float], seed: int = 0, n_boot: int = 200
) -> tuple[float, tuple[float, float], float, float]:
    """Free power law cost = a + b·n^k (k ∈ [0, 4], a, b ≥ 0): (k, (lo, hi), a, b).

    (lo, hi) is the 95% percentile bootstrap interval of k; b is on the raw scale.
    """
    data = _prepare("power law", sizes, values)
    k, a, b_norm, _ = _power_point(data)
    fitted = a + b_norm * (data.n / data.n[-1]) ** k
    boot = _replicates(data, fitted, np.random.default_rng(seed), n_boot)
    ks = _power_grid(data.n, boot, data.w)[0]
    lo, hi = np.percentile(ks, [2.5, 97.5])
    return k, (float(min(lo, k)), float(max(hi, k))), a, b_norm / float(data.n[-1]) ** k


# ---------------------------------------------------------------------------
# Classes.


@dataclass(frozen=True, slots=True)
class _ClassFit:
    growth: GrowthClass
    a: float
    b: float  # raw scale: cost = a + b·f(n)
    chi2: float
    score: float

    @property
    def cls(self) -> str:
        return self.growth.name

    def curve(self, n: np.ndarray) -> np.ndarray:
        return self.growth.evaluate(self.a, self.b, n)


# A class fitted on the medians: a, b (raw scale), χ², and the class itself, its base
# fixed when it has one to fit.
_Raw = tuple[float, float, float, GrowthClass]


def _fit_one(growth: GrowthClass, data: _Data) -> _Raw | None:
    norm = growth.normalised(data.n, float(data.n[-1]))
    if norm is None:
        return None
    g, f_ref = norm
    a, b, rss = nnls2(g, data.y, data.w)
    return float(a), float(b) / f_ref, float(rss), growth


def _fit_base(growth: GrowthClass, data: _Data) -> _Raw | None:
    """The best base c of an exponential a + b·cⁿ: the grid over c, then finer grids.

    Each round fits every base of a grid in one batched `nnls2` and narrows
    to the two grid steps around the best; BASE_ROUNDS rounds of BASE_POINTS
    points leave c to (2/(BASE_POINTS − 1))^BASE_ROUNDS of one step of the
    class's own grid (~2e-5).
    """
    n_ref = float(data.n[-1])
    ln_grid = np.log(np.asarray(growth.bases, dtype=float))
    best_ln, best_rss = np.nan, np.inf
    cand = ln_grid
    for _ in range(BASE_ROUNDS + 1):
        g, ok = growth.normalised_bases(data.n, n_ref, np.exp(cand))
        if np.any(ok):
            _, _, rss = nnls2(g[ok], data.y, data.w)
            i = int(np.argmin(rss))
            if rss[i] < best_rss:
                best_ln, best_rss = float(cand[ok][i]), float(rss[i])
        if not np.isfinite(best_ln):
            return None
        step = (cand[1] - cand[0]) if cand.size > 1 else 0.0
        lo = max(best_ln - step, ln_grid[0])
        hi = min(best_ln + step, ln_grid[-1])
        cand = np.linspace(lo, hi, BASE_POINTS)
    return _fit_one(growth.with_base(float(np.exp(best_ln))), data)


def _fit_classes(data: _Data, registry: Registry) -> dict[str, _Raw | None]:
    """Per class (a, b_raw, χ², class) on the medians, or None when unfittable."""
    out: dict[str, _Raw | None] = {}
    sw = data.w.sum()
    a1 = max(float((data.w * data.y).sum() / sw), 0.0)
    first = registry.classes[0]
    out[first.name] = (a1, 0.0, float((data.w * (data.y - a1) ** 2).sum()), first)
    for growth in registry.classes[1:]:
        out[growth.name] = _fit_base(growth, data) if growth.bases else _fit_one(growth, data)
    return out


def _boot_class(growth: GrowthClass, data: _Data, boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Refit one class on each bootstrap replicate: (a*, b*_raw)."""
    if not growth.growing:
        a = np.maximum((boot * data.w).sum(-1) / data.w.sum(), 0.0)
        return a, np.zeros_like(a)
    norm = growth.normalised(data.n, float(data.n[-1]))
    if norm is None:
        raise ValueError(f"class {growth.name} cannot be fitted at these sizes")
    g, f_ref = norm
    a, b, _ = nnls2(g, boot, data.w)
    return a, b / f_ref


def bootstrap_class(
    cls: str, sizes: Sequence[float], values: Sequence[float], *, seed: int = 0, n_boot: int = 200,
    registry: Registry = REGISTRY,
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Fit cost = a + b·f(n) for one class with its bootstrap: (a, b, a*, b*), b on the raw scale."""
    data = _prepare("class", sizes, values)
    fits = _fit_classes(data, registry)
    fit = fits[cls]
    if fit is None:
        raise ValueError(f"class {cls} cannot be fitted at these sizes")
    a, b, _, growth = fit
    fitted = growth.evaluate(a, b, data.n)
    boot = _replicates(data, fitted, np.random.default_rng(seed), n_boot)
    a_s, b_s = _boot_class(growth, data, boot)
    return a, b, a_s, b_s


# ---------------------------------------------------------------------------
# Verdict.


def _divergence_n(c1: _ClassFit, c2: _ClassFit, n_max: float, tol: float) -> int | None:
    """Smallest n > n_max where the two fitted curves differ by more than `tol` (relative)."""
    grid = np.logspace(np.log10(n_max), np.log10(MAX_DECIDE_N), 400)[1:]
    with np.errstate(invalid="ignore", over="ignore"):
        p1 = c1.curve(grid)
        p2 = c2.curve(grid)
        rel = np.abs(p1 - p2) / np.maximum(np.maximum(np.abs(p1), np.abs(p2)), np.finfo(float).tiny)
    rel = np.where(np.isfinite(rel), rel, 1.0)
    hit = np.nonzero(rel > tol)[0]
    return None if hit.size == 0 else nice_n(grid[hit[0]])


def _tie(c1: _ClassFit, c2: _ClassFit, top: _ClassFit, data: _Data, c_hat: float) -> Tie:
    """Why c1 and c2 cannot be told apart (start-up dominating `top`, or both fit as well),
    and the n where their predictions part."""
    lo_n, hi_n = float(data.n[0]), float(data.n[-1])
    sigma_rel = np.sqrt(c_hat / data.w[-3:]) / np.maximum(np.abs(data.y[-3:]), np.finfo(float).tiny)
    # Curves must part by several standard errors of a median to be told apart at one size.
    tol = float(np.clip(3 * np.median(sigma_rel), 0.02, 0.5))
    decide_n = _divergence_n(c1, c2, hi_n, tol)
    grow = float(top.growth.evaluate(0.0, top.b, np.array([hi_n]))[0]) if top.growth.growing else 0.0
    total = top.a + grow
    frac = grow / total if total > 0 and np.isfinite(total) else 1.0
    share = float(frac) if top.growth.growing and frac < 0.5 else None
    return Tie(c1.cls, c2.cls, lo_n, hi_n, decide_n, share)


def _rise(data: _Data, boot: np.ndarray, growth: GrowthClass,
          b: float | None = None) -> tuple[float, float, float] | None:
    """(point, upper, b_upper): the rise of a `growth` term across the sizes, as shares of the cost.

    The rise is what b·f(n) adds from the smallest size to the largest, over
    the median cost; the upper value takes b_upper, the 97.5th percentile of
    the bootstrap b, the point value `b` (the fit on the data) when given. None
    when the class cannot be fitted here or the cost is not positive.
    """
    if growth.normalised(data.n, float(data.n[-1])) is None:
        return None
    _, b_s = _boot_class(growth, data, boot)
    b_hi = float(np.nanpercentile(b_s, 97.5)) if b_s.size else 0.0
    level = float(np.median(data.y))
    if not np.isfinite(b_hi) or level <= 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        span = growth.evaluate(0.0, 1.0, data.n[[0, -1]])
        unit = float(span[-1] - span[0]) / level
    if not np.isfinite(unit):
        return None
    return max(b or 0.0, 0.0) * unit, max(b_hi, 0.0) * unit, b_hi


def _hidden(data: _Data, boot: np.ndarray, growth: GrowthClass) -> tuple[float, int | None] | None:
    """(share, n) when the runs cannot rule out a `growth` term above HIDDEN_SHARE of the cost.

    The 97.5th percentile of the bootstrap b of a + b·f(n) says how much growth
    of that shape the noise could hide over the measured sizes; where it could
    be a sizeable part of the cost, "constant" is not yet shown. The n returned
    is where such a term would add as much again as the constant part, so
    growing to it settles the question (None when no practical n does).
    """
    rise = _rise(data, boot, growth)
    if rise is None or rise[1] <= HIDDEN_SHARE:
        return None
    _, share, b_hi = rise
    level = float(np.median(data.y))
    base = growth.evaluate(0.0, b_hi, data.n[[0, -1]])
    grid = np.logspace(np.log10(2 * data.n[-1]), np.log10(MAX_DECIDE_N), 200)
    with np.errstate(over="ignore", invalid="ignore"):
        added = growth.evaluate(0.0, b_hi, grid) - base[0]
    reach = np.nonzero(added >= level)[0]
    return share, (nice_n(float(grid[reach[0]])) if reach.size else None)


def _hidden_walk(data: _Data, boot: np.ndarray, fits: Mapping[str, _ClassFit],
                 registry: Registry) -> tuple[Hidden, ...]:
    """The growing classes the runs could hide above HIDDEN_SHARE, with `_hidden`'s (share, n).

    Slow growth hides first: the walk goes up from the slowest class while each could hide.
    """
    hidden = []
    for g in (g for g in registry if g.growing):
        if (h := _hidden(data, boot, fits[g.name].growth)) is None:
            break
        hidden.append(Hidden(g.name, h[0], h[1]))
    return tuple(hidden)


def _negligible(data: _Data, boot: np.ndarray, fit: _ClassFit) -> tuple[float, int | None] | None:
    """(upper rise, n) when the growth `fit` finds adds at most HIDDEN_SHARE across the sizes.

    A rise that small is within what a sweep's own drift produces: machine
    state shifts timings by several percent between runs and set-ups
    (Mytkowicz et al., "Producing wrong data without doing anything obviously
    wrong!", ASPLOS 2009; Kalibera & Jones, "Rigorous benchmarking in
    reasonable time", ISMM 2013), and in adaptive mode n grows with time, so
    drift rises with log n. The growth is then practically equivalent to none
    (an equivalence margin, as in Schuirmann's two one-sided tests, J.
    Pharmacokinet. Biopharm. 15, 1987): neither it nor a constant is settled.
    The n returned is where the fitted term would add 2·HIDDEN_SHARE, so
    growing to it shows the growth if it is real (None beyond MAX_DECIDE_N).
    """
    if not fit.growth.growing:
        return None
    rise = _rise(data, boot, fit.growth, fit.b)
    if rise is None or rise[1] > HIDDEN_SHARE:
        return None
    level = float(np.median(data.y))
    grid = np.logspace(np.log10(2 * data.n[-1]), np.log10(MAX_DECIDE_N), 200)
    with np.errstate(over="ignore", invalid="ignore"):
        added = fit.growth.evaluate(0.0, fit.b, grid) - fit.growth.evaluate(0.0, fit.b, data.n[:1])
    reach = np.nonzero(added >= 2 * HIDDEN_SHARE * level)[0]
    return rise[1], (nice_n(float(grid[reach[0]])) if reach.size else None)


def _drifts(metric: str) -> bool:
    """Whether `metric` is a time: clocks drift with the machine's state, counts of events do not."""
    found = find_metric(metric)
    return found is not None and found.unit == "s"


def _rising(sizes: Sequence[float], values: Sequence[float]) -> tuple[float, float] | None:
    """(τ, p) when the raw runs rise with n beyond chance (one-sided Kendall test), else None.

    Model selection on a handful of medians can prefer a constant while every
    run at the largest sizes sits above every run at the smallest; a rank test
    on the runs themselves (Kendall 1938) keeps that from becoming a confident "1".
    """
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 5 or np.ptp(y[ok]) == 0:
        return None
    res = kendalltau(x[ok], y[ok], alternative="greater")
    tau, p = float(res.statistic), float(res.pvalue)
    return (tau, p) if np.isfinite(p) and p < TREND_P else None


def _effective_exponent(cf: _ClassFit, data: _Data) -> float:
    """The k a free power law finds on the class's own noise-free curve at these sizes."""
    if cf.growth.outgrows_powers:
        return float(K_GRID[-1])
    return float(_power_grid(data.n, cf.curve(data.n), data.w)[0])


def _straddle(k: float, fits: Mapping[str, _ClassFit], data: _Data,
              registry: Registry) -> tuple[str, str]:
    """The fastest class whose effective exponent is at most k, and the slowest at least k.

    Either is "" when no fitted class lies on that side; a class beyond every
    power is left out (its effective exponent is the top of k's search).
    """
    below, above = "", ""
    for growth in registry:
        fit = fits[growth.name]
        if growth.outgrows_powers or not np.isfinite(fit.score):
            continue
        k_eff = _effective_exponent(fit, data) if growth.growing and fit.b > 0 else 0.0
        if k_eff <= k:
            below = growth.name
        elif not above:
            above = growth.name
    return below, above


# Leave-one-out drops at most this many blocks of neighbouring sizes, so a sweep
# of 600 launches (one size each) is checked in 20 refits, not 600.
MAX_LEAVE_OUT = 20


def _leave_out(data: _Data, c_hat: float, registry: Registry) -> tuple[set[str], set[str]]:
    """Refit every class with each size (or block of sizes) left out in turn.

    Returns the classes chosen in some refit and the classes within
    SELECT_DELTA of the best in some refit. A verdict that one size carries —
    an outlier at the top, a step at one size — changes when that size is
    dropped, so a confident class must be the choice of every refit and a
    bracket must hold every class some refit leaves standing (the jackknife
    idea of Quenouille 1956 and Tukey 1958, applied to the selection).
    """
    chosen: set[str] = set()
    leading: set[str] = set()
    if data.m < 4:
        return chosen, leading
    for block in np.array_split(np.arange(data.m), min(data.m, MAX_LEAVE_OUT)):
        keep = np.ones(data.m, dtype=bool)
        keep[block] = False
        sub = _Data(data.groups, data.n[keep], data.y[keep], data.w[keep], data.repeated)
        raw = _fit_classes(sub, registry)
        scores = np.array([np.inf if raw[g.name] is None else
                           float(qaicc(raw[g.name][2], c_hat, sub.m, g.n_coef))  # type: ignore[index]
                           for g in registry])
        delta = scores - np.min(scores)
        names = [g.name for g, d in zip(registry, delta, strict=True) if d < SELECT_DELTA]
        chosen.add(names[0])
        leading.update(names)
    return chosen, leading


def _select(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched selection over the last axis (ordered as the registry): (chosen, unique).

    chosen is the simplest class within SELECT_DELTA of the best score; unique
    says no other growing class is within that margin too.
    """
    delta = scores - np.min(scores, axis=-1, keepdims=True)
    near = delta < SELECT_DELTA
    chosen = np.argmax(near, axis=-1)
    growing_near = near.copy()
    growing_near[..., 0] = False
    unique = (chosen == 0) | (growing_near.sum(-1) == 1)
    return chosen, unique


def _bootstrap_verdicts(data: _Data, boot: np.ndarray, c_hat: float,
                        classes: Sequence[GrowthClass]) -> np.ndarray:
    """(n_boot,) index in the registry of each replicate's confident verdict, −1 when it has none.

    Selection frequencies over bootstrap replicates measure how stable a chosen
    model is (Burnham & Anderson 2002, §5.3; Buckland, Burnham & Augustin 1997).
    ĉ stays the one estimated on the data: a replicate's medians scatter about
    the observed ones, not about the truth, so re-estimating ĉ on them would
    roughly double it and halve every ΔQAICc.
    """
    n_boot = boot.shape[0]
    chi = np.full((n_boot, len(classes)), np.inf)
    sw = data.w.sum()
    a1 = np.maximum((boot * data.w).sum(-1) / sw, 0.0)
    chi[:, 0] = (data.w * (boot - a1[:, None]) ** 2).sum(-1)
    # An exponential keeps the base fitted on the data: refitting c per replicate would
    # cost a grid search each, and the base barely moves between replicates.
    for i, growth in enumerate(classes[1:], start=1):
        norm = growth.normalised(data.n, float(data.n[-1]))
        if norm is not None:
            chi[:, i] = nnls2(norm[0], boot, data.w)[2]
    n_coef = np.array([growth.n_coef for growth in classes])
    scores = qaicc(chi, c_hat, data.m, n_coef)
    chosen, unique = _select(scores)
    return np.where(unique, chosen, -1)


def _k_supported(fits: Mapping[str, _ClassFit], data: _Data, k_ci: tuple[float, float],
                 registry: Registry) -> tuple[str, ...]:
    """The growing classes whose own exponent lies in k's 95% interval (± EXPONENT_SLACK).

    The exponent is the one a free power law sees on the class's fitted
    curve; with the classes within SELECT_DELTA of the best they are the
    classes an unsettled verdict's bracket holds (`verdict.fold`).
    """
    supported = []
    for growth in registry:
        fit = fits[growth.name]
        if growth.growing and np.isfinite(fit.score) and fit.b > 0:
            k_eff = _effective_exponent(fit, data)
            # A class beyond every power is only seen by k when k's interval is pinned at
            # its bound; an interval that merely reaches the bound says k is unidentified.
            beyond = growth.outgrows_powers and k_ci[0] < k_eff - 1.0
            if k_ci[0] - EXPONENT_SLACK <= k_eff <= k_ci[1] + EXPONENT_SLACK and not beyond:
                supported.append(growth.name)
    return tuple(supported)


def fit_metric(
    metric: str,
    sizes: Sequence[float],
    values: Sequence[float],
    *,
    predict_n: int | None = None,
    seed: int = 0,
    n_boot: int = 200,
    registry: Registry = REGISTRY,
    pooled: bool = False,
) -> Fit:
    """How `metric` grows with n, from raw per-run observations (see the module docstring).

    `r2` is the weighted R² of the reported class on the per-size medians, with
    the same weights as the fit. `n_points` counts the finite runs used. The
    candidates are the classes of `registry`, in its order. When the growth
    changes regime inside the sizes (`quadscope.analyse.regime`), the fit is
    the upper regime's, fitted on the sizes above the change alone, and
    `regime_n`, `regime_below` and `regime_k` say where and from what.
    `values` are in the order the runs ran: a time's steady drift over that
    order is taken out first (`quadscope.analyse.drift`). `pooled` says each
    size's runs are consecutive launches of accumulate mode (`analyse.launches`):
    their order is their size, so no drift is taken out, and they share the
    machine's state of the moment, so they are not repeats: each size's median
    is fitted as one observation, its noise judged from the sizes' scatter
    about a smooth curve, as with one run per size (no local slopes' or
    steps' test, whose noise would come from the runs' spread).
    """
    rate = drift_to_take_out(sizes, values) if not pooled and _drifts(metric) else None
    drift = None
    if rate is not None:  # a time: the machine's drift is not growth
        values = without_drift(values, rate[0])
        drift = _DriftError(rate[1], tuple(sizes), tuple(values))
    return _fit_range(metric, sizes, values, predict_n=predict_n, seed=seed, n_boot=n_boot,
                      registry=registry, split=True, settle=True, pooled=pooled, drift=drift)


@dataclass(frozen=True, slots=True)
class _DriftError:
    """The drift taken out of a sweep's runs: its standard error `se`, the whole sweep's
    sizes and (detrended) values in run order, and which runs a part of it fits (`keep`)."""

    se: float
    sizes: tuple[float, ...]
    values: tuple[float, ...]
    keep: np.ndarray | None = None

    def k_error(self, metric: str) -> float:
        """The standard error the drift's own error gives the exponent k: half the change of
        the power law's k when the runs are tilted by −se and +se per run (in the whole
        sweep's order), fitted on the runs `keep` picks.

        The bootstrap resamples runs already detrended, so without it the interval for
        k would treat the drift as known; sizes grow with time in an adaptive sweep,
        so an error in the drift is an error in k (calibration: with 10% drift the
        interval held the true k 82% of the time at 5% noise).
        """
        x = np.asarray(self.sizes, dtype=float)
        pick = np.ones(x.size, dtype=bool) if self.keep is None else self.keep
        ks = [_power_point(_prepare(metric, x[pick],
                                    np.asarray(without_drift(self.values, d))[pick]))[0]
              for d in (-self.se, self.se)]
        return abs(ks[1] - ks[0]) / 2


def _fit_range(metric: str, sizes: Sequence[float], values: Sequence[float], *,
               predict_n: int | None, seed: int, n_boot: int, registry: Registry,
               split: bool, settle: bool, pooled: bool = False,
               drift: _DriftError | None = None) -> Fit:
    """`fit_metric`; `split` looks for a change of regime, and without `settle` a class is only a bracket.

    `drift` is the drift taken out of `values` (None: none), whose error goes into k's
    interval. The statistics are computed here; the verdict is the fold of the checks'
    doubts (`quadscope.analyse.verdict`).
    """
    data = _prepare(metric, sizes, values, pooled)
    rng = np.random.default_rng(seed)
    k, a_pl, b_pl_norm, chi_pl = _power_point(data)
    fitted_pl = a_pl + b_pl_norm * (data.n / data.n[-1]) ** k
    raw = _fit_classes(data, registry)
    if split and (regime := _change(data, raw, chi_pl, registry)) is not None:
        return _split(metric, sizes, values, regime, predict_n=predict_n, seed=seed,
                      n_boot=n_boot, registry=registry, pooled=pooled, drift=drift)
    chis = [chi_pl] + [v[2] for c, v in raw.items() if v is not None and c != "1"]
    dof = data.m - 3
    c_hat = min(chis) / dof if dof >= 1 else 1.0
    c_hat = max(c_hat, 1.0) if data.repeated else max(c_hat, RELATIVE_RESOLUTION**2)

    boot = _replicates(data, _best_curve(data, fitted_pl, raw), rng, n_boot, c_hat)
    power_boot = _power_grid(data.n, boot, data.w)
    k_ci = _symmetric_interval(k, power_boot[0],
                               extra_se=0.0 if drift is None else drift.k_error(metric))
    fits = _score_classes(raw, data, c_hat, registry)
    ev = _evidence(metric, sizes, values, _Stats(data, boot, fits, c_hat, registry), k, k_ci,
                   split=split, settle=settle, pooled=pooled)
    doubts = run_checks(ev)
    if needs_support(ev, doubts):  # only an unsettled bracket reads the classes k's interval holds
        ev = replace(ev, k_supported=_k_supported(fits, data, k_ci, registry))
    verdict = fold(ev, doubts)
    cls = verdict.cls
    report = fits[cls if cls != INCONCLUSIVE else ev.best]
    if cls == INCONCLUSIVE and ev.chosen == "1":
        report = fits["1"]
    wm = (data.w * data.y).sum() / data.w.sum()
    tss = float((data.w * (data.y - wm) ** 2).sum())
    scores = np.array([fits[c].score for c in registry.names])
    candidates = tuple(
        Candidate(c, fits[c].a, fits[c].b, fits[c].score, float(wt), fits[c].chi2)
        for c, wt in zip(registry.names, akaike_weights(scores), strict=True)
    )
    # With no growth to measure, a power law's k is unidentified (any k fits b = 0):
    # report none rather than a number that only reflects the noise.
    flat = cls == "1"
    return Fit(
        metric=metric,
        cls=cls,
        exponent=None if flat else float(k),
        exponent_ci=None if flat else k_ci,
        coefficients={"a": report.a, "b": report.b,
                      **({"c": report.growth.base}
                         if report.growth.bases and report.growth.base is not None else {})},
        r2=None if tss <= 0 else 1.0 - report.chi2 / tss,
        candidates=candidates,
        n_points=data.groups.n_obs,
        reason=verdict.reason,
        decide_n=verdict.decide_n,
        prediction=None if predict_n is None else _predict(
            int(predict_n), report, [fits[c] for c in ev.leading], data, boot,
            power_boot if cls == INCONCLUSIVE else None),
        best=ev.best,
        at_least=verdict.at_least,
        at_most=verdict.at_most,
        doubts=verdict.doubts,
    )


def _change(data: _Data, raw: Mapping[str, _Raw | None], chi_pl: float,
            registry: Registry) -> Regime | None:
    """A change of regime, or a step, that beats every single model; None when there is none."""
    singles = [(chi_pl, 3)] + [(v[2], v[3].n_coef) for v in raw.values() if v is not None]
    regime = find_regime(data.n, data.y, data.w, singles, repeated=data.repeated)
    # A step must also beat two growth terms, whose sum it can otherwise mimic.
    # With one run per size the noise is judged against a smooth fit, too loosely for a
    # discontinuous candidate: a step is only looked for among repeated runs.
    step = find_step(data.n, data.y, data.w, singles + pair_chis(data.n, data.y, data.w, registry),
                     registry, repeated=data.repeated, select=SELECT_DELTA) if data.repeated else None
    if step is not None and (regime is None or step.delta > regime.delta):
        regime = step  # the same class on both sides fits better than a bend
    return regime


def _score_classes(raw: Mapping[str, _Raw | None], data: _Data, c_hat: float,
                   registry: Registry) -> dict[str, _ClassFit]:
    """Every class of the registry with its QAICc (inf when it could not be fitted)."""
    fits: dict[str, _ClassFit] = {}
    for growth in registry:
        v = raw[growth.name]
        if v is None:
            fits[growth.name] = _ClassFit(growth, 0.0, 0.0, np.inf, np.inf)
        else:
            score = float(qaicc(v[2], c_hat, data.m, growth.n_coef))
            fits[growth.name] = _ClassFit(v[3], v[0], v[1], v[2], score)
    return fits


def _predict(at_n: int, report: _ClassFit, leading: Sequence[_ClassFit], data: _Data,
             boot: np.ndarray, power_boot: tuple[np.ndarray, ...] | None) -> Prediction:
    """The reported curve at `at_n`, its interval spanning every leading class's replicates.

    With `power_boot` (the class is not settled, so neither is the extrapolation) the
    interval also spans the free power law's replicates, whose k ranges over what the
    data allow.
    """
    at = np.array([float(at_n)])
    value = float(report.curve(at)[0])
    lows, highs = [], []
    for fit in {f.cls: f for f in (report, *leading)}.values():
        a_s, b_s = _boot_class(fit.growth, data, boot)
        with np.errstate(over="ignore", invalid="ignore"):
            p = fit.growth.evaluate(a_s, b_s, at)[:, 0]
        lo_p, hi_p = np.nanpercentile(p, [2.5, 97.5])
        lows.append(float(lo_p))
        highs.append(float(hi_p))
    if power_boot is not None:
        k_b, a_b, b_b = power_boot
        with np.errstate(over="ignore", invalid="ignore"):
            p = a_b + b_b * (float(at_n) / data.n[-1]) ** k_b
        lo_p, hi_p = np.nanpercentile(p, [2.5, 97.5])
        lows.append(float(lo_p))
        highs.append(float(hi_p))
    return Prediction(at_n, value, min(min(lows), value), max(max(highs), value))


@dataclass(frozen=True, slots=True)
class _Stats:
    """What every piece of evidence is computed from: the medians, replicates and class fits."""

    data: _Data
    boot: np.ndarray
    fits: Mapping[str, _ClassFit]
    c_hat: float
    registry: Registry

    def tie(self, c1: str, c2: str, top: str) -> Tie:
        return _tie(self.fits[c1], self.fits[c2], self.fits[top], self.data, self.c_hat)


def _evidence(metric: str, sizes: Sequence[float], values: Sequence[float], st: _Stats, k: float,
              k_ci: tuple[float, float], *, split: bool, settle: bool, pooled: bool) -> Evidence:
    """The statistics the checks of `quadscope.analyse.verdict` read (see `Evidence`)."""
    data, fits, registry = st.data, st.fits, st.registry
    ev = Evidence(metric, registry, settle, *_selection(st), float(data.n[0]), float(data.n[-1]),
                  k, k_ci, bool(k >= K_GRID[-1] - 1e-9), (), ())
    ev = _tied(ev, st)
    if ev.chosen == "1":
        ev = _constant(ev, st, data.n.tolist() if pooled else sizes,
                       data.y.tolist() if pooled else values)
    elif not ev.other:
        k_eff = _effective_exponent(fits[ev.chosen], data)
        if k_eff < k_ci[0] - EXPONENT_SLACK or k_eff > k_ci[1] + EXPONENT_SLACK:
            ev = replace(ev, straddle=_straddle(k, fits, data, registry))
    # Growth found (the chosen class, or the best growing one where the runs rise) that adds
    # too little across the sizes to tell from drift settles neither it nor a constant.
    grower = ev.chosen if ev.chosen != "1" else (
        min(registry.names[1:], key=lambda c: fits[c].score) if ev.trend is not None else "")
    negligible = _negligible(data, st.boot, fits[grower]) if grower and _drifts(metric) else None
    ev = replace(ev, grower=grower, negligible=negligible)
    if negligible is not None and ev.chosen != "1":
        ev = replace(ev, hidden=_hidden_walk(data, st.boot, fits, registry))
    if ev.chosen != "1":
        ev = replace(ev, slopes=_slopes(ev, st) if negligible is None else None,
                     second_term=doubt(fits[ev.chosen].growth, data.n, data.y, data.w,
                                       fits[ev.chosen].chi2, registry, repeated=data.repeated,
                                       max_n=MAX_DECIDE_N) if split else None)
    return ev


def _selection(st: _Stats) -> tuple[str, str]:
    """(chosen, best): the simplest class within SELECT_DELTA of the best, and the best."""
    names = st.registry.names
    scores = np.array([st.fits[c].score for c in names])
    best = names[int(np.argmin(scores))]  # argmin takes the first, i.e. simpler, on ties
    chosen = next(c for c in names if st.fits[c].score - st.fits[best].score < SELECT_DELTA)
    return chosen, best


def _tied(ev: Evidence, st: _Stats) -> Evidence:
    """The leading classes, what leaving a size out chooses, and the runner-up of a tie."""
    names, fits, chosen, best = st.registry.names, st.fits, ev.chosen, ev.best
    delta = {c: fits[c].score - fits[best].score for c in names}
    leading = [c for c in names if delta[c] < SELECT_DELTA]
    verdicts = _bootstrap_verdicts(st.data, st.boot, st.c_hat, [fits[c].growth for c in names])
    support = float(np.mean(verdicts == names.index(chosen)))
    rivals = [c for c in leading if c not in (chosen, "1")] if chosen != "1" else []
    if chosen == "1":
        leading = ["1"]
    loo_chosen, loo_leading = _leave_out(st.data, st.c_hat, st.registry)
    shaky = tuple(sorted(loo_chosen - {chosen}, key=st.registry.index))
    ev = replace(ev, leading=tuple(leading), loo_leading=tuple(loo_leading), shaky=shaky)
    if not (rivals or (chosen != "1" and (support < MIN_SUPPORT or shaky))):
        return ev
    # The runner-up: the best rival on the data, else what leaving a size out chooses,
    # else the bootstrap's favourite alternative.
    if rivals:
        other = best if best != chosen else min(rivals, key=lambda c: delta[c])
    elif shaky:
        other = shaky[-1]
    else:
        alt = verdicts[(verdicts >= 0) & (verdicts != names.index(chosen))]
        other = names[int(np.bincount(alt).argmax())] if alt.size else (
            min((c for c in names if c != chosen), key=lambda c: delta[c])
        )
    return replace(ev, leading=tuple(dict.fromkeys([chosen, other, *leading])), other=other,
                   tie_by="rival" if rivals else "leave_one_out" if shaky else "bootstrap",
                   tie=st.tie(chosen, other, best))


def _constant(ev: Evidence, st: _Stats, sizes: Sequence[float], values: Sequence[float]) -> Evidence:
    """A constant chosen: whether the runs rise, the growth they could hide, what one size carries.

    Pooled launches are given as their per-size medians: one observation per pool
    (their runs move together).
    """
    data, fits = st.data, st.fits
    rise = _rising(sizes, values)
    trend: tuple[float, float | None] | None = rise
    if rise is None and ev.k_ci[0] > 0.5 and data.y[0] > 0 and data.y[-1] > 1.5 * data.y[0]:
        # Too few points for a rank test, yet the exponent's interval excludes flat
        # and the cost grew by half: not evidence of a constant.
        trend = (1.0, None)
    hidden = _hidden_walk(data, st.boot, fits, st.registry)
    rising_tie = None
    if trend is not None:
        growing = min(st.registry.names[1:], key=lambda c: fits[c].score)
        rising_tie = st.tie("1", growing, growing)
    loo_tie = st.tie("1", ev.shaky[-1], ev.shaky[-1]) if ev.shaky else None
    return replace(ev, trend=trend, rising_tie=rising_tie, hidden=hidden, loo_tie=loo_tie)


def _slopes(ev: Evidence, st: _Stats) -> Slopes | None:
    """The local slopes' swing about the judged class: the chosen one, or the best where a
    tie or k's interval already unsettles it (`quadscope.analyse.slopes`)."""
    judged = ev.best if ev.other or ev.straddle is not None else ev.chosen
    if not st.data.repeated or not st.registry[judged].growing:
        return None
    data = st.data
    swung = swing(data.n, data.y, data.w, st.fits[judged].curve(data.n), st.registry)
    if swung is None:
        return None
    return Slopes(judged, swung.at_least, swung.low, swung.high, swung.n_low, swung.n_high,
                  nice_n(10 * float(data.n[-1])))


def _split(metric: str, sizes: Sequence[float], values: Sequence[float], regime: Regime, *,
           predict_n: int | None, seed: int, n_boot: int, registry: Registry,
           pooled: bool = False, drift: _DriftError | None = None) -> Fit:
    """The fit of a metric that changes regime: the upper regime's, fitted on its sizes alone.

    One class is not extrapolated across the change. Below MIN_UPPER_SIZES
    sizes above it the upper class is at best a bracket, and with two it is
    not fitted at all; either way `decide_n` asks for the sizes that would
    settle it (adaptive mode grows n towards them), and a "regime" doubt says so.
    """
    x = np.asarray(sizes, dtype=float)
    v = np.asarray(values, dtype=float)
    above = x > regime.n_break

    def part(keep: np.ndarray, predict: int | None, settle: bool) -> Fit:
        return _fit_range(metric, x[keep], v[keep], predict_n=predict, seed=seed, n_boot=n_boot,
                          registry=registry, split=False, settle=settle, pooled=pooled,
                          drift=None if drift is None else replace(drift, keep=keep))

    lower = part(~above, None, True)
    at = nice_n(regime.n_break)
    hi_n = float(np.max(x[np.isfinite(x) & np.isfinite(v)]))
    short = MIN_UPPER_SIZES - regime.sizes_above
    decide_n = nice_n(hi_n * 2.0**short) if short > 0 else None
    where = dict(regime_n=at, regime_below=lower.cls if lower.confident else "",
                 regime_k=(regime.k_below, regime.k_above))
    numbers: dict[str, DoubtValue] = {
        "n_break": at, "k_below": regime.k_below, "k_above": regime.k_above,
        "sizes_above": regime.sizes_above, "hi_n": hi_n, "fitted": int(regime.sizes_above >= 3)}
    if regime.sizes_above < 3:
        whole = part(np.ones(x.size, dtype=bool), predict_n, False)
        few = Doubt("regime", "", "", decide_n, numbers=numbers)
        return replace(whole, cls=INCONCLUSIVE, at_least="", at_most="", decide_n=decide_n,
                       reason=text.doubt_text(few, registry), doubts=(few,),
                       **where)  # type: ignore[arg-type]
    upper = part(above, predict_n, short <= 0)
    same = lower.cls if lower.confident and registry[lower.cls].growing else regime.step
    if same and not (upper.at_least and registry.index(upper.at_least) <= registry.index(same)
                     <= registry.index(upper.at_most)):
        stepped = _step(metric, x[above], v[above], same, lower, upper, regime, short, registry)
        if stepped is not None:
            return stepped
    if short > 0:
        lo, hi = _reach_back(upper, lower, regime, registry)
        doubt_ = Doubt("regime", lo, hi, max(decide_n or 0, upper.decide_n or 0), numbers=numbers)
        return replace(upper, reason=text.doubt_text(replace(doubt_, decide_n=decide_n), registry),
                       at_least=lo, at_most=hi, decide_n=doubt_.decide_n,
                       doubts=(*upper.doubts, doubt_), **where)  # type: ignore[arg-type]
    return replace(upper, reason=text.above_regime(at, upper.reason),
                   **where)  # type: ignore[arg-type]


def _reach_back(upper: Fit, lower: Fit, regime: Regime, registry: Registry) -> tuple[str, str]:
    """The upper regime's bracket, reaching back to the neighbour of the regime below.

    Just above a change, the cost still carries what was spent below it (an offset
    that may be negative, which a ≥ 0 cannot follow), so a few sizes overstate or
    understate the new growth.
    """
    lo, hi = upper.at_least, upper.at_most
    if lo and hi and lower.at_least and lower.at_most:
        order = registry.index
        if regime.k_above > regime.k_below:
            near = registry.classes[min(order(lower.at_most) + 1, len(registry) - 1)].name
            lo = min(lo, near, key=order)
        else:
            near = registry.classes[max(order(lower.at_least) - 1, 0)].name
            hi = max(hi, near, key=order)
    return lo, hi


def _step(metric: str, sizes: np.ndarray, values: np.ndarray, name: str, lower: Fit, upper: Fit,
          regime: Regime, short: int, registry: Registry) -> Fit | None:
    """The upper regime read as class `name` with a free offset: a step, not a new class.

    `name` is the settled class below the change, or the class of the step
    candidate. A per-element cost that steps up leaves the upper sizes a
    negative offset, which a ≥ 0 cannot follow, so they read as a faster class
    on their own (`quadscope.analyse.terms`). When `name` with a free offset is
    what the upper sizes choose, alone, the class below is settled as the same,
    and enough sizes lie above, the verdict is that class with a step; when it
    is only among the choices, the bracket reaches down to it (a "step" doubt).
    None when the upper sizes rule it out.
    """
    data = _prepare(metric, sizes.tolist(), values.tolist())
    near = step_classes(data.n, data.y, data.w, registry, delta=SELECT_DELTA,
                        repeated=data.repeated)
    if name not in near:
        return None
    at = nice_n(regime.n_break)
    a, b, _ = free_offset(registry[name], data.n, data.y, data.w)
    below_b = lower.coefficients.get("b", 0.0)
    numbers: dict[str, DoubtValue] = {"n_break": at, "class": name,
                                      "ratio": b / below_b if below_b > 0 else None}
    where = dict(regime_n=at, regime_below=name, regime_k=(regime.k_below, regime.k_above))
    if near == [name] and short <= 0 and lower.cls == name:
        return replace(upper, cls=name, at_least=name, at_most=name, exponent=lower.exponent,
                       exponent_ci=lower.exponent_ci, coefficients={"a": a, "b": b},
                       reason=text.step(numbers), decide_n=None, best=name, doubts=(),
                       **where)  # type: ignore[arg-type]
    lo = min(filter(None, (name, upper.at_least)), key=registry.index)
    hi = max(filter(None, (name, upper.at_most, near[0])), key=registry.index)
    stepped = Doubt("step", lo, hi, upper.decide_n, numbers=numbers)
    return replace(upper, cls=INCONCLUSIVE, at_least=lo, at_most=hi,
                   reason=text.then(text.doubt_text(stepped, registry), upper.reason),
                   doubts=(*upper.doubts, stepped), **where)  # type: ignore[arg-type]
