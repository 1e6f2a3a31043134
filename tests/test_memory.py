"""Time verdicts the caches account for part of: widened by what the data measure, with a note."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from tests.conftest import measurement

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.memory import memory_bound
from quadscope.host import Host
from quadscope.model import Measurement, Run

CACHES = Host(l2_bytes=512 << 10, llc_bytes=32 << 20)
WIDE = tuple(64_000 * 2**i for i in range(7))  # 64k..4M
SMALL = tuple(1000 * 2**i for i in range(7))  # 1k..64k


def runs(sizes: Sequence[int], k: float, bytes_per_n: float, log: bool = False) -> list[Run]:
    """Three runs per size: time ∝ n^k (· log n) with 1% noise, 1 s at the top; peak RSS
    1.5 MiB + bytes_per_n·n."""
    rng = np.random.default_rng(0)
    out = []
    top = sizes[-1] ** k * (np.log(sizes[-1]) if log else 1.0)
    for i, n in enumerate(np.repeat(sizes, 3)):
        shape = n ** k * (np.log(n) if log else 1.0) / top
        wall = shape * (1 + 0.01 * rng.standard_normal())
        out.append(Run(sweep_id=1, seq=i, variant="A", size_n=int(n), repeat=i % 3,
                       warmup=False, started_at=0.0,
                       measurement=measurement(wall, max_rss_bytes=(3 << 19) + bytes_per_n * n)))
    return out


def shaped(sizes: Sequence[int], time: Callable[[float], float], bytes_per_n: float,
           instructions: Callable[[float], float] | None = None) -> list[Run]:
    """Three runs per size of time(n) with 1% noise; peak RSS 1.5 MiB + bytes_per_n·n; the
    instructions counted exactly when given."""
    rng = np.random.default_rng(0)
    out = []
    for i, n in enumerate(np.repeat(sizes, 3)):
        m = measurement(time(float(n)) * (1 + 0.01 * rng.standard_normal()),
                        max_rss_bytes=(3 << 19) + bytes_per_n * n)
        if instructions is not None:
            m = Measurement(values={**m.values, "instructions": instructions(float(n))},
                            exit_code=0)
        out.append(Run(sweep_id=1, seq=i, variant="A", size_n=int(n), repeat=i % 3,
                       warmup=False, started_at=0.0, measurement=m))
    return out


def stepping(n: float) -> float:
    """1 ms of start-up and 2 ns per element up to 256k elements (16 bytes each, L2 of CACHES
    left at 32k), then a cost per element rising with n to 8× at 2M, as a pointer chase's
    does through the last-level cache and the TLB."""
    return 1e-3 + 2e-9 * n * min(max(n / 256e3, 1.0), 8.0)


def test_growth_the_same_below_and_past_the_cache_is_not_the_caches() -> None:
    """Issue 25: a quadratic (CPython's l.insert(0, i)) whose working set grows as √n past a
    1 MiB L2, its time growing as n² while the data fit as after: the caches explain
    nothing, so the verdict stays n² (it once read "√n … n²" beside k = 1.96 [1.92, 1.99])."""
    sizes = [2000 * 2**i for i in range(5)]
    rs = [Run(sweep_id=1, seq=r.seq, variant="A", size_n=r.size_n, repeat=r.repeat,
              warmup=False, started_at=0.0, measurement=measurement(
                  r.measurement.wall_s, max_rss_bytes=9e6 + 1.2e4 * r.size_n ** 0.5 * 2.8))
          for r in shaped(sizes, lambda n: 1e-3 + 1e-9 * n * n, 0)]
    fits, _ = fit_runs(rs)
    assert fits["wall_s"].cls == "n^2" and fits["max_rss_bytes"].cls == "sqrt n"
    assert memory_bound(fits, rs, Host(l2_bytes=1 << 20)) == (fits, [])


def test_n_log_n_throughout_with_no_size_below_the_cache_is_not_widened() -> None:
    """n log n over 64k–4M, every size but the smallest out of L2: nothing measures the cost
    per element below the transition, so nothing widens (it once reached down to memory's n
    whatever k said)."""
    rs = runs(WIDE, 1.0, 16, log=True)
    fits, _ = fit_runs(rs)
    assert fits["max_rss_bytes"].cls == "n" and fits["wall_s"].cls == "n log n"
    assert memory_bound(fits, rs, CACHES) == (fits, [])


def test_with_the_work_counted_the_caveat_is_a_sentence_not_a_bracket() -> None:
    """The pointer chase below with its instructions counted (2 ps each while the data fit):
    the time's verdict stands, and a note gives the rise of the time per instruction."""
    sizes = [4000 * 2**i for i in range(10)]
    rs = shaped(sizes, stepping, 16, instructions=lambda n: (1e-3 + 2e-9 * n) / 2e-12)
    fits, _ = fit_runs(rs)
    widened, notes = memory_bound(fits, rs, CACHES, work="instructions")
    assert widened["wall_s"] == fits["wall_s"] and fits["wall_s"].confident
    note = next(n for n in notes if n.startswith("wall_s:"))
    assert "time per unit of work counted rose ×6.6" in note and "L2 cache" in note
    assert "…" not in note


def test_an_unsettled_bracket_stands() -> None:
    """n^1.6 over the same sizes is already a bracket: it says it is unsure, and stays."""
    rs = runs(WIDE, 1.6, 16)
    fits, _ = fit_runs(rs)
    assert not fits["wall_s"].confident
    assert memory_bound(fits, rs, CACHES) == (fits, [])


def test_a_quadratic_whose_cost_per_element_rises_more_than_caches_can_stays_quadratic() -> None:
    """n² over 1k–64k with a working set of 2 MiB (out of L2): ×64 per element is not a
    cache's doing, so the verdict stays n²."""
    rs = runs(SMALL, 2.0, 32)
    fits, _ = fit_runs(rs)
    assert fits["wall_s"].cls == "n^2"
    assert memory_bound(fits, rs, CACHES) == (fits, [])


def test_a_working_set_within_the_cache_leaves_the_verdict_alone() -> None:
    """The same n log n time over a working set of 256 KiB (within L2): unchanged."""
    rs = runs(WIDE, 1.0, 0.06, log=True)
    fits, _ = fit_runs(rs)
    assert memory_bound(fits, rs, CACHES) == (fits, [])


def test_without_cache_sizes_or_past_n_squared_nothing_changes() -> None:
    """A sweep stored before the caches were recorded, or time growing as n³: unchanged."""
    rs = runs(WIDE, 1.0, 16, log=True)
    fits, _ = fit_runs(rs)
    assert memory_bound(fits, rs, Host()) == (fits, [])
    cubic = runs((64_000, 90_000, 128_000, 180_000), 3.0, 16)
    cubic_fits, _ = fit_runs(cubic)
    assert cubic_fits["wall_s"].cls == "n^3"
    assert memory_bound(cubic_fits, cubic, CACHES)[0]["wall_s"] == cubic_fits["wall_s"]


def test_time_growing_as_memory_does_is_not_touched() -> None:
    """Linear time over a linear working set out of the caches: nothing to explain."""
    rs = runs(WIDE, 1.0, 16)
    fits, _ = fit_runs(rs)
    assert fits["wall_s"].cls == "n"
    assert memory_bound(fits, rs, CACHES) == (fits, [])


def test_linear_work_whose_cost_per_element_rises_past_l2_reaches_down_to_n() -> None:
    """1 ms of start-up and 2 ns per element up to 256k elements (16 bytes each, L2 left at
    32k), then a cost per element rising with n to 8× at 2M, as a pointer chase's does
    through the last-level cache and the TLB: fitted n² above a change of regime. Over
    the whole span (4k–2M) k = 2 implies 500× per element, more than caches make; over
    the sizes out of L2 the excess is 8×, and while the data fit the time grew slower
    than n: "n … n²"."""
    sizes = [4000 * 2**i for i in range(10)]
    rs = shaped(sizes, stepping, 16)
    fits, _ = fit_runs(rs)
    assert fits["wall_s"].confident and fits["wall_s"].cls == "n^2"
    widened, notes = memory_bound(fits, rs, CACHES)
    wall = widened["wall_s"]
    assert not wall.confident and (wall.at_least, wall.at_most) == ("n", "n^2")
    assert wall.decide_n is None and "L2 cache" in wall.reason and "×" in wall.reason
    doubt = wall.doubts[-1]  # the renderers read it: the meter that would decide, the cache
    assert (doubt.check, doubt.at_least, doubt.meter) == ("memory", "n", "instructions")
    assert doubt.numbers["cache"] == "L2 cache"
    # Start-up hides the growth below the cache, so the excess measured is at the cap.
    assert float(doubt.numbers["excess"]) == pytest.approx(20.0)  # type: ignore[arg-type]
    assert any(note.startswith("wall_s grows as n^2") and "--meter instructions" in note
               for note in notes)
    assert widened["max_rss_bytes"] == fits["max_rss_bytes"]


def test_a_class_slope_from_n_1_is_unbounded_not_a_warning() -> None:
    """log n is 0 at n = 1: its slope from there is no finite exponent, and saying so
    prints nothing (numpy's divide-by-zero warning reached a user's terminal)."""
    import math
    import warnings

    from quadscope.analyse.memory import _exponent

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _exponent("log n", 1.0, 100.0) == math.inf
        assert _exponent("1", 1.0, 100.0) == 0.0
        assert _exponent("n", 1.0, 100.0) == pytest.approx(1.0, abs=1e-9)
        assert _exponent("n^2", 4.0, 64.0) == pytest.approx(2.0, abs=1e-9)
