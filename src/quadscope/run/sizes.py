"""Parse `--sizes` specs into a sorted tuple of distinct integer sizes.

Contract: `parse_sizes(spec)` accepts
  `100,200,400`    a list;
  `1e3..1e6`       geometric, doubling from the start, and the end itself:
                   1000, 2000, ..., 512000, 1000000 (the last step is shorter
                   when the end is not a power-of-two multiple of the start);
  `1e3..1e6*4`     geometric with factor 4, the end included the same way;
  `0..1000+100`    linear with step 100 (the end when a step lands on it).
Sizes are integers from 0 to MAX_SIZE, 2^63 - 1 (`1e3` is fine, `2.5` is
not), read exactly (decimal, never through a float); two that a double cannot
tell apart (past 2^53) are refused. A number is written with the ASCII digits
0-9 alone (`plain_decimal`): Python's Decimal and int also take `1_000` and
other scripts' digits (`１０`, `٣`), which once swept as 1000, 10 and 3; those,
and an empty item of a list (`1,,2`, `1,2,`), are refused naming the item. A spec that does not parse, yields
fewer than MIN_SIZES or more than MAX_SIZES distinct sizes, raises
`SizesError` with the reason: four sizes is the least that can tell one class
from another. `parse_size(text, option)` reads one size in the same notation
(for `--start`, `--predict`). `given_sizes(values, where)` is the same check for
sizes handed over as Python numbers (the API's and the pytest plugin's `sizes=`):
whole numbers (`1e3` as a float is fine) sorted and made distinct.
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
import unicodedata
from collections.abc import Iterable
from decimal import Decimal

from quadscope.errors import SizesError
from quadscope.textsafe import shorten, visible

MIN_SIZES = 4
MAX_SIZES = 10_000
# A size is passed to the program as an exact integer and stored in a 64-bit
# column, so 2^63 - 1 is the largest. Fits read sizes as doubles, exact only up to
# 2^53: past it two sizes can become one number, so those are refused
# (`check_distinct`), and adaptive mode, which picks sizes itself, grows n no further
# than MAX_EXACT_SIZE.
MAX_SIZE = 2**63 - 1
MAX_EXACT_SIZE = 2**53

_RANGE = re.compile(r"^\s*([^.\s]+(?:\.\d+)?)\s*\.\.\s*([^*+\s]+)\s*(?:([*+])\s*(\S+))?\s*$")


# A number as quadscope reads one: ASCII digits, an optional fraction and exponent.
_PLAIN = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:inf|infinity|s?nan)", re.IGNORECASE)
_BLANK = " \t"  # the spaces around an item that are ignored (no other: U+3000 is an item's)


def plain_decimal(text: str) -> Decimal | None:
    """`text` (spaces and tabs around it ignored) as a Decimal when it is a number written
    with ASCII digits (`1000`, `1e3`, `2.5`), else None: `Decimal` alone also reads
    `1_000` and every script's digits."""
    body = text.strip(_BLANK)
    return Decimal(body) if _PLAIN.fullmatch(body) else None


def _why_not(text: str) -> str:
    """What makes `text` no number, for the sentence refusing it."""
    odd = next((ch for ch in text.strip(_BLANK) if not ch.isascii()), None)
    if odd is not None:
        name = unicodedata.name(odd, "")
        return (f"it holds U+{ord(odd):04X}{f' ({name})' if name else ''}: write sizes with "
                "the ASCII digits 0-9")
    if "_" in text:
        return "write sizes without separators, e.g. 1000 or 1e3"
    return "sizes are written like 1000 or 1e3"


def _number(text: str, where: str) -> Decimal:
    if _NOT_FINITE.fullmatch(text.strip(_BLANK)):
        raise SizesError(f"{where}: '{visible(text)}' is not a finite number")
    value = plain_decimal(text)
    if value is None:
        shown = visible(text.strip(_BLANK)) if text.strip(_BLANK) else "(nothing)"
        raise SizesError(f"{where}: '{shown}' is not a number; {_why_not(text)}")
    return value


def _integer(text: str, where: str) -> int:
    value = _number(text, where)
    if value < 0:
        raise SizesError(f"{where}: {text!r} is negative; sizes start at 0")
    if value > MAX_SIZE:
        raise SizesError(f"{where}: {text!r} is past 2^63 - 1 ({MAX_SIZE}), the largest size "
                         "a program's argument and the store both hold exactly; use smaller sizes")
    if value != value.to_integral_value():
        raise SizesError(f"{where}: {text!r} is not an integer; sizes are whole numbers")
    return int(value)


