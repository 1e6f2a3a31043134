"""The gap between the work's class and the time's: found only when the intervals say so,
and explained by the one cause the runs show (kernel, cache, start-up), with its numbers."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from quadscope.analyse.gap import Gap, crossing, differs, gap, gap_text
from quadscope.host import Host
from quadscope.model import Fit, Measurement, Run

SIZES = (1000, 2000, 4000, 8000, 16000)
HOST = Host(l2_bytes=2 << 20, llc_bytes=32 << 20)


def _fit(metric: str, cls: str, k: float, ci: tuple[float, float] | None = None,
         a: float = 0.0, confident: bool = True) -> Fit:
    return Fit(metric=metric, cls=cls if confident else "inconclusive", exponent=k,
               exponent_ci=ci, coefficients={"a": a, "b": 1.0}, r2=0.99, candidates=(),
               n_points=15, best=cls, at_least=cls if confident else "n",
               at_most=cls if confident else "n^3")


def _runs(wall: dict[int, float], user: dict[int, float], sys: dict[int, float],
          rss: dict[int, float], work: Mapping[int, float | None]) -> list[Run]:
    out = []
    for n in SIZES:
        m = Measurement(wall_s=wall[n], user_s=user[n], sys_s=sys[n],
                        max_rss_bytes=int(rss[n]), instructions=work[n], exit_code=0)
        out.append(Run(sweep_id=1, seq=len(out), variant="A", size_n=n, repeat=0,
                       warmup=False, started_at=0.0, measurement=m))
    return out


WORK = {n: 1e3 * n for n in SIZES}
FLAT_RSS = {n: 8e6 for n in SIZES}


def test_no_gap_while_the_time_interval_holds_the_work_exponent() -> None:
    work = _fit("instructions", "n", 1.0, (1.0, 1.0))
    time = _fit("wall_s", "n", 1.04, (0.97, 1.12))
    assert not differs(time, work)
    runs = _runs({n: n * 1e-6 for n in SIZES}, {n: n * 1e-6 for n in SIZES},
                 dict.fromkeys(SIZES, 0.0), FLAT_RSS, WORK)
    assert gap({"wall_s": time, "instructions": work}, runs, HOST, "instructions") is None


def test_no_gap_while_the_work_is_not_settled() -> None:
    work = _fit("instructions", "n", 1.0, (0.9, 1.1), confident=False)
    assert not differs(_fit("wall_s", "n^2", 2.0, (1.9, 2.1)), work)


def test_the_kernel_carries_the_excess_when_system_time_takes_over() -> None:
    """Work n, time n^1.5; system time rises from 5% to 60% of the CPU time."""
    user = {n: n * 1e-6 for n in SIZES}
    share = dict(zip(SIZES, (0.05, 0.15, 0.3, 0.45, 0.6), strict=True))
    sys = {n: user[n] * share[n] / (1 - share[n]) for n in SIZES}
    wall = {n: user[n] + sys[n] for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n log n", 1.5, (1.4, 1.6)),
            "instructions": _fit("instructions", "n", 1.0, (1.0, 1.0))}
    g = gap(fits, _runs(wall, user, sys, FLAT_RSS, WORK), HOST, "instructions")
    assert g is not None and g.cause == "kernel" and g.faster
    said = gap_text(g)
    assert said.startswith("wall time grows faster than the work (k 1.50 vs 1.00): the kernel "
                           "carries the excess, 60% of the CPU time at n = 16000 is system time")
    assert "against 5% at n = 1000" in said


def test_the_cache_is_named_where_the_working_set_leaves_it() -> None:
    """Work n, time n^1.3, the working set grows as n through the 2 MiB L2 near n = 4000."""
    rss = {n: 4e6 + 500.0 * n for n in SIZES}  # working set 500 B/element: 2 MiB at n ≈ 4200
    wall = {n: n * 1e-6 * (n / 1000) ** 0.3 for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n log n", 1.3, (1.2, 1.4)),
            "instructions": _fit("instructions", "n", 1.0, (1.0, 1.0))}
    g = gap(fits, _runs(wall, wall, dict.fromkeys(SIZES, 0.0), rss, WORK), HOST, "instructions")
    assert g is not None and g.cause == "cache"
    assert g.cross_n is not None and 4000 <= g.cross_n <= 8000
    said = gap_text(g)
    assert said.startswith("wall time grows faster than the work (k 1.30 vs 1.00): the working "
                           "set leaves the 2 MiB L2 cache at n ≈ ")
    assert said.endswith("each instruction costing 2.3× as much at n = 16000 as at n = 1000")


def test_a_fixed_cost_explains_time_growing_slower() -> None:
    """Work n², time a + b·n² with a 70% of the time at the largest size: k about 0.9."""
    wall = {n: 1.0 + 0.43 * (n / 16000) ** 2 for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n", 0.9, (0.8, 1.0), a=1.0),
            "instructions": _fit("instructions", "n^2", 2.0, (2.0, 2.0))}
    work = {n: float(n) ** 2 for n in SIZES}
    g = gap(fits, _runs(wall, wall, dict.fromkeys(SIZES, 0.0), FLAT_RSS, work), HOST,
            "instructions")
    assert g is not None and g.cause == "start-up" and not g.faster
    assert gap_text(g) == ("wall time grows slower than the work (k 0.90 vs 2.00): a fixed cost "
                           "(start-up) is still 70% of the time at n = 16000, so the time has "
                           "not yet taken on the work's growth")


def test_an_unexplained_gap_still_gives_the_numbers_looked_at() -> None:
    wall = {n: n * 1e-6 * (n / 1000) ** 0.4 for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n log n", 1.4, (1.3, 1.5)),
            "instructions": _fit("instructions", "n", 1.0, (1.0, 1.0))}
    runs = _runs(wall, wall, {n: 0.02 * wall[n] for n in SIZES}, FLAT_RSS, WORK)
    g = gap(fits, runs, HOST, "instructions")
    assert g is not None and g.cause == "unexplained"
    assert gap_text(g) == (
        "wall time grows faster than the work (k 1.40 vs 1.00): each instruction cost 3× as much "
        "at n = 16000 as at n = 1000; neither the kernel (system time 2% of the CPU time) nor "
        "the caches (working set 0 B, within the 2 MiB L2 cache) explain it")


def test_other_work_over_the_sweep_explains_a_gap_nothing_else_does() -> None:
    """As the unexplained gap above, on a machine where other work kept a CPU busy."""
    from dataclasses import replace

    wall = {n: n * 1e-6 * (n / 1000) ** 0.4 for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n log n", 1.4, (1.3, 1.5)),
            "instructions": _fit("instructions", "n", 1.0, (1.0, 1.0))}
    runs = _runs(wall, wall, {n: 0.02 * wall[n] for n in SIZES}, FLAT_RSS, WORK)
    g = gap(fits, runs, replace(HOST, other_load="1.02/2"), "instructions")
    assert g is not None and g.cause == "load" and g.other_load == (1.02, 2)
    assert gap_text(g) == (
        "wall time grows faster than the work (k 1.40 vs 1.00): each instruction cost 3× as much "
        "at n = 16000 as at n = 1000, while other work kept 1.0 of the 2 CPUs busy during the "
        "sweep, sharing the caches and memory with the runs")
    quiet = gap(fits, runs, replace(HOST, other_load="0.20/2"), "instructions")
    assert quiet is not None and quiet.cause == "unexplained"
    slower = {"wall_s": _fit("wall_s", "n", 0.9, (0.8, 0.95)),
              "instructions": _fit("instructions", "n", 1.0, (1.0, 1.0))}
    flat = {n: n * 1e-6 * (n / 1000) ** -0.1 for n in SIZES}
    runs = _runs(flat, flat, dict.fromkeys(SIZES, 0.0), FLAT_RSS, WORK)
    g = gap(slower, runs, replace(HOST, other_load="1.02/2"), "instructions")
    assert g is not None and g.cause != "load"  # load slows; it does not flatten growth


def test_crossing_interpolates_in_log_n_and_is_none_inside_the_cache() -> None:
    rss = {1000: 1e6, 2000: 2e6, 4000: 5e6}  # working set 1 MB at 2000, 4 MB at 4000
    n = crossing(rss, 2e6)
    assert n is not None and 2000 < n < 4000
    assert crossing({1000: 1e6, 2000: 1.5e6}, 2e6) is None


def test_the_cost_per_instruction_names_the_sizes_counted() -> None:
    """Work counted at 1000..4000 only (as counting often does): the rise in time per
    instruction is between those sizes, not the timed sweep's ends."""
    wall = {n: n * 1e-6 * (n / 1000) ** 0.4 for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n log n", 1.4, (1.3, 1.5)),
            "instructions": _fit("instructions", "n", 1.0, (1.0, 1.0))}
    work = {n: (v if n <= 4000 else None) for n, v in WORK.items()}
    runs = []
    for n in SIZES:
        m = Measurement(wall_s=wall[n], user_s=wall[n], sys_s=0.0, max_rss_bytes=8_000_000,
                        instructions=work[n], exit_code=0)
        runs.append(Run(sweep_id=1, seq=len(runs), variant="A", size_n=n, repeat=0,
                        warmup=False, started_at=0.0, measurement=m))
    g = gap(fits, runs, HOST, "instructions")
    assert g is not None and g.per_work_n == (1000, 4000)
    assert "each instruction cost 1.7× as much at n = 4000 as at n = 1000" in gap_text(g)


