"""How a cost grows in several sizes at once: the product and the sum model, fitted (pure).

Contract: `fit_models(points, seed=, n_boot=)` takes the measured points of a
sweep over axes x_1..x_k (each `GridPoint` one combination of sizes and every
run's value there) and returns `Models`: the product model
    cost = a + b·x_1^p_1·…·x_k^p_k
with each exponent's 95% interval, and the additive model
    cost = a + b_1·x_1^q_1 + … + b_k·x_k^q_k,
each with its AICc, and the product with lower terms (issue 25)
    cost = a + b·Π x_i^p_i + Σ c_i·x_i^p_i
(the same exponents in every term), which nests the product (every c_i = 0)
and a sum with shared exponents (b = 0): rows²·(α + β·cols) is
rows²·cols plus a rows² term. Its point fit is always made; its intervals
only on request (`nest_intervals`, when `analyse/multi` chooses it).
Nothing here prints, stores or names a class
(`analyse/multiclass` reads the exponents, `analyse/multi` writes the verdict).

Method. Both models are linear in their coefficients once the exponents are
fixed, so the exponents are found by variable projection (Golub & Pereyra,
"The differentiation of pseudo-inverses and nonlinear least squares problems
whose variables separate", SIAM J. Numer. Anal. 10, 1973): for given exponents
the coefficients are a non-negative least squares solution (Lawson & Hanson
1974, `scipy.optimize.nnls`) weighted by 1/median², i.e. relative residuals;
the exponents minimise what is left, from the best of a coarse grid (steps of
0.25 over [0, MAX_EXPONENT]) refined by Nelder–Mead. Each point is one median
of its runs, so a slow outlier run moves nothing.

Intervals: a bootstrap of the runs (Efron & Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 6 and 13): each replicate draws every point's runs
again, with replacement, takes the medians and refits the product model; the
exponent's interval is the 2.5th to 97.5th percentile of the replicates. A
point with one run, or runs that agree to the last digit (an exact count),
carries no spread of its own, so each replicate also carries the fit's own
relative residuals drawn again with random signs (a wild bootstrap, Wu,
Ann. Statist. 14, 1986; the residuals scaled up by the degrees of freedom the
fit spent): a model that does not fit the points widens its interval rather
than claiming an exactness it lacks. bench/multi_calibration.py
measures how often the interval covers the true exponent.

Model choice: AICc from the weighted residual sum of squares (Hurvich & Tsai,
Biometrika 76, 1989; Burnham & Anderson, "Model Selection and Multimodel
Inference", 2002, §2.4), counting the noise's variance as a parameter; the RSS
has a floor of RSS_FLOOR per point so two exact fits tie instead of scoring -inf.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

MAX_EXPONENT = 4.0
GRID_STEP = 0.25
RSS_FLOOR = 1e-12  # relative residual² per point below which two fits are equally exact
LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class GridPoint:
    """One combination of sizes (one per axis, in axis order) and every run's value there."""

    sizes: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class ModelFit:
    """One model fitted: its exponents and linear coefficients, its relative RSS and AICc.

    `coef` is (a, b) for the product model and (a, b_1, …, b_k) for the sum.
    """

    exponents: tuple[float, ...]
    coef: tuple[float, ...]
    rss: float
    aicc: float


@dataclass(frozen=True, slots=True)
class Models:
    """The models on the same points; `intervals[i]` is the product exponent p_i's 95% interval,
    `sum_intervals[i]` the sum's q_i's; `nest` the product with lower terms, coef
    (a, b, c_1, …, c_k), and `nest_intervals` its exponents' (empty until `nest_intervals`)."""

    product: ModelFit
    additive: ModelFit
    intervals: tuple[tuple[float, float], ...]
    sum_intervals: tuple[tuple[float, float], ...]
    n_points: int
    n_boot: int
    nest: ModelFit | None = None
    nest_intervals: tuple[tuple[float, float], ...] = ()


PRODUCT, SUM, NEST = "product", "sum", "nest"