def check_distinct(sizes: tuple[int, ...], where: str) -> None:
    """SizesError when two distinct sizes are one number as a double (both past 2^53).

    The fit reads sizes as doubles; two sizes it cannot tell apart would pool their runs
    under one x and the sweep would seem to have fewer sizes than it measured.
    """
    for a, b in itertools.pairwise(sizes):
        if float(a) == float(b):
            raise SizesError(f"{where}: sizes {a} and {b} are the same number to a fit, "
                             "which reads sizes as doubles (exact only to 2^53); space them "
                             "further apart")


def given_sizes(values: object, where: str, least: int = 1) -> tuple[int, ...]:
    """`values` (whole numbers) sorted and distinct, at least `least` of them (the API has
    always taken fewer than --sizes' MIN_SIZES and let the fit say what it can); `SizesError`
    says why not."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise SizesError(f"{where} must be a list of whole numbers such as [1000, 2000, 4000, "
                         f"8000], not {type(values).__name__} {shorten(repr(values), 60)}")
    sizes = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy's too
            raise SizesError(f"{where}: {shorten(repr(value), 60)} is not a whole number")
        exact = int(value) if isinstance(value, numbers.Integral) else float(value)
        sizes.append(_integer(repr(exact), where))
    distinct = tuple(sorted(set(sizes)))
    check_distinct(distinct, where)
    if not distinct:
        raise SizesError(f"{where} is empty: give the sizes to sweep, e.g. [1000, 2000, 4000, "
                         "8000]")
    if len(distinct) < least:
        raise SizesError(f"{where} gives {len(distinct)} distinct size(s) {list(distinct)}; at "
                         f"least {least} are needed to tell one growth class from another")
    return distinct


def parse_size(text: str, option: str) -> int:
    """One size for `option` (`--start 1e4`), in the notation of --sizes."""
    return _integer(text, option)


def _geometric(start: int, end: int, factor: float, spec: str) -> list[int]:
    where = f"--sizes {spec!r}"
    if start <= 0:
        raise SizesError(f"{where}: a geometric range must start above 0")
    if not math.isfinite(factor) or factor <= 1:
        raise SizesError(f"{where}: the factor after '*' must be a number greater than 1")
    if math.log(end / start) / math.log(factor) + 1 > MAX_SIZES:
        raise SizesError(f"{where}: more than {MAX_SIZES} sizes; use a larger factor")
    out: list[int] = []
    x = float(start)
    while x <= end * (1 + 1e-9):
        out.append(min(round(x), end))
        x *= factor
    if out[-1] < end:
        out.append(end)  # the end asked for is measured, one shorter step away
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
    where = f"--sizes {spec!r}"
    if match:
        start = _integer(match.group(1), where)
        end = _integer(match.group(2), where)
        if end < start:
            raise SizesError(f"--sizes {spec!r}: the range ends ({end}) before it starts ({start})")
        op, arg = match.group(3), match.group(4)
        if op == "+":
            sizes = _linear(start, end, _integer(arg, where), spec)
        else:
            factor = float(_number(arg, where)) if op == "*" else 2.0
            sizes = _geometric(start, end, factor, spec)
    else:
        parts = text.split(",")
        if len(parts) > MAX_SIZES:
            raise SizesError(f"{where}: more than {MAX_SIZES} sizes")
        empty = next((i for i, part in enumerate(parts, 1) if not part.strip(_BLANK)), None)
        if empty is not None:  # "1,,2" once read as 1,2: a size the user meant may be lost
            raise SizesError(f"{where}: item {empty} of the list is empty; give one size "
                             "between each pair of commas, e.g. 100,200,400,800")
        sizes = [_integer(part, where) for part in parts]
    distinct = tuple(sorted(set(sizes)))
    check_distinct(distinct, where)
    if len(distinct) < MIN_SIZES:
        raise SizesError(
            f"--sizes {spec!r} gives {len(distinct)} distinct size(s) {list(distinct)}; "
            f"at least {MIN_SIZES} are needed to tell one growth class from another"
        )
    return distinct
