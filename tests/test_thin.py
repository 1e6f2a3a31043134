"""A very wide sweep is fitted on at most MAX_FIT_SIZES sizes, evenly spread in log n."""

from __future__ import annotations

import io
import itertools
import math
import random

import pytest

from conftest import measurement
from quadscope.analyse.thin import MAX_FIT_SIZES, fit_sizes, thinned
from quadscope.commands.common import FitProgress
from quadscope.model import Run, Sweep


def test_few_sizes_are_all_kept() -> None:
    assert fit_sizes([5, 1, 3, 3, 2]) == (1, 2, 3, 5)
    assert fit_sizes(range(1, MAX_FIT_SIZES + 1)) == tuple(range(1, MAX_FIT_SIZES + 1))


def test_ten_thousand_sizes_keep_the_dense_head_and_spread_the_rest_in_log_n() -> None:
    kept = fit_sizes(range(1, 10_001))
    assert len(kept) == MAX_FIT_SIZES and kept[0] == 1 and kept[-1] == 10_000
    assert kept[:12] == tuple(range(1, 13))  # 1, 2, 3 … are sparser in log n than the grid
    ratios = [math.log(b / a) for a, b in itertools.pairwise(kept[20:])]
    assert max(ratios) < 1.5 * min(ratios)  # above the head: even in log n (to whole sizes)


def test_sizes_even_in_log_n_are_taken_every_other() -> None:
    assert fit_sizes([2**i for i in range(199)]) == tuple(2**i for i in range(0, 199, 2))


def test_random_sizes_keep_both_ends_distinct_and_in_order() -> None:
    rng = random.Random(3)
    sizes = [rng.randint(0, 10**9) for _ in range(5000)]
    kept = fit_sizes(sizes, 37)
    assert len(kept) == 37 and kept[0] == min(sizes) and kept[-1] == max(sizes)
    assert list(kept) == sorted(set(kept)) and set(kept) <= set(sizes)


def _runs(variant: str, sizes: range) -> list[Run]:
    return [Run(1, k, variant, n, 0, False, 0.0, measurement(1e-3 + 1e-8 * n))
            for k, n in enumerate(sizes)]


def test_thinning_keeps_the_same_sizes_for_a_and_b_and_says_so() -> None:
    kept, note = thinned({"A": _runs("A", range(1, 501)), "B": _runs("B", range(1, 501))})
    assert {r.size_n for r in kept["A"]} == {r.size_n for r in kept["B"]}
    assert len(kept["A"]) == MAX_FIT_SIZES
    assert note.startswith(f"fitted on {MAX_FIT_SIZES} of the 500 sizes")
    same, none = thinned({"A": _runs("A", range(1, 11))})
    assert len(same["A"]) == 10 and none == ""


@pytest.mark.slow
def test_a_sweep_of_two_thousand_sizes_is_fitted_and_its_note_shown() -> None:
    """Linear growth over 2,000 sizes: the fit on 100 of them still finds n."""
    from quadscope.analyse.analysis import analyse

    rng = random.Random(1)
    runs = [Run(1, k, "A", n, 0, False, 0.0,
                measurement(1e-3 + 1e-6 * n * (1 + 0.02 * rng.random())))
            for k, n in enumerate(range(1, 2001))]
    sweep = Sweep(id=1, name="wide", mode="sizes", command=("p", "{n}"),
                  sizes=tuple(range(1, 2001)), repeat=1, status="complete")
    told: list[str] = []
    analysis = analyse(sweep, runs, progress=told.append)
    assert analysis.fits["A"]["wall_s"].cls == "n"
    assert any(n.startswith("fitted on 100 of the 2,000 sizes") for n in analysis.notes)
    assert told[0] == "A wall_s" and len(told) >= 5


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_silent_at_first_then_one_line_in_place_on_a_terminal() -> None:
    clock, out = _Clock(), _Tty()
    p = FitProgress(out, clock)
    p("A wall_s")
    assert out.getvalue() == ""
    clock.t = 2.0
    p("A user_s")
    p("A sys_s")
    p.done()
    text = out.getvalue()
    assert "fitting A user_s (metric 2)" in text and "fitting A sys_s (metric 3)" in text
    assert text.endswith("\r\x1b[2K") and "\n" not in text


def test_progress_in_a_log_or_a_pipe_is_nothing() -> None:
    """What a log holds must not depend on the machine's speed."""
    clock, out = _Clock(), io.StringIO()
    p = FitProgress(out, clock)
    clock.t = 5.0
    for m in ("A wall_s", "A user_s", "A sys_s"):
        p(m)
    p.done()
    assert out.getvalue() == ""
