"""The verdict line and the analysis every renderer shares."""

from __future__ import annotations

from quadscope.analyse.analysis import analyse, verdict_line
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit, Measurement, Run, Sweep


def fit(metric: str, cls: str, k: float | None = None, ci: tuple[float, float] | None = None,
        best: str = "") -> Fit:
    return Fit(metric=metric, cls=cls, exponent=k, exponent_ci=ci, coefficients={"a": 0.0, "b": 1.0},
               r2=1.0, candidates=(), n_points=12, best=best or cls, reason="because")


def test_worst_confident_metric_leads() -> None:
    """The steepest settled metric comes first with its exponent, the headline metrics after it."""
    fits = {
        "wall_s": fit("wall_s", "n^2", 2.01, (1.97, 2.05)),
        "sys_s": fit("sys_s", "n^2", 2.02, (1.98, 2.06)),
        "max_rss_bytes": fit("max_rss_bytes", "n", 1.0, (0.98, 1.02)),
        "major_faults": fit("major_faults", "1"),
    }
    assert verdict_line(fits) == (
        "sys_s grows as n^2 (k = 2.02 ± 0.04) — wall_s n^2, max_rss_bytes n"
    )


def test_a_rising_but_unsettled_metric_is_never_called_constant() -> None:
    """When only an inconclusive metric grows, the headline says it grows, with k and its interval."""
    fits = {
        "wall_s": fit("wall_s", INCONCLUSIVE, 1.85, (1.38, 2.44), best="n^2"),
        "sys_s": fit("sys_s", "1"),
    }
    line = verdict_line(fits)
    assert line == "wall_s grows as n^k, k = 1.85 [1.38, 2.44], class not settled (n^2?) — sys_s 1"


def test_everything_constant() -> None:
    """All settled metrics constant and nothing rising: say so."""
    fits = {"wall_s": fit("wall_s", "1"), "user_s": fit("user_s", "1")}
    assert verdict_line(fits) == (
        "nothing grows with n: every settled metric is constant — wall_s 1, user_s 1")


def test_accumulate_mode_speaks_of_launches() -> None:
    """In accumulate mode the size is the launch index i."""
    fits = {"wall_s": fit("wall_s", "n log n", 1.1, (1.0, 1.2))}
    assert verdict_line(fits, "i") == "wall_s grows as i log i (k = 1.10 ± 0.10)"


def test_nothing_conclusive() -> None:
    """With no settled and no clearly rising metric, the line gives wall_s's reason."""
    fits = {"wall_s": fit("wall_s", INCONCLUSIVE, 0.1, (0.0, 0.4), best="1")}
    assert verdict_line(fits) == "no metric's growth is conclusive yet: wall_s: because"


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


def test_a_noisy_unsettled_metric_does_not_displace_a_settled_leader() -> None:
    """An inconclusive metric with a higher but overlapping exponent does not take the headline."""
    fits = {
        "user_s": fit("user_s", "n^2", 2.0, (1.9, 2.1)),
        "involuntary_ctx_switches": fit("involuntary_ctx_switches", INCONCLUSIVE, 2.26,
                                        (1.19, 2.76), best="n^2"),
    }
    assert verdict_line(fits).startswith("user_s grows as n^2")


def test_immaterial_growth_does_not_take_the_headline() -> None:
    """A metric growing by 1% of its cost yields the headline to one that grows tenfold."""
    rss = Fit("max_rss_bytes", INCONCLUSIVE, 2.36, (0.45, 4.0), {"a": 1e7, "b": 1e-6}, 1.0, (), 12,
              best="n^3", reason="r")
    user = Fit("user_s", INCONCLUSIVE, 1.9, (1.5, 2.3), {"a": 0.1, "b": 1e-7}, 1.0, (), 12,
               best="n^2", reason="r")
    line = verdict_line({"max_rss_bytes": rss, "user_s": user}, n_max=3200)
    assert line.startswith("user_s grows as n^k, k = 1.90")


def test_a_derived_metric_never_leads_nor_joins_the_verdict() -> None:
    """cpu_s restates user_s + sys_s: a steeper cpu_s leaves the headline to its inputs."""
    fits = {
        "user_s": fit("user_s", "n", 1.0, (0.98, 1.02)),
        "cpu_s": fit("cpu_s", "n^2", 2.0, (1.98, 2.02)),
        "sys_s": fit("sys_s", "1"),
    }
    assert verdict_line(fits) == "user_s grows as n (k = 1.00 ± 0.02) — sys_s 1"


def test_analyse_fits_cpu_s_from_user_and_sys() -> None:
    """`analyse` fits the derived cpu_s over the measured runs, as the doctor and `show` do."""
    runs = [_run(i, n, 1e-3 * n) for i, n in enumerate([1, 10, 100, 1000, 10000] * 2)]
    analysis = analyse(Sweep(id=1, name="t", mode="sizes", command=("p", "{n}")), runs)
    cpu = analysis.fits["A"]["cpu_s"]
    assert (cpu.cls, cpu.n_points) == ("n", 10)
    assert list(analysis.fits["A"])[:5] == ["wall_s", "user_s", "sys_s", "cpu_s", "max_rss_bytes"]
