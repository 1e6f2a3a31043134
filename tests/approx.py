"""Recorded outputs compared across CPUs and library releases, within a stated tolerance.

Contract: `same(got, want)` compares two JSON-shaped values and `same_text(got,
want)` two texts, raising AssertionError naming the first place they differ.

- Structure, keys, booleans, None and integers must be equal.
- A float may differ by `REL_TOL` of its size (or `ABS_TOL` near zero). A
  different CPU, BLAS code path or numpy/scipy release moves a fitted float in
  its ninth digit or so (seen on a fresh machine: 1.1344942687278894 against
  1.1344942733779249, 4e-9 apart); 1e-6 is far above that and far below what
  any change of method moves.
- In text (and in strings inside JSON), every run of words and punctuation
  must be equal, integers printed without a decimal point must be equal, and a
  number printed with a decimal point or an exponent may differ by one unit in
  its last printed digit (or `REL_TOL`): the same 4e-9 move can flip a rounding.
"""

from __future__ import annotations

import math
import re
from typing import Any

REL_TOL = 1e-6
ABS_TOL = 1e-12

_NUMBER = re.compile(r"\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+")


def _close(got: float, want: float, ulp: float = 0.0) -> bool:
    return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL) or abs(got - want) <= ulp * 1.000001


def _ulp(token: str) -> float:
    """One unit in the last printed digit of a decimal token (0 for a plain integer: exact)."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa and not exponent:
        return 0.0
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def _context(text: str, at: int) -> str:
    return repr(text[max(0, at - 60):at + 60])


def same_text(got: str, want: str, where: str = "text") -> None:
    """`got` equals `want` but for numbers within the module's tolerance."""
    got_parts, want_parts = _NUMBER.split(got), _NUMBER.split(want)
    got_nums, want_nums = _NUMBER.findall(got), _NUMBER.findall(want)
    at = 0
    for i, (g, w) in enumerate(zip(got_parts, want_parts, strict=False)):
        if g != w:
            raise AssertionError(f"{where}: words differ near {_context(got, at)}\n"
                                 f"    recorded: {_context(want, want.find(w))}")
        at += len(g)
        if i < min(len(got_nums), len(want_nums)):
            gn, wn = got_nums[i], want_nums[i]
            ulp = max(_ulp(gn), _ulp(wn))
            if gn != wn and (ulp == 0.0 or not _close(float(gn), float(wn), ulp)):
                raise AssertionError(f"{where}: {gn} != recorded {wn} near {_context(got, at)}")
            at += len(gn)
    if len(got_parts) != len(want_parts) or len(got_nums) != len(want_nums):
        raise AssertionError(f"{where}: the texts have different shapes\n"
                             f"--- got\n{got}\n--- recorded\n{want}")


def same(got: Any, want: Any, where: str = "", *, extra_keys: bool = False) -> None:
    """`got` equals `want` (JSON-shaped) but for floats and numbers in strings within tolerance;
    with `extra_keys`, `got`'s objects may hold keys `want`'s do not (a record that grew)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is not an object"
        missing, extra = set(want) - set(got), set(got) - set(want)
        assert not missing and (extra_keys or not extra), f"{where}: keys differ: {missing or extra}"
        for k, v in want.items():
            same(got[k], v, f"{where}.{k}", extra_keys=extra_keys)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: lengths differ"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            same(g, w, f"{where}[{i}]", extra_keys=extra_keys)
    elif isinstance(want, str):
        assert isinstance(got, str), f"{where}: {got!r} is not a string"
        same_text(got, want, where)
    elif isinstance(want, float) and type(got) in (int, float):
        assert _close(float(got), want), f"{where}: {got!r} != recorded {want!r}"
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != recorded {want!r}"
