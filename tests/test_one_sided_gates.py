"""One-sided gates: `--fail-above`, `assert_scales`, the pytest fixture and `compare --fail-on
class` fail (8) when the growth surely exceeds the limit, pass (0) when it surely does not,
and are undecided (9) only when neither holds; a bare `class` judges the headline alone."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from quadscope import api
from quadscope.analyse.ab_gate import (
    FAIL,
    PASS,
    UNDECIDED,
    decide,
    exit_code,
    judged_metrics,
    lead_metric,
    parse_fail_on,
)
from quadscope.analyse.analysis import Analysis
from quadscope.analyse.compare import compare_metric
from quadscope.analyse.gate import judge_metric
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit, Sweep
from quadscope.pytest_plugin import Scaling


def fit(metric: str, cls: str, k: float, ci: tuple[float, float], lo: str = "", hi: str = "",
        decide_n: int | None = None) -> Fit:
    settled = cls != INCONCLUSIVE
    return Fit(metric=metric, cls=cls, exponent=k, exponent_ci=ci,
               coefficients={"a": 0.0, "b": 1.0}, r2=1.0, candidates=(), n_points=12,
               reason="" if settled else "n log n and n² fit about equally well",
               decide_n=decide_n, best=cls if settled else lo,
               at_least=lo or (cls if settled else ""), at_most=hi or (cls if settled else ""))


def ab(fits_a: dict[str, Fit], fits_b: dict[str, Fit], meter: str = "time") -> Analysis:
    sweep = Sweep(id=1, name="t", mode="sizes", command=("a", "{n}"), vs_command=("b", "{n}"),
                  meter=meter)
    return Analysis(sweep=sweep, runs=(), fits={"A": fits_a, "B": fits_b}, verdict="",
                    failures=())


def one(fa: Fit, fb: Fit) -> str:
    out = decide(ab({fa.metric: fa}, {fb.metric: fb}), parse_fail_on([f"class={fa.metric}"]))
    assert len(out) == 1
    return out[0].outcome


A_BRACKET = fit("wall_s", INCONCLUSIVE, 1.1, (0.95, 1.3), "n", "n log n")


def test_b_surely_above_a_bracketed_a_fails() -> None:
    """A bracketed n … n log n, B settled n²: B surely exceeds A's upper end, exit 8."""
    assert one(A_BRACKET, fit("wall_s", "n^2", 2.0, (1.95, 2.05))) == FAIL
    # Exponents apart by more than the gap fail too, though B's class is not settled.
    b = fit("wall_s", INCONCLUSIVE, 2.0, (1.8, 2.2), "n log n", "n^3")
    assert one(A_BRACKET, b) == FAIL


def test_b_wholly_below_a_is_an_improvement_not_undecided() -> None:
    """A settled n², B bracketed n … n log n (or its k far below): a pass, said as such."""
    a = fit("wall_s", "n^2", 2.0, (1.95, 2.05))
    out = decide(ab({"wall_s": a}, {"wall_s": A_BRACKET}), parse_fail_on(["class"]))
    assert [o.outcome for o in out] == [PASS]
    assert out[0].sentence == ("wall_s: B grows slower than A (n log n at most, A n² or "
                               "faster): an improvement")
    loose = fit("wall_s", INCONCLUSIVE, 1.0, (0.9, 1.1))  # no bracket, k far below
    assert one(a, loose) == PASS


def test_overlapping_growths_are_undecided_naming_what_would_decide() -> None:
    """A n … n log n, B n log n … n² with touching exponents: exit 9, naming the n."""
    b = fit("wall_s", INCONCLUSIVE, 1.3, (1.1, 1.5), "n log n", "n^2", decide_n=2_000_000)
    out = decide(ab({"wall_s": A_BRACKET}, {"wall_s": b}), parse_fail_on(["class"]))
    assert [o.outcome for o in out] == [UNDECIDED] and exit_code(out) == 9
    assert "a sweep to n = 2M would decide" in out[0].sentence
    assert one(fit("wall_s", "n", 1.0, (0.98, 1.02)), fit("wall_s", "n", 1.0, (0.97, 1.03))) \
        == PASS