def test_the_work_is_compared_at_the_timed_sweeps_largest_size() -> None:
    """Work a + b·n whose fit reports k 0.5 (its local exponent at 4000, where counting
    stopped: start-up is half the count there); time grows as n (k 0.97 [0.75, 1.05]) to
    16000, where the work's k is 0.8: compared there, no gap is claimed."""
    work = Fit(metric="instructions", cls="n", exponent=0.5, exponent_ci=(0.5, 0.5),
               coefficients={"a": 4000.0, "b": 1.0}, r2=1.0, candidates=(), n_points=3,
               best="n", at_least="n", at_most="n")
    time = _fit("wall_s", "n", 0.97, (0.75, 1.05))
    runs = _runs({n: n * 1e-6 for n in SIZES}, {n: n * 1e-6 for n in SIZES},
                 dict.fromkeys(SIZES, 0.0), FLAT_RSS,
                 {n: 4000.0 + n if n <= 4000 else None for n in SIZES})
    assert gap({"wall_s": time, "instructions": work}, runs, HOST, "instructions") is None
    assert differs(time, work)  # at the counted top alone, 0.5 would be a gap


def test_within_the_counted_sizes_the_work_is_its_own_k() -> None:
    """Counted to the timed sweep's top, the work's k is the fit's own (its slower terms in,
    the start-up out: `exactfit`), the one the headline gives, not a slope re-derived with
    the start-up in: the gap line never says "k 2.11 vs 1.72" under "k = 1.77"."""
    work = Fit(metric="instructions", cls="n^2", exponent=1.77, exponent_ci=(1.77, 1.78),
               coefficients={"a": 1.6e8, "b": 0.06}, r2=1.0, candidates=(), n_points=5,
               best="n^2", at_least="n^2", at_most="n^2")
    time = _fit("wall_s", "n^2", 2.11, (2.05, 2.18))
    flat = dict.fromkeys(SIZES, 0.0)
    runs = _runs({n: n * 1e-6 for n in SIZES}, {n: n * 1e-6 for n in SIZES}, flat, FLAT_RSS,
                 {n: 1.6e8 + 0.06 * n * n for n in SIZES})
    g = gap({"wall_s": time, "instructions": work}, runs, HOST, "instructions")
    assert g is not None and g.k_work == pytest.approx(1.77, abs=1e-9)


