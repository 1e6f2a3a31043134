"""Which time leads the headline: wall time, or CPU time where it says more and nothing against it."""

from __future__ import annotations

from quadscope.analyse.headline import time_fit
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit


def _fit(metric: str, lo: str, hi: str | None = None, k: float = 1.0,
         ci: tuple[float, float] = (0.5, 1.5)) -> Fit:
    """A settled fit (`lo` alone) or a bracket lo … hi, with exponent k and its interval."""
    hi = hi or lo
    cls = lo if lo == hi else INCONCLUSIVE
    return Fit(metric, cls, k, ci, {"a": 0.0, "b": 1.0}, 0.99, (), 15, at_least=lo, at_most=hi)


def test_a_narrower_cpu_bracket_inside_wall_times_leads() -> None:
    """C stpcpy on a loaded machine: wall "1 … n³" (k = 1.59 [0.00, 4.00]), CPU time
    "log n … n²" (k = 1.00 [0.22, 1.78])."""
    wall = _fit("wall_s", "1", "n^3", 1.59, (0.0, 4.0))
    cpu = _fit("cpu_s", "log n", "n^2", 1.0, (0.22, 1.78))
    assert time_fit({"wall_s": wall, "cpu_s": cpu}) is cpu


def test_a_cpu_bracket_no_narrower_or_reaching_outside_keeps_wall_time() -> None:
    wall = _fit("wall_s", "n", "n^2", 1.2, (0.9, 1.6))
    same = _fit("cpu_s", "n", "n^2", 1.2, (0.95, 1.5))
    outside = _fit("cpu_s", "sqrt n", "n log n", 0.9, (0.6, 1.2))
    wider = _fit("cpu_s", "log n", "n^3", 1.2, (0.1, 2.5))
    for cpu in (same, outside, wider):
        assert time_fit({"wall_s": wall, "cpu_s": cpu}) is wall


def test_a_wall_class_cpu_time_disagrees_with_gives_way_to_cpu_times_bracket() -> None:
    """mawk `s = s "x"` with other tenants: wall settled n³ (k = 3.05), CPU time n² … n³
    (k = 2.72 [2.52, 2.91]); the truth is n², so wall's n³ must not lead alone."""
    wall = _fit("wall_s", "n^3", k=3.05, ci=(2.68, 3.42))
    cpu = _fit("cpu_s", "n^2", "n^3", 2.72, (2.52, 2.91))
    assert time_fit({"wall_s": wall, "cpu_s": cpu}) is cpu


def test_a_wall_class_within_cpu_times_interval_or_outside_its_bracket_leads() -> None:
    """sqlite3's unindexed join under load: wall n² (k = 1.94), CPU time n log n … n²
    (k = 1.84 [1.71, 1.98]): they agree, wall's settled class stays. A CPU bracket that
    excludes wall's class is a disagreement of kind, not of noise: wall stays too."""
    wall = _fit("wall_s", "n^2", k=1.94, ci=(1.61, 2.27))
    agreeing = _fit("cpu_s", "n log n", "n^2", 1.84, (1.71, 1.98))
    assert time_fit({"wall_s": wall, "cpu_s": agreeing}) is wall
    elsewhere = _fit("cpu_s", "n", "n log n", 1.1, (1.0, 1.2))
    assert time_fit({"wall_s": wall, "cpu_s": elsewhere}) is wall


def test_a_bare_cpu_time_or_a_flat_wall_time_never_leads_in_its_place() -> None:
    bare = Fit("cpu_s", INCONCLUSIVE, 1.0, (0.0, 4.0), {"a": 0.0, "b": 1.0}, 0.5, (), 15)
    wall = _fit("wall_s", "1", "n^3", 1.5, (0.0, 4.0))
    assert time_fit({"wall_s": wall, "cpu_s": bare}) is wall
    flat = _fit("wall_s", "1", k=0.0, ci=(0.0, 0.1))
    cpu = _fit("cpu_s", "1", "log n", 0.05, (0.0, 0.2))
    assert time_fit({"wall_s": flat, "cpu_s": cpu}) is flat


def test_a_flat_wall_time_gives_way_to_a_cpu_time_that_surely_grows() -> None:
    """C stpcpy under load: runs of 1–5 ms of CPU waited up to 70 ms, wall settled "1";
    CPU time read √n … n log n (k = 0.87 [0.44, 1.30]). Wall time holds CPU time, so
    its "1" only says waiting hid the growth."""
    flat = _fit("wall_s", "1", k=0.0, ci=(0.0, 0.0))
    grows = _fit("cpu_s", "sqrt n", "n log n", 0.87, (0.44, 1.30))
    assert time_fit({"wall_s": flat, "cpu_s": grows}) is grows
    settled = _fit("cpu_s", "n", k=1.0, ci=(0.9, 1.1))
    assert time_fit({"wall_s": flat, "cpu_s": settled}) is settled


def test_a_flat_wall_time_stays_beside_a_cpu_time_that_may_not_grow() -> None:
    """A CPU bracket reaching down to "1", or a k interval near 0, is no evidence against
    wall time's "1" (a program that mostly sleeps: its CPU time may grow unseen)."""
    flat = _fit("wall_s", "1", k=0.0, ci=(0.0, 0.0))
    for cpu in (_fit("cpu_s", "1", "n", 0.6, (0.0, 1.2)),
                _fit("cpu_s", "log n", "n", 0.5, (0.1, 1.0))):
        assert time_fit({"wall_s": flat, "cpu_s": cpu}) is flat


def test_a_settled_flat_cpu_time_leads_a_wall_bracket_that_saw_no_rise() -> None:
    """The `constant` workload (a 1 ms program) under busy: wall time "1 … n³" because its
    spread could hide a log n term (a run waits up to 70 ms for a CPU); CPU time "1"."""
    from dataclasses import replace

    from quadscope.model import Doubt

    cpu = _fit("cpu_s", "1", k=0.0, ci=(0.0, 0.0))
    wall = replace(_fit("wall_s", "1", "n^3", 0.0, (0.0, 4.0)),
                   doubts=(Doubt("hidden", "1", "n^3"),))
    assert time_fit({"wall_s": wall, "cpu_s": cpu}) is cpu
    rising = replace(wall, doubts=(Doubt("hidden", "1", "n^3"), Doubt("rising")))
    assert time_fit({"wall_s": rising, "cpu_s": cpu}) is rising  # it sleeps: wall time rises
    from_n = replace(_fit("wall_s", "n", "n^3", 1.0, (0.5, 2.5)),
                     doubts=(Doubt("hidden", "n", "n^3"),))
    assert time_fit({"wall_s": from_n, "cpu_s": cpu}) is from_n
