"""The functions bench/gate_stability.py gates: module-level, so a child Python can count them."""

from __future__ import annotations


def make_items(n: int) -> list[int]:
    """n items, every value twice (a dedup keeps half), in a scattered order."""
    return [(i * 7919) % n // 2 for i in range(n)]


def dedup_set(items: list[int]) -> list[int]:
    """Linear: membership in a hash set."""
    seen: set[int] = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def dedup_list(items: list[int]) -> list[int]:
    """Quadratic: membership in the list kept so far."""
    out: list[int] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out
