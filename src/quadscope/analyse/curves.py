"""The curve a report draws of each fit, and the 95% band of single runs around it.

Contract: pure functions of the stored `Fit`s and runs; nothing is re-fitted.
`analysis.analyse` computes `fit_bands(fits, runs)` once and the `Analysis`
carries it (`Analysis.bands`), so the HTML and PNG plots only draw. For each
variant and fitted metric, a `Band` holds the class drawn (`drawn`: the
fit's class, or its best candidate when the class is not settled), its
coefficients, `CURVE_SAMPLES` sizes spanning the sizes measured (geometric
when they are positive), the fitted curve ŷ there and the band's edges. The
runs are those that count (not warm-up, exited 0, not timed out), as taken.
`geometric(sizes)` says whether sizes spread by a constant factor (the plots
then use log axes).

The band (`prediction_band`): weighted least squares with relative errors
(weights w_i = 1/ŷ_i², as timing noise grows with the cost; Draper & Smith,
*Applied Regression Analysis*, 3rd ed., §9.2), X = [1, f(n_i)],
Cov(a, b) = s²·(XᵀWX)⁻¹ with s² = Σ w_i·r_i² / (N − 2). A new single run at
n varies by s²·ŷ(n)² around the mean, so the prediction band is
ŷ(n) ± t₀.₉₇₅,N−2 · √(gᵀ·Cov·g + s²·ŷ(n)²), g = [1, f(n)] (the prediction
interval of a new observation, ibid. §1.4). It takes the class as given.
It is where single runs fall, not the interval of the fitted curve: that
one is the fit's bootstrap, `Fit.prediction` at `--predict`'s size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Run

CURVE_SAMPLES = 120


@dataclass(frozen=True, slots=True, eq=False)  # arrays have no single truth value to compare
class Band:
    """One fit as drawn: class, a and b, and at each of `ns` the curve and the band's edges."""

    cls: str
    a: float
    b: float
    ns: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def drawn(fit: Fit) -> tuple[str, float, float] | None:
    """(class, a, b) drawn for a fit: the chosen class, or the best one when inconclusive."""
    cls = fit.cls if fit.cls != INCONCLUSIVE else (fit.best or "")
    a, b = fit.coefficients.get("a"), fit.coefficients.get("b")
    if a is None or b is None:
        cand = next((c for c in fit.candidates if c.cls == cls), None)
        if cand is None:
            return None
        a, b = cand.a, cand.b
    if cls not in REGISTRY or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return cls, float(a), float(b)


def prediction_band(
    cls: str, a: float, b: float, sizes: np.ndarray, values: np.ndarray, ns: np.ndarray,
    coefficients: Mapping[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ŷ, lo, hi at `ns`: the 95% prediction band of the module docstring."""
    from scipy.stats import t as student_t

    growth = REGISTRY.of(cls, coefficients or {}) or REGISTRY[cls]
    fx = np.asarray(growth.f(sizes), dtype=float)
    fn = np.asarray(growth.f(ns), dtype=float)
    yhat_i = growth.evaluate(a, b, sizes)
    yhat = growth.evaluate(a, b, ns)
    n_pts = len(values)
    if n_pts < 3:
        return yhat, yhat.copy(), yhat.copy()
    floor = max(float(np.median(np.abs(values))) * 1e-9, 1e-300)
    w = 1.0 / np.maximum(np.abs(yhat_i), floor) ** 2
    design = np.column_stack([np.ones_like(fx), fx])
    xtwx = design.T @ (w[:, None] * design)
    s2 = float(np.sum(w * (values - yhat_i) ** 2)) / (n_pts - 2)
    if not (np.all(np.isfinite(xtwx)) and math.isfinite(s2)):
        # cⁿ overflows at large sizes, a zero curve gives a weight of ∞: no band to draw
        return yhat, yhat.copy(), yhat.copy()
    try:
        cov = s2 * np.linalg.pinv(xtwx)
    except np.linalg.LinAlgError:
        return yhat, yhat.copy(), yhat.copy()
    g = np.column_stack([np.ones_like(fn), fn])
    mean_var = np.maximum(np.einsum("ij,jk,ik->i", g, cov, g), 0.0)
    half = float(student_t.ppf(0.975, n_pts - 2)) * np.sqrt(mean_var + s2 * yhat ** 2)
    return yhat, yhat - half, yhat + half


def samples(lo: float, hi: float) -> np.ndarray:
    if lo > 0 and hi > lo:
        return np.geomspace(lo, hi, CURVE_SAMPLES)
    return np.linspace(lo, hi, CURVE_SAMPLES)


def geometric(sizes: Sequence[float]) -> bool:
    """Sizes spread by a constant factor over at least a decade (1k, 2k, 4k, ...)."""
    us = sorted({s for s in sizes if s > 0})
    if len(us) < 3 or us[-1] / us[0] < 10:
        return False
    steps = np.diff(np.log(us))
    return bool(float(np.median(steps)) > math.log(1.25))


def fit_band(fit: Fit, runs: Sequence[Run]) -> Band | None:
    """The fit drawn over `runs`' sizes with its band; None when there is nothing to draw."""
    co = drawn(fit)
    pairs = [(r.size_n, v) for r in runs if (v := r.value(fit.metric)) is not None]
    if co is None or not pairs:
        return None
    cls, a, b = co
    arr = np.asarray(pairs, dtype=float)
    sizes, values = arr[:, 0], arr[:, 1]
    ns = samples(float(sizes.min()), float(sizes.max()))
    with np.errstate(all="ignore"):
        mean, lo, hi = prediction_band(cls, a, b, sizes, values, ns, fit.coefficients)
    return Band(cls, a, b, ns, mean, lo, hi)


def fit_bands(fits: Mapping[str, Mapping[str, Fit]],
              runs: Sequence[Run]) -> dict[str, dict[str, Band]]:
    """variant -> metric -> `Band`, for every fit that can be drawn (see the module docstring)."""
    out: dict[str, dict[str, Band]] = {}
    for variant, by_metric in fits.items():
        good = [r for r in runs if r.variant == variant and not r.warmup and r.measurement.ok]
        bands = {m: band for m, fit in by_metric.items()
                 if (band := fit_band(fit, good)) is not None}
        out[variant] = bands
    return out


__all__ = ["CURVE_SAMPLES", "Band", "drawn", "fit_band", "fit_bands", "geometric",
           "prediction_band", "samples"]