def _terms(k: int, kind: str) -> np.ndarray:
    """Which axes each term's power takes: one term of all axes (product), one term per axis
    (sum), or both (the product with lower terms)."""
    if kind == SUM:
        return np.eye(k)
    if kind == NEST:
        return np.vstack([np.ones((1, k)), np.eye(k)])
    return np.ones((1, k))


def _design(x: np.ndarray, e: np.ndarray, kind: str) -> np.ndarray:
    """Columns [1, term_1, …]: each term Π x_i^(terms[t, i]·e_i); x is (points, axes)."""
    terms = _terms(x.shape[1], kind)
    cols = np.exp(np.log(x) @ (terms * e).T)
    return np.column_stack([np.ones(len(x)), cols])


def _project(x: np.ndarray, y: np.ndarray, e: np.ndarray,
             kind: str) -> tuple[np.ndarray, float]:
    """The non-negative coefficients for exponents `e`, and the relative RSS they leave."""
    g = _design(x, e, kind) / y[:, None]
    # Columns scaled to unit size first: x^e spans many decades.
    scale = np.maximum(np.abs(g).max(axis=0), 1e-300)
    if g.shape[1] > 2:
        from scipy.optimize import nnls

        c, _ = nnls(g / scale, np.ones(len(y)), maxiter=200)
    else:
        c = _two(g / scale)
    coef = c / scale
    r = 1.0 - g @ coef
    return coef, float(r @ r)


def _two(g: np.ndarray) -> np.ndarray:
    """NNLS of ones on two columns in closed form: the unconstrained solution, else one column."""
    one = np.ones(len(g))
    gram = g.T @ g
    rhs = g.T @ one
    det = gram[0, 0] * gram[1, 1] - gram[0, 1] ** 2
    candidates = []
    if det > 1e-12 * gram[0, 0] * gram[1, 1]:
        c = np.array([gram[1, 1] * rhs[0] - gram[0, 1] * rhs[1],
                      gram[0, 0] * rhs[1] - gram[0, 1] * rhs[0]]) / det
        if np.all(c >= 0):
            candidates.append(c)
    for j in (0, 1):
        c = np.zeros(2)
        c[j] = max(rhs[j] / gram[j, j], 0.0) if gram[j, j] > 0 else 0.0
        candidates.append(c)
    return min(candidates, key=lambda c: float(np.sum((one - g @ c) ** 2)))


def _objective(x: np.ndarray, y: np.ndarray, kind: str) -> Callable[[np.ndarray], float]:
    def rss(e: np.ndarray) -> float:
        if np.any(e < -0.5) or np.any(e > MAX_EXPONENT + 0.5):
            return math.inf
        try:
            return _project(x, y, e, kind)[1]
        except RuntimeError:  # nnls did not converge: not a minimum to keep
            return math.inf
    return rss


def _start(x: np.ndarray, y: np.ndarray, kind: str) -> np.ndarray:
    """The best exponents on the coarse grid (per axis alone for the sum: it separates)."""
    k = x.shape[1]
    grid = np.arange(0.0, MAX_EXPONENT + 1e-9, GRID_STEP)
    rss = _objective(x, y, kind)
    if k <= 2:
        mesh = np.array(np.meshgrid(*([grid] * k), indexing="ij")).reshape(k, -1).T
        return np.asarray(min(mesh, key=rss), dtype=float)
    # More axes: the log-log least squares slope is the start (no offset).
    design = np.column_stack([np.ones(len(x)), np.log(x)])
    slope = np.linalg.lstsq(design, np.log(y), rcond=None)[0][1:]
    return np.clip(slope, 0.0, MAX_EXPONENT)


def _refine(x: np.ndarray, y: np.ndarray, start: np.ndarray, kind: str) -> np.ndarray:
    from scipy.optimize import minimize

    rss = _objective(x, y, kind)
    best = minimize(rss, start, method="Nelder-Mead",
                    options={"xatol": 1e-3, "fatol": 1e-12, "maxiter": 400})
    e = np.asarray(best.x if best.fun <= rss(start) else start, dtype=float)
    return np.asarray(e, dtype=float)


