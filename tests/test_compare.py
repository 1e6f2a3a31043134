"""A-versus-B comparison on seeded synthetic sweeps of known shape."""

from __future__ import annotations

import numpy as np
import pytest

from quadscope.analyse.compare import compare, compare_metric
from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Comparison, Fit

SIZES = np.unique(np.round(np.logspace(1, 4, 12)))


def runs(cls: str, a: float, b: float, seed: int, noise: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """Three runs per size of a + b·f(n) with multiplicative noise."""
    rng = np.random.default_rng(seed)
    n = np.repeat(SIZES, 3)
    return n, (a + b * REGISTRY[cls].f(n)) * (1 + noise * rng.standard_normal(n.size))


def versus(metric: str, side_a: tuple[np.ndarray, np.ndarray], side_b: tuple[np.ndarray, np.ndarray]):
    fit_a = fit_metric(metric, *side_a)
    fit_b = fit_metric(metric, *side_b)
    return compare_metric(metric, *side_a, fit_a, *side_b, fit_b)


def test_same_program_twice_is_no_change() -> None:
    """The same quadratic program measured twice shows no change and no crossover."""
    # Not seed 2: its k interval misses 2 (2.02–2.07), so that side is, rightly, a bracket.
    mc = versus("wall_s", runs("n^2", 0.01, 1e-8, 1), runs("n^2", 0.01, 1e-8, 3))
    assert mc.change == "none"
    assert mc.crossover_n is None
    assert (mc.class_a, mc.class_b) == ("n^2", "n^2")
    assert float(np.median([r.ratio for r in mc.ratios])) == pytest.approx(1.0, abs=0.03)
    assert mc.summary.startswith("wall_s: no change detected (B/A between ")


def test_three_times_slower_is_constant() -> None:
    """B = 3×A (same class, b tripled) is a constant-factor change of about 3×."""
    # Not seed 2: its k interval (1.13–1.20) misses n log n's 1.12 here, so B is a bracket.
    mc = versus("wall_s", runs("n log n", 0.01, 1e-6, 1), runs("n log n", 0.03, 3e-6, 3))
    assert mc.change == "constant"
    assert mc.crossover_n is None
    assert float(np.median([r.ratio for r in mc.ratios])) == pytest.approx(3.0, rel=0.03)
    factor = float(mc.summary.split("B's growing part is ")[1].split("×")[0])
    assert factor == pytest.approx(3.0, rel=0.05)


def test_quadratic_to_linear_is_class_change_with_crossover() -> None:
    """A quadratic, B linear with a bigger start-up: a class change, B faster beyond the crossing."""
    # A = 1e-4·n², B = 0.05 + 1e-3·n: equal where 1e-4·n² = 0.05 + 1e-3·n, n ≈ 27.9.
    mc = versus("wall_s", runs("n^2", 0.0, 1e-4, 1), runs("n", 0.05, 1e-3, 2))
    assert mc.change == "class"
    assert (mc.class_a, mc.class_b) == ("n^2", "n")
    assert mc.crossover_n == pytest.approx(27.9, rel=0.15)
    assert mc.summary.startswith("wall_s: B grows as n where A grows as n²; B is faster beyond n ≈ ")


def test_added_constant_is_offset() -> None:
    """B = A + a fixed cost (same class and slope) is an offset change, B adding the constant."""
    mc = versus("wall_s", runs("n", 0.01, 1e-4, 1), runs("n", 0.06, 1e-4, 2))
    assert mc.change == "offset"
    assert mc.crossover_n is None
    assert mc.summary.startswith("wall_s: same growth (n), B adds a constant ")
    added = float(mc.summary.split("adds a constant ")[1].split(" ")[0])
    assert added == pytest.approx(0.05, rel=0.05)


def test_constant_metric_offset() -> None:
    """A constant memory footprint that grows by 1 MB is an offset change."""
    n = np.repeat(SIZES, 3)
    a = (n, np.full(n.size, 2e6))
    b = (n, np.full(n.size, 3e6))
    mc = versus("max_rss_bytes", a, b)
    assert (mc.class_a, mc.class_b, mc.change) == ("1", "1", "offset")


def test_compare_covers_common_metrics_in_order() -> None:
    """compare() keeps metrics both sides have, in METRICS order, and round-trips to dict."""
    wall_a, wall_b = runs("n", 0.01, 1e-4, 1), runs("n", 0.01, 1e-4, 2)
    n = np.repeat(SIZES, 3)
    rss = (n, np.full(n.size, 2e6))
    data_a = {"wall_s": wall_a, "max_rss_bytes": rss, "cycles": wall_a}
    data_b = {"wall_s": wall_b, "max_rss_bytes": rss}
    fits_a = {m: fit_metric(m, *v) for m, v in data_a.items()}
    fits_b = {m: fit_metric(m, *v) for m, v in data_b.items()}
    cmp = compare("old", data_a, fits_a, "new", data_b, fits_b)
    assert [m.metric for m in cmp.metrics] == ["wall_s", "max_rss_bytes"]
    assert [m.change for m in cmp.metrics] == ["none", "none"]
    assert Comparison.from_dict(cmp.to_dict()) == cmp


def test_inconclusive_side_with_equal_ratios_is_none() -> None:
    """When one side is inconclusive but every size's ratio holds 1, the change is "none"."""
    n = np.repeat(np.unique(np.round(np.logspace(2, 3, 6))), 3)
    rng = np.random.default_rng(11)
    y = (200 + n) * (1 + 0.05 * rng.standard_normal(n.size))
    fit = fit_metric("wall_s", n, y)
    assert not fit.confident
    mc = compare_metric("wall_s", n, y, fit, n, y, fit)
    assert mc.change == "none"


def test_an_unbounded_ratio_interval_is_no_evidence_of_no_change() -> None:
    """A side mostly measured 0 (no system time) against one that is not, neither settled:
    B/A's interval reaches infinity, holds 1 only vacuously, and "none" would be a claim
    nothing backs; the same sides with A measured are "none"."""
    n = [float(s) for s in (100, 200, 400, 800) for _ in range(5)]
    zeros = [0.0, 0.0, 0.0, 1e-3, 2e-3] * 4
    b = [1e-3, 1.1e-3, 0.9e-3, 1.2e-3, 1e-3] * 4
    fit = _bracketed("sys_s", "1", "n", 0.2, (-0.5, 0.9))
    mc = compare_metric("sys_s", n, zeros, fit, n, b, fit)
    assert any(r.hi == np.inf for r in mc.ratios)
    assert mc.change == "inconclusive"
    assert compare_metric("sys_s", n, b, fit, n, b[::-1], fit).change == "none"


def test_disjoint_exponents_are_a_class_change_even_when_unsettled() -> None:
    """A settled n^2 against an unsettled B whose exponent interval lies far below: a class change."""
    from quadscope.analyse.compare import compare_metric
    from quadscope.classes import INCONCLUSIVE
    from quadscope.model import Fit

    def f(cls: str, k: float, ci: tuple[float, float]) -> Fit:
        return Fit("wall_s", cls, k, ci, {"a": 0.0, "b": 1.0}, 1.0, (), 10, best="n")

    sizes = [1.0, 2.0, 4.0, 8.0] * 2
    mc = compare_metric("wall_s", sizes, [s**2 for s in sizes], f("n^2", 2.0, (1.9, 2.1)),
                        sizes, [s for s in sizes], f(INCONCLUSIVE, 1.05, (0.9, 1.2)))
    assert mc.change == "class"
    assert "B's class is not settled" in mc.summary


def _bracketed(metric: str, lo: str, hi: str, k: float | None,
               ci: tuple[float, float] | None) -> Fit:
    return Fit(metric, INCONCLUSIVE, k, ci, {"a": 1.0, "b": 1.0}, 1.0, (), 8, best=lo,
               at_least=lo, at_most=hi)


def _flat(metric: str) -> Fit:
    return Fit(metric, "1", None, None, {"a": 1.0, "b": 0.0}, 1.0, (), 8, best="1",
               at_least="1", at_most="1")


def test_an_exact_flat_count_surely_below_a_bracket_is_a_class_change() -> None:
    """Accumulate mode's counts: A's work "n … n²" (k interval far from B's none) against
    B's settled constant work. Counted exactly, B's "1" is flat (no scatter), so A's lower
    end above it is a decided change; timed, a "1" still scatters and stays undecided
    (tick-quantised user time reads "1" for a growing program)."""
    sizes = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
    a_vals = [1e6 + 4000 * s for s in sizes]
    b_vals = [1e6 for _ in sizes]
    fa = _bracketed("instructions", "n", "n^2", 0.69, (0.689, 0.694))
    fb = _flat("instructions")
    exact = compare_metric("instructions", sizes, a_vals, fa, sizes, b_vals, fb, exact=True)
    assert exact.change == "class"
    assert "B grows as 1 at most where A grows as n or faster" in exact.summary
    timed = compare_metric("instructions", sizes, a_vals, fa, sizes, b_vals, fb)
    assert timed.change == "inconclusive"
    # Overlapping brackets are not apart, exact or not.
    low = _bracketed("instructions", "1", "n", 0.2, (0.0, 0.5))
    assert compare_metric("instructions", sizes, a_vals, low, sizes, b_vals, fb,
                          exact=True).change == "inconclusive"


def test_compare_passes_exactness_per_metric() -> None:
    """`compare(exact=...)` judges only the named metrics' flat sides."""
    sizes = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    a = (sizes, [1e6 + 4000 * s for s in sizes])
    b = (sizes, [1e6 for _ in sizes])
    fits_a = {m: _bracketed(m, "n", "n^2", 0.69, (0.689, 0.694)) for m in ("wall_s", "instructions")}
    fits_b = {m: _flat(m) for m in ("wall_s", "instructions")}
    got = compare("A", {"wall_s": a, "instructions": a}, fits_a,
                  "B", {"wall_s": b, "instructions": b}, fits_b, exact=("instructions",))
    changes = {mc.metric: mc.change for mc in got.metrics}
    assert changes == {"wall_s": "inconclusive", "instructions": "class"}


def test_a_ratio_whose_upper_end_is_infinite_says_so_rather_than_nan() -> None:
    """A's runs at one size measured 0 (no system time) in most runs, B's did not: resamples
    of B/A are infinite, and the interval's upper end is infinity, never NaN."""
    import math

    from quadscope.analyse.compare import size_ratios

    sizes = [100.0] * 5
    got = size_ratios(sizes, [0.0, 0.0, 0.0, 0.0, 1e-3], sizes, [2e-3] * 5)
    assert len(got) == 1
    r = got[0]
    assert not any(math.isnan(x) for x in (r.ratio, r.lo, r.hi))
    assert math.isinf(r.hi)
