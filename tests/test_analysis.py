"""The verdict line and the analysis every renderer shares."""

from __future__ import annotations

from dataclasses import replace

from quadscope.analyse.analysis import analyse, class_text, exponent_text, verdict_line
from quadscope.analyse.headline import accumulated_total
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit, Measurement, Run, Sweep


def fit(metric: str, cls: str, k: float | None = None, ci: tuple[float, float] | None = None,
        best: str = "") -> Fit:
    return Fit(metric=metric, cls=cls, exponent=k, exponent_ci=ci, coefficients={"a": 0.0, "b": 1.0},
               r2=1.0, candidates=(), n_points=12, best=best or cls, reason="because")


def test_time_leads_in_words_and_symbols() -> None:
    """Wall time leads as "quadratic: wall time grows as n²"; a metric as fast as it stays out."""
    fits = {
        "wall_s": fit("wall_s", "n^2", 2.0, (1.98, 2.02)),
        "max_rss_bytes": fit("max_rss_bytes", "n", 1.0, (0.98, 1.02)),
        "major_faults": fit("major_faults", "1"),
    }
    assert verdict_line(fits) == "quadratic: wall time grows as n² (k = 2.00 ± 0.02)"


def test_memory_never_leads_over_time() -> None:
    """The sort case: memory settled, time settled slower; memory joins only if superlinear."""
    fits = {
        "wall_s": fit("wall_s", "n log n", 1.1, (1.05, 1.15)),
        "max_rss_bytes": fit("max_rss_bytes", "n", 1.0, (0.98, 1.02)),
    }
    assert verdict_line(fits) == "linearithmic: wall time grows as n log n (k = 1.10 ± 0.05)"


def test_a_superlinear_kernel_share_joins_as_its_own_story() -> None:
    """sys time growing as n² under a quadratic wall time is named: the kernel's share."""
    fits = {
        "wall_s": fit("wall_s", "n^2", 2.01, (1.97, 2.05)),
        "sys_s": fit("sys_s", "n^2", 2.02, (1.98, 2.06)),
    }
    assert verdict_line(fits) == ("quadratic: wall time grows as n² (k = 2.01 ± 0.04); "
                                  "the kernel's share grows as n² (k = 2.02 ± 0.04)")


def test_a_metric_faster_than_time_joins() -> None:
    """Page faults growing faster than a linear time join the headline after it."""
    fits = {
        "wall_s": fit("wall_s", "n", 1.0, (0.98, 1.02)),
        "minor_faults": fit("minor_faults", "n log n", 1.1, (1.05, 1.15)),
    }
    assert verdict_line(fits) == ("linear: wall time grows as n (k = 1.00 ± 0.02); "
                                  "page faults grow as n log n (k = 1.10 ± 0.05)")


def test_a_bracketed_time_says_what_it_rules_out() -> None:
    """Unsettled between n and n log n, the headline answers "not quadratic"."""
    wall = replace(fit("wall_s", INCONCLUSIVE, 1.03, (0.98, 1.09), best="n"),
                   at_least="n", at_most="n log n")
    assert verdict_line({"wall_s": wall}) == (
        "wall time grows as n or n log n — not quadratic (k = 1.03 [0.98, 1.09])")


def test_nothing_speaks_over_an_unsettled_time() -> None:
    """With wall time bare (no bracket), a settled superlinear memory stays out of the headline."""
    fits = {
        "wall_s": fit("wall_s", INCONCLUSIVE, 1.85, (1.38, 2.44), best="n^2"),
        "max_rss_bytes": fit("max_rss_bytes", "n^2", 2.0, (1.9, 2.1)),
    }
    assert verdict_line(fits) == "wall time: growth not settled yet: because"


def test_everything_constant() -> None:
    """A flat wall time reads as constant, with no exponent."""
    fits = {"wall_s": fit("wall_s", "1"), "user_s": fit("user_s", "1")}
    assert verdict_line(fits) == "constant: wall time does not grow with n"


def test_accumulate_mode_speaks_of_launches() -> None:
    """In accumulate mode the size is the launch index i."""
    fits = {"wall_s": fit("wall_s", "n log n", 1.1, (1.0, 1.2))}
    assert verdict_line(fits, "i") == "linearithmic: wall time grows as i log i (k = 1.10 ± 0.10)"


def test_cpu_time_leads_when_wall_is_noisier_and_they_agree() -> None:
    """cpu_s with the same class and a narrower interval leads in wall time's place."""
    fits = {"wall_s": fit("wall_s", "n", 1.0, (0.8, 1.2)), "cpu_s": fit("cpu_s", "n", 1.0, (0.99, 1.01))}
    assert verdict_line(fits) == "linear: CPU time grows as n (k = 1.00 ± 0.01)"
    fits["cpu_s"] = fit("cpu_s", "n^2", 2.0, (1.99, 2.01))
    assert verdict_line(fits).startswith("linear: wall time")


