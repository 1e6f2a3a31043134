"""Accumulate mode's launches pooled into sizes before fitting (analyse.launches)."""

from __future__ import annotations

import itertools
import re

import numpy as np

from conftest import measurement
from quadscope.analyse.analysis import analyse
from quadscope.analyse.launches import MIN_LAUNCHES, MIN_POOL, POOL_RATIO, pool_launches, pools
from quadscope.analyse.text import sized
from quadscope.model import Run, Sweep


def _launches(walls: list[float], variant: str = "A", seq0: int = 0) -> list[Run]:
    return [Run(sweep_id=1, seq=seq0 + k, variant=variant, size_n=k + 1, repeat=0, warmup=False,
                started_at=0.0, measurement=measurement(w)) for k, w in enumerate(walls)]


def test_pools_cover_every_launch_once_and_span_at_most_the_ratio() -> None:
    """Pools are consecutive, hold at least MIN_POOL launches, and span at most POOL_RATIO."""
    indices = list(range(1, 601))
    cuts = pools(indices)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(indices)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cuts))
    assert all(hi - lo >= MIN_POOL for lo, hi in cuts)
    for lo, hi in cuts[:-1]:
        width = hi - lo
        assert width == MIN_POOL or indices[hi - 1] / indices[lo] <= POOL_RATIO
    assert 15 <= len(cuts) <= 30


def test_few_launches_stay_single_and_nothing_but_the_size_changes() -> None:
    few = _launches([1e-3] * (MIN_LAUNCHES - 1))
    assert [r.size_n for r in pool_launches(few)] == list(range(1, MIN_LAUNCHES))
    many = _launches([1e-3 + 1e-6 * k for k in range(200)])
    pooled = pool_launches(many)
    assert [r.seq for r in pooled] == [r.seq for r in many]
    assert [r.measurement for r in pooled] == [r.measurement for r in many]
    assert len({r.size_n for r in pooled}) < 40


def _sweep() -> Sweep:
    return Sweep(id=1, name="t", command=("launch", "{i}"), mode="accumulate",
                 sizes=tuple(range(1, 601)), repeat=1, warmup=0, seed=0, status="complete",
                 created_at=0.0, vs_command=("fixed", "{i}"))


def test_linear_launches_under_bursts_of_load_are_not_read_as_a_regime_or_a_square() -> None:
    """A linear launch cost with 15% noise, 3% of launches 3× slow and three bursts of
    20–40 consecutive launches 1.5–2.5× slow (a shared machine).

    Fitted one launch at a time, these data read "n … n³" with a change of regime
    near i = 89; pooled, the verdict must contain i and exclude i².
    """
    rng = np.random.default_rng(2)
    i = np.arange(1, 601)
    cost = (0.8e-3 + 10e-6 * i) * rng.lognormal(0, 0.15, i.size)
    for _ in range(3):
        start, width = rng.integers(0, 560), rng.integers(20, 40)
        cost[start:start + width] *= rng.uniform(1.5, 2.5)
    cost[rng.random(i.size) < 0.03] *= 3
    flat = 0.7e-3 * rng.lognormal(0, 0.15, i.size)
    runs = _launches(list(cost)) + _launches(list(flat), "B", seq0=600)
    a = analyse(_sweep(), runs)
    wall = a.fits["A"]["wall_s"]
    lo, hi = (wall.cls, wall.cls) if wall.confident else (wall.at_least, wall.at_most)
    order = ["1", "log n", "sqrt n", "n", "n log n", "n^2", "n^3", "c^n"]
    assert order.index(lo) <= order.index("n") <= order.index(hi) < order.index("n^2"), wall
    assert wall.regime_n is None
    flat_fit = a.fits["B"]["wall_s"]
    assert flat_fit.cls == "1" or flat_fit.at_least == "1", flat_fit


def test_phases_of_the_machine_do_not_pull_a_linear_cost_down_to_1() -> None:
    """Launch costs linear in i on a VM whose speed moves in phases (×1.3 for a hundred
    launches at a time, as measured under `make demo`): the pools' medians step between
    phases that their own spread does not see, so a local slope test would read a swing
    and reach the bracket down to 1; pooled launches skip it: "i or i log i"."""
    rng = np.random.default_rng(0)
    i = np.arange(1, 601)
    phase = np.where((i // 100) % 2 == 1, 1.3, 1.0)
    cost = (0.8e-3 + 10e-6 * i) * phase * rng.lognormal(0, 0.05, i.size)
    flat = 0.7e-3 * rng.lognormal(0, 0.05, i.size)
    a = analyse(_sweep(), _launches(list(cost)) + _launches(list(flat), "B", seq0=600))
    wall = a.fits["A"]["wall_s"]
    assert (wall.at_least, wall.at_most) == ("n", "n log n") or wall.cls == "n", wall



def test_unsettled_launch_fits_name_the_launch_index_not_n() -> None:
    """A flat launch cost with 40% noise is not settled: its sentences say "at i = …",
    "growing i" (they once said n, a variable accumulate mode does not have)."""
    rng = np.random.default_rng(5)
    runs = _launches(list(2e-3 * rng.lognormal(0, 0.4, 60)))
    sweep = Sweep(id=1, name="t", command=("launch",), mode="accumulate",
                  sizes=tuple(range(1, 61)), repeat=1, warmup=0, seed=0, status="complete",
                  created_at=0.0)
    a = analyse(sweep, runs)
    reasons = [f.reason for f in a.fits["A"].values() if f.reason]
    assert reasons, a.fits["A"]
    said = " ".join([*reasons, *a.notes])
    assert re.search(r"\bi = \d", said), said
    assert not re.search(r"(?<![\w{-])n(?![\w}-])", said, re.ASCII), said


def test_sized_renames_the_size_and_nothing_else() -> None:
    assert sized("worth 74% of the cost at n = 55; without growing n, n² or cⁿ", "i") == \
        "worth 74% of the cost at i = 55; without growing i, i² or cⁱ"
    assert sized("missing {n} in --sizes; an n-th run", "i") == "missing {n} in --sizes; an n-th run"
    assert sized("at n = 5", "n") == "at n = 5"


def test_a_launch_list_is_whole_up_to_four_and_elided_beyond() -> None:
    from quadscope.analyse.launches import launch_list

    assert launch_list([2, 4, 8]) == "2, 4, 8"
    assert launch_list([2, 4, 8, 16, 32]) == "2, 4, …, 32"
