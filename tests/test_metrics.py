"""Tests for quadscope.metrics (the registry) and the records and formatting that read it."""

from __future__ import annotations

import dataclasses

import pytest

from quadscope import metrics
from quadscope.model import MEASUREMENT_KEYS, METRICS, PERF_METRICS, Measurement, Run
from quadscope.units import fmt_value


def _m(**kw: float | int | None) -> Measurement:
    return Measurement({"wall_s": 1.5, **kw}, exit_code=0)


def test_registry_entries_are_consistent() -> None:
    """Names are unique; units known; derived iff inputs and derive; sources read by name."""
    assert len(set(metrics.NAMES)) == len(metrics.REGISTRY)
    for m in metrics.REGISTRY:
        assert m.unit in metrics.UNITS, m.name
        assert m.derived == (m.derive is not None) == bool(m.inputs), m.name
        assert all(i in metrics.RAW_NAMES for i in m.inputs), m.name
        assert m.derived or m.source == metrics.CLOCK or m.events, m.name
        assert m.name.endswith("_s") == (m.unit == "s"), m.name


def test_lookups() -> None:
    """get() raises a KeyError naming the known metrics; find() gives None; by_source keeps order."""
    assert metrics.get("max_rss_bytes").scale == 1024
    assert metrics.find("no_such") is None
    with pytest.raises(KeyError, match="unknown metric 'no_such'; known: wall_s, user_s"):
        metrics.get("no_such")
    assert tuple(m.name for m in metrics.by_source("perf")) == PERF_METRICS == (
        "instructions", "cycles", "page_faults", "context_switches")
    assert METRICS == metrics.NAMES
    assert sorted(metrics.RAW_NAMES + metrics.DERIVED_NAMES) == sorted(metrics.NAMES)


def test_only_wall_s_is_never_null() -> None:
    """Every metric but the clock's may be missing from a run."""
    assert [m.name for m in metrics.REGISTRY if not m.nullable] == ["wall_s"]


def test_fmt_value_follows_the_registry_then_the_suffix() -> None:
    """Registry metrics format by their unit; unknown names by their suffix; None is a dash."""
    assert fmt_value("user_s", 0.0042) == "4.2 ms"
    assert fmt_value("max_rss_bytes", 3 * 2**20) == "3 MiB"
    assert fmt_value("page_faults", 12000) == "12k"
    assert fmt_value("probe_s", 2.0) == "2 s"
    assert fmt_value("heap_bytes", 2048) == "2 KiB"
    assert fmt_value("widgets", 7) == "7"
    assert fmt_value("wall_s", None) == "—"


def test_measurement_keywords_and_attributes() -> None:
    """Keyword construction fills unnamed metrics with None and reads them back as attributes."""
    m = _m(user_s=0.5, instructions=10)
    assert (m.wall_s, m.user_s, m.instructions, m.cycles) == (1.5, 0.5, 10, None)
    assert m.value("user_s") == 0.5
    assert tuple(m.values) == metrics.RAW_NAMES
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = m.nonsense


def test_measurement_refuses_unknown_metrics_and_a_missing_wall_s() -> None:
    """A misspelt metric or a run without wall_s is a TypeError at construction."""
    with pytest.raises(TypeError, match="no raw metric wal_s"):
        _m(wal_s=1.0)
    with pytest.raises(TypeError, match="needs wall_s"):
        Measurement(user_s=1.0, exit_code=0)


def test_measurement_replace_and_equality() -> None:
    """dataclasses.replace changes values or the outcome; equal values compare (and hash) equal."""
    m = _m(user_s=0.5)
    r = dataclasses.replace(m, values={**m.values, "wall_s": 2.0}, timed_out=True)
    assert (r.wall_s, r.user_s, r.timed_out) == (2.0, 0.5, True)
    assert m == _m(user_s=0.5) and m != r
    assert hash(m) == hash(_m(user_s=0.5))


def test_measurement_dict_layout_and_round_trip() -> None:
    """to_dict keeps schema 1's order (rusage, outcome, perf); from_dict ignores unknown keys."""
    m = _m(user_s=0.5, page_faults=3)
    d = m.to_dict()
    assert tuple(d) == MEASUREMENT_KEYS
    assert MEASUREMENT_KEYS[8:11] == ("exit_code", "timed_out", "stderr_tail")
    assert Measurement.from_dict({**d, "future_metric": 9}) == m
    run = Run(1, 0, "A", 10, 0, False, 0.0, m)
    assert Run.from_dict(run.to_dict()) == run


def test_cpu_s_is_user_plus_sys_computed_never_stored() -> None:
    """cpu_s = user_s + sys_s, right after sys_s; None when an input is; absent from to_dict."""
    m = _m(user_s=0.5, sys_s=0.25)
    assert METRICS[METRICS.index("sys_s") + 1] == "cpu_s"
    assert (m.cpu_s, m.value("cpu_s")) == (0.75, 0.75)
    assert Run(1, 0, "A", 10, 0, False, 0.0, m).value("cpu_s") == 0.75
    assert _m(user_s=0.5).cpu_s is None
    assert "cpu_s" not in m.to_dict() and "cpu_s" not in m.values
    assert metrics.DERIVED_NAMES == ("cpu_s",) and not metrics.get("cpu_s").leads
