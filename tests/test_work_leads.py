"""Two answers: where the meter counts the work exactly, the verdict, the gate and the A/B
change lead with the work's class, and the time follows as what the machine pays."""

from __future__ import annotations

from quadscope.analyse.change import change_summary
from quadscope.analyse.gate import FAIL, PASS, UNDECIDED, judge_metric
from quadscope.analyse.headline import lead_fit, verdict_line
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Comparison, Fit, MetricComparison, SizeRatio


def fit(metric: str, cls: str, k: float, ci: tuple[float, float], lo: str = "",
        hi: str = "") -> Fit:
    settled = cls != INCONCLUSIVE
    return Fit(metric=metric, cls=cls, exponent=k, exponent_ci=ci,
               coefficients={"a": 0.0, "b": 1.0}, r2=1.0, candidates=(), n_points=12,
               reason="" if settled else "start-up cost dominates every size", decide_n=None,
               best=cls if settled else lo, at_least=lo or (cls if settled else ""),
               at_most=hi or (cls if settled else ""))


WORK_N2 = fit("instructions", "n^2", 2.0, (1.99, 2.01))
TIME_WIDE = fit("wall_s", INCONCLUSIVE, 0.24, (0.0, 0.74), "1", "n^3")
TIME_N2 = fit("wall_s", "n^2", 1.9, (1.8, 2.0))


def test_a_settled_work_class_leads_and_the_time_follows() -> None:
    """"quadratic: the work grows as n² (instructions, exact, …); wall time grows as …"."""
    line = verdict_line({"wall_s": TIME_WIDE, "instructions": WORK_N2}, work="instructions")
    assert line == ("quadratic: the work grows as n² (instructions, exact, k = 2.00 ± 0.01); "
                    "wall time grows as 1 … n³ — not exponential (k = 0.24 [0.00, 0.74])")


def test_a_settled_class_that_k_seems_to_exclude_says_why() -> None:
    """Counts a + c·n + b·n² (CPython `bytes +=`): the class is the fastest term, n², while
    k at the largest size is 1.77 ± 0.00; the line says a slower term holds k there rather
    than print a class beside an interval that excludes it. A lone n² term reads its k."""
    mixed = fit("instructions", "n^2", 1.77, (1.77, 1.78))
    line = verdict_line({"wall_s": TIME_WIDE, "instructions": mixed}, n_max=128000,
                        work="instructions")
    assert line.startswith("quadratic: the work grows as n² (instructions, exact, k = 1.77 "
                           "at these sizes, a slower term beside n²); ")
    alone = fit("instructions", "n^2", 2.0, (1.99, 2.01))
    line = verdict_line({"wall_s": TIME_WIDE, "instructions": alone}, n_max=128000,
                        work="instructions")
    assert line.startswith("quadratic: the work grows as n² (instructions, exact, k = 2.00 ± 0.01)")
    nlogn = fit("instructions", "n log n", 1.12, (1.11, 1.13))  # a log factor's k drifts
    line = verdict_line({"wall_s": TIME_WIDE, "instructions": nlogn}, n_max=1e5,
                        work="instructions")
    assert "k = 1.12 ± 0.01" in line


def test_without_a_meter_counting_the_work_the_time_leads_as_before() -> None:
    """A timed sweep's instructions (perf's, not held still) do not take the lead."""
    line = verdict_line({"wall_s": TIME_N2, "instructions": WORK_N2})
    assert line.startswith("quadratic: wall time grows as n²") and "work" not in line


def test_a_bracketed_work_class_is_said_beside_the_time() -> None:
    """A work bracket is stated, with what it rules out; an unsettled one is left out."""
    work = fit("instructions", INCONCLUSIVE, 1.4, (1.2, 1.6), "n", "n^2")
    line = verdict_line({"wall_s": TIME_N2, "instructions": work}, work="instructions")
    assert line.startswith("the work grows as n … n² — not cubic (instructions, exact, k = 1.40 ")
    assert "; wall time grows as n² (k = 1.90" in line
    loose = fit("instructions", INCONCLUSIVE, 1.4, (0.0, 4.0))
    assert "work" not in verdict_line({"wall_s": TIME_N2, "instructions": loose},
                                      work="instructions")


def test_the_gate_judges_the_settled_work_where_time_alone_is_undecided() -> None:
    """`--fail-above "n log n"` fails on quadratic work though time is 1 … n³; `n²` passes."""
    fits = {"wall_s": TIME_WIDE, "instructions": WORK_N2}
    assert judge_metric(fits, None, "n log n").outcome == UNDECIDED
    assert judge_metric(fits, None, "n log n", work="instructions").outcome == FAIL
    assert judge_metric(fits, None, "n^2", work="instructions").outcome == PASS
    assert lead_fit(fits, "instructions") is WORK_N2
    # A counted bracket narrower than the time's leads it (`headline.lead_fit`); a time
    # verdict narrower than the counted bracket, and no faster than n², leads instead.
    bracket = fit("instructions", INCONCLUSIVE, 1.4, (1.2, 1.6), "n", "n^2")
    assert lead_fit({"wall_s": TIME_WIDE, "instructions": bracket}, "instructions") is bracket
    assert lead_fit({"wall_s": TIME_N2, "instructions": bracket}, "instructions") is TIME_N2


def _mc(metric: str, change: str, ratio: float) -> MetricComparison:
    return MetricComparison(metric=metric, change=change, class_a="n^2", class_b="n",
                            ratios=(SizeRatio(16000, ratio, ratio * 0.99, ratio * 1.01),),
                            crossover_n=None, summary="")