def test_a_count_of_zero_or_one_reads_constant() -> None:
    """A context-switch count that never passed 1 shows "1" and no exponent, never 2ⁿ or ≥ 4."""
    cs = replace(fit("involuntary_ctx_switches", "2^n", 4.0, (0.0, 4.0)), at_least="2^n",
                 at_most="2^n")
    assert class_text(cs, peak=1.0) == "1"
    assert exponent_text(cs, peak=1.0) == ""
    wall = fit("wall_s", "1")
    assert verdict_line({"wall_s": wall, cs.metric: cs}, peaks={cs.metric: 1.0}) == (
        "constant: wall time does not grow with n")


def test_an_exponent_at_the_edge_is_bounded_only_when_growth_is_certain() -> None:
    """k at the search edge reads "≥ 4" for a bracket of growing classes, nothing if flat is allowed."""
    steep = replace(fit("wall_s", INCONCLUSIVE, 4.0, (3.1, 4.0), best="2^n"),
                    at_least="n^3", at_most="2^n")
    assert exponent_text(steep) == "≥ 4"
    assert class_text(steep) == "n³ or cⁿ"
    flat = replace(steep, at_least="1")
    assert exponent_text(flat) == ""
    assert class_text(flat) == "1 … cⁿ"
    assert class_text(replace(steep, at_least="", at_most="")) == "?"
    capped = replace(steep, at_least="n log n", at_most="n^3")  # not faster than every power
    assert exponent_text(capped) == ""


def _run(seq: int, n: int, wall: float, *, warmup: bool = False, code: int = 0) -> Run:
    m = Measurement(wall_s=wall, user_s=wall, sys_s=0.0, max_rss_bytes=1 << 20,
                    minor_faults=10 * n, major_faults=0, voluntary_ctx_switches=1,
                    involuntary_ctx_switches=0, exit_code=code)
    return Run(1, seq, "A", n, 0, warmup, 0.0, m)


def test_analyse_leaves_out_warmups_and_failures() -> None:
    """Warm-ups and failed runs are kept in `runs` but never fitted; failures are listed."""
    runs = [_run(0, 1, 9.0, warmup=True)]
    runs += [_run(i + 1, n, 1e-3 * n) for i, n in enumerate([1, 10, 100, 1000, 10000] * 2)]
    runs.append(_run(99, 100000, 0.1, code=2))
    sweep = Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"))
    analysis = analyse(sweep, runs)
    assert analysis.fits["A"]["minor_faults"].n_points == 10
    assert [r.seq for r in analysis.failures] == [99]
    assert len(analysis.runs) == 12
    assert analysis.fits["A"]["minor_faults"].cls == "n"


def test_analyse_fits_cpu_s_from_user_and_sys() -> None:
    """`analyse` fits the derived cpu_s over the measured runs, as the doctor and `show` do."""
    runs = [_run(i, n, 1e-3 * n) for i, n in enumerate([1, 10, 100, 1000, 10000] * 2)]
    analysis = analyse(Sweep(id=1, name="t", mode="sizes", command=("p", "{n}")), runs)
    cpu = analysis.fits["A"]["cpu_s"]
    assert (cpu.cls, cpu.n_points) == ("n", 10)
    assert list(analysis.fits["A"])[:5] == ["wall_s", "user_s", "sys_s", "cpu_s", "max_rss_bytes"]


def _acc(cls: str, a: float, b: float, best: str = "") -> Fit:
    return Fit(metric="wall_s", cls=cls, exponent=1.0, exponent_ci=(0.9, 1.1),
               coefficients={"a": a, "b": b}, r2=1.0, candidates=(), n_points=600,
               best=best or cls, at_least=best or cls, at_most=best or cls)


def test_launch_totals_say_k_squared_only_when_growth_dominates() -> None:
    """1 ms + 10 µs·i over 600 launches: growth outweighs the offset at i = 600, so K²."""
    line = accumulated_total(_acc("n", 1e-3, 1e-5), 600)
    assert line == ("K launches cost about K² in total, the growing part outweighing the fixed "
                    "1 ms per launch by i = 600 (600 ms + 1.8 s over the 600 measured)")


def test_launch_totals_under_a_large_offset_are_k_times_the_offset_plus_growth() -> None:
    """1 ms + 0.1 µs·i: the offset dominates at K = 600, so "about K × 1 ms plus …", no K²."""
    line = accumulated_total(_acc("n", 1e-3, 1e-7), 600)
    assert line == ("K launches cost about K × 1 ms plus a part growing as K² "
                    "(600 ms + 18 ms over the 600 measured)")


def test_launch_totals_of_a_flat_or_unsettled_cost() -> None:
    """A constant cost is K × a; an unsettled one never claims a power of K."""
    assert accumulated_total(_acc("1", 2e-3, 0.0), 600) == (
        "K launches cost about K × 2 ms (1.2 s over the 600 measured)")
    unsettled = accumulated_total(_acc(INCONCLUSIVE, 1e-3, 1e-5, best="n"), 600)
    assert unsettled.startswith("K launches cost about K × 1 ms plus a part that grows, its class")