def test_a_bare_class_rule_judges_the_headline_not_every_metric() -> None:
    """The reported regression: 4047× slower, instructions n log n → n² (exact), wall time of
    A bracketed and peak memory "decided at n = 30G". A bare `class` judges the work alone
    and fails (8); `class=max_rss_bytes` still judges memory when asked."""
    a = {"wall_s": fit("wall_s", INCONCLUSIVE, 1.4, (0.6, 2.4), "1", "n^3"),
         "max_rss_bytes": fit("max_rss_bytes", INCONCLUSIVE, 0.1, (0.0, 0.3), "1", "n",
                              decide_n=30_000_000_000),
         "instructions": fit("instructions", "n log n", 1.08, (1.07, 1.09))}
    b = {"wall_s": fit("wall_s", "n^2", 2.0, (1.9, 2.1)),
         "max_rss_bytes": fit("max_rss_bytes", INCONCLUSIVE, 0.1, (0.0, 0.3), "1", "n"),
         "instructions": fit("instructions", "n^2", 2.0, (1.99, 2.01))}
    analysis = ab(a, b, meter="instructions")
    rules = parse_fail_on(["class"])
    assert lead_metric(analysis) == "instructions"
    assert judged_metrics(rules[0], analysis) == ("instructions",)
    out = decide(analysis, rules)
    assert [o.outcome for o in out] == [FAIL] and exit_code(out) == 8
    assert out[0].sentence == "instructions: B grows as n² or faster, A as n log n at most"
    memory = decide(analysis, parse_fail_on(["class=max_rss_bytes"]))
    assert [o.outcome for o in memory] == [UNDECIDED] and "30G" in memory[0].sentence
    # A timed sweep's bare rule judges the time its verdict led with: not memory.
    timed = ab({"wall_s": a["wall_s"], "max_rss_bytes": a["max_rss_bytes"]},
               {"wall_s": b["wall_s"], "max_rss_bytes": b["max_rss_bytes"]})
    assert judged_metrics(rules[0], timed) == ("wall_s",)


def test_compare_calls_a_class_change_when_b_outgrows_a_bracketed_a() -> None:
    """compare_metric: B's n² against A's n … n log n bracket is a class change, and a B
    wholly below a settled A is one too (the improvement)."""
    sizes = [1.0, 2.0, 4.0, 8.0] * 2
    b = fit("wall_s", "n^2", 2.0, (1.2, 2.6))  # exponents overlap A's: the brackets decide
    a = fit("wall_s", INCONCLUSIVE, 1.1, (0.8, 1.3), "n", "n log n")
    mc = compare_metric("wall_s", sizes, [s for s in sizes], a, sizes, [s * s for s in sizes], b)
    assert mc.change == "class"
    assert mc.summary.startswith("wall_s: B grows as n² or faster where A grows as n log n "
                                 "at most (A's class is not settled)")
    back = compare_metric("wall_s", sizes, [s * s for s in sizes], b, sizes, list(sizes), a)
    assert back.change == "class" and "n log n at most where A grows as n²" in back.summary


WORK_N2 = fit("instructions", "n^2", 2.0, (1.99, 2.01))
TIME_WIDE = fit("wall_s", INCONCLUSIVE, 0.5, (0.0, 1.4), "1", "n^3")


@pytest.mark.parametrize(("limit", "metric", "work", "expected"), [
    ("n log n", None, "instructions", "fail"),  # the work, counted exactly, surely exceeds
    ("n^2", None, "instructions", "pass"),  # … and surely does not exceed n²
    ("n log n", None, None, "undecided"),  # a timed sweep: time's bracket straddles it
    ("n log n", "wall_s", "instructions", "undecided"),  # metric= picks the time explicitly
    ("n^3", "wall_s", None, "pass"),  # time's whole bracket is within n³
])
def test_fail_above_judges_the_work_where_counted_and_times_interval_otherwise(
        limit: str, metric: str | None, work: str | None, expected: str) -> None:
    fits = {"wall_s": TIME_WIDE, "instructions": WORK_N2}
    assert judge_metric(fits, metric, limit, work=work).outcome == expected


