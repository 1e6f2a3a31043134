"""The functions bench/pyfunc.py sweeps: module-level, so pyperf's workers can import them."""

from __future__ import annotations

import bisect


def make_list(n: int) -> list[int]:
    return list(range(n))


def bisect_middle(xs: list[int]) -> int:
    """A ~1 µs call whose cost grows as log n."""
    return bisect.bisect(xs, xs[len(xs) // 2])


def index_middle(xs: list[int]) -> int:
    """list.index halfway along: grows as n."""
    return xs.index(xs[len(xs) // 2])
