"""The deciding size forecast: its following simulated under each open hypothesis and fitted again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from quadscope.analyse import forecast, text
from quadscope.analyse.decide import COST_MULTIPLE, METER
from quadscope.analyse.fitting import _forecast
from quadscope.analyse.stats import nice_n
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Candidate, Doubt, Fit

SIZES = [1000 * 2**i for i in range(8)]
TOP = SIZES[-1]


def _runs(cost: object = None, repeats: int = 3,
          grid: Sequence[int] = SIZES) -> tuple[list[float], list[float]]:
    """Noise-free interleaved rounds of (n/1000)^0.99 seconds (or `cost(n)`): a touch
    slower than linear, so no faster term and no negative offset fits them better."""
    f = cost if callable(cost) else (lambda n: (n / 1000) ** 0.99)
    sizes = [float(s) for _ in range(repeats) for s in grid]
    return sizes, [float(f(s)) for s in sizes]


def _fit(decide_n: int | None = 4 * TOP, reason: str = "") -> Fit:
    """An unsettled n … n log n tie on `_runs`, naming `decide_n`."""
    cands = (Candidate("1", 0.0, 0.0, 900.0, 0.0, 900.0),
             Candidate("n", 0.0, 1e-3, 1.0, 0.5, 0.0),
             Candidate("n log n", 0.0, 1e-3 / np.log(TOP), 2.0, 0.5, 1.0))
    return Fit("wall_s", INCONCLUSIVE, 1.0, (0.9, 1.1), {}, 1.0, cands, 24, reason=reason,
               decide_n=decide_n, best="n", at_least="n", at_most="n log n",
               doubts=(Doubt("tie", "", "", decide_n),))


class _Refit:
    """A fake fit: settled where the sweep reaches `settles_at` (or on the calls in `wins`)."""

    def __init__(self, settles_at: float = 0.0, wins: Sequence[bool] | None = None) -> None:
        self.settles_at, self.wins, self.calls = settles_at, list(wins or []), 0

    def __call__(self, sizes: Sequence[float], values: Sequence[float]) -> Fit:
        self.calls += 1
        won = self.wins.pop(0) if self.wins else max(sizes) >= self.settles_at
        return replace(_fit(), cls="n" if won else INCONCLUSIVE)


def test_following_doubles_from_the_top_and_measures_the_size_named_last() -> None:
    """The extension is the advice's design: doublings of the top below n, then n itself."""
    assert forecast.extension(128_000, 1_100_000) == [256_000, 512_000, 1_024_000, 1_100_000]
    assert forecast.extension(128_000, 200_000) == [200_000]


def test_the_design_keeps_the_repeats_and_the_median_spread_of_log_run_time() -> None:
    """Repeats are the median runs per size; σ of log time the median over sizes of each
    size's standard deviation, so one wild size does not widen it."""
    sizes = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    values = [1.0, np.e**0.2, 1.0, np.e**0.2, 1.0, np.e**3]
    design = forecast.Design.of(sizes, values)
    assert design.repeats == 2
    assert design.sigma_log == pytest.approx(np.std([0.0, 0.2], ddof=1))
    assert design.top == 3.0 and design.spent == pytest.approx(sum(values))


def test_a_followed_sweep_is_the_runs_measured_then_rounds_over_the_extension() -> None:
    """The runs as measured come first, then `repeats` interleaved rounds on the curve
    (noise-free where the runs had no spread)."""
    sizes, values = _runs(repeats=2)
    design = forecast.Design.of(sizes, values)
    s, v = forecast.follow(design, lambda n: n / 1000, 4 * TOP, np.random.default_rng(0))
    assert s[:len(sizes)] == sizes and v[:len(values)] == values
    assert s[len(sizes):] == [2.0 * TOP, 4.0 * TOP] * 2
    assert v[len(values):] == pytest.approx([2 * TOP / 1000, 4 * TOP / 1000] * 2)


def test_runs_bending_towards_a_faster_power_add_the_two_terms_hypothesis() -> None:
    """n/1000 + n²/10⁸ (the terms equal at 10⁵, inside the sizes): the mix of the bracket's
    slowest class and the power above its fastest fits a faster term, and is followed."""
    sizes, values = _runs(lambda n: n / 1000 + n * n / 1e8)
    hyps = forecast.hypotheses("wall_s", sizes, values, _fit(), REGISTRY)
    mix = next(h for h in hyps if h.label == "two terms")
    assert mix.curve(np.array([1e6]))[0] == pytest.approx(1e3 + 1e4, rel=1e-6)


