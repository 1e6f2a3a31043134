"""Time, behind a protocol so that scheduling logic can be tested exactly.

Contract: `Clock` has `monotonic()` (for durations), `time()` (unix time, for
records only) and `sleep(s)`. `SystemClock` is the real thing; `FakeClock`
starts at `start` for both readings and moves only when told (`advance`) or
when something sleeps on it, so tests assert exact times.
"""

from __future__ import annotations

import time as _time
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def time(self) -> float: ...

    def sleep(self, s: float) -> None: ...


class SystemClock:
    """The machine's clocks."""

    def monotonic(self) -> float:
        return _time.monotonic()

    def time(self) -> float:
        return _time.time()

    def sleep(self, s: float) -> None:
        _time.sleep(s)


class FakeClock:
    """A clock that moves only by `advance(s)` or `sleep(s)`; `time()` moves with it."""

    __slots__ = ("_now", "_start")

    def __init__(self, start: float = 0.0) -> None:
        self._start = start
        self._now = start

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._now

    def sleep(self, s: float) -> None:
        self.advance(s)

    def advance(self, s: float) -> None:
        if s < 0:
            raise ValueError(f"a clock cannot go back ({s} s)")
        self._now += s
