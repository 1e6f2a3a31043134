"""Adaptive mode over several sizes: the pure choice of the next step (run.multigrow)."""

from __future__ import annotations

import math

import pytest

from quadscope.run.design import MIN_POINTS
from quadscope.run.multigrow import (
    AxisState,
    base_axes,
    base_points,
    decide,
    extension,
    flat_open,
    price_s,
)


def _axis(name: str, width: float, *, settled: bool = False, verdict: str = "",
          can_grow: bool = True, narrow: bool = False) -> AxisState:
    return AxisState(name, (100, 200, 400), (1.0, 1.0 + width), verdict or name, settled,
                     can_grow, narrow)


def test_the_base_design_is_each_start_times_one_two_four_on_the_full_grid() -> None:
    axes = base_axes([("rows", 100), ("cols", 0)])
    assert [a.sizes for a in axes] == [(100, 200, 400), (1, 2, 4)]
    points = base_points(axes)
    assert len(points) == 9 >= MIN_POINTS and (400, 4) in points and (100, 1) in points


def test_three_sizes_take_lines_and_corners_not_the_27_point_grid() -> None:
    points = base_points(base_axes([("a", 1), ("b", 10), ("c", 100)]))
    assert MIN_POINTS <= len(points) < 27
    assert (4, 40, 400) in points  # the far corner


def test_doubling_an_axis_adds_its_next_size_at_the_other_axis_ends() -> None:
    grid = [(r, c) for r in (100, 200, 400) for c in (4, 8, 16)]
    assert extension(grid, 0) == ((800, 4), (800, 16))
    assert extension(grid, 1) == ((100, 32), (400, 32))
    assert extension([(2**53, 1), (1, 2)], 0) == ()  # past the exact sizes


def test_a_new_point_is_priced_by_the_law_from_its_nearest_measured_point() -> None:
    measured = {(100, 4): 0.01, (400, 16): 0.64}
    # a + b·r²·c with a = 0: (800, 16) is 4× the cost of (400, 16)
    assert price_s((800, 16), measured, (2.0, 1.0), (0.0, 1e-7)) == pytest.approx(2.56)
    assert price_s((100, 4), measured, (2.0, 1.0), (0.0, 1e-7)) == 0.01


def test_the_open_axis_with_the_widest_interval_per_second_is_extended() -> None:
    axes = [_axis("rows", 0.2), _axis("cols", 0.8)]
    step = decide(axes, previous=None, prices_s={"rows": 1.0, "cols": 2.0}, confirm_s=0.1,
                  remaining_s=100.0)
    assert (step.kind, step.axis) == ("extend", "cols")  # 0.4 per second beats 0.2
    step = decide(axes, previous=None, prices_s={"rows": 1.0, "cols": 8.0}, confirm_s=0.1,
                  remaining_s=100.0)
    assert (step.kind, step.axis) == ("extend", "rows")  # 0.2 per second beats 0.1


def test_a_settled_axis_is_not_extended_and_one_that_cannot_grow_is_skipped() -> None:
    axes = [_axis("rows", 0.9, settled=True), _axis("cols", 0.1, can_grow=False),
            _axis("k", 0.05)]
    step = decide(axes, previous=None, prices_s={"rows": 0.1, "cols": 0.1, "k": 50.0},
                  confirm_s=0.1, remaining_s=100.0)
    assert (step.kind, step.axis) == ("extend", "k")


def test_every_class_settled_stops_only_when_it_read_the_same_at_the_look_before() -> None:
    axes = [_axis("rows", 0.1, settled=True, verdict="n^2"),
            _axis("cols", 0.1, settled=True, verdict="n")]
    first = decide(axes, previous=None, prices_s={}, confirm_s=0.5, remaining_s=10.0)
    assert first.kind == "confirm"
    assert decide(axes, previous=("n^2", "n log n"), prices_s={}, confirm_s=0.5,
                  remaining_s=10.0).kind == "confirm"
    assert decide(axes, previous=("n^2", "n"), prices_s={}, confirm_s=0.5,
                  remaining_s=10.0).kind == "stop"


def test_a_step_past_half_the_budget_left_is_not_taken() -> None:
    axes = [_axis("rows", 0.5), _axis("cols", 0.5)]
    step = decide(axes, previous=None, prices_s={"rows": 6.0, "cols": 7.0}, confirm_s=1.0,
                  remaining_s=10.0)
    assert step.kind == "confirm"  # repeats narrow the interval too
    step = decide(axes, previous=None, prices_s={"rows": 6.0, "cols": 7.0}, confirm_s=6.0,
                  remaining_s=10.0)
    assert step.kind == "stop"


def test_a_stable_neighbouring_bracket_is_sharpened_only_for_what_was_spent() -> None:
    axes = [_axis("rows", 0.3, verdict="n…n log n", narrow=True),
            _axis("cols", 0.1, settled=True, verdict="n")]
    previous = ("n…n log n", "n")
    assert decide(axes, previous=previous, prices_s={"rows": 3.0}, confirm_s=0.1,
                  remaining_s=100.0, spent_s=2.0).kind == "stop"
    assert decide(axes, previous=previous, prices_s={"rows": 3.0}, confirm_s=0.1,
                  remaining_s=100.0, spent_s=4.0).kind == "extend"
    wide = [_axis("rows", 0.9, verdict="sqrt n…n^2"), axes[1]]
    assert decide(wide, previous=("sqrt n…n^2", "n"), prices_s={"rows": 3.0}, confirm_s=0.1,
                  remaining_s=100.0, spent_s=2.0).kind == "extend"


def test_a_flat_axis_stays_open_until_its_span_or_half_the_budget() -> None:
    assert flat_open((4, 8, 16), spent_s=1.0, budget_s=30.0)
    assert flat_open((4, 8, 16), spent_s=8.0, budget_s=30.0)
    assert not flat_open((4, 8, 16), spent_s=16.0, budget_s=30.0)
    assert not flat_open((1, 2**24), spent_s=1.0, budget_s=30.0)


def test_nothing_affordable_and_no_confirm_stops() -> None:
    step = decide([_axis("rows", 0.5)], previous=None, prices_s={"rows": math.inf},
                  confirm_s=math.inf, remaining_s=5.0)
    assert step.kind == "stop" and "budget" in step.reason