def test_a_size_decides_when_13_of_16_followings_settle_and_draws_stop_once_known() -> None:
    """ceil(0.8 · 16) = 13 settled followings decide; the fourth unsettled one ends the
    draws (13 can no longer be reached), and the thirteenth settled one ends them too."""
    design = forecast.Design.of(*_runs())
    rng = np.random.default_rng(0)
    curve = forecast.Hypothesis("n", lambda n: n / 1000).curve
    passing = _Refit(wins=[False] * 3 + [True] * 13)
    assert forecast.decides(passing, design, curve, 2 * TOP, rng) and passing.calls == 16
    failing = _Refit(wins=[True] * 12 + [False] * 4)
    assert not forecast.decides(failing, design, curve, 2 * TOP, rng) and failing.calls == 16
    early = _Refit(wins=[False] * 4)
    assert not forecast.decides(early, design, curve, 2 * TOP, rng) and early.calls == 4


def test_each_class_of_the_bracket_is_a_hypothesis_and_no_shape_the_runs_do_not_show() -> None:
    """On runs a touch slower than linear the tie's classes are the hypotheses; two terms
    fit no faster term and the offsets are positive, so neither shape is one."""
    sizes, values = _runs()
    hyps = forecast.hypotheses("wall_s", sizes, values, _fit(), REGISTRY)
    assert [h.label for h in hyps] == ["n", "n log n"]
    assert hyps[0].curve(np.array([2.0 * TOP]))[0] == pytest.approx(2 * TOP / 1000)


def test_a_cost_per_element_that_stepped_up_adds_the_negative_offset_hypothesis() -> None:
    """n/1000 s up to 16k, four times that per element above (4n − 48000 there: a step),
    with 1% scatter across sizes, is followed by a of either sign as well, which fits it."""
    grid = [1000 * 2**i for i in range(11)]
    wiggle = dict(zip(grid, 1 + 0.01 * (-1.0) ** np.arange(11), strict=True))

    def cost(n: float) -> float:
        return (n if n <= 16_000 else 4 * n - 48_000) / 1000 * wiggle[int(n)]

    sizes, values = _runs(cost, grid=grid)
    fit = replace(_fit(), regime_n=16_000)
    hyps = forecast.hypotheses("wall_s", sizes, values, fit, REGISTRY)
    offset = next(h for h in hyps if h.label == "n, offset")
    assert offset.curve(np.array([1e6]))[0] == pytest.approx(4 * 1e3 - 48, rel=0.05)


def test_the_size_named_is_kept_where_every_hypothesis_would_decide_there() -> None:
    """A fit settled from the size named on keeps it, after one batch of draws per
    hypothesis (13 settled each)."""
    sizes, values = _runs()
    refit = _Refit(settles_at=4 * TOP)
    assert forecast.forecast_n(refit, "wall_s", sizes, values, _fit(), REGISTRY) == 4 * TOP
    assert refit.calls == 2 * 13


def test_a_size_that_would_not_decide_moves_to_the_first_doubling_that_would() -> None:
    """Settled only from twice the size named: the advice is that doubling (a nice number:
    1.1e6 for 1024000)."""
    sizes, values = _runs()
    n = forecast.forecast_n(_Refit(settles_at=8 * TOP), "wall_s", sizes, values, _fit(), REGISTRY)
    assert n == nice_n(8 * TOP) == 1_100_000


def test_no_decision_within_the_doublings_tried_names_no_size() -> None:
    """Where none of the size named and FORECAST_DOUBLINGS doublings decides, none is named
    (the meter decides instead)."""
    sizes, values = _runs()
    far = 4 * TOP * 2.0 ** (forecast.FORECAST_DOUBLINGS + 1)
    refit = _Refit(settles_at=far)
    assert forecast.forecast_n(refit, "wall_s", sizes, values, _fit(), REGISTRY) is None


def test_a_doubling_beyond_the_price_cap_is_not_tried() -> None:
    """Following to a size whose runs would cost more than COST_MULTIPLE times the runs so
    far is not forecast: no size is named, and no draw was made there."""
    sizes, values = _runs()
    big = int(COST_MULTIPLE * sum(values) * 1000)  # one run there costs COST_MULTIPLE × spent
    refit = _Refit(settles_at=float("inf"))
    assert forecast.forecast_n(refit, "wall_s", sizes, values, _fit(big), REGISTRY) is None
    assert refit.calls == 4  # drawn only at the size named: the first hypothesis failed there


