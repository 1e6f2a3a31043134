"""The free power law's point estimate and the step search's batched fits, against the
general solvers they replace (bounded least squares, `np.linalg.lstsq` per subset)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares

from quadscope.analyse.classfit import Data, power_point, prepare
from quadscope.analyse.terms import _offset_chis, free_offset
from quadscope.classes import REGISTRY

SIZES = np.unique(np.round(np.logspace(2, 5, 9)))


def _runs(k: float, a: float, noise: float, seed: int) -> Data:
    rng = np.random.default_rng(seed)
    n = np.repeat(SIZES, 3)
    y = (a + (n / n[-1]) ** k) * np.exp(noise * rng.standard_normal(n.size))
    return prepare("wall_s", n, y)


def _least_squares_chi(data: Data, start: tuple[float, float, float]) -> float:
    """χ² of bounded least squares over (a, b, k), as power_point once computed it."""
    x = data.n / data.n[-1]
    sw = np.sqrt(data.w)

    def resid(p: np.ndarray) -> np.ndarray:
        return sw * (data.y - (p[0] + p[1] * x ** p[2]))

    sol = least_squares(resid, np.asarray(start), bounds=([0, 0, 0], [np.inf, np.inf, 4.0]))
    return float(np.sum(sol.fun**2))


@pytest.mark.parametrize("k", [0.5, 1.0, 1.37, 2.0, 3.1])
def test_a_noiseless_power_law_gives_its_own_exponent(k: float) -> None:
    data = _runs(k, a=0.0, noise=0.0, seed=0)
    got, _, b, chi = power_point(data)
    assert got == pytest.approx(k, abs=1e-6)
    assert b == pytest.approx(1.0, rel=1e-6)
    assert chi < 1e-12 * float((data.w * data.y**2).sum())


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("k", [0.5, 1.0, 2.0, 3.0])
def test_the_polish_is_no_worse_than_bounded_least_squares(k: float, seed: int) -> None:
    """The profile search over k reaches least squares' joint optimum from the same start
    (within a part in a million of its χ²), with an offset and 5% noise."""
    data = _runs(k, a=0.3, noise=0.05, seed=seed)
    got, a, b, chi = power_point(data)
    assert chi <= _least_squares_chi(data, (a, b, got)) * (1 + 1e-6) + 1e-12
    x = data.n / data.n[-1]
    assert chi == pytest.approx(float((data.w * (data.y - a - b * x**got) ** 2).sum()))


@pytest.mark.parametrize("cls", ["log n", "n", "n log n", "n^2"])
def test_batched_offset_fits_equal_lstsq_on_each_subset(cls: str) -> None:
    """`_offset_chis` over masked weights is `free_offset` on each subset of sizes, a
    negative slope included (then the weighted mean)."""
    rng = np.random.default_rng(3)
    n = SIZES.astype(float)
    g = REGISTRY[cls]
    norm = g.normalised(n, float(n[-1]))
    assert norm is not None
    for sign in (1.0, -1.0):
        y = 2.0 + sign * norm[0] * 5.0 + 0.1 * rng.standard_normal(n.size)
        w = 1.0 / (0.1 + rng.random(n.size))
        masks = np.array([n > cut for cut in n[:-4]])
        batched = _offset_chis(norm[0], y, w * masks)
        for row, mask in zip(batched, masks, strict=True):
            assert row == pytest.approx(free_offset(g, n[mask], y[mask], w[mask])[2],
                                        rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("cls", ["1", "log n", "n", "n^2", "n^3"])
def test_left_out_fits_equal_fit_classes_on_each_subset(cls: str) -> None:
    """`left_out_chis` is `fit_classes` refitted on the sizes each row keeps, the row that
    leaves the largest size out (its own normalisation) and unfittable classes included."""
    from quadscope.analyse.classfit import fit_classes, left_out_chis

    data = _runs({"1": 0.0, "log n": 0.1, "n": 1.0, "n^2": 2.0, "n^3": 3.0}[cls], a=0.2,
                 noise=0.05, seed=4)
    keeps = np.ones((data.m, data.m), dtype=bool)
    keeps[np.arange(data.m), np.arange(data.m)] = False
    got = left_out_chis(data, keeps, REGISTRY)
    for row, keep in zip(got, keeps, strict=True):
        sub = Data(data.groups, data.n[keep], data.y[keep], data.w[keep], data.repeated,
                   data.known)
        raw = fit_classes(sub, REGISTRY)
        want = [np.inf if raw[g.name] is None else raw[g.name][2] for g in REGISTRY]
        assert row == pytest.approx(want, rel=1e-9, abs=1e-12)
