"""Costs a single class a + b·f(n) misreads: a step, a change at the top, two growth terms.

Contract: pure numpy/scipy on per-size medians n, y and weights w (1/σ²) that
fitting prepared; no I/O. Fitting (`quadscope.analyse.fitting`) asks three
questions of a verdict before it lets it stand:

* `step_class` — above a change of regime, does the class below with a free
  (possibly negative) offset explain the upper sizes? A per-element cost that
  steps up (T = c·n below n_b, 4c·n − 3c·n_b above) leaves a negative offset
  a ≥ 0 cannot follow, so the upper sizes alone read as a faster class. Each
  class is refitted there as a + b·f(n), a free, b ≥ 0, and ranked by QAICc
  (Burnham & Anderson 2002, §2.4, §6.2) as fitting ranks classes.
* `find_step` — a discontinuous candidate for the whole sweep: the same
  class on both sides of a breakpoint, a₁ + b₁·f(n) below and a₂ + b₂·f(n)
  above (a₂ of either sign: a jump in level, in coefficient, or both). Five
  coefficients with the breakpoint, as the broken power law of
  `quadscope.analyse.regime`, and held to the same ΔQAICc ≥ REGIME_DELTA over
  every single model, calibrated the same way (no false steps on single laws).
* `top_change` — Chow's predictive test (Chow, "Tests of equality between
  sets of coefficients in two linear regressions", Econometrica 28, 1960): the
  verdict's class fitted without the top two or three sizes must forecast them
  within their noise and the forecast's own uncertainty (against χ², and only
  a departure that grows with n, all on one side, counts). When it does not, a
  change of regime near the top cannot be excluded, even where too few sizes
  lie above it for the broken law to win, and the verdict becomes a bracket
  reaching the local exponent of the top sizes.
* `second_term` — a + c·f(n) + b·h(n), a, b, c ≥ 0, f no faster than the
  verdict's class and h faster: a
  small superlinear term under a large linear one (1000·n + n²/10 below
  n = 10⁴) shows as curvature a single class absorbs. When the second term
  gains ΔQAICc ≥ TERM_DELTA, the verdict is the bracket [f … h] and the n where
  h would overtake f is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import nnls
from scipy.stats import chi2

from quadscope.analyse.regime import N_COEF, REGIME_DELTA, Regime, breaks_of
from quadscope.analyse.stats import RELATIVE_RESOLUTION, nice_n, nnls2, qaicc
from quadscope.classes import GrowthClass, Registry

# ΔQAICc a second growth term must gain (calibrated on single laws: bench/calibration.py).
TERM_DELTA = 16.0
# The second term must also be this share of the cost at n_max to be worth a note.
TERM_SHARE = 0.05
# Sizes a step needs above it: a free offset and a slope, and one size to check them.
STEP_ABOVE = 3
# Chow's test rejects the forecast of the top sizes at this level.
TOP_ALPHA = 0.01
# Sizes left out at the top, and sizes the rest must keep.
TOP_DROPS = (2, 3)
MIN_KEPT = 5
# The top sizes' local exponent is widened by this much before a bracket is read from it.
TOP_SLACK = 0.3


def _design(growth: GrowthClass, n: np.ndarray, n_ref: float) -> np.ndarray | None:
    norm = growth.normalised(n, n_ref)
    return None if norm is None else np.stack([np.ones(n.size), norm[0]], axis=1)


def free_offset(growth: GrowthClass, n: np.ndarray, y: np.ndarray,
                w: np.ndarray) -> tuple[float, float, float]:
    """(a, b, χ²) of a + b·f(n), a of either sign, b ≥ 0 on the raw scale; χ² inf when unfittable."""
    norm = growth.normalised(n, float(n[-1]))
    if norm is None:
        return 0.0, 0.0, float(np.inf)
    x = np.stack([np.ones(n.size), norm[0]], axis=1)
    sw = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(x * sw[:, None], y * sw, rcond=None)
    if coef[1] < 0:
        coef = np.array([float((w * y).sum() / w.sum()), 0.0])
    r = y - x @ coef
    return float(coef[0]), float(coef[1]) / norm[1], float((w * r * r).sum())


def step_classes(n: np.ndarray, y: np.ndarray, w: np.ndarray, registry: Registry,
                 *, delta: float, repeated: bool) -> list[str]:
    """The growing classes within `delta` of the best on these sizes, each with a free offset.

    Simplest first, as fitting selects: the first is the class the sizes choose.
    """
    growing = [g for g in registry if g.growing and not g.bases]
    chis = np.array([free_offset(g, n, y, w)[2] for g in growing])
    dof = n.size - 2
    c_hat = float(np.min(chis)) / dof if dof >= 1 else 1.0
    c_hat = max(c_hat, 1.0) if repeated else max(c_hat, 1e-12)
    scores = np.array([float(qaicc(c, c_hat, n.size, 2)) for c in chis])
    return [g.name for g, s in zip(growing, scores, strict=True) if s - np.min(scores) < delta]


def find_step(n: np.ndarray, y: np.ndarray, w: np.ndarray, singles: Sequence[tuple[float, int]],
              registry: Registry, *, repeated: bool, select: float) -> Regime | None:
    """A step in the cost with the same class on both sides, when it beats every single model."""
    m = int(n.size)
    # A free offset and a slope need a third size above the step to be checked at all.
    breaks = np.asarray([nb for nb in breaks_of(n) if np.sum(n > nb) >= STEP_ABOVE])
    if m - N_COEF - 1 < 1 or not singles or breaks.size == 0:
        return None
    found: list[tuple[float, float, str]] = []  # the best (χ², breakpoint) of each class
    for g in registry:
        norm = g.normalised(n, float(n[-1])) if g.growing and not g.bases else None
        if norm is None:
            continue
        best = (np.inf, 0.0, g.name)
        for nb in breaks:
            low = n <= nb
            chi_lo = float(nnls2(norm[0][low], y[low], w[low])[2])
            chi_hi = free_offset(g, n[~low], y[~low], w[~low])[2]
            if chi_lo + chi_hi < best[0]:
                best = (chi_lo + chi_hi, float(nb), g.name)
        found.append(best)
    if not found or not np.isfinite(min(f[0] for f in found)):
        return None
    chi_s = min(f[0] for f in found)
    c_hat = chi_s / (m - N_COEF)
    c_hat = max(c_hat, 1.0) if repeated else max(c_hat, RELATIVE_RESOLUTION**2)
    delta = min(float(qaicc(chi, c_hat, m, k)) for chi, k in singles) - float(
        qaicc(chi_s, c_hat, m, N_COEF))
    if not np.isfinite(delta) or delta < REGIME_DELTA:
        return None
    # As fitting selects classes: the simplest step within `select` of the best.
    _, nb, name = next(f for f in found if (f[0] - chi_s) / c_hat < select)
    k = local_slope(registry[name], float(n[0]), float(n[-1]))
    return Regime(nb, k, k, delta, int(np.sum(n > nb)), step=name)


@dataclass(frozen=True, slots=True)
class TopChange:
    """The top `dropped` sizes depart from the class fitted below them (p < TOP_ALPHA)."""

    dropped: int
    k_top: tuple[float, float]  # the local exponent of the top sizes, widened by TOP_SLACK
    upward: bool


def _forecast_p(x: np.ndarray, y: np.ndarray, w: np.ndarray, kept: int,
                repeated: bool) -> tuple[float, float]:
    """(p, Σ residuals) of Chow's predictive test: the sizes past `kept` against the first `kept`."""
    sw = np.sqrt(w[:kept])
    xk = x[:kept] * sw[:, None]
    coef, *_ = np.linalg.lstsq(xk, y[:kept] * sw, rcond=None)
    dof = kept - 2
    c_hat = float((w[:kept] * (y[:kept] - x[:kept] @ coef) ** 2).sum()) / dof
    c_hat = max(c_hat, 1.0) if repeated else max(c_hat, 1e-12)
    cov = np.linalg.pinv(xk.T @ xk)  # (XᵀWX)⁻¹: the forecast's own uncertainty
    xt = x[kept:]
    r = y[kept:] - xt @ coef
    v = np.diag(1.0 / w[kept:]) + xt @ cov @ xt.T
    # χ² rather than Chow's F: with five to eight sizes below, F's few degrees of freedom
    # for ĉ would hide even a doubling of the cost at the top.
    stat = float(r @ np.linalg.solve(v, r)) / c_hat
    # A change of regime departs further at each larger size, all on one side;
    # noise at the top rarely does, so a departure of another shape is not one.
    rel = r / np.maximum(np.abs(y[kept:]), np.finfo(float).tiny)
    if not (np.all(rel > 0) or np.all(rel < 0)) or np.any(np.diff(np.abs(rel)) <= 0):
        return 1.0, float(np.sum(r))
    return float(chi2.sf(stat, r.size)), float(np.sum(r))


