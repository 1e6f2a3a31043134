"""The product with lower terms (issue 25): rows²·(α + β·cols) + a read back as rows², cols
settled, not as rows²·cols^0.8; pure products and sums keep their verdicts (pure, fakes)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from quadscope.analyse.multi import analyse_points
from quadscope.analyse.multifit import GridPoint, fit_models

ROWS = (50, 75, 100, 150, 200, 300, 400)
COLS = (2, 3, 4, 6, 8, 12, 16)


def _points(cost, noise=0.0, seed=3, repeat=3):
    rng = np.random.default_rng(seed)
    return [GridPoint((r, c), tuple(float(v) for v in cost(r, c) * np.exp(
        rng.normal(0, noise, repeat) if noise else np.zeros(repeat))))
        for r in ROWS for c in COLS]


def _mixed(r, c):
    """A per-row overhead plus per-cell work, after a start-up: the issue's C program."""
    return 1e5 + r * r * (7.0 + 5.0 * c)


def test_the_nest_fits_the_mixed_cost_exactly_and_the_product_does_not():
    models = fit_models(_points(_mixed), n_boot=50)
    assert models.nest is not None
    p, q = models.nest.exponents
    assert p == pytest.approx(2.0, abs=0.01) and q == pytest.approx(1.0, abs=0.01)
    a, b, c_rows, c_cols = models.nest.coef
    assert b == pytest.approx(5.0, rel=0.01) and c_rows == pytest.approx(7.0, rel=0.02)
    assert a == pytest.approx(1e5, rel=0.05) and c_cols < 1e-3 * b
    assert models.product.exponents[1] < 0.95  # the product alone reads cols too flat
    assert models.nest.aicc < models.product.aicc - 100
    assert models.nest_intervals == ()  # bootstrapped only when chosen


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_mixed_cost_reads_quadratic_in_rows_and_linear_in_cols(noise):
    v = analyse_points(("rows", "cols"), _points(_mixed, noise), n_boot=200)
    assert v.nested and v.separable == "no"
    assert [a.growth.name for a in v.axes] == ["n^2", "n"]
    lo, hi = v.axes[1].interval
    assert lo <= 1.0 <= hi
    assert v.models.nest_intervals and v.nest_text == "rows²·cols plus a rows² term"
    assert v.sentence.startswith("quadratic in rows, linear in cols; the cost is not separable: "
                                 "rows²·cols plus a rows² term fits better than rows²")
    doc = json.loads(json.dumps(v.to_dict()))
    assert doc["model"] == "nest" and doc["nest"]["model"] == v.nest_text
    assert len(doc["nest"]["coefficients"]) == 4


def test_the_lines_draw_the_chosen_fit():
    v = analyse_points(("rows", "cols"), _points(_mixed), n_boot=50)
    for line in v.lines:
        assert np.allclose(line.fitted, line.medians, rtol=1e-3)


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_a_pure_product_keeps_its_verdict(noise):
    v = analyse_points(("rows", "cols"), _points(lambda r, c: 1e4 + 3.0 * r * r * c, noise),
                       n_boot=200)
    assert not v.nested and v.separable == "no"
    assert [a.growth.name for a in v.axes] == ["n^2", "n"]
    assert "plus" not in v.sentence and v.to_dict()["model"] == "product"
    assert v.nest_text == ""  # no lower term counts: no third model to list


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_a_pure_sum_keeps_its_verdict(noise):
    v = analyse_points(("rows", "cols"), _points(lambda r, c: 1e4 + r * r + 300.0 * c * c, noise),
                       n_boot=200)
    assert not v.nested and v.separable == "yes"
    assert [a.growth.name for a in v.axes] == ["n^2", "n^2"]
    assert v.to_dict()["model"] == "sum" and v.nest_text == ""


def test_a_lower_term_too_small_to_matter_does_not_take_the_verdict():
    """One part in 10⁴ of a rows² term is real in exact counts but carries no share of the cost."""
    v = analyse_points(("rows", "cols"), _points(lambda r, c: 1e4 + r * r * (1e-4 + c)),
                       n_boot=50)
    assert not v.nested


def test_every_format_lists_the_lower_terms_where_they_won(store, clock):
    """Terminal, JSON, HTML and markdown list the product with lower terms next to the others,
    and `list`'s brief names it."""
    from tests.conftest import measurement
    from tests.test_multi_sweep import _spec

    from quadscope.analyse.multi_sweep import analyse_multi, brief_text
    from quadscope.measure.launcher import FakeExecutor
    from quadscope.render.multi import terminal, to_json
    from quadscope.render.multi_html import html
    from quadscope.render.multi_markdown import markdown
    from quadscope.run.runner import run_sweep

    def cost(argv):
        n, m = int(argv[1]), int(argv[2])
        return measurement(1e-3 + 1e-9 * n * n * (40.0 + m))

    sweep = run_sweep(_spec(), executor=FakeExecutor(cost, clock), clock=clock, store=store)
    report = analyse_multi(sweep, store.runs(sweep.id))
    assert report.verdict is not None and report.verdict.nested
    words = "n²·m plus a n² term"
    assert brief_text(report) == words
    text = terminal(report)
    assert words in text and "lower terms by" in text and "+ c·n^2.00 + d·m^1.00" in text
    assert json.loads(to_json(report))["nest"]["model"] == words
    assert f"<td>{words}</td>" in html(report).decode()
    assert any(ln.startswith(f"| {words} |") for ln in markdown(report).decode().splitlines())
