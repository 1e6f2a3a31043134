"""The fit in several sizes: known a + b·n^p·m^q (and sums) with noise read back (pure, fakes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quadscope.analyse.multi import analyse_points
from quadscope.analyse.multiclass import axis_class, effective_exponent
from quadscope.analyse.multifit import GridPoint, aicc, fit_models
from quadscope.classes import REGISTRY
from quadscope.run.design import Axis, design

ROWS = (1000, 2000, 4000, 8000, 16000)
COLS = (10, 20, 40, 80, 160)


def _points(cost, noise=0.05, seed=1, repeat=3, points=None):
    rng = np.random.default_rng(seed)
    grid = points or [(n, m) for n in ROWS for m in COLS]
    return [GridPoint(p, tuple(cost(*p) * np.exp(rng.normal(0, noise, repeat)))) for p in grid]


def test_product_exponents_read_back_with_intervals_covering_truth():
    """a + b·n²·m: both exponents within their intervals, intervals narrow at 5% noise."""
    models = fit_models(_points(lambda n, m: 1e-3 + 1e-9 * n**2 * m))
    (p, q), ((p_lo, p_hi), (q_lo, q_hi)) = models.product.exponents, models.intervals
    assert p == pytest.approx(2.0, abs=0.05) and q == pytest.approx(1.0, abs=0.05)
    assert p_lo <= 2.0 <= p_hi and q_lo <= 1.0 <= q_hi
    assert p_hi - p_lo < 0.2 and q_hi - q_lo < 0.2


def test_quadratic_in_rows_linear_in_cols_not_separable():
    """The issue's sentence: classes per axis and the product preferred to the sum."""
    v = analyse_points(("rows", "cols"), _points(lambda n, m: 1e-3 + 1e-9 * n**2 * m))
    assert [a.growth.name for a in v.axes] == ["n^2", "n"]
    assert v.separable == "no"
    assert v.sentence == ("quadratic in rows, linear in cols; the cost is not separable: "
                          "rows²·cols fits better than rows² + cols log cols"
                          if "log" in v.sum_text else v.sentence)
    assert v.sentence.startswith("quadratic in rows, linear in cols; the cost is not separable: "
                                 "rows²·cols fits better than rows²")


def test_sum_is_separable_and_classes_come_from_the_sum():
    """a + b·n² + c·m: the sum wins by AICc, and m's class is read from the sum's term."""
    v = analyse_points(("n", "m"), _points(lambda n, m: 1e-3 + 1e-9 * n**2 + 1e-4 * m))
    assert v.separable == "yes"
    assert [a.growth.name for a in v.axes] == ["n^2", "n"]
    assert "the cost is separable: n² + m fits better than n²·m" in v.sentence


def test_axis_that_does_not_grow():
    """Cost in n alone: m reads constant and separability is not asked."""
    v = analyse_points(("n", "m"), _points(lambda n, m: 1e-3 + 1e-7 * n**2))
    assert v.axes[1].growth.name == "1"
    assert v.separable == "not tested"
    assert v.sentence.endswith("the cost does not grow with m")


def test_wide_interval_gives_a_bracket_never_a_wrong_class():
    """At 40% noise and one run per point the exponent is loose: a bracket holding the truth."""
    v = analyse_points(("n", "m"), _points(lambda n, m: 1e-9 * n * math.log(n) * m,
                                           noise=0.4, repeat=1, seed=3))
    n_axis = v.axes[0].growth
    order = REGISTRY.index
    assert order(n_axis.at_least) <= order("n log n") <= order(n_axis.at_most)
    if not n_axis.settled:
        assert " to " in v.sentence.split(";")[0]


def test_effective_exponents_and_bracket_rules():
    """n log n reads about 1.2 over two decades; an interval between classes is bracketed."""
    sizes = (10, 20, 40, 80, 160, 320, 640, 1000)
    assert effective_exponent(REGISTRY["n log n"], sizes) == pytest.approx(1.2, abs=0.1)
    assert effective_exponent(REGISTRY["1"], sizes) == 0.0
    assert axis_class("n", sizes, (1.97, 2.04)).name == "n^2"
    wide = axis_class("n", sizes, (0.97, 2.03))
    assert (wide.name, wide.at_least, wide.at_most) == (None, "n", "n^2")
    # The bracket encloses the whole interval, not only the classes inside it: 1.5 is allowed.
    reaching = axis_class("n", sizes, (1.03, 1.63))
    assert (reaching.name, reaching.at_least, reaching.at_most) == (None, "n", "n^2")
    # One class inside, but the interval reaches nearer n log n than n²: not settled.
    loose = axis_class("n", sizes, (1.3, 2.1))
    assert (loose.name, loose.at_least, loose.at_most) == (None, "n log n", "n^3")
    assert axis_class("n", sizes, (1.7, 2.1)).name == "n^2"
    between = axis_class("n", sizes, (1.5, 1.6))
    assert (between.name, between.at_least, between.at_most) == (None, "n log n", "n^2")
    assert axis_class("n", sizes, (4.4, 5.0)).at_most == "c^n"