def test_a_cost_per_instruction_moving_against_the_gap_is_not_said() -> None:
    """cache_step under busy: CPU time n² against linear work, the working set leaving the
    L2 cache near n = 150000, but counted only at 4000..63246, where start-up still weighed
    and each instruction cost 0.36× as much at the top: said, it contradicted the gap."""
    from dataclasses import replace

    g = replace(_cache_gap(), per_work=0.36, per_work_n=(4000, 63246))
    assert "each instruction" not in gap_text(g)
    assert "each instruction costing 1.6×" in gap_text(replace(g, per_work=1.6))


def _cache_gap() -> Gap:
    return Gap("cpu_s", 1.98, 1.0, True, "cache", 1_000_000, 4000, 0.01, 0.0, 15e6, 2 << 20,
               "L2 cache", 150_000, None, None, None)


def test_a_cost_per_instruction_that_moved_against_the_gap_is_left_unsaid() -> None:
    """mawk `s = s "x"`: CPU time outgrew the work above its start-up, while each instruction
    cost 0.43× as much at the largest size as at the smallest (start-up's are the dearest):
    "grows faster … each instruction cost 0.43× as much" would contradict itself."""
    def unexplained(per_work: float, faster: bool) -> str:
        return gap_text(Gap("cpu_s", 2.54 if faster else 0.8, 1.99, faster, "unexplained",
                            80000, 1250, 0.17, 0.1, 372e3, 2 << 20, "L2 cache", None, None,
                            per_work, (1250, 80000)))
    assert "0.43" not in unexplained(0.43, True) and "grows faster" in unexplained(0.43, True)
    assert "each instruction cost 2.5× as much" in unexplained(2.5, True)
    assert "each instruction cost 0.4× as much" in unexplained(0.4, False)


