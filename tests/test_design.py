"""The design of a sweep in several sizes: the grid when affordable, else a star and corners."""

from __future__ import annotations

import pytest

from quadscope.errors import SizesError
from quadscope.run.design import Axis, design, grid_size


def test_full_grid_when_affordable():
    axes = (Axis("n", (1, 2, 4, 8)), Axis("m", (10, 20, 40)))
    pts = design(axes, max_points=12)
    assert len(pts) == grid_size(axes) == 12
    assert pts == tuple(sorted(pts))


def test_star_when_the_grid_is_too_dear():
    """Every size of each axis along a line through the middle, and corners off the lines."""
    n = tuple(range(1, 11))
    m = tuple(range(100, 1100, 100))
    pts = design((Axis("n", n), Axis("m", m)), max_points=25)
    assert len(pts) <= 25
    base_n, base_m = 6, 600
    assert {p[0] for p in pts if p[1] == base_m} == set(n)
    assert {p[1] for p in pts if p[0] == base_n} == set(m)
    off = [p for p in pts if p[0] != base_n and p[1] != base_m]
    assert (10, 1000) in off and 1 <= len(off) <= 4


def test_thinned_axes_keep_their_ends():
    n = tuple(range(1, 101))
    pts = design((Axis("n", n), Axis("m", (1, 2, 3, 4))), max_points=20)
    assert len(pts) <= 20
    ns = {p[0] for p in pts}
    assert 1 in ns and 100 in ns


def test_three_axes():
    axes = tuple(Axis(a, tuple(range(1, 6))) for a in "abc")
    pts = design(axes, max_points=20)
    assert 8 <= len(pts) <= 20 and all(len(p) == 3 for p in pts)


@pytest.mark.parametrize("axes", [
    (Axis("n", (1, 2)), Axis("m", (1, 2, 3, 4))),
    (Axis("n", (1, 2, 3)), Axis("m", (1, 2, 3)))[:1],
])
def test_too_few_sizes_or_points_is_one_sentence(axes):
    with pytest.raises(SizesError, match="at least"):
        design(axes)
