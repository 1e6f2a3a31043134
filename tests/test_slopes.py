"""Costs whose per-element part rises through the caches: brackets, never a confident faster class."""

from __future__ import annotations

import numpy as np
import pytest

from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.slopes import swing
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit

# The cache_step workload's sweep (BENCHMARKS.md §1): n elements at a per-element cost
# that steps up at each cache level, 55 → 83 → 138 → 600 → 719 ns.
STAIRS_N = (4000, 16000, 64000, 128000, 256000, 512000, 1024000, 2048000)
STAIRS_S = (0.7e-3, 1.0e-3, 3.5e-3, 10.5e-3, 21.3e-3, 70.8e-3, 614.3e-3, 1472.0e-3)
# The heap_sort workload's (n log n whose per-element cost rises until the last-level cache).
HEAP_N = (30000, 120000, 240000, 480000, 960000, 1920000)
HEAP_S = (2.8e-3, 12.7e-3, 42.9e-3, 135.7e-3, 303.2e-3, 1038.5e-3)


def _runs(sizes: tuple[int, ...], medians: tuple[float, ...], cv: float, seed: int,
          repeat: int = 3) -> tuple[list[float], list[float]]:
    """`repeat` runs per size, each the median times log-normal noise of `cv`."""
    rng = np.random.default_rng(seed)
    ns = [float(n) for n in sizes for _ in range(repeat)]
    vs = [y * float(np.exp(cv * rng.standard_normal())) for y in medians for _ in range(repeat)]
    return ns, vs


def _holds(fit: Fit, truth: str) -> bool:
    """The verdict is the truth, or a bracket that contains it."""
    if fit.cls != INCONCLUSIVE:
        return fit.cls == truth
    order = REGISTRY.index
    return bool(fit.at_least) and order(fit.at_least) <= order(truth) <= order(fit.at_most)


@pytest.mark.parametrize("cv", [0.01, 0.03, 0.05])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cache_staircase_is_never_a_confident_faster_class(cv: float, seed: int) -> None:
    """A linear cost stepping up at several cache levels is bracketed with n, never settled n²."""
    fit = fit_metric("wall_s", *_runs(STAIRS_N, STAIRS_S, cv, seed))
    assert fit.cls == INCONCLUSIVE, fit
    assert _holds(fit, "n"), fit


@pytest.mark.parametrize("cv", [0.01, 0.03, 0.05])
@pytest.mark.parametrize(("seed", "repeat"), [(0, 3), (1, 3), (0, 10), (1, 10)])
def test_heap_sort_through_the_caches_is_bracketed_with_n_log_n(cv: float, seed: int,
                                                                repeat: int) -> None:
    """n log n with a per-element cost rising past the caches (k ≈ 1.6) reads "… n log n … n² …"."""
    fit = fit_metric("wall_s", *_runs(HEAP_N, HEAP_S, cv, seed, repeat))
    assert fit.cls == INCONCLUSIVE, fit
    assert _holds(fit, "n log n"), fit
    assert fit.at_most == "n^2", fit


def test_the_reason_names_the_swing_and_where() -> None:
    """The reason gives the lowest and highest local slopes with their sizes, and the slowest
    class; the power calculation names 2e+07, which its forecast (`analyse.forecast`:
    fewer than 4 in 5 of its simulated followings settle) replaces by the meter."""
    runs = _runs(HEAP_N, HEAP_S, 0.01, 0, 10)
    fit = fit_metric("wall_s", *runs, forecast=False)
    assert "local slope swings from k = 1.1" in fit.reason, fit.reason
    assert "n = 480000–960000" in fit.reason
    assert "as slow as n log n" in fit.reason
    assert fit.decide_n == 20_000_000
    forecast = fit_metric("wall_s", *runs)
    assert forecast.decide_n is None and "--meter instructions" in forecast.reason


def _law(f: np.ndarray, cv: float, seed: int, outlier_at: int | None = None) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """Per-size medians and weights as fitting prepares them: relative σ = cv/√3 at every size."""
    rng = np.random.default_rng(seed)
    y = f * np.exp(cv / np.sqrt(3) * rng.standard_normal(f.size))
    if outlier_at is not None:
        y[outlier_at] *= 1.5
    return y, 1.0 / (cv / np.sqrt(3) * y) ** 2, f


def test_swing_finds_a_staircase_and_reaches_down_to_its_class() -> None:
    """Exact staircase medians against the n² curve: a swing whose slowest class is n."""
    n = np.array(STAIRS_N, dtype=float)
    y = np.array(STAIRS_S)
    curve = y[-1] * (n / n[-1]) ** 2
    found = swing(n, y, 1.0 / (0.01 * y) ** 2, curve, REGISTRY)
    assert found is not None
    assert found.at_least == "n"
    assert found.n_low == (128000.0, 256000.0)
    assert found.n_high == (512000.0, 1024000.0)
    assert found.low == pytest.approx(np.log2(21.3 / 10.5))
    assert found.high == pytest.approx(np.log2(614.3 / 70.8))


@pytest.mark.parametrize("cv", [0.01, 0.05, 0.2])
def test_swing_leaves_clean_power_laws_alone(cv: float) -> None:
    """n and n² with noise, measured against their own curves over 10 doublings, never swing."""
    n = 1000.0 * 2.0 ** np.arange(10)
    for k in (1.0, 2.0):
        for seed in range(20):
            y, w, curve = _law(n**k, cv, seed)
            assert swing(n, y, w, curve, REGISTRY) is None, (k, seed)


def test_one_stray_size_does_not_make_a_swing() -> None:
    """One size 50% off a clean n² moves two local slopes; leaving it out, none strays."""
    n = 1000.0 * 2.0 ** np.arange(10)
    y, w, curve = _law(n**2, 0.01, 0, outlier_at=7)
    assert swing(n, y, w, curve, REGISTRY) is None
    y2 = y.copy()
    y2[[7, 8]] *= 1.5  # two sizes off: leaving one out, the other still strays
    assert swing(n, y2, 1.0 / (0.01 / np.sqrt(3) * y2) ** 2, curve, REGISTRY) is not None


def test_a_clean_quadratic_over_the_staircase_sizes_still_reads_n_squared() -> None:
    """n² at 5% noise over the cache_step sizes is settled n²: the new rule costs no right class."""
    n = np.array(STAIRS_N, dtype=float)
    for seed in range(5):
        fit = fit_metric("wall_s", *_runs(STAIRS_N, tuple(1e-12 * n**2), 0.05, seed))
        assert fit.cls == "n^2", (seed, fit)
