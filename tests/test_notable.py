"""What a report shows is decided in analyse, once: notable metrics, medians at the largest
size (the median the fits use), and each fit's drawn curve and band; renderers only read them."""

from __future__ import annotations

import dataclasses

import numpy as np

from quadscope.analyse.analysis import analyse
from quadscope.analyse.notable import ALWAYS_SHOWN, medians_at_max, notable_metrics
from quadscope.model import Measurement, Run, Sweep
from quadscope.render import get_renderer
from quadscope.render.extras import rnd_tuple
from quadscope.render.plotdata import report_data
from quadscope.render.plotmodel import Area
from test_report import SIZES, synth_runs


def _run(seq: int, n: int, wall_s: float, variant: str = "A", faults: int = 0) -> Run:
    m = Measurement(wall_s=wall_s, user_s=wall_s, sys_s=0.0, max_rss_bytes=1 << 20,
                    minor_faults=faults, major_faults=0, voluntary_ctx_switches=0,
                    involuntary_ctx_switches=0, exit_code=0)
    return Run(1, seq, variant, n, seq, False, 1.7e9 + seq, m)


def test_the_median_at_max_n_of_an_even_count_is_the_fits_median() -> None:
    """Two runs at the largest size: their mean, as stats.median_by_size takes it, not the
    upper one (the terminal's old `sorted(v)[len // 2]` disagreed with the fits)."""
    runs = [_run(0, 10, 1.0), _run(1, 100, 2.0), _run(2, 100, 4.0), _run(3, 100, 9.0, "B"),
            _run(4, 50, 7.0, "B")]
    at = medians_at_max(runs)
    assert at["A"]["wall_s"] == 3.0
    assert at["B"]["wall_s"] == 9.0
    assert "instructions" not in at["A"]  # not measured at that size: nothing to show


def test_notable_metrics_are_time_memory_and_what_materially_grows() -> None:
    """wall_s and max_rss_bytes always; minor_faults only when its fit and its medians grow."""
    flat = [_run(i, n, 1e-3 * n, faults=100) for i, n in enumerate(SIZES)]
    growing = [dataclasses.replace(r, measurement=dataclasses.replace(
        r.measurement, minor_faults=10 * r.size_n)) for r in flat]
    sweep = Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"), sizes=SIZES)
    for runs, expect in ((flat, False), (growing, True)):
        a = analyse(sweep, runs)
        assert a.notable == notable_metrics(a.fits, a.runs)
        assert set(ALWAYS_SHOWN) <= set(a.notable)
        assert ("minor_faults" in a.notable) is expect


def test_the_terminal_reads_the_median_analyse_computed() -> None:
    """The compact table's "at max n" cell is `Analysis.at_max`, whatever the runs say."""
    sweep = Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"), sizes=SIZES, repeat=2)
    a = analyse(sweep, synth_runs(SIZES, 2))
    planted = dataclasses.replace(a, at_max={"A": {**a.at_max["A"], "wall_s": 1234.0}})
    text = get_renderer("terminal", width=100).render(planted).decode()
    assert "20.6 min" in text  # 1234 s, as fmt_value writes it


def test_the_cost_plot_draws_the_band_analyse_computed() -> None:
    """The HTML/PNG cost panel's band and curve are `Analysis.bands`, drawn as they are."""
    sweep = Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"), sizes=SIZES, repeat=3)
    a = analyse(sweep, synth_runs(SIZES, 3))
    band = a.bands["A"]["wall_s"]
    assert band.cls == a.fits["A"]["wall_s"].cls
    assert np.all(band.lo <= band.mean) and np.all(band.mean <= band.hi)
    cost = next(p for p in report_data(a).plots if p.id == "wall_s-cost")
    drawn = next(lay for lay in cost.layers if isinstance(lay, Area))
    assert drawn.hi == rnd_tuple(band.hi)
    assert drawn.lo == rnd_tuple(np.maximum(band.lo, 0.0))


def test_the_metric_the_headline_leads_with_is_always_in_the_table() -> None:
    """CPU time (which the registry does not let lead on its own) is shown when the headline
    says "CPU time grows as …": the table under a headline holds the row it speaks of."""
    runs = [_run(i, n, 1e-3 * n) for i, n in enumerate(SIZES)]
    a = analyse(Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"), sizes=SIZES), runs)
    assert "cpu_s" in a.fits["A"] and "cpu_s" not in notable_metrics(a.fits, a.runs)
    assert "cpu_s" in notable_metrics(a.fits, a.runs, lead="cpu_s")
