"""What gates and the headline lead with: a counted work bracket against the time's verdict."""

from __future__ import annotations

from quadscope.analyse.headline import lead_fit, width
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit


def _fit(metric: str, lo: str, hi: str | None = None) -> Fit:
    """A settled fit (`lo` alone) or a bracket lo … hi."""
    hi = hi or lo
    cls = lo if lo == hi else INCONCLUSIVE
    return Fit(metric, cls, 2.0, (1.9, 2.1), {"a": 0.0, "b": 1.0}, 0.99, (), 10,
               at_least=lo, at_most=hi)


def test_width_counts_the_classes_left_open() -> None:
    assert width(_fit("wall_s", "n^2")) == 0
    assert width(_fit("wall_s", "n^2", "n^3")) == 1
    assert width(_fit("wall_s", "1", "n^3")) == 7 - 1  # 1, log n, √n, n, n log n, n², n³
    assert width(Fit("wall_s", INCONCLUSIVE, None, None, {}, None, (), 3)) is None
    assert width(None) is None


def test_a_settled_work_leads_and_without_counts_the_time_leads() -> None:
    work, time = _fit("instructions", "n^2"), _fit("wall_s", "1", "n^3")
    assert lead_fit({"wall_s": time, "instructions": work}, "instructions") is work
    assert lead_fit({"wall_s": time}, None) is time
    assert lead_fit({"wall_s": time, "instructions": work}, None) is time


def test_a_counted_bracket_leads_a_time_bracket_as_wide_or_wider() -> None:
    """The constant workload: counts "1 or log n" (the digits of n parsed), time "1 … n³"."""
    work = _fit("instructions", "1", "log n")
    for time in (_fit("wall_s", "1", "n^3"), _fit("wall_s", "1", "log n")):
        assert lead_fit({"wall_s": time, "instructions": work}, "instructions") is work


def test_a_narrower_trusted_time_leads_a_wide_counted_bracket() -> None:
    work, time = _fit("instructions", "1", "n^3"), _fit("wall_s", "n^2")
    assert lead_fit({"wall_s": time, "instructions": work}, "instructions") is time


def test_a_time_settled_above_n2_never_leads_a_counted_bracket() -> None:
    """mawk `s = s "x"` in adaptive mode: time settled n³ (k = 3.28), the work n² or n³
    (truth n²): the counted bracket leads, so the headline is not confidently wrong."""
    work, time = _fit("instructions", "n^2", "n^3"), _fit("wall_s", "n^3")
    assert lead_fit({"wall_s": time, "instructions": work}, "instructions") is work
