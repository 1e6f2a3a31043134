"""Costs a single class a + b·f(n) misreads: a step in the cost, two growth terms.

Contract: pure numpy/scipy on per-size medians n, y and weights w (1/σ²) that
fitting prepared; no I/O. Fitting (`quadscope.analyse.fitting`: `step_classes`,
`find_step`) and the verdict's evidence (`quadscope.analyse.evidence`: `doubt`)
ask these questions of a verdict before it lets it stand:

* `step_classes` — above a change of regime, does the class below with a free
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
* `second_term` — a + c·f(n) + b·h(n), a, b, c ≥ 0, f no faster than the
  verdict's class and h faster: a small superlinear term under a large
  linear one (1000·n + n²/10 below n = 10⁴) shows as curvature a single
  class absorbs. When the second term gains ΔQAICc ≥ TERM_DELTA, `doubt` returns it as a `Doubt` (check
  "second_term"): the bracket [f … h] and the n where h would overtake f.
  Its sentence is written in `quadscope.analyse.text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import nnls

from quadscope.analyse.regime import N_COEF, REGIME_DELTA, Regime, breaks_of
from quadscope.analyse.stats import RELATIVE_RESOLUTION, nice_n, nnls2, qaicc
from quadscope.classes import GrowthClass, Registry
from quadscope.model import Doubt

# ΔQAICc a second growth term must gain (calibrated on single laws: bench/calibration.py).
TERM_DELTA = 16.0
# The second term must also be this share of the cost at n_max to be worth a note.
TERM_SHARE = 0.05
# Sizes a step needs above it: a free offset and a slope, checked at two more sizes (with
# three, one noisy size at the top passes for a step on a clean n², tests/test_compare.py).
STEP_ABOVE = 4


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


def _offset_chis(g: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """χ² of a + b·g, a of either sign, b ≥ 0 (else the weighted mean), for each row of
    weights `w` (B, m): `free_offset`'s fit in closed form, batched over the rows."""
    sw = w.sum(-1)
    gm = (w * g).sum(-1) / sw
    ym = (w * y).sum(-1) / sw
    gc = g - gm[:, None]
    sgg = (w * gc * gc).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(sgg > 0, (w * gc * (y - ym[:, None])).sum(-1) / sgg, 0.0)
    b = np.where(np.isfinite(b) & (b > 0), b, 0.0)
    r = y - (ym - b * gm)[:, None] - b[:, None] * g
    return (w * r * r).sum(-1)


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
        # Every breakpoint at once: each side's fit is the whole sizes' with the other
        # side's weights zero (B breakpoints × m sizes).
        low = n[None, :] <= breaks[:, None]
        total = nnls2(norm[0], y, w * low)[2] + _offset_chis(norm[0], y, w * ~low)
        j = int(np.argmin(total))  # the first of equal ones, as the loop over them kept
        found.append((float(total[j]), float(breaks[j]), g.name))
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


def local_slope(growth: GrowthClass, n_lo: float, n_hi: float) -> float:
    """d log f / d log n of a class between two sizes (∞ for a class beyond every power)."""
    if growth.outgrows_powers:
        return float(np.inf)
    f = growth.evaluate(0.0, 1.0, np.array([n_lo, n_hi]))
    if not np.all(f > 0):
        return 0.0
    return float(np.log(f[1] / f[0]) / np.log(n_hi / n_lo))


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


def doubt(growth: GrowthClass, n: np.ndarray, y: np.ndarray, w: np.ndarray, chi_single: float,
          registry: Registry, *, repeated: bool, max_n: float) -> Doubt | None:
    """A hidden second growth term that a `growth` verdict cannot exclude, or None.

    The doubt's bracket runs from the slower of `growth` and the first term
    to the fastest second term that gains; `decide_n` is where the second
    term would overtake the first (None beyond any practical n).
    """
    order = registry.index
    term = second_term(growth, registry, n, y, w, chi_single,
                       1.0 if repeated else RELATIVE_RESOLUTION**2, max_n=max_n)
    if term is None:
        return None
    cross = nice_n(term.cross_n) if term.cross_n is not None else None
    return Doubt("second_term", min(growth.name, term.first, key=order), term.fastest or term.cls,
                 cross, numbers={"class": term.cls, "first": term.first, "share": term.share,
                                 "n_max": float(n[-1]), "gain": term.gain})


__all__ = ["SecondTerm", "doubt", "find_step", "free_offset", "local_slope", "pair_chis",
           "second_term", "step_classes"]
