"""What a report shows beside the fits: the profile's culprits and flame graph, the doctor's probes.

Contract: pure functions from the typed results an `Analysis` carries (its
`profile`, an `Attribution`; its `doctor`, a `DoctorReport` or one
`ProbeResult`; and `probe_series`, each probe's plot lines) to table rows and
plot records (`render.plotmodel`), plus the palette and number rounding both
share. `sanitise_svg` rebuilds an SVG from a whitelist so it can be inlined
into the HTML page. A probe is plotted when `probe_series` holds lines for it.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quadscope.analyse.change import class_label
from quadscope.classes import INCONCLUSIVE
from quadscope.doctor.records import DoctorReport, ProbeResult, ProbeSeries
from quadscope.profile.records import Attribution, Culprit
from quadscope.profile.stacks import UNKNOWN
from quadscope.render.plotmodel import Layer, Line, Plot, Points

# One palette for every renderer: the HTML CSS/JS and matplotlib read these.
PALETTE: dict[str, str] = {
    "A": "#2563eb",  # blue
    "B": "#ea580c",  # orange
    "fail": "#6b7280",  # grey crosses: failed runs, drawn but never fitted
    "ref": "#111827",  # reference lines: y = n, ratio 1, slopes
    "ratio": "#7c3aed",  # B/A
    "cross": "#16a34a",  # crossover
    "probe": "#0f766e",  # doctor probe series
}

def rnd(v: Any) -> Any:
    """6 significant digits, ints as ints, NaN/inf as None: compact and JSON-safe."""
    if v is None:
        return None
    f = float(v)
    if not math.isfinite(f):
        return None
    if f.is_integer() and abs(f) < 1e15:
        return int(f)
    return float(f"{f:.6g}")


def rnd_list(vs: Any) -> list[Any]:
    return [rnd(v) for v in vs]


def rnd_tuple(vs: Any) -> tuple[Any, ...]:
    """`rnd_list` as a tuple, for the frozen plot records (`plotmodel`)."""
    return tuple(rnd(v) for v in vs)


_SVG_NS = "http://www.w3.org/2000/svg"


_SVG_ELEMENTS = frozenset({
    "svg", "g", "rect", "text", "tspan", "title", "desc", "line", "polyline", "polygon",
    "path", "circle", "ellipse", "defs", "linearGradient", "radialGradient", "stop",
    "clipPath", "symbol", "use",
})
_SVG_ATTRS = frozenset({
    "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "rx", "ry", "width", "height", "d",
    "points", "fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity",
    "stroke-dasharray", "opacity", "transform", "viewBox", "preserveAspectRatio",
    "font-family", "font-size", "font-weight", "text-anchor", "dominant-baseline", "class",
    "id", "offset", "stop-color", "stop-opacity", "clip-path", "gradientUnits",
    "gradientTransform", "dx", "dy", "version", "style",
})


# Anything that could fetch or run: script URLs, CSS expressions, url() not to a local #id.
_UNSAFE_VALUE = re.compile(r"javascript:|expression\(|url\(\s*['\"]?\s*(?!#)", re.IGNORECASE)


def sanitise_svg(text: str) -> str | None:
    """Whitelist-rebuild an SVG: only drawing elements and attributes survive.

    Scripts, event handlers, `<foreignObject>`, `<style>`, external references and
    `javascript:` URLs are dropped; symbol names stay as text, which ElementTree
    escapes when it serialises. Returns None when the text is not an SVG.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    if _local(root.tag) != "svg":
        return None

    def clean(node: ET.Element) -> ET.Element | None:
        tag = _local(node.tag)
        if tag not in _SVG_ELEMENTS:
            return None
        out = ET.Element(tag)
        for k, val in node.attrib.items():
            name = _local(k)
            if name == "href" and val.startswith("#"):
                out.set("href", val)
            elif name in _SVG_ATTRS and not _UNSAFE_VALUE.search(val):
                out.set(name, val)
        out.text, out.tail = node.text, node.tail
        for child in node:
            c = clean(child)
            if c is not None:
                out.append(c)
            elif child.tail:
                # keep the text that followed a dropped element
                last = out[-1] if len(out) else None
                if last is not None:
                    last.tail = (last.tail or "") + child.tail
                else:
                    out.text = (out.text or "") + child.tail
        return out

    cleaned = clean(root)
    assert cleaned is not None
    cleaned.set("xmlns", _SVG_NS)
    return ET.tostring(cleaned, encoding="unicode", method="xml")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


