"""Synthetic sweeps of known truth: the simulated workloads that calibrate the verdicts.

Contract: pure and deterministic for a given seed. A `Truth` is a cost law
a + b·f(n) (f from a small table written independently of the fitting code,
so a bug there cannot hide itself here); a `Scenario` says how the runs are
disturbed: log-normal noise with a given coefficient of variation, one
planted outlier, slow drift over the order of execution, and the start-up
offset's share of the cost at the smallest size. `simulate(truth, scenario,
sizes, repeat, rng)` returns (sizes, values) per run, in execution order, as a
fixed sweep with randomised interleaved rounds would have measured them;
`cost(truth, scenario, rng)` is the same disturbance as a function of one
run's n, for driving a `FakeExecutor` through the adaptive plan.

Log-normal noise: a run's value is the true cost times exp(σ·z), σ² =
ln(1 + CV²), so the CV of the runs is the one asked for (e.g. Limpert, Stahel
& Abbt, "Log-normal distributions across the sciences", BioScience 51, 2001).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# f(n) for each true law; "exp" uses Truth.base.
_LAWS: dict[str, Callable[[float, float], float]] = {
    "1": lambda n, c: 1.0,
    "log n": lambda n, c: math.log(max(n, 1.0)),
    "sqrt n": lambda n, c: math.sqrt(n),
    "n": lambda n, c: n,
    "n log n": lambda n, c: n * math.log(max(n, 1.0)),
    "n^2": lambda n, c: n * n,
    "n^3": lambda n, c: n**3,
    "exp": lambda n, c: c**n,
}


@dataclass(frozen=True, slots=True)
class Truth:
    """cost(n) = a + b·f(n); for law "exp", f(n) = base^n.

    With `extra_law`, a second growth term extra_b·f_extra(n) adds to every
    size (a small quadratic under a large linear cost). With `upper_law`, the
    cost changes regime at `threshold` and stays continuous: beyond it each
    further unit of f_upper costs `upper_b`, i.e.
    cost(n) = cost(threshold) + upper_b·(f_upper(n) − f_upper(threshold)), as
    when a per-element cost steps up once a buffer passes malloc's mmap threshold.
    """

    law: str
    a: float
    b: float
    base: float = 2.0
    upper_law: str = ""
    upper_b: float = 0.0
    threshold: float = math.inf
    extra_law: str = ""  # a second growth term, cost + extra_b·f_extra(n) at every n
    extra_b: float = 0.0

    def __post_init__(self) -> None:
        for law in (self.law, self.upper_law or self.law, self.extra_law or self.law):
            if law not in _LAWS:
                raise ValueError(f"unknown law {law!r}; one of {', '.join(_LAWS)}")

    def at(self, n: float) -> float:
        below = self.a + self.b * _LAWS[self.law](min(float(n), self.threshold), self.base)
        if self.extra_law:
            below += self.extra_b * _LAWS[self.extra_law](float(n), self.base)
        if not self.upper_law or n <= self.threshold:
            return below
        up = _LAWS[self.upper_law]
        return below + self.upper_b * (up(float(n), self.base) - up(self.threshold, self.base))


def broken_truth(law: str, upper_law: str, sizes: Sequence[int], threshold: float,
                 jump: float, offset_share: float = 0.0, *, top_s: float = 0.5) -> Truth:
    """A law that changes regime at `threshold`: `law` below, `upper_law` above.

    `jump` is how much steeper the cost rises just above the threshold than
    just below it (the ratio of the two laws' slopes there); the whole is
    scaled so the cost at the largest size is `top_s`.
    """
    f, g = _LAWS[law], _LAWS[upper_law]
    h = 1e-6 * threshold
    slope_f = (f(threshold + h, 2.0) - f(threshold - h, 2.0)) / (2 * h)
    slope_g = (g(threshold + h, 2.0) - g(threshold - h, 2.0)) / (2 * h)
    lower = truth_for(law, sizes, offset_share, top_s=1.0)
    unit = Truth(law, lower.a, lower.b, upper_law=upper_law,
                 upper_b=jump * lower.b * slope_f / slope_g, threshold=threshold)
    scale = top_s / unit.at(max(sizes))
    return Truth(law, unit.a * scale, unit.b * scale, upper_law=upper_law,
                 upper_b=unit.upper_b * scale, threshold=threshold)


def two_terms(law: str, extra_law: str, sizes: Sequence[int], cross_n: float,
              offset_share: float = 0.0, *, top_s: float = 0.5) -> Truth:
    """a + b·f(n) + c·g(n) with the two growth terms equal at `cross_n`, scaled to `top_s` at the top."""
    f, g = _LAWS[law], _LAWS[extra_law]
    lower = truth_for(law, sizes, offset_share, top_s=1.0)
    unit = Truth(law, lower.a, lower.b, extra_law=extra_law,
                 extra_b=lower.b * f(cross_n, 2.0) / g(cross_n, 2.0))
    scale = top_s / unit.at(max(sizes))
    return Truth(law, unit.a * scale, unit.b * scale, extra_law=extra_law,
                 extra_b=unit.extra_b * scale)


@dataclass(frozen=True, slots=True)
class Scenario:
    """How runs depart from the truth: noise CV, one outlier (×factor), drift, offset share."""

    cv: float = 0.05
    outlier: float = 0.0  # one run multiplied by this factor; 0 = none
    drift: float = 0.0  # relative change of every cost from the first run to the last
    offset_share: float = 0.0  # a's share of the true cost at the smallest size


def truth_for(law: str, sizes: Sequence[int], offset_share: float, *, base: float = 2.0,
              top_s: float = 0.5) -> Truth:
    """A law scaled so the cost at the largest size is `top_s`, with the offset asked for.

    The offset a is `offset_share` of the cost at the smallest size: 0.5 means
    start-up is half of the smallest run, as for a small program.
    """
    lo, hi = float(min(sizes)), float(max(sizes))
    f_lo, f_hi = _LAWS[law](lo, base), _LAWS[law](hi, base)
    if law == "1":
        return Truth(law, 0.0, top_s)
    # Solve a + b·f_hi = top_s with a = s·(a + b·f_lo)  ⇒  a = s·b·f_lo / (1 − s).
    s = min(max(offset_share, 0.0), 0.99)
    ratio = s * f_lo / (1.0 - s)
    b = top_s / (f_hi + ratio)
    return Truth(law, b * ratio, b, base)


def _sigma(cv: float) -> float:
    return math.sqrt(math.log1p(cv * cv))


def simulate(truth: Truth, scenario: Scenario, sizes: Sequence[int], repeat: int,
             rng: np.random.Generator) -> tuple[list[int], list[float]]:
    """One fixed sweep: `repeat` interleaved rounds over `sizes`, each in a random order."""
    order: list[int] = []
    for _ in range(repeat):
        round_sizes = list(sizes)
        rng.shuffle(round_sizes)
        order.extend(int(n) for n in round_sizes)
    sigma = _sigma(scenario.cv)
    total = len(order)
    values: list[float] = []
    for i, n in enumerate(order):
        drift = 1.0 + scenario.drift * (i / max(total - 1, 1))
        values.append(truth.at(n) * drift * math.exp(sigma * float(rng.standard_normal())))
    if scenario.outlier and total:
        j = int(rng.integers(0, total))
        values[j] *= scenario.outlier
    return order, values


def cost(truth: Truth, scenario: Scenario, rng: np.random.Generator,
         expected_runs: int = 100) -> Callable[[int], float]:
    """The disturbed cost of successive runs, as a function of each run's n.

    Drift grows with the number of calls, reaching `scenario.drift` after
    `expected_runs`; the outlier lands on one call drawn among the first
    `expected_runs`.
    """
    sigma = _sigma(scenario.cv)
    outlier_at = int(rng.integers(0, max(expected_runs, 1))) if scenario.outlier else -1
    calls = [0]

    def one(n: int) -> float:
        i = calls[0]
        calls[0] += 1
        drift = 1.0 + scenario.drift * min(i / max(expected_runs - 1, 1), 1.0)
        v = truth.at(n) * drift * math.exp(sigma * float(rng.standard_normal()))
        return v * scenario.outlier if i == outlier_at else v

    return one


__all__ = ["Scenario", "Truth", "broken_truth", "cost", "simulate", "truth_for", "two_terms"]