def aicc(rss: float, n_points: int, n_params: int) -> float:
    """AICc of a least squares fit with `n_params` coefficients plus the noise's variance."""
    k = n_params + 1
    rss = max(rss, RSS_FLOOR * n_points)
    if n_points - k - 1 <= 0:
        return math.inf
    return n_points * math.log(rss / n_points) + 2 * k + 2 * k * (k + 1) / (n_points - k - 1)


def fit_one(x: np.ndarray, y: np.ndarray, *, kind: str,
            start: np.ndarray | None = None) -> ModelFit:
    """One model on points x (points, axes) with medians y (all > 0)."""
    e = _refine(x, y, _start(x, y, kind) if start is None else start, kind)
    coef, rss = _project(x, y, e, kind)
    n_params = len(coef) + len(e)
    return ModelFit(tuple(float(v) for v in e), tuple(float(v) for v in coef), rss,
                    aicc(rss, len(y), n_params))


def medians(points: Sequence[GridPoint]) -> tuple[np.ndarray, np.ndarray]:
    """Sizes (points, axes) as floats and each point's median value."""
    x = np.array([p.sizes for p in points], dtype=float)
    y = np.array([float(np.median(p.values)) for p in points])
    return x, y


def _gauss_newton(lx: np.ndarray, y: np.ndarray, theta: np.ndarray, terms: np.ndarray,
                  iters: int = 30) -> np.ndarray:
    """Batched damped Gauss–Newton (Levenberg–Marquardt) for either model.

    lx is (points, axes) log sizes, y (reps, points) values scaled to about 1,
    theta (reps, 1 + terms + axes) = (a, ln b_t…, p_i…) starts; relative
    residuals 1 - (a + Σ_t exp(ln b_t + Σ_i terms[t, i]·p_i·ln x_i))/y.
    Returns the refined theta per replicate.
    """
    n_t = terms.shape[0]
    lam = np.full(len(y), 1e-3)

    def residuals(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # g: (reps, points, terms)
        logs = t[:, None, 1:1 + n_t] + np.einsum("ti,pi,ri->rpt", terms, lx, t[:, 1 + n_t:])
        g = np.exp(np.clip(logs, -700, 700))
        return 1.0 - (t[:, :1] + g.sum(axis=2)) / y, g

    r, g = residuals(theta)
    cost = np.sum(r * r, axis=1)
    eye = np.eye(theta.shape[1])
    for _ in range(iters):
        gy = g / y[..., None]
        d_p = -np.einsum("rpt,ti,pi->rpi", gy, terms, lx)
        jac = np.concatenate([-1.0 / y[..., None], -gy, d_p], axis=2)
        jtj = np.einsum("bpi,bpj->bij", jac, jac)
        jtr = np.einsum("bpi,bp->bi", jac, r)
        diag = np.einsum("bii->bi", jtj)
        damped = jtj + (lam[:, None] * (diag + 1e-9))[:, :, None] * eye
        ok = np.all(np.isfinite(damped), axis=(1, 2)) & np.all(np.isfinite(jtr), axis=1)
        damped[~ok] = eye
        step = np.linalg.solve(damped, -np.where(ok[:, None], jtr, 0.0)[..., None])[..., 0]
        trial = theta + step
        trial[:, 1 + n_t:] = np.clip(trial[:, 1 + n_t:], -0.5, MAX_EXPONENT + 0.5)
        r_new, g_new = residuals(trial)
        new_cost = np.sum(r_new * r_new, axis=1)
        better = ok & np.isfinite(new_cost) & (new_cost <= cost)
        theta = np.where(better[:, None], trial, theta)
        r = np.where(better[:, None], r_new, r)
        g = np.where(better[:, None, None], g_new, g)
        cost = np.where(better, new_cost, cost)
        lam = np.where(better, lam / 3, lam * 4)
    return theta


def _replicates(points: Sequence[GridPoint], fit: ModelFit, rng: np.random.Generator,
                n_boot: int, kind: str) -> np.ndarray:
    """Bootstrap exponents of one model, (n_boot, axes); see the module docstring."""
    x, y = medians(points)
    fitted = _design(x, np.array(fit.exponents), kind) @ np.array(fit.coef)
    # Residuals of a fit are smaller than its errors by the parameters it spent: scaled back
    # by sqrt(n / (n - p)) (the degrees-of-freedom correction, Davidson & MacKinnon,
    # "Econometric Theory and Methods", 2004, §5.5), as a wild bootstrap needs.
    n_params = len(fit.coef) + len(fit.exponents)
    rel = (y / fitted - 1.0) * math.sqrt(len(y) / max(len(y) - n_params, 1))
    top = float(y.max())
    drawn = np.empty((n_boot, len(points)))
    for j, p in enumerate(points):
        values = np.asarray(p.values, dtype=float)
        picks = rng.integers(0, len(values), size=(n_boot, len(values)))
        drawn[:, j] = np.median(values[picks], axis=1)
    signs = rng.choice((-1.0, 1.0), size=drawn.shape)
    drawn = np.maximum(drawn * (1.0 + rel * signs), 1e-300) / top
    coef = np.array(fit.coef)
    start = np.array([coef[0] / top, *np.log(np.maximum(coef[1:] / top, 1e-300)), *fit.exponents])
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        theta = _gauss_newton(np.log(x), drawn, np.tile(start, (n_boot, 1)),
                              _terms(x.shape[1], kind))
    return theta[:, len(coef):]


def _intervals(boot: np.ndarray, point: tuple[float, ...]) -> tuple[tuple[float, float], ...]:
    tail = (1.0 - LEVEL) / 2 * 100
    lo = np.percentile(boot, tail, axis=0)
    hi = np.percentile(boot, 100 - tail, axis=0)
    return tuple((float(min(a, p)), float(max(b, p))) for a, b, p in zip(lo, hi, point, strict=True))


def fit_nest(x: np.ndarray, y: np.ndarray, product: ModelFit) -> ModelFit:
    """The product with lower terms, from the better of its own grid start and the product's
    exponents (so it never fits worse than the product it nests)."""
    rss = _objective(x, y, NEST)
    start = min((_start(x, y, NEST), np.array(product.exponents)), key=rss)
    return fit_one(x, y, kind=NEST, start=start)


def fit_models(points: Sequence[GridPoint], *, seed: int = 0, n_boot: int = 200) -> Models:
    """The models on `points` (each value > 0, sizes ≥ 1), the product's and the sum's
    exponents' intervals by bootstrap (the nest's: `nest_intervals`)."""
    x, y = medians(points)
    if np.any(y <= 0) or np.any(x < 1):
        raise ValueError("fit_models needs positive values and sizes of at least 1")
    product = fit_one(x, y, kind=PRODUCT)
    additive = fit_one(x, y, kind=SUM)
    rng = np.random.default_rng(seed)
    intervals = _intervals(_replicates(points, product, rng, n_boot, PRODUCT), product.exponents)
    sum_intervals = _intervals(_replicates(points, additive, rng, n_boot, SUM),
                               additive.exponents)
    return Models(product, additive, intervals, sum_intervals, len(points), n_boot,
                  nest=fit_nest(x, y, product))


def nest_intervals(points: Sequence[GridPoint], models: Models, *, seed: int = 0) -> Models:
    """`models` with the nest's exponents' intervals, by the same bootstrap as the others."""
    if models.nest is None:
        raise ValueError("nest_intervals needs the nest's fit")
    rng = np.random.default_rng(seed + 1)
    boot = _replicates(points, models.nest, rng, models.n_boot, NEST)
    return replace(models, nest_intervals=_intervals(boot, models.nest.exponents))