def test_more_cpus_busy_at_larger_n_explains_wall_time_growing_slower() -> None:
    """Work n log n (k 1.08, counted to n = 16000); wall time k 0.93 as the program kept 1.0 CPUs busy at the
    smallest size and 1.6 at the largest (coreutils sort starting a second thread)."""
    threads = dict(zip(SIZES, (1.0, 1.0, 1.6, 1.6, 1.6), strict=True))
    cpu = {n: n * 1e-6 for n in SIZES}
    wall = {n: cpu[n] / threads[n] for n in SIZES}
    fits = {"wall_s": _fit("wall_s", "n", 0.93, (0.85, 1.01)),
            "instructions": _fit("instructions", "n log n", 1.08, (1.08, 1.08))}
    g = gap(fits, _runs(wall, cpu, dict.fromkeys(SIZES, 0.0), FLAT_RSS, WORK), HOST,
            "instructions")
    assert g is not None and g.cause == "parallel" and not g.faster
    assert gap_text(g) == ("wall time grows slower than the work (k 0.93 vs 1.08): the program "
                           "kept 1.0 CPUs busy at n = 1000 and 1.6 at n = 16000, and wall time "
                           "divides the work among them")


def test_beyond_the_counted_sizes_the_work_keeps_its_slower_term() -> None:
    """Work counted to 4000 as a + 1000·n + n² (its note's terms); timed to 16000. There the
    growing terms' local exponent is (1000·n + 2n²)/(1000·n + n²) = 1.94, the slower term
    still in, not the single law's 2 nor a slope with the start-up in."""
    from quadscope.analyse.gap import work_k
    from quadscope.model import Doubt

    note = Doubt("work_terms", "n", "n^2", None, numbers={
        "settled": 1, "term1": "n", "b1": 1000.0, "term2": "n^2", "b2": 1.0, "share": 0.6})
    work = Fit(metric="instructions", cls="n^2", exponent=1.8, exponent_ci=(1.79, 1.81),
               coefficients={"a": 5e6, "b": 1.05}, r2=1.0, candidates=(), n_points=3,
               best="n^2", at_least="n^2", at_most="n^2", doubts=(note,))
    expected = (1000 * 16000 + 2 * 16000**2) / (1000 * 16000 + 16000**2)
    assert work_k(work, 16000.0) == pytest.approx(expected, abs=1e-3)
    assert work_k(work) == pytest.approx(1.8, abs=1e-9)  # within the counted sizes: the fit's own k


def test_no_gap_while_each_instruction_costs_what_it_did() -> None:
    """CPython `bytes +=` counted to the timed top as a + c·n + b·n² (k 1.77 there); CPU
    time's own model read k = 2.18 [1.99, 2.37], outside 1.77, yet the time kept step with
    the work: "grows faster … each instruction cost 1× as much" is not said. The same runs
    with each instruction dearer at the top do make a gap."""
    work = Fit(metric="instructions", cls="n^2", exponent=1.77, exponent_ci=(1.77, 1.77),
               coefficients={"a": 1e7, "b": 0.5}, r2=1.0, candidates=(), n_points=5,
               best="n^2", at_least="n^2", at_most="n^2")
    time = _fit("cpu_s", "n^2", 2.18, (1.99, 2.37))
    counts = {n: 1e7 + 600.0 * n + 0.5 * n * n for n in SIZES}
    flat = dict.fromkeys(SIZES, 0.0)

    def runs(dearer: float) -> list[Run]:
        cpu = {n: 1e-9 * counts[n] * (n / 1000) ** dearer for n in SIZES}
        return _runs(cpu, cpu, flat, FLAT_RSS, counts)

    fits = {"cpu_s": time, "instructions": work}
    assert differs(time, work)  # the intervals alone would have said so
    assert gap(fits, runs(0.0), HOST, "instructions") is None
    g = gap(fits, runs(0.2), HOST, "instructions")
    assert g is not None and g.faster
