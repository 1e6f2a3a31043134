"""The models every fit compares: medians per size, the free power law and each class's a + b·f(n).

Contract: pure numpy/scipy on one metric's runs; no I/O, deterministic for a
given seed. `medians` groups the runs by size (refusing fewer than three
sizes), `prepare` makes them weighted medians (`Data`, see
`quadscope.analyse.fitting` step 1), `replicates` draws the bootstrap medians,
`power_point`/`power_grid` fit the free power law a + b·(n/n_max)^k (k ∈ [0, 4],
`K_GRID`), `fit_classes` fits every class of a registry by
non-negative least squares (an exponential's base by refined grids), and
`score_classes` ranks them by QAICc. `fit_power_law` and `bootstrap_class`
are the public one-call forms. What the fits mean for the verdict is
`quadscope.analyse.evidence`'s and `quadscope.analyse.verdict`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from quadscope.analyse import text
from quadscope.analyse.stats import (
    RELATIVE_RESOLUTION,
    Groups,
    bootstrap_medians,
    group_medians,
    group_runs,
    group_spreads,
    median_variance_factor,
    nnls2,
    qaicc,
)
from quadscope.classes import REGISTRY, VISIBLE_RATIO, GrowthClass, Registry
from quadscope.errors import FitRefusedError

# The exponential's base: rounds of finer grids after the class's own (see `_fit_base`).
BASE_ROUNDS = 3
BASE_POINTS = 33
K_GRID = np.linspace(0.0, 4.0, 81)
# How closely the free power law's k is polished (`power_point`): far below any k's error.
K_XATOL = 1e-7
# The share of χ² the polish must gain to move k from the grid's point.
K_GAIN = 1e-9
Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


# ---------------------------------------------------------------------------
# Prepared data: medians, weights and the bootstrap replicates shared by all fits.


@dataclass(frozen=True, slots=True)
class Data:
    groups: Groups
    n: np.ndarray  # (m,) distinct sizes
    y: np.ndarray  # (m,) medians
    w: np.ndarray  # (m,) weights 1/σ² of the medians
    repeated: bool  # True when weights (and the bootstrap) come from real repeats
    known: bool = False  # True when σ was given with the values (`prepare`'s `sd`)

    @property
    def honest(self) -> bool:
        """Whether the weights are real errors (repeats or given), so ĉ is floored at 1."""
        return self.repeated or self.known

    @property
    def m(self) -> int:
        return int(self.n.size)


def medians(metric: str, sizes: Sequence[float], values: Sequence[float],
            ) -> tuple[Groups, np.ndarray]:
    """The runs grouped by size and each size's median; `FitRefusedError` (one sentence)
    below three sizes, the fewest a class can be fitted and tested on."""
    groups = group_runs(sizes, values)
    if groups.sizes.size < 3:
        raise FitRefusedError(text.refused(metric, int(groups.sizes.size)))
    return groups, group_medians(groups.padded, groups.counts)


def prepare(metric: str, sizes: Sequence[float], values: Sequence[float],
             launches: bool = False, sd: Sequence[float] | np.ndarray | None = None) -> Data:
    """The weighted medians of the runs (`quadscope.analyse.fitting`, step 1).

    `sd` gives each run's own standard error, known from how it was measured
    (a sampled profile's Poisson count and the load between recordings,
    `quadscope.profile.noise`): each median is then weighted by those errors
    (`_known_sigma`) rather than by its spread or by the scatter of single runs
    about a smooth curve, which with one run at each of four sizes leaves one
    degree of freedom to judge the noise from.
    """
    groups, y = medians(metric, sizes, values)
    if sd is not None:
        sigma = _known_sigma(groups, sizes, values, sd)
        return Data(groups, groups.sizes, y, 1.0 / sigma**2, False, known=True)
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
        k, a, b = power_grid(groups.sizes, y, 1.0 / sigma**2)
        smooth = a + b * (groups.sizes / groups.sizes[-1]) ** k
        sigma = np.maximum(np.abs(smooth), floor)
    return Data(groups, groups.sizes, y, 1.0 / sigma**2, repeated)


def _known_sigma(groups: Groups, sizes: Sequence[float], values: Sequence[float],
                 sd: Sequence[float] | np.ndarray) -> np.ndarray:
    """Each size's median's standard error from its runs' given errors: their mean variance
    times the median's variance factor (`median_variance_factor`), never below the
    resolution of the median itself."""
    n = np.asarray(sizes, dtype=float).ravel()
    y = np.asarray(values, dtype=float).ravel()
    e = np.asarray(sd, dtype=float).ravel()
    if e.shape != y.shape:
        raise ValueError(f"values and their errors differ in length ({y.size} vs {e.size})")
    keep = np.isfinite(n) & np.isfinite(y)
    variances = group_runs(n[keep].tolist(), (np.nan_to_num(e[keep]) ** 2).tolist())
    mean_var = np.nanmean(variances.padded, axis=1)
    y_med = np.abs(group_medians(groups.padded, groups.counts))
    floor = RELATIVE_RESOLUTION * np.maximum(y_med, 1e-3 * float(np.max(y_med)))
    return np.maximum(np.sqrt(mean_var * median_variance_factor(groups.counts)), floor)


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


def replicates(data: Data, fitted: np.ndarray, rng: np.random.Generator, n_boot: int,
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
    if data.known:  # the errors are given: every replicate is drawn from them
        scale = sigma * np.sqrt(max(c_hat or 1.0, 1.0))
        return fitted[None, :] + scale[None, :] * rng.standard_normal((n_boot, data.m))
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


def power_grid(n: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def power_point(data: Data) -> tuple[float, float, float, float]:
    """Point estimate (k, a, b_normalised, χ²): the grid's k polished on the profile χ²(k).

    For a given k the best a, b ≥ 0 are `nnls2`'s closed form, so the three-coefficient
    least squares is a search over k alone (variable projection: Golub & Pereyra, "The
    differentiation of pseudo-inverses and nonlinear least squares problems whose
    variables separate", SIAM J. Numer. Anal. 10, 1973). Brent's bounded search within a
    grid step of the grid's k (Brent, Algorithms for Minimization without Derivatives,
    1973, ch. 5) reaches the joint optimum that bounded least squares reached from the
    same start, at a fraction of its evaluations; the grid's point stands where it is
    not bettered by K_GAIN of its χ² (where χ² is flat in k, as for a metric that does
    not grow, any k is as good and the grid's is kept).
    """
    k0, a0, b0 = (float(v) for v in power_grid(data.n, data.y, data.w))
    x = data.n / data.n[-1]

    def chi(k: float) -> float:
        return float(nnls2(x**k, data.y, data.w)[2])

    step = float(K_GRID[1] - K_GRID[0])
    lo, hi = max(k0 - step, float(K_GRID[0])), min(k0 + step, float(K_GRID[-1]))
    chi_grid = float((data.w * (data.y - a0 - b0 * x**k0) ** 2).sum())
    sol = minimize_scalar(chi, bounds=(lo, hi), method="bounded", options={"xatol": K_XATOL})
    if not float(sol.fun) < chi_grid * (1.0 - K_GAIN):  # a flat χ²(k): k is not identified
        return k0, a0, b0, chi_grid
    k = float(sol.x)
    a, b, rss = (float(v) for v in nnls2(x**k, data.y, data.w))
    return k, a, b, rss


def symmetric_interval(point: float, replicates: np.ndarray,
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


def best_curve(data: Data, fitted_pl: np.ndarray, raw: Mapping[str, Raw | None]) -> np.ndarray:
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
    data = prepare("power law", sizes, values)
    k, a, b_norm, _ = power_point(data)
    fitted = a + b_norm * (data.n / data.n[-1]) ** k
    boot = replicates(data, fitted, np.random.default_rng(seed), n_boot)
    ks = power_grid(data.n, boot, data.w)[0]
    lo, hi = np.percentile(ks, [2.5, 97.5])
    return k, (float(min(lo, k)), float(max(hi, k))), a, b_norm / float(data.n[-1]) ** k


# ---------------------------------------------------------------------------
# Classes.


@dataclass(frozen=True, slots=True)
class ClassFit:
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
Raw = tuple[float, float, float, GrowthClass]


def _fit_one(growth: GrowthClass, data: Data) -> Raw | None:
    norm = growth.normalised(data.n, float(data.n[-1]))
    if norm is None:
        return None
    g, f_ref = norm
    a, b, rss = nnls2(g, data.y, data.w)
    return float(a), float(b) / f_ref, float(rss), growth


def _fit_base(growth: GrowthClass, data: Data) -> Raw | None:
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


def fit_classes(data: Data, registry: Registry) -> dict[str, Raw | None]:
    """Per class (a, b_raw, χ², class) on the medians, or None when unfittable."""
    out: dict[str, Raw | None] = {}
    sw = data.w.sum()
    a1 = max(float((data.w * data.y).sum() / sw), 0.0)
    first = registry.classes[0]
    out[first.name] = (a1, 0.0, float((data.w * (data.y - a1) ** 2).sum()), first)
    for growth in registry.classes[1:]:
        out[growth.name] = _fit_base(growth, data) if growth.bases else _fit_one(growth, data)
    return out


def left_out_chis(data: Data, keeps: np.ndarray, registry: Registry) -> np.ndarray:
    """(B, classes) χ² of `fit_classes` on the sizes each row of `keeps` (B, m) keeps;
    inf where a class cannot be fitted on them.

    Rows that keep the largest size share its normalisation, so a class is fitted on all
    of them at once, the sizes left out weighted 0 (and fittable where the sizes kept
    show it, as `GrowthClass.normalised` asks); the rest, and an exponential's base,
    are fitted on their own sizes one row at a time.
    """
    out = np.full((keeps.shape[0], len(registry.classes)), np.inf)
    w = data.w * keeps
    a1 = np.maximum((w * data.y).sum(-1) / w.sum(-1), 0.0)
    out[:, 0] = (w * (data.y - a1[:, None]) ** 2).sum(-1)
    top = keeps[:, -1]
    for j, growth in enumerate(registry.classes[1:], start=1):
        norm = None if growth.bases else growth.normalised(data.n, float(data.n[-1]))
        if norm is not None:
            shown = np.count_nonzero(keeps & (norm[0] >= VISIBLE_RATIO), axis=1)
            ok = top & (shown >= growth.min_visible_sizes)
            out[ok, j] = nnls2(norm[0], data.y, w[ok])[2]
        alone = np.flatnonzero(~top if norm is not None else np.ones(top.size, dtype=bool))
        for i in alone:
            keep = keeps[i]
            sub = Data(data.groups, data.n[keep], data.y[keep], data.w[keep], data.repeated,
                       data.known)
            raw = _fit_base(growth, sub) if growth.bases else _fit_one(growth, sub)
            if raw is not None:
                out[i, j] = raw[2]
    return out


def boot_class(growth: GrowthClass, data: Data, boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    data = prepare("class", sizes, values)
    fits = fit_classes(data, registry)
    fit = fits[cls]
    if fit is None:
        raise ValueError(f"class {cls} cannot be fitted at these sizes")
    a, b, _, growth = fit
    fitted = growth.evaluate(a, b, data.n)
    boot = replicates(data, fitted, np.random.default_rng(seed), n_boot)
    a_s, b_s = boot_class(growth, data, boot)
    return a, b, a_s, b_s



def score_classes(raw: Mapping[str, Raw | None], data: Data, c_hat: float,
                   registry: Registry) -> dict[str, ClassFit]:
    """Every class of the registry with its QAICc (inf when it could not be fitted)."""
    fits: dict[str, ClassFit] = {}
    for growth in registry:
        v = raw[growth.name]
        if v is None:
            fits[growth.name] = ClassFit(growth, 0.0, 0.0, np.inf, np.inf)
        else:
            score = float(qaicc(v[2], c_hat, data.m, growth.n_coef))
            fits[growth.name] = ClassFit(v[3], v[0], v[1], v[2], score)
    return fits
