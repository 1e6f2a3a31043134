"""Tests for quadscope.measure.clock."""

from __future__ import annotations

import pytest

from quadscope.measure.clock import FakeClock, SystemClock


def test_fake_clock_starts_at_start() -> None:
    """Both readings of a new FakeClock equal its start."""
    c = FakeClock(start=100.0)
    assert (c.monotonic(), c.time()) == (100.0, 100.0)


def test_fake_clock_advance_and_sleep_move_both_readings() -> None:
    """advance(s) and sleep(s) each move monotonic() and time() by exactly s."""
    c = FakeClock()
    c.advance(1.5)
    c.sleep(0.25)
    assert (c.monotonic(), c.time()) == (1.75, 1.75)


def test_fake_clock_refuses_to_go_back() -> None:
    """A negative advance is a programming error, not a silent rewind."""
    c = FakeClock(start=5.0)
    with pytest.raises(ValueError):
        c.advance(-1.0)
    assert c.monotonic() == 5.0


def test_system_clock_monotonic_does_not_decrease() -> None:
    """Two successive SystemClock.monotonic() readings never decrease."""
    c = SystemClock()
    a = c.monotonic()
    assert c.monotonic() >= a