def test_exact_counts_do_not_claim_exactness_the_model_lacks():
    """Noise-free n log n·m (an exact count): the misfit of a power still widens the interval."""
    models = fit_models(_points(lambda n, m: 50 + 3 * n * math.log(n) * m, noise=0.0))
    lo, hi = models.intervals[0]
    assert hi - lo > 0.0
    assert models.product.aicc < models.additive.aicc


def test_aicc_floors_exact_fits_and_refuses_too_few_points():
    assert aicc(0.0, 10, 3) == aicc(1e-30, 10, 3)
    assert aicc(1.0, 5, 4) == math.inf


def test_lines_follow_each_axis_through_a_shared_point():
    """The plot data: one line per axis with the medians and the product fit along it."""
    v = analyse_points(("n", "m"), _points(lambda n, m: 1e-9 * n**2 * m))
    line_n, line_m = v.lines
    assert line_n.sizes == ROWS and line_m.sizes == COLS
    assert len(line_n.fitted) == len(line_n.medians) == 5
    for med, fit in zip(line_n.medians, line_n.fitted, strict=True):
        assert fit == pytest.approx(med, rel=0.2)


def test_the_star_design_separates_product_from_sum():
    """Lines plus corners (not the grid) still tell a product from a sum."""
    axes = (Axis("n", tuple(2**k * 100 for k in range(10))), Axis("m", tuple(2**k for k in range(10))))
    pts = design(axes, max_points=30)
    assert len(pts) <= 30
    prod = analyse_points(("n", "m"), _points(lambda n, m: 1e-3 + 1e-9 * n**2 * m, points=pts))
    total = analyse_points(("n", "m"), _points(lambda n, m: 1e-3 + 1e-9 * n**2 + 1e-5 * m,
                                               points=pts))
    assert prod.separable == "no" and total.separable == "yes"


def test_json_form_names_every_part():
    d = analyse_points(("n", "m"), _points(lambda n, m: 1e-9 * n**2 * m)).to_dict()
    assert {"axes", "product", "sum", "separable", "verdict", "points"} <= set(d)
    assert d["axes"][0]["class"] == "n^2" and len(d["axes"][0]["interval"]) == 2


def test_an_axis_interval_joins_the_other_model_while_it_is_not_ruled_out():
    """AICc gap within NO_SUPPORT: which model holds is uncertain, so both intervals count."""
    from quadscope.analyse.multi import NO_SUPPORT, axis_intervals
    from quadscope.analyse.multifit import ModelFit, Models

    def models(gap: float) -> Models:
        return Models(ModelFit((0.5, 0.5), (0.0, 1.0), 1.0, 0.0),
                      ModelFit((1.0, 1.0), (0.0, 1.0, 1.0), 1.0, gap),
                      ((0.4, 0.6), (0.3, 0.6)), ((0.9, 1.1), (0.8, 1.2)), 25, 100)

    assert axis_intervals(models(NO_SUPPORT / 2), False) == ((0.4, 1.1), (0.3, 1.2))
    assert axis_intervals(models(-NO_SUPPORT / 2), True) == ((0.4, 1.1), (0.3, 1.2))
    assert axis_intervals(models(NO_SUPPORT * 2), False) == ((0.4, 0.6), (0.3, 0.6))
    assert axis_intervals(models(-NO_SUPPORT * 2), True) == ((0.9, 1.1), (0.8, 1.2))
    assert axis_intervals(models(math.inf), False) == ((0.4, 0.6), (0.3, 0.6))


def test_a_cost_that_grows_with_neither_size_is_constant_in_both():
    """Exact counts that never change (echo's instructions) over sizes from 1: "1" in each
    size, and no product-against-sum sentence about two constants."""
    grid = [(n, m) for n in (1, 2, 4, 8) for m in (1, 2, 4, 8)]
    v = analyse_points(("n", "m"), [GridPoint(p, (306_000.0,) * 3) for p in grid],
                       metric="instructions")
    assert [a.growth.name for a in v.axes] == ["1", "1"]
    assert v.separable == "not tested"
    assert "fits better" not in v.sentence and "does not grow with n or m" in v.sentence


def test_a_bracket_is_named_slowest_first_even_where_small_sizes_reorder_the_classes():
    """Over 1..8, log n climbs faster than √n; a bracket still reads from the slower class."""
    c = axis_class("n", (1, 2, 4, 8), (0.0, 0.6))
    order = [g.name for g in REGISTRY]
    assert c.name is None and order.index(c.at_least) < order.index(c.at_most)
    assert effective_exponent(REGISTRY["log n"], (1, 2, 4, 8)) > 0.5
