"""Several size parameters: `--sizes NAME=SPEC` read, checked against the command, substituted.

Contract: `parse_axes(items)` reads the values of every `--sizes` option: a
plain SPEC ("1e3..1e5", the notation of `run/sizes.py`) is the axis "n", as
it has always been; `NAME=SPEC` names the axis (an identifier: letters,
digits and _, not starting with a digit). It returns a tuple of `Axis`
(run/design.py) in the order given, or raises `SizesError` with one sentence
for a duplicate axis or a bad name. `is_multi(axes)` is whether they make a
sweep over several sizes (two or more axes); one axis named "n" is today's
sweep. `check_placeholders(axes, commands)` raises `UsageError` when an axis
is not used in any command or a command holds a `{name}` placeholder no axis
gives. `fill(command, values)` replaces each `{name}` in every argument
(never re-split). `point_axes(names, point)` is the (name, size) pairs a run
stores beside its size_n (the first axis). `parse_starts(items)` reads the
values of every `--start`: () for one plain N (or none: one-size adaptive
mode's), else each `NAME=N` as (name, size) in the order given, two or more,
for adaptive mode over several sizes (`run/multiadaptive.py`); `SizesError`
for a mix of plain and named values, a duplicate, a bad name or a bad number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from quadscope.errors import SizesError, UsageError
from quadscope.run.design import Axis
from quadscope.run.sizes import parse_size, parse_sizes

_NAMED = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_AXIS = "n"
RESERVED = ("i",)  # accumulate mode's launch index


def parse_axes(items: Sequence[str]) -> tuple[Axis, ...]:
    """Each `--sizes` value as an axis, in the order given (see the module docstring)."""
    axes: list[Axis] = []
    for item in items:
        named = _NAMED.match(item)
        if named is None and "=" in item:
            raise SizesError(f"--sizes {item!r}: an axis name is a word of letters, digits and _, "
                             "e.g. --sizes rows=1e3..1e5")
        name, spec = (named.group(1), named.group(2)) if named else (DEFAULT_AXIS, item)
        if named and "=" in spec:  # once "'8,m=1..8' is not a number"
            raise SizesError(f"--sizes {item!r} names several axes in one value; give each "
                             "axis its own --sizes, e.g. --sizes n=1e3..1e5 --sizes m=10..1000")
        if name in RESERVED:
            raise SizesError(f"--sizes {item!r}: {{{name}}} is the launch index of --accumulate; "
                             "name the axis otherwise")
        if any(a.name == name for a in axes):
            raise SizesError(f"--sizes names the axis {name!r} twice; give each axis once, "
                             "e.g. --sizes n=1e3..1e5 --sizes m=10..1000")
        axes.append(Axis(name, parse_sizes(spec)))
    return tuple(axes)


def is_multi(axes: Sequence[Axis]) -> bool:
    return len(axes) > 1


def placeholders(command: Iterable[str]) -> set[str]:
    return {m.group(1) for arg in command for m in _PLACEHOLDER.finditer(arg)}


def check_placeholders(axes: Sequence[Axis], commands: Sequence[Sequence[str]]) -> None:
    """UsageError when an axis is unused or a placeholder has no sizes (module docstring)."""
    names = [a.name for a in axes]
    for cmd in commands:
        used = placeholders(cmd)
        missing = [n for n in names if n not in used]
        if missing:
            raise UsageError(f"--sizes gives {', '.join(missing)} but `{' '.join(cmd)}` has no "
                             f"{', '.join('{' + n + '}' for n in missing)}: put each axis where "
                             "its size goes, or drop its --sizes")
        extra = sorted(used - set(names) - set(RESERVED))
        if extra:
            raise UsageError(f"`{' '.join(cmd)}` holds {', '.join('{' + e + '}' for e in extra)} "
                             f"but no --sizes gives it: add --sizes {extra[0]}=SPEC, e.g. "
                             f"--sizes {extra[0]}=10..1000")


def fill(command: Sequence[str], values: Mapping[str, int]) -> list[str]:
    """Each `{name}` in each argument replaced by its size (unknown names left as they are)."""
    def one(arg: str) -> str:
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values
                                else m.group(0), arg)
    return [one(a) for a in command]


def point_axes(names: Sequence[str], point: Sequence[int]) -> tuple[tuple[str, int], ...]:
    """A point's sizes beyond the first axis, as a run stores them."""
    return tuple(zip(names[1:], point[1:], strict=True))


def parse_starts(items: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """Each `--start NAME=N` as (name, size), or () for one size (module docstring)."""
    named = [_NAMED.match(item) for item in items]
    if all(m is None for m in named) and not any("=" in i for i in items):
        if len(items) > 1:
            raise SizesError(f"--start is given {len(items)} times; one size starts at one N, "
                             "several sizes at one --start NAME=N each")
        return ()
    starts: list[tuple[str, int]] = []
    for item, m in zip(items, named, strict=True):
        if m is None:
            raise SizesError(f"--start {item!r}: adaptive mode over several sizes starts each "
                             "axis by name, e.g. --start rows=100 --start cols=4")
        name = m.group(1)
        if name in RESERVED or any(n == name for n, _ in starts):
            raise SizesError(f"--start names the axis {name!r} twice or as the launch index; "
                             "give each axis once, e.g. --start rows=100 --start cols=4")
        starts.append((name, parse_size(m.group(2).strip(), f"--start {name}=")))
    if len(starts) == 1:
        if starts[0][0] != DEFAULT_AXIS:
            raise SizesError(f"--start {items[0]!r} names one axis; adaptive mode over one size "
                             f"grows {{n}} from --start {starts[0][1]}, over several it needs a "
                             "--start NAME=N for each")
        return ()
    return tuple(starts)
