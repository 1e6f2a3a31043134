"""The plot model HTML and PNG share: a plot and its layers as typed, frozen records.

Contract: records only, no drawing and no statistics. A `Plot` has an `id`,
a `kind` (cost, loglog, linear, resid, ratio, probe), title and axis labels,
whether each axis is logarithmic, each axis's unit ("s", "bytes", "count",
""; both renderers write ticks in it) and its `layers`, drawn in order:

- `Points`: tied to runs (`rows` names a row set of `ReportData`, each point's
  x is its run's n; `y` is a metric whose values column to read, or one value
  per row, None to skip) or free (`x` and `y`). `marker` "o", "x" or "v";
  `floor` marks runs that cannot sit on a log axis (y ≤ a): `with_floors`
  puts them on the panel's floor.
- `Line` (x, y; `dash`, `width`), `Area` (a band: x, lo, hi; `floor_lo`: a
  lower edge below the axis, None there, goes down to the floor), `HLine`,
  `VLine`.

`to_dict()` gives the JSON the HTML page embeds (its script reads these
keys): a layer's `type` first, then its fields, an optional field (None or
False) left out. Values are rounded by the caller (`extras.rnd_list`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

Values = tuple[Any, ...]  # numbers, None where a point cannot be drawn


def _plain(record: Any, optional: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if f.name in optional and (value is None or value is False):
            continue
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True, slots=True)
class Points:
    color: str
    label: str
    name: str
    y: str | Values  # a metric (its values column), or values aligned with rows or x
    rows: str | None = None
    x: Values | None = None
    marker: str = "o"
    metric: str | None = None
    floor: bool = False
    type: ClassVar[str] = "points"
    _optional: ClassVar[frozenset[str]] = frozenset({"rows", "x", "metric", "floor"})

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_plain(self, self._optional)}


@dataclass(frozen=True, slots=True)
class Line:
    x: Values
    y: Values
    color: str
    label: str
    dash: bool = False
    width: float | None = None
    type: ClassVar[str] = "line"
    _optional: ClassVar[frozenset[str]] = frozenset({"width"})

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_plain(self, self._optional)}


@dataclass(frozen=True, slots=True)
class Area:
    x: Values
    lo: Values
    hi: Values
    color: str
    label: str
    floor_lo: bool = False
    type: ClassVar[str] = "band"
    _optional: ClassVar[frozenset[str]] = frozenset({"floor_lo"})

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_plain(self, self._optional)}


@dataclass(frozen=True, slots=True)
class HLine:
    y: float
    color: str
    label: str
    dash: bool = False
    type: ClassVar[str] = "hline"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_plain(self, frozenset())}


@dataclass(frozen=True, slots=True)
class VLine:
    x: float
    color: str
    label: str
    dash: bool = False
    type: ClassVar[str] = "vline"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_plain(self, frozenset())}


Layer = Points | Line | Area | HLine | VLine


@dataclass(frozen=True, slots=True)
class Plot:
    id: str
    kind: str  # cost | loglog | linear | resid | ratio | probe
    metric: str
    title: str
    xlabel: str
    ylabel: str
    xlog: bool
    ylog: bool
    xunit: str
    yunit: str
    layers: tuple[Layer, ...]
    small: bool = False  # drawn small, without a legend

    def to_dict(self) -> dict[str, Any]:
        return {**_plain(self, frozenset({"small"})),
                "layers": [layer.to_dict() for layer in self.layers]}


FLOOR_FACTOR = 3.0  # the floor sits this factor below the smallest drawable value


def with_floors(plot: Plot) -> Plot:
    """`plot` with its floor points a factor below the smallest positive value drawn in it,
    and each band whose lower edge falls below the axis reaching down to that floor."""
    if not any((isinstance(lay, Points) and lay.floor) or (isinstance(lay, Area) and lay.floor_lo)
               for lay in plot.layers):
        return plot
    low = math.inf
    for layer in plot.layers:
        if isinstance(layer, Points) and layer.floor:
            continue
        keys: Sequence[str] = ("hi",) if isinstance(layer, Area) and layer.floor_lo else ("y", "lo")
        for key in keys:
            ys = getattr(layer, key, None)
            if isinstance(ys, tuple):
                low = min([low, *(y for y in ys if isinstance(y, int | float) and y > 0)])
    floor = float(f"{(low if math.isfinite(low) else 1.0) / FLOOR_FACTOR:.6g}")

    def lowered(layer: Layer) -> Layer:
        if isinstance(layer, Area) and layer.floor_lo:
            return replace(layer, lo=tuple(floor if y is None else y for y in layer.lo))
        if isinstance(layer, Points) and layer.floor:
            return replace(layer, y=(floor,) * len(layer.x or ()))
        return layer

    return replace(plot, layers=tuple(lowered(lay) for lay in plot.layers))


__all__ = ["FLOOR_FACTOR", "Area", "HLine", "Layer", "Line", "Plot", "Points", "VLine", "Values",
           "with_floors"]
