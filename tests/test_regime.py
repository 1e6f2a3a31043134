"""Changes of regime: named where simulated, never on clean single laws, and read as the upper class."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import measurement

from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.headline import verdict_line
from quadscope.model import Fit, Run
from quadscope.run.adaptive import AdaptivePlan
from quadscope.workloads.synthetic import Scenario, broken_truth, simulate, truth_for

SIZES = tuple(1000 * 2**i for i in range(10))


def _fit(truth_sizes: tuple[int, ...], truth: object, cv: float = 0.05, seed: int = 3,
         **scenario: float) -> Fit:
    ns, vs = simulate(truth, Scenario(cv=cv, **scenario), truth_sizes, 3,  # type: ignore[arg-type]
                      np.random.default_rng(seed))
    return fit_metric("wall_s", ns, vs, seed=seed)


@pytest.mark.parametrize(("law", "outlier", "drift", "offset"), [
    ("n", 0.0, 0.0, 0.0), ("n", 5.0, 0.1, 0.8), ("n log n", 5.0, 0.0, 0.33),
    ("n^2", 0.0, 0.1, 0.8), ("sqrt n", 5.0, 0.0, 0.8), ("1", 5.0, 0.1, 0.0)])
def test_clean_single_laws_never_change_regime(law: str, outlier: float, drift: float,
                                               offset: float) -> None:
    """A single law with 5% noise, an outlier, drift or a start-up offset names no change of regime."""
    for seed in range(3):
        fit = _fit(SIZES, truth_for(law, SIZES, offset), seed=seed, outlier=outlier, drift=drift)
        assert fit.regime_n is None, (seed, fit)


def test_linear_turning_quadratic_is_read_as_quadratic_above_the_change() -> None:
    """n below 16k, n² above: the verdict is n², the change named between the sizes around it."""
    fit = _fit(SIZES, broken_truth("n", "n^2", SIZES, 16_000, 1.0, 0.33))
    assert fit.cls == "n^2"
    assert fit.regime_n is not None and 16_000 <= fit.regime_n <= 64_000
    assert fit.regime_k is not None and abs(fit.regime_k[0] - 1) < 0.3
    assert fit.to_dict()["regime"]["n"] == fit.regime_n
    line = verdict_line({"wall_s": fit})
    assert line.startswith(f"quadratic: wall time grows as n² above n ≈ {fit.regime_n:,} (below: ")


def test_three_sizes_above_the_change_give_at_best_a_bracket() -> None:
    """With 3 sizes above the change the upper class is a bracket holding n², and a larger n is named."""
    fit = _fit(SIZES, broken_truth("n", "n^2", SIZES, 64_000, 1.0, 0.33))
    assert fit.regime_n is not None
    assert not fit.confident
    assert fit.at_least in ("n log n", "n^2") and fit.at_most in ("n^2", "n^3")
    assert fit.decide_n is not None and fit.decide_n > SIZES[-1]
    assert "only 3 sizes lie above it" in fit.reason


def test_two_sizes_above_the_change_are_not_fitted() -> None:
    """With 2 sizes above the change the verdict is bare, says why, and asks for larger n."""
    fit = _fit(SIZES, broken_truth("n", "n^2", SIZES, 200_000, 8.0, 0.33), cv=0.01)
    assert fit.regime_n is not None
    assert (fit.cls, fit.at_least, fit.at_most) == ("inconclusive", "", "")
    assert "only 2 sizes lie above it" in fit.reason
    assert fit.decide_n is not None and fit.decide_n >= 4 * SIZES[-1]


def _fit_with(**regime: object) -> Fit:
    base = Fit(metric="wall_s", cls="n^2", exponent=2.0, exponent_ci=(1.98, 2.02),
               coefficients={"a": 0.0, "b": 1e-9}, r2=1.0, candidates=(), n_points=30,
               at_least="n^2", at_most="n^2")
    return Fit(**{**{f: getattr(base, f) for f in Fit.__slots__}, **regime})  # type: ignore[arg-type]


def test_regime_round_trips_and_old_fits_have_none() -> None:
    """regime_n/regime_below/regime_k survive to_dict/from_dict; a fit without the key reads None."""
    fit = _fit_with(regime_n=130_000, regime_below="n", regime_k=(1.0, 2.0))
    d = fit.to_dict()
    assert d["regime"] == {"n": 130_000, "below": "n", "k": [1.0, 2.0]}
    assert Fit.from_dict(d) == fit
    del d["regime"]
    assert Fit.from_dict(d).regime_n is None and Fit.from_dict(d).regime_k is None


def test_headline_names_the_change_and_a_step() -> None:
    """One line: "… as n² above n ≈ 130,000 (below: n)", and a step when the class is the same."""
    change = _fit_with(regime_n=130_000, regime_below="n", regime_k=(1.0, 2.0))
    assert verdict_line({"wall_s": change}) == (
        "quadratic: wall time grows as n² above n ≈ 130,000 (below: n) (k = 2.00 ± 0.02)")
    step = _fit_with(regime_n=130_000, regime_below="n^2", regime_k=(2.0, 3.0))
    assert verdict_line({"wall_s": step}) == (
        "quadratic: wall time grows as n², with a step near n ≈ 130,000 (k = 2.00 ± 0.02)")
    unsettled = _fit_with(regime_n=130_000, regime_below="", regime_k=(1.04, 2.0))
    assert "(below: k ≈ 1.0)" in verdict_line({"wall_s": unsettled})


def test_adaptive_wants_sizes_above_a_change_of_regime() -> None:
    """A fit naming a change with fewer than 4 measured sizes above it keeps adaptive mode growing."""
    plan = AdaptivePlan(variants=("A",), repeat=1, warmup=0, timeout_s=None, seed=0)
    plan.history = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                        started_at=0.0, measurement=measurement(1e-3 * n))
                    for i, n in enumerate((1, 2, 4, 8, 16, 32))]
    assert plan._wants_larger(_fit_with(regime_n=10, regime_below="n", regime_k=(1.0, 2.0)))
    assert not plan._wants_larger(_fit_with(regime_n=3, regime_below="n", regime_k=(1.0, 2.0)))
    assert not plan._wants_larger(_fit_with())


def test_a_flat_program_under_load_names_no_change_of_regime() -> None:
    """Issue 25: /bin/true with --budget 2 read "1 … n³ above n ≈ 1,500 (below: k ≈ 0.0)".
    Simulated (bench/flat_noise.py): 1 ms with 5–20% noise, runs slowed ×1.5–4 by other
    work, adaptive with a 2 s budget on a fake clock. This sweep read "1 … n³" above a
    step (the level shifted between the small and the large sizes, no growth on either
    side); now it names no change and settles no growing class."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from flat_noise import one

    outcome = one("adaptive 2 s", 13, seed=0)
    assert not outcome.regime and outcome.kind in ("right", "bracket"), outcome


def test_a_level_shift_between_small_and_large_sizes_is_not_a_step() -> None:
    """Flat runs whose level drops by a fifth from some size on (another process left the
    machine): neither side grows, so no change is named, whatever ΔQAICc the step gains."""
    rng = np.random.default_rng(5)
    sizes = [10**i for i in range(12)]
    ns, vs = [], []
    for _ in range(3):
        for n in sizes:
            ns.append(n)
            vs.append((1e-3 if n < 10**8 else 0.8e-3) * float(np.exp(0.03 * rng.standard_normal())))
    fit = fit_metric("wall_s", ns, vs, seed=5)
    assert fit.regime_n is None, fit
    assert fit.cls in ("1", "inconclusive") and fit.at_least in ("", "1"), fit
