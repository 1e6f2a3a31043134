"""The deciding size: a power calculation on the sweep extended as advised, priced, or the meter."""

from __future__ import annotations

import numpy as np
import pytest

from quadscope.analyse import decide, text
from quadscope.analyse.classfit import ClassFit, prepare
from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.gate import judge
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, DoubtValue
from quadscope.workloads.synthetic import Scenario, simulate, truth_for

SIZES = [1000 * 2**i for i in range(8)]


def _linear(a: float = 0.0) -> tuple[list[int], list[float]]:
    """Three noise-free runs per size of a + n/1000 (seconds)."""
    n = [s for _ in range(3) for s in SIZES]
    return n, [a + s / 1000 for s in n]


def test_the_extension_doubles_from_the_top_and_is_priced_by_the_fitted_cost() -> None:
    """Sizes double from the largest measured; a linear cost of 8 sizes × 3 runs (765 s) affords
    doublings while their runs sum to at most COST_MULTIPLE times that."""
    n, y = _linear()
    ext = decide.Extension.of(prepare("wall_s", n, y), 1.0)
    assert ext.sizes(2)[-3:].tolist() == [128_000.0, 256_000.0, 512_000.0]
    assert ext.repeats == 3 and ext.spent == pytest.approx(3 * sum(s / 1000 for s in SIZES))
    cost = ClassFit(REGISTRY["n"], 0.0, 1e-3, 0.0, 0.0)
    steps = ext.steps(cost)
    price = [3 * 128 * (2 ** (j + 1) - 2) for j in (steps, steps + 1)]  # Σ 3·128·2^j, j = 1..s
    assert price[0] <= decide.COST_MULTIPLE * ext.spent < price[1]
    assert ext.affords(cost, 128_000 * 2**steps) and not ext.affords(cost, 128_000 * 2 ** (steps + 1))


def test_a_flat_cost_is_capped_by_the_largest_size_not_by_its_price() -> None:
    n, y = _linear()
    ext = decide.Extension.of(prepare("wall_s", n, [1.0] * len(y)), 1.0)
    steps = ext.steps(ClassFit(REGISTRY["1"], 1.0, 0.0, 0.0, 0.0))
    most = min(decide.MAX_FACTOR, decide.MAX_N / SIZES[-1])
    assert 2.0**steps <= most < 2.0 ** (steps + 1)


def _tie_sweep(cv: float, seed: int) -> tuple[list[int], list[float]]:
    """n with a start-up cost of ⅘ of the smallest run: n and n log n tie over these sizes."""
    truth = truth_for("n", SIZES, 0.8)
    return simulate(truth, Scenario(cv=cv), SIZES, 3, np.random.default_rng(seed))


def _first_tie(cv: float) -> tuple[int, list[int], list[float]]:
    for seed in range(40):
        n, y = _tie_sweep(cv, seed)
        fit = fit_metric("wall_s", n, y, seed=seed)
        if not fit.confident and any(d.check == "tie" for d in fit.doubts):
            return seed, n, y
    raise AssertionError("no tie in 40 seeds")


def test_a_tie_names_a_size_within_a_sensible_range_and_following_it_decides() -> None:
    """The advice is at least the next doubling and at most MAX_FACTOR times the top; a sweep
    extended to it with the same design (3 repeats, doubling sizes) settles the true class."""
    seed, n, y = _first_tie(0.05)
    fit = fit_metric("wall_s", n, y, seed=seed)
    assert fit.decide_n is not None
    assert 2 * SIZES[-1] <= fit.decide_n <= decide.MAX_FACTOR * SIZES[-1]
    new, top = [], 2 * SIZES[-1]
    while top < fit.decide_n:
        new.append(top)
        top *= 2
    new.append(fit.decide_n)
    truth = truth_for("n", SIZES, 0.8)
    n2, y2 = simulate(truth, Scenario(cv=0.05), new, 3, np.random.default_rng(seed + 1000))
    after = fit_metric("wall_s", [*n, *n2], [*y, *y2], seed=seed)
    assert (after.cls, after.decide_n) == ("n", None)


def test_no_affordable_size_names_the_meter_for_a_time_and_nothing_for_a_count(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no doubling affordable the time's advice is the exact meter, in one sentence, and
    no size; a metric that is not a time is not told to count its work."""
    seed, n, y = _first_tie(0.05)
    monkeypatch.setattr(decide, "COST_MULTIPLE", 1e-9)
    fit = fit_metric("wall_s", n, y, seed=seed)
    assert fit.cls == INCONCLUSIVE and fit.decide_n is None
    assert "count the work instead: --meter instructions decides the class without growing n" in (
        fit.reason)
    tie = next(d for d in fit.doubts if d.check == "tie")
    assert (tie.decide_n, tie.meter) == (None, "instructions")
    gate = judge(fit, "n")
    assert gate.decide_n is None and gate.sentence.endswith(
        "; count the work with --meter instructions to decide")
    counted = fit_metric("instructions", n, y, seed=seed)
    assert counted.decide_n is None and "--meter" not in counted.reason
    assert all(d.meter == "" for d in counted.doubts if d.check == "tie")


def test_a_size_beyond_the_largest_factor_is_never_named() -> None:
    """Classes that barely part (n against n log n under a start-up cost of 99.9%, 20% noise)
    name the meter, not 1.3e+09 or 30G."""
    truth = truth_for("n", SIZES, 0.999)
    n, y = simulate(truth, Scenario(cv=0.2), SIZES, 3, np.random.default_rng(3))
    fit = fit_metric("wall_s", n, y, seed=3)
    assert not fit.confident and fit.decide_n is None
    assert fit.reason.endswith("count the work instead: --meter instructions decides the class "
                               "without growing n")


def test_the_meter_sentence_replaces_the_size_in_every_doubt_that_names_one() -> None:
    numbers: dict[str, DoubtValue] = {"first": "n", "second": "n log n", "lo_n": 1000.0,
                                      "hi_n": 128000.0, "growing_share": None}
    said = text.tie(numbers, None, REGISTRY, "instructions")
    assert said.endswith("; no affordable n would decide it; count the work instead: "
                         "--meter instructions decides the class without growing n")
    assert "grow n" not in said
    hidden = Doubt("hidden", "1", "log n", None, "instructions",
                   numbers={"class": "log n", "share": 0.3, "hi_n": 128000.0})
    assert "--meter instructions decides the class" in text.doubt_text(hidden, REGISTRY)
    assert "grow n to 512000 to tell them apart" in text.tie(numbers, 512000, REGISTRY)
    assert text.tie(numbers, None, REGISTRY).endswith("no practical n decides it to tell them apart")