def test_a_fit_whose_size_would_not_decide_names_the_meter_in_its_reason_and_doubts() -> None:
    """The forecast's None replaces the "grow n to …" advice by the meter's sentence, and
    every doubt that named the size names the meter instead."""
    fit = _fit(reason="n and n log n fit about equally well; grow n to 1100000 to tell them apart")
    out = _forecast(replace(fit, decide_n=1_100_000,
                            doubts=(Doubt("tie", "", "", 1_100_000),)), None, "")
    assert out.decide_n is None and out.doubts[0].decide_n is None
    assert out.doubts[0].meter == METER
    assert out.reason == ("n and n log n fit about equally well; " + text.count_instead(METER))


def test_a_fit_whose_forecast_moved_the_size_names_the_new_one() -> None:
    """A forecast size replaces the old one in the reason and in the doubts that named it."""
    fit = _fit(decide_n=1_100_000, reason="grow n to 1100000 to tell them apart")
    fit = replace(fit, doubts=(Doubt("tie", "", "", 1_100_000), Doubt("leave_one_out", "", "")))
    out = _forecast(fit, 2_200_000, "")
    assert out.decide_n == 2_200_000 and out.reason == "grow n to 2200000 to tell them apart"
    assert [d.decide_n for d in out.doubts] == [2_200_000, None]


def test_a_counted_sweep_points_to_its_count_not_to_a_meter() -> None:
    """Where the work was counted, no size deciding points to the count's verdict."""
    fit = _fit(decide_n=1_100_000, reason="tied; grow n to 1100000 to tell them apart")
    out = _forecast(fit, None, "instructions")
    assert out.reason == "tied; " + text.counted_instead("instructions")
    assert out.doubts[0].meter == "" and out.doubts[0].numbers["counted"] == "instructions"


def test_a_drifting_machine_drifts_on_over_the_new_runs() -> None:
    """Runs slowing by 0.5% a run (log time +0.005 per run, three rounds, 1% noise) give
    the design that drift (`analyse.drift`'s estimate) and their spread without it; new
    runs go on slowing from where the runs measured stopped."""
    sizes, flat = _runs()
    noise = np.exp(np.random.default_rng(0).normal(0.0, 0.01, len(flat)))
    values = [v * float(np.exp(0.005 * i)) * e for i, (v, e) in enumerate(zip(flat, noise,
                                                                              strict=True))]
    design = forecast.Design.of(sizes, values)
    assert design.drift_log == pytest.approx(0.005, abs=0.001)
    assert 0.005 < design.sigma_log < 0.02
    exact = replace(design, sigma_log=0.0, drift_log=0.005)
    _, v = forecast.follow(exact, lambda n: n / 1000, 2 * TOP, np.random.default_rng(0))
    assert v[len(values):] == pytest.approx(
        [2 * TOP / 1000 * float(np.exp(0.005 * (len(values) + j))) for j in range(3)])


def test_two_terms_are_held_to_lean_delta_and_offsets_to_mix_delta(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each shape has its own margin: with MIX_DELTA out of reach the two terms stay (held
    to LEAN_DELTA only), with LEAN_DELTA out of reach they go."""
    sizes, values = _runs(lambda n: n / 1000 + n * n / 1e8)
    monkeypatch.setattr(forecast, "MIX_DELTA", float("inf"))
    assert "two terms" in [h.label for h in forecast.hypotheses("wall_s", sizes, values, _fit(),
                                                                 REGISTRY)]
    monkeypatch.setattr(forecast, "LEAN_DELTA", float("inf"))
    assert "two terms" not in [h.label for h in forecast.hypotheses("wall_s", sizes, values,
                                                                     _fit(), REGISTRY)]


def test_only_an_unsettled_time_that_names_a_size_is_forecast(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """fit_metric asks the forecast for a time's named size and takes its answer (here: no
    size, the meter); a count, a fit with known errors or `forecast=False` never asks."""
    from quadscope.analyse import fitting
    from quadscope.workloads.synthetic import Scenario, simulate, truth_for

    asked: list[str] = []

    def fake(refit: object, metric: str, *args: object, **kwargs: object) -> None:
        asked.append(metric)

    monkeypatch.setattr(fitting, "forecast_n", fake)
    n, y = simulate(truth_for("n", SIZES, 0.8), Scenario(cv=0.05), SIZES, 3,
                    np.random.default_rng(1))
    plain = fitting.fit_metric("wall_s", n, y, seed=1, forecast=False)
    assert plain.decide_n and not asked
    fit = fitting.fit_metric("wall_s", n, y, seed=1)
    assert asked == ["wall_s"] and fit.decide_n is None and METER in fit.reason
    fitting.fit_metric("instructions", n, y, seed=1)
    fitting.fit_metric("wall_s", n, y, seed=1, sd=[0.05 * v for v in y])
    assert asked == ["wall_s"]