def test_the_ab_change_leads_with_the_work_when_both_sides_settle_it() -> None:
    """B's work n² → n is the change; without the work, A's unsettled time leaves it open."""
    a = {"wall_s": TIME_WIDE, "instructions": WORK_N2}
    b = {"wall_s": fit("wall_s", INCONCLUSIVE, 0.0, (0.0, 4.0), "1", "n^3"),
         "instructions": fit("instructions", "n", 0.99, (0.98, 1.0))}
    comparison = Comparison("A", "B", (_mc("wall_s", "inconclusive", 0.618),
                                       _mc("instructions", "class", 0.321)))
    worked = change_summary(comparison, a, b, work="instructions")
    assert worked is not None and worked.direction == "better"
    assert worked.text == ("B changed the class of the work (instructions): n² → n; "
                           "3.12× less work at n = 16k")
    timed = change_summary(comparison, a, b)
    assert timed is not None and timed.text.startswith("B against A is undecided")


def test_the_work_leads_when_its_change_is_decided_though_a_side_is_bracketed() -> None:
    """A n² (exact) against B "n or n log n" (exact, bracketed): the counts surely changed
    class, so the change says so instead of the noisy time's "nothing measurable"; the bare
    `--fail-on class` gate judges the same metric (it read the time, undecided)."""
    a = {"wall_s": TIME_WIDE, "instructions": WORK_N2}
    b = {"wall_s": fit("wall_s", INCONCLUSIVE, 0.0, (0.0, 4.0), "1", "n^3"),
         "instructions": fit("instructions", INCONCLUSIVE, 0.05, (0.05, 0.05), "n", "n log n")}
    comparison = Comparison("A", "B", (_mc("wall_s", "none", 0.615),
                                       _mc("instructions", "class", 0.318)))
    worked = change_summary(comparison, a, b, work="instructions")
    assert worked is not None and worked.metric == "instructions"
    assert worked.direction == "better"
    assert worked.text.startswith("B changed the growth of the work (instructions): "
                                  "k = 2.00 → 0.05 (n² → n or n log n); 3.14× less work")
    # Undecided work (its change not decided, a side bracketed): the time leads, as before.
    undecided = Comparison("A", "B", (_mc("wall_s", "none", 0.615),
                                      _mc("instructions", "inconclusive", 0.318)))
    timed = change_summary(undecided, a, b, work="instructions")
    assert timed is not None and timed.metric == "wall_s"


def test_counted_launches_lead_when_a_bracket_is_surely_above_a_flat_count() -> None:
    """An accumulate sweep counted in place: A's work "i … i²" against B's constant work is a
    decided change (compare: brackets apart on an exact count), so the change leads with the
    work, names both classes (a flat count has no k) and says B does less work."""
    a = {"wall_s": fit("wall_s", INCONCLUSIVE, 3.0, (0.0, 4.0), "1", "c^n"),
         "instructions": fit("instructions", INCONCLUSIVE, 0.69, (0.69, 0.69), "n", "n^2")}
    flat = Fit(metric="instructions", cls="1", exponent=None, exponent_ci=None,
               coefficients={"a": 1e6, "b": 0.0}, r2=1.0, candidates=(), n_points=8,
               best="1", at_least="1", at_most="1")
    b = {"wall_s": fit("wall_s", INCONCLUSIVE, 0.97, (0.0, 4.0), "1", "c^n"),
         "instructions": flat}
    comparison = Comparison("A", "B", (_mc("wall_s", "inconclusive", 1.48),
                                       _mc("instructions", "class", 0.32)))
    worked = change_summary(comparison, a, b, size_word="i", work="instructions")
    assert worked is not None and worked.metric == "instructions"
    assert worked.direction == "better"
    assert worked.text.startswith("B changed the growth of the work (instructions): "
                                  "i … i² → 1; 3.12× less work at i = 16k")


def test_three_counts_lead_a_time_bracket_only_when_narrower() -> None:
    """Counts at three sizes (list.insert(0) under load: 140M → 165M) settle no exact class:
    their bracket "log n … cⁿ" rules nothing out above them, so it leads a time bracket of
    the same width or narrower no longer (it did, and gated on an assumed n³); a narrower
    one, or an untrusted settled time, it still leads. Counts at four sizes tie as before."""
    from dataclasses import replace

    from quadscope.analyse.analysis import few_counts
    from quadscope.analyse.fitting import fit_metric

    sizes, values = [64, 1024, 4096], [140213568, 142464494, 165216091]
    few = few_counts(fit_metric("instructions", sizes, values), sizes, values, 4)
    assert (few.at_least, few.at_most) == ("log n", "c^n")
    assert [d.check for d in few.doubts] == ["few_counts"]
    assert few.reason.startswith("counted at 3 sizes, and an exact class needs 4: the counts "
                                 "grew 18% from n = 64 to 4096")
    tie = fit("wall_s", INCONCLUSIVE, 1.0, (0.2, 4.0), "log n", "c^n")
    narrower_time = fit("wall_s", INCONCLUSIVE, 1.0, (0.5, 1.5), "n", "n^2")
    wider_time = fit("wall_s", INCONCLUSIVE, 1.0, (0.0, 3.0), "1", "c^n")
    assert lead_fit({"wall_s": tie, "instructions": few}, "instructions") is tie
    assert lead_fit({"wall_s": narrower_time, "instructions": few}, "instructions") \
        is narrower_time
    assert lead_fit({"wall_s": wider_time, "instructions": few}, "instructions") is few
    untrusted = fit("wall_s", "c^n", 5.0, (4.0, 6.0))
    assert lead_fit({"wall_s": untrusted, "instructions": few}, "instructions") is few
    four = replace(few, doubts=())  # a bracket from counts at enough sizes
    assert lead_fit({"wall_s": tie, "instructions": four}, "instructions") is four