def _fake_sweep(monkeypatch: pytest.MonkeyPatch, fits: dict[str, Fit], meter: str) -> None:
    """`assert_scales` on a fake analysis: no sweep runs, no report is rendered."""
    sweep = Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"), sizes=(10, 20, 40),
                  meter=meter)
    analysis = Analysis(sweep=sweep, runs=(), fits={"A": fits}, verdict="v", failures=())
    monkeypatch.setattr(api, "_sweep", lambda *a: analysis)
    monkeypatch.setattr(api, "_write_report", lambda analysis, path: path)


def test_assert_scales_and_the_fixture_take_the_same_three_outcomes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fail raises ScalingError, pass returns, undecided raises, skips or passes as asked;
    the fixture skips an undecided gate unless strict."""
    _fake_sweep(monkeypatch, {"wall_s": TIME_WIDE, "instructions": WORK_N2}, "instructions")
    target: Any = sorted
    with pytest.raises(api.ScalingError, match="gate failed: instructions grows as n²"):
        api.assert_scales(target, at_most="n log n", sizes=[10, 20, 40])
    assert api.assert_scales(target, at_most="n²", sizes=[10, 20, 40]).outcome == "pass"
    with pytest.raises(api.ScalingUndecided):
        api.assert_scales(target, at_most="n log n", metric="wall_s", sizes=[10, 20, 40])
    with pytest.raises(api.ScalingSkipped):
        api.assert_scales(target, at_most="n log n", metric="wall_s", sizes=[10, 20, 40],
                          undecided="skip")
    with pytest.raises(pytest.skip.Exception):
        Scaling(tmp_path, strict=False).check(target, "n log n", metric="wall_s",
                                              sizes=[10, 20, 40])
    with pytest.raises(api.ScalingUndecided):
        Scaling(tmp_path, strict=True).check(target, "n log n", metric="wall_s",
                                             sizes=[10, 20, 40])
    with pytest.raises(api.ScalingError):
        Scaling(tmp_path, strict=False).check(target, "n", sizes=[10, 20, 40])


def test_exact_counts_straddling_k_above_the_limit_fail_it() -> None:
    """strcat's counts at 5000..80000 follow no law of one or two terms and read "n log n or
    n²" (k = 1.90 [1.87, 1.92]); n log n grows there with k ≤ 1.12, so as exact work a
    gate at n log n fails; as a time (noise, caches) the same bracket stays undecided, and a
    gate at n² passes either way."""
    from quadscope.analyse.fitting import fit_metric
    from quadscope.analyse.gate import FAIL, PASS, UNDECIDED, judge, judge_metric

    sizes = [5000, 10000, 20000, 40000, 80000]
    counts = [8927895, 27478930, 93029110, 338386664, 1287772692]
    fit = fit_metric("instructions", sizes, counts, strict=True)
    assert (fit.at_least, fit.at_most) == ("n log n", "n^2")
    assert judge(fit, "n log n", exact=True).outcome == FAIL
    assert "k = 1.90" in judge(fit, "n log n", exact=True).sentence
    assert judge(fit, "n log n").outcome == UNDECIDED
    assert judge(fit, "n^2", exact=True).outcome == PASS
    fits = {"instructions": fit}
    assert judge_metric(fits, None, "n log n", work="instructions").outcome == FAIL
    assert judge_metric(fits, "instructions", "n log n", work="").outcome == UNDECIDED


def test_exact_counts_barely_above_the_limit_stay_undecided() -> None:
    """Counts whose k interval reaches within EXACT_K_MARGIN of what the limit can grow as
    are not called faster: a margin of exponent, not of noise."""
    from quadscope.analyse.fitting import fit_metric
    from quadscope.analyse.gate import FAIL, judge

    sizes = [1000, 2000, 4000, 8000, 16000, 32000]
    # n log n work whose cost per element steps up once (a table resized): lawless counts.
    counts = [int(n * (10 + (n >= 8000)) * math.log2(n)) for n in sizes]
    fit = fit_metric("instructions", sizes, counts, strict=True)
    assert judge(fit, "n log n", exact=True).outcome != FAIL
