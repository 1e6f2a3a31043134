"""The deciding size: a power calculation on the sweep extended as advised, priced, or the meter."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from quadscope.analyse import decide, text
from quadscope.analyse.classfit import ClassFit, fit_classes, prepare, score_classes
from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.gate import judge
from quadscope.analyse.stats import nice_n
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, DoubtValue
from quadscope.workloads.synthetic import Scenario, broken_truth, simulate, truth_for

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
    """The power calculation's advice is at least the next doubling and at most MAX_FACTOR
    times the top; a sweep extended to it with the same design (3 repeats, doubling sizes)
    settles the true class. (Its forecast, `analyse.forecast`, names the meter here: these
    runs lean to n + n² by a standard error, and followed along that they would not decide.)"""
    seed, n, y = _first_tie(0.05)
    fit = fit_metric("wall_s", n, y, seed=seed, forecast=False)
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
    forecast = fit_metric("wall_s", n, y, seed=seed)
    assert forecast.decide_n is None and "--meter instructions" in forecast.reason


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


def _mix(cross: float, cv: float = 0.01, seed: int = 3) -> tuple[list[int], list[float]]:
    """Three runs per size of n + n²/cross (the terms equal at cross × the top), noisy."""
    top = SIZES[-1]
    rng = np.random.default_rng(seed)
    n = [s for _ in range(3) for s in SIZES]
    return n, [(s / top + (s / top) ** 2 / cross) * (1 + cv * rng.standard_normal()) for s in n]


def _exponent_advice(n: list[int], y: list[float], slower: str, faster: str) -> decide.Advice:
    data = prepare("wall_s", n, y)
    fits = score_classes(fit_classes(data, REGISTRY), data, 1.0, REGISTRY)
    k, se = decide.k_se(data.n, data.y, data.w, 1.0)
    return decide.exponent_n(decide.Extension.of(data, 1.0), fits, slower, faster,
                             (k - 1.96 * se, k + 1.96 * se), REGISTRY, 6.0)


def test_two_terms_tend_to_the_faster_one_and_k_is_read_with_its_error() -> None:
    """n + n² equal at the top: the curve through the medians tends to n² and passes through
    2 at the top; a noise-free n^1.5 reads k = 1.5, its error growing as √ĉ."""
    n, y = _mix(1.0)
    pair = decide.two_terms(prepare("wall_s", n, y), REGISTRY["n"], REGISTRY["n^2"])
    assert pair is not None and pair[1].name == "n^2"
    top = float(SIZES[-1])
    assert pair[0](np.array([top]))[0] == pytest.approx(2.0, rel=0.05)
    assert pair[0](np.array([4 * top]))[0] == pytest.approx(20.0, rel=0.1)
    assert decide.two_terms(prepare("wall_s", n, [1.0] * len(n)), REGISTRY["n"],
                            REGISTRY["n^2"]) is None
    x = np.array(SIZES, dtype=float)
    curve = (x / x[-1]) ** 1.5
    w = 1 / (0.01 * curve) ** 2  # medians known to 1%
    k, se = decide.k_se(x, curve, w, 1.0)
    assert k == pytest.approx(1.5, abs=0.01) and 0 < se < 0.05
    assert decide.k_se(x, curve, w, 4.0)[1] == pytest.approx(2 * se, rel=1e-6)


def test_a_mix_no_affordable_size_would_read_names_the_meter_not_ten_times_the_top() -> None:
    """n + n² equal at the top (1% noise): k's interval would hold n² only many doublings on,
    each ×4 dearer, so the exponent doubt names the meter, in its sentence too; with no class
    on one side of k there is no mix to forecast and ten times the top stays."""
    n, y = _mix(1.0)
    assert _exponent_advice(n, y, "n log n", "n^2") == decide.Advice(None, decide.METER)
    assert _exponent_advice(n, y, "", "n^2") == decide.Advice(nice_n(10 * SIZES[-1]))
    fit = fit_metric("wall_s", n, y, seed=3)
    doubt = next(d for d in fit.doubts if d.check == "exponent")
    assert (doubt.decide_n, doubt.meter, fit.decide_n) == (None, "instructions", None)
    assert "may mix growth terms; no affordable n would decide it; count the work instead" in (
        text.doubt_text(doubt, REGISTRY))
    count = replace(doubt, meter="")
    assert text.doubt_text(count, REGISTRY).endswith(
        "no practical n would show which one dominates")


def test_following_the_size_named_for_a_change_of_regime_decides_it() -> None:
    """n turning n² at 16k (5% noise): k = 1.76 sits between n log n and n², and the forecast
    names the size where k's interval would hold n², two doublings on, not ten times the top;
    the sweep extended to it with the same design settles n²."""
    sizes = [1000 * 2**i for i in range(10)]
    truth = broken_truth("n", "n^2", sizes, 16000.0, 1.0, 0.0)
    n, y = simulate(truth, Scenario(cv=0.05), sizes, 3, np.random.default_rng(0))
    fit = fit_metric("wall_s", n, y, seed=0)
    assert [d.check for d in fit.doubts] == ["exponent"]
    assert fit.decide_n is not None and 2 * sizes[-1] < fit.decide_n < 10 * sizes[-1]
    new, top = [], 2 * sizes[-1]
    while top < fit.decide_n:
        new.append(top)
        top *= 2
    new.append(fit.decide_n)
    n2, y2 = simulate(truth, Scenario(cv=0.05), new, 3, np.random.default_rng(1000))
    after = fit_metric("wall_s", [*n, *n2], [*y, *y2], seed=0)
    assert after.cls == "n^2"


def test_a_tie_whose_runs_bend_towards_the_next_power_names_the_meter() -> None:
    """n + n² equal at 4× the top (1% noise) ties n with n log n; its runs bend towards n²
    beyond what one more coefficient buys, and following the tie's size would end in the
    exponent doubt: the meter is named. A straight n with the same tie bends nowhere."""
    top = SIZES[-1]
    rng = np.random.default_rng(4)
    n = [s for _ in range(3) for s in SIZES]
    y = [(0.1 + s / top + (s / top) ** 2 / 4) * (1 + 0.01 * rng.standard_normal()) for s in n]
    data = prepare("wall_s", n, y)
    fits = score_classes(fit_classes(data, REGISTRY), data, 1.0, REGISTRY)
    ext = decide.Extension.of(data, 1.0)
    assert decide.mix_n(ext, fits, ["n", "n log n"], REGISTRY, 6.0) == decide.Advice(
        None, decide.METER)
    fit = fit_metric("wall_s", n, y, seed=4)
    tie = next(d for d in fit.doubts if d.check == "tie")
    assert (tie.decide_n, tie.meter, fit.decide_n) == (None, "instructions", None)
    rng = np.random.default_rng(3)
    y = [(0.1 + s / top) * (1 + 0.05 * rng.standard_normal()) for s in n]
    data = prepare("wall_s", n, y)
    fits = score_classes(fit_classes(data, REGISTRY), data, 1.0, REGISTRY)
    assert decide.mix_n(decide.Extension.of(data, 1.0), fits, ["n", "n log n"], REGISTRY,
                        6.0) is None
    fit = fit_metric("wall_s", n, y, seed=3)
    assert fit.decide_n is not None and fit.decide_n > top