def top_change(growth: GrowthClass, n: np.ndarray, y: np.ndarray, w: np.ndarray,
               *, repeated: bool) -> TopChange | None:
    """The change near the top of the sizes a `growth` verdict cannot exclude, or None."""
    for drop in TOP_DROPS:
        kept = n.size - drop
        if kept < MIN_KEPT:
            return None
        x = _design(growth, n, float(n[kept - 1]))
        if x is None:
            continue
        p, side = _forecast_p(x, y, w, kept, repeated)
        if p < TOP_ALPHA:
            return TopChange(drop, _local_k(n[kept - 1:], y[kept - 1:], w[kept - 1:]), side > 0)
    return None


def _local_k(n: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """The weighted log-log slope of the top sizes with a 2-SE interval, widened by TOP_SLACK."""
    ok = y > 0
    if ok.sum() < 2:
        return (0.0, np.inf)
    ln, ly = np.log(n[ok]), np.log(y[ok])
    wl = w[ok] * y[ok] ** 2  # the variance of log y is σ²/y²
    xm = (wl * ln).sum() / wl.sum()
    sxx = float((wl * (ln - xm) ** 2).sum())
    k = float((wl * (ln - xm) * ly).sum()) / sxx
    resid = ly - (ly * wl).sum() / wl.sum() - k * (ln - xm)
    c_hat = max(float((wl * resid**2).sum()) / max(ok.sum() - 2, 1), 1.0)
    se = float(np.sqrt(c_hat / sxx))
    return (k - 2 * se - TOP_SLACK, k + 2 * se + TOP_SLACK)


def local_slope(growth: GrowthClass, n_lo: float, n_hi: float) -> float:
    """d log f / d log n of a class between two sizes (∞ for a class beyond every power)."""
    if growth.outgrows_powers:
        return float(np.inf)
    f = growth.evaluate(0.0, 1.0, np.array([n_lo, n_hi]))
    if not np.all(f > 0):
        return 0.0
    return float(np.log(f[1] / f[0]) / np.log(n_hi / n_lo))


def classes_within(k: tuple[float, float], registry: Registry, n_lo: float, n_hi: float
                   ) -> tuple[str, str]:
    """(slowest, fastest) class whose local slope between n_lo and n_hi reaches into [k_lo, k_hi]."""
    slopes = [(g.name, 0.0 if not g.growing else local_slope(g, n_lo, n_hi)) for g in registry]
    lo = next((name for name, s in slopes if s >= k[0]), slopes[-1][0])
    hi = next((name for name, s in slopes if s >= k[1]), slopes[-1][0])
    return lo, hi


@dataclass(frozen=True, slots=True)
class SecondTerm:
    """Two growth terms c·f(n) + b·h(n): the share of h at n_max and where it overtakes f."""

    first: str
    cls: str
    share: float  # h's share of the fitted cost at n_max
    cross_n: float | None  # where h would equal f (None: beyond any practical n)
    gain: float  # ΔQAICc over the single class
    fastest: str = ""  # the fastest second term that also gains ≥ TERM_DELTA (the bracket's top)


def _pair(f: GrowthClass, h: GrowthClass, n: np.ndarray, y: np.ndarray,
          w: np.ndarray) -> tuple[np.ndarray, float] | None:
    """(a, c, b) on the normalised scale and χ² of a + c·f(n) + b·h(n), all ≥ 0."""
    nf, nh = f.normalised(n, float(n[-1])), h.normalised(n, float(n[-1]))
    if nf is None or nh is None:
        return None
    x = np.column_stack([np.ones(n.size), nf[0], nh[0]])
    sw = np.sqrt(w)
    coef, _ = nnls(x * sw[:, None], y * sw)
    r = y - x @ coef
    return coef, float((w * r * r).sum())


def pair_chis(n: np.ndarray, y: np.ndarray, w: np.ndarray, registry: Registry) -> list[tuple[float, int]]:
    """(χ², 3) of every two-term model: a change of regime must beat these as well."""
    powers = [g for g in registry if g.growing and not g.bases]
    fits = (_pair(f, h, n, y, w) for i, f in enumerate(powers) for h in powers[i + 1:])
    return [(fit[1], 3) for fit in fits if fit is not None]


def second_term(chosen: GrowthClass, registry: Registry, n: np.ndarray, y: np.ndarray,
                w: np.ndarray, chi_single: float, c_floor: float, *, max_n: float) -> SecondTerm | None:
    """The best a + c·f(n) + b·h(n), f no faster than `chosen` and h faster, gaining ≥ TERM_DELTA.

    The pair's coefficients count one more than the single class's; ĉ comes
    from the pair, floored at `c_floor`.
    """
    order = registry.index
    powers = [g for g in registry if g.growing and not g.bases]
    best: SecondTerm | None = None
    fastest = ""
    for f in (g for g in powers if order(g.name) <= order(chosen.name)):
        for h in (g for g in powers if order(g.name) > order(chosen.name)):
            pair = _pair(f, h, n, y, w)
            if pair is None:
                continue
            coef, chi = pair
            # ĉ from the most general model (Burnham & Anderson 2002, §6.2): the single
            # class's lack of fit is what the second term may explain.
            c_pair = max(chi / max(n.size - 3, 1), c_floor)
            gain = (float(qaicc(chi_single, c_pair, n.size, chosen.n_coef))
                    - float(qaicc(chi, c_pair, n.size, chosen.n_coef + 1)))
            f_top, h_top = coef[1], coef[2]  # each term's value at n_max
            total = coef[0] + f_top + h_top
            if gain < TERM_DELTA or h_top <= 0 or f_top <= 0 or total <= 0:
                continue
            share = float(h_top / total)
            if share < TERM_SHARE:
                continue
            fastest = max(fastest, h.name, key=lambda c: order(c) if c else -1)
            if best is not None and gain <= best.gain:
                continue
            grid = np.logspace(np.log10(n[-1]), np.log10(max_n), 400)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                fv = f_top * f.evaluate(0.0, 1.0, grid) / f.evaluate(0.0, 1.0, n[-1:])[0]
                hv = h_top * h.evaluate(0.0, 1.0, grid) / h.evaluate(0.0, 1.0, n[-1:])[0]
            over = np.nonzero(hv >= fv)[0]
            best = SecondTerm(f.name, h.name, share, float(grid[over[0]]) if over.size else None,
                              gain)
    return None if best is None else replace(best, fastest=fastest)


def fmt_n(n: float) -> str:
    return f"{int(n):d}" if n < 1e7 else f"{n:.3g}"


@dataclass(frozen=True, slots=True)
class Doubt:
    """Why a confident class becomes a bracket: its ends, the reason and the n that would decide."""

    at_least: str
    at_most: str
    reason: str
    decide_n: int | None


def doubt(growth: GrowthClass, n: np.ndarray, y: np.ndarray, w: np.ndarray, chi_single: float,
          registry: Registry, *, repeated: bool, max_n: float) -> Doubt | None:
    """A change near the top or a hidden second term that a confident `growth` cannot exclude."""
    order = registry.index
    top = top_change(growth, n, y, w, repeated=repeated)
    if top is not None:
        start = float(n[-top.dropped - 1])
        lo, hi = classes_within(top.k_top, registry, start, float(n[-1]))
        decide = nice_n(4 * float(n[-1]))
        return Doubt(
            min(growth.name, lo, key=order), max(growth.name, hi, key=order),
            f"the top {top.dropped} sizes run {'above' if top.upward else 'below'} what "
            f"{growth.name} fitted below them predicts (Chow's test, p < {TOP_ALPHA:g}), so the "
            f"growth may change near n = {fmt_n(start)}; grow n to {fmt_n(decide)} to see the "
            f"growth there", decide)
    term = second_term(growth, registry, n, y, w, chi_single,
                       1.0 if repeated else RELATIVE_RESOLUTION**2, max_n=max_n)
    if term is None:
        return None
    cross = nice_n(term.cross_n) if term.cross_n is not None else None
    where = (f"it would overtake the {term.first} term near n = {fmt_n(cross)}" if cross
             else "no practical n would let it dominate")
    return Doubt(min(growth.name, term.first, key=order), term.fastest or term.cls,
                 f"a {registry[term.cls].words} term is present but small at these n "
                 f"({term.share:.0%} of the cost at n = {fmt_n(float(n[-1]))}): {where}",
                 cross)


__all__ = ["Doubt", "SecondTerm", "TopChange", "classes_within", "doubt", "find_step", "fmt_n",
           "free_offset", "pair_chis",
           "second_term", "step_classes", "top_change"]
