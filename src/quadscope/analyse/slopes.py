"""Local slopes: does the growth between successive sizes agree with one class?

Contract: pure numpy on the per-size medians n, y and weights w (1/σ²) that
fitting prepared, and the fitted curve of the class about to be reported; no
I/O. `swing(n, y, w, curve, registry)` returns a `Swing` when the local
slopes over the upper half of the sizes stray from the class's own by more
than noise allows, robustly, else None. Fitting (`quadscope.analyse.fitting`)
then settles no class and reaches the bracket down to the class of the
lowest local slope.

Why: a cost whose per-element part rises with n and levels off (cache misses
past each cache level, a heap sort past the last-level cache) or steps up
more than once (a staircase) is fitted by whichever class bends most like
the whole sweep, often a faster one than the program's: heap sort measured
over 30k–1.9M elements reads k ≈ 1.6 and best fits n², though its local
slopes run 1.1–1.8. A single class must describe each stretch of the sweep,
not only its ends. The local slope between sizes i < j is
s = Δlog y / Δlog n, with standard error √(r_i² + r_j²) / Δlog n, r being
each median's relative standard error (the delta method, e.g. Wasserman,
All of Statistics, 2004, §9.9). A stretch contradicts the class when
|s − e| − Z·se > SLACK, e being the class curve's own slope there: SLACK
absorbs drift between sizes that the repeats at one size do not see. The
contradiction must survive leaving out any one size of the upper half
(the jackknife idea of Quenouille 1956 and Tukey 1958): one noisy size
moves two neighbouring slopes, and it must not unsettle a clean sweep.

Where the per-element cost rises and levels off, the class shows on the
plateaus, where the slope is lowest; between them the slope overstates it.
The bracket's slowest class is therefore the one nearest the lowest local
slope (and any within Z of its standard errors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quadscope.classes import Registry

# A stretch strays when its slope misses the class's by Z standard errors plus SLACK
# (in exponent units: the same slack fitting allows the free exponent, EXPONENT_SLACK).
Z = 3.0
SLACK = 0.3
# The upper half needs this many sizes: with one left out, two stretches remain to compare.
MIN_SIZES = 4


@dataclass(frozen=True, slots=True)
class Swing:
    """Local slopes a single class cannot follow: their range and the slowest class they allow."""

    low: float  # the lowest local slope over the upper half
    high: float  # the highest
    n_low: tuple[float, float]  # the stretch of the lowest slope
    n_high: tuple[float, float]  # the stretch of the highest
    at_least: str  # the slowest class near the lowest slope


def _stretches(n: np.ndarray, y: np.ndarray, rel: np.ndarray,
               curve: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s, e, se) over successive sizes: observed slope, the class's slope, s's standard error."""
    dl = np.diff(np.log(n))
    s = np.diff(np.log(y)) / dl
    e = np.diff(np.log(curve)) / dl
    se = np.sqrt(rel[:-1] ** 2 + rel[1:] ** 2) / dl
    return s, e, se


def _strays(n: np.ndarray, y: np.ndarray, rel: np.ndarray, curve: np.ndarray) -> bool:
    s, e, se = _stretches(n, y, rel, curve)
    return bool(np.max(np.abs(s - e) - Z * se) > SLACK)


def swing(n: np.ndarray, y: np.ndarray, w: np.ndarray, curve: np.ndarray,
          registry: Registry) -> Swing | None:
    """The local slopes' swing when the class of `curve` cannot follow them, else None.

    `curve` is the class's fitted medians at `n`. The upper half holds the
    sizes from √(n_min·n_max) up, and the size just below, so its first
    stretch ends in it.
    """
    if n.size < MIN_SIZES or np.any(y <= 0) or np.any(curve <= 0) or np.any(w <= 0):
        return None
    first = max(int(np.searchsorted(n, np.sqrt(n[0] * n[-1]))) - 1, 0)
    n, y, curve = n[first:], y[first:], curve[first:]
    rel = 1.0 / np.sqrt(w[first:]) / y
    if n.size < MIN_SIZES:
        return None
    for drop in range(n.size):
        keep = np.arange(n.size) != drop
        if not _strays(n[keep], y[keep], rel[keep], curve[keep]):
            return None
    s, _, se = _stretches(n, y, rel, curve)
    lo, hi = int(np.argmin(s)), int(np.argmax(s))
    # Each class's own slope over the stretch of the lowest slope; one beyond every
    # power has no slope to compare.
    pair = n[[lo, lo + 1]]
    slopes: dict[str, float] = {}
    for g in registry:
        if g.outgrows_powers:
            continue
        f = g.evaluate(0.0, 1.0, pair)
        slopes[g.name] = float(np.log(f[1] / f[0]) / np.log(pair[1] / pair[0])) if np.all(f > 0) else 0.0
    miss = {c: abs(k - s[lo]) for c, k in slopes.items()}
    nearest = min(miss.values())
    near = [c for c in slopes if miss[c] <= max(nearest, Z * se[lo])]
    return Swing(float(s[lo]), float(s[hi]), (float(n[lo]), float(n[lo + 1])),
                 (float(n[hi]), float(n[hi + 1])), min(near, key=registry.index))


__all__ = ["SLACK", "Swing", "Z", "swing"]