# Culprit fields shown, in order, with their headings.
_CULPRIT_HEADINGS: tuple[str, ...] = (
    "symbol", "object", "class", "k [95%]", "share at max n", "share of growth",
    "superlinear share", "call path",
)


def culprit_class(c: Culprit) -> str:
    """A culprit's class cell in every format: "n²", or "?" where its class is not settled
    (as the metrics' tables mark one), never the word "inconclusive" beside its k."""
    return "?" if c.self_class == INCONCLUSIVE else class_label(c.self_class)


def _culprit_row(c: Culprit) -> dict[str, str]:
    k = "—" if c.self_exponent is None else f"{c.self_exponent + 0.0:.2f}".replace("-0.00", "0.00")
    if c.self_exponent is not None and c.self_exponent_ci is not None:
        k += f" [{c.self_exponent_ci[0]:.2f}, {c.self_exponent_ci[1]:.2f}]"
    path = list(c.call_path)
    symbol = c.call_path[-1] if c.symbol == UNKNOWN and c.call_path else c.symbol  # [libc.so.6]
    # The object's file name: its folder pushed the call path past a 1400 px screen.
    cells = (symbol, os.path.basename(c.dso) or c.dso, culprit_class(c), k,
             f"{c.share_at_max:.1%}", f"{c.growth_share:.1%}", f"{c.superlinear_share:.1%}",
             " → ".join((["…"] if len(path) > 5 else []) + path[-5:]))
    return dict(zip(_CULPRIT_HEADINGS, cells, strict=True))


def culprits_table(profile: Attribution | None) -> list[dict[str, str]]:
    return [] if profile is None else [_culprit_row(c) for c in profile.culprits]


def flame_svg(profile: Attribution | None) -> str | None:
    """The profile's differential flame graph, sanitised for inlining; None when there is none."""
    return sanitise_svg(profile.flame_svg) if profile is not None and profile.flame_svg else None


def flame_tree(profile: Attribution | None) -> dict[str, Any] | None:
    """The profile's call tree for the interactive flame graph, tall chains collapsed; or None."""
    if profile is None or profile.flame_tree is None:
        return None
    from quadscope.profile.flametree import collapse  # pure, but only profiles need it

    return collapse(profile.flame_tree).to_dict()


@dataclass(frozen=True, slots=True)
class DoctorRow:
    """One probe in the report's doctor table: its cells under the table's headings, its plot."""

    name: str
    verdict: str
    cells: Mapping[str, str]
    plot: Plot | None


def doctor_rows(
    doctor: DoctorReport | ProbeResult | None, series: Mapping[str, Sequence[ProbeSeries]]
) -> list[DoctorRow]:
    """One row per probe (cells under the table's headings) and its plot, or None."""
    if doctor is None:
        return []
    probes = doctor.results if isinstance(doctor, DoctorReport) else (doctor,)
    out = []
    for i, probe in enumerate(probes):
        cells = {"measures": probe.measured, "class": probe.cls, "cost": probe.cost,
                 "verdict": probe.verdict, "finding": probe.finding}
        lines = series.get(probe.probe)
        out.append(DoctorRow(probe.probe, probe.verdict, cells,
                             _probe_plot(i, probe.probe, lines) if lines else None))
    return out


_SERIES_COLORS = ("probe", "A", "B", "ratio", "cross", "fail")


def _probe_plot(i: int, name: str, lines: Sequence[ProbeSeries]) -> Plot:
    """One small plot of a probe's lines: the median per size of each of its sweeps."""
    layers: list[Layer] = []
    for j, ser in enumerate(lines):
        xs, ys = [p[0] for p in ser.points], [p[1] for p in ser.points]
        color = PALETTE[_SERIES_COLORS[j % len(_SERIES_COLORS)]]
        layers.append(Line(rnd_tuple(xs), rnd_tuple(ys), color, ser.label))
        layers.append(Points(color, "", f"median {ser.metric}", y=rnd_tuple(ys), x=rnd_tuple(xs)))
    first = lines[0].to_dict()
    return Plot(f"probe-{i}", "probe", name, name, first["x_label"], first["y_label"], False,
                False, "count", "s" if lines[0].metric.endswith("_s") else "", tuple(layers),
                small=True)


__all__ = ["PALETTE", "DoctorRow", "culprits_table", "doctor_rows", "flame_svg", "flame_tree", "rnd",
           "rnd_list", "rnd_tuple", "sanitise_svg"]
