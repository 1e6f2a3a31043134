"""Parse `--sizes` specs into a sorted tuple of distinct integer sizes.

Contract: `parse_sizes(spec)` accepts
  `100,200,400`    a list;
  `1e3..1e6`       geometric, doubling, from the start up to the end inclusive;
  `1e3..1e6*4`     geometric with factor 4;
  `0..1000+100`    linear with step 100.
Sizes are non-negative integers (`1e3` is fine, `2.5` is not). A spec that does
not parse, or yields fewer than MIN_SIZES distinct sizes, raises `SizesError`
with the reason: four sizes is the least that can tell one class from another.
"""

from __future__ import annotations

import re

from quadscope.errors import SizesError

MIN_SIZES = 4
MAX_SIZES = 10_000

_RANGE = re.compile(r"^\s*([^.\s]+(?:\.\d+)?)\s*\.\.\s*([^*+\s]+)\s*(?:([*+])\s*(\S+))?\s*$")


def _integer(text: str, spec: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise SizesError(f"--sizes {spec!r}: {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise SizesError(f"--sizes {spec!r}: {text!r} is not a finite number")
    if value != int(value):
        raise SizesError(f"--sizes {spec!r}: {text!r} is not an integer; sizes are whole numbers")
    if value < 0:
        raise SizesError(f"--sizes {spec!r}: {text!r} is negative; sizes start at 0")
    return int(value)


def _geometric(start: int, end: int, factor: float, spec: str) -> list[int]:
    if start <= 0:
        raise SizesError(f"--sizes {spec!r}: a geometric range must start above 0")
    if factor <= 1:
        raise SizesError(f"--sizes {spec!r}: the factor after '*' must be greater than 1")
    out: list[int] = []
    x = float(start)
    while x <= end * (1 + 1e-9) and len(out) <= MAX_SIZES:
        out.append(round(x))
        x *= factor
    return out


def _linear(start: int, end: int, step: int, spec: str) -> list[int]:
    if step <= 0:
        raise SizesError(f"--sizes {spec!r}: the step after '+' must be positive")
    if (end - start) // step + 1 > MAX_SIZES:
        raise SizesError(f"--sizes {spec!r}: more than {MAX_SIZES} sizes; use a larger step")
    return list(range(start, end + 1, step))


def parse_sizes(spec: str) -> tuple[int, ...]:
    """The sizes a spec names, sorted and distinct; `SizesError` says why if it cannot."""
    text = spec.strip()
    if not text:
        raise SizesError("--sizes is empty: give a list like 100,200,400,800 or a range like 1e3..1e6")
    match = _RANGE.match(text)
    if ".." in text and match is None:
        raise SizesError(
            f"--sizes {spec!r} does not parse: ranges look like 1e3..1e6, 1e3..1e6*4 or 0..1000+100"
        )
    if match:
        start = _integer(match.group(1), spec)
        end = _integer(match.group(2), spec)
        if end < start:
            raise SizesError(f"--sizes {spec!r}: the range ends ({end}) before it starts ({start})")
        op, arg = match.group(3), match.group(4)
        if op == "+":
            sizes = _linear(start, end, _integer(arg, spec), spec)
        else:
            try:
                factor = float(arg) if op == "*" else 2.0
            except ValueError:
                raise SizesError(f"--sizes {spec!r}: factor {arg!r} is not a number") from None
            sizes = _geometric(start, end, factor, spec)
    else:
        sizes = [_integer(part, spec) for part in text.split(",") if part.strip()]
    distinct = tuple(sorted(set(sizes)))
    if len(distinct) < MIN_SIZES:
        raise SizesError(
            f"--sizes {spec!r} gives {len(distinct)} distinct size(s) {list(distinct)}; "
            f"at least {MIN_SIZES} are needed to tell one growth class from another"
        )
    return distinct
