"""What a report shows beside the fits: the profile's culprits and flame graph, the doctor's probes.

Contract: pure functions from `Analysis.extras` (the stored "profile" and
"doctor" blobs) to table rows and plot specs in `plotdata`'s format, plus the
palette and number rounding both share. `sanitise_svg` rebuilds an SVG from a
whitelist so it can be inlined into the HTML page. Shapes read: the profile
blob is `profile.attribute`'s dict (with `culprits`, a list of
`Culprit.to_dict()`, and a flame graph SVG string under `svg`, `flame_svg`,
`diff_svg` or any value that is an SVG); the doctor blob is either
`DoctorReport.to_dict()` (`probes`: `ProbeResult.to_dict()`s) or one
`ProbeResult.to_dict()`. A probe is plotted when it carries `plot_series`
([{"label", "points": [[x, y], ...]}], which `quadscope report` adds from the
probe's stored sweeps) or a series of its own (see `_series_of`).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

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


def find_svg(obj: Any, depth: int = 0) -> str | None:
    if isinstance(obj, str):
        s = obj.lstrip()
        return obj if s.startswith(("<svg", "<?xml")) and "<svg" in s else None
    if depth > 2:
        return None
    if isinstance(obj, Mapping):
        for key in ("diff_svg", "flame_svg", "flamegraph_svg", "svg"):
            if key in obj and (found := find_svg(obj[key], depth + 1)):
                return found
        for val in obj.values():
            if found := find_svg(val, depth + 1):
                return found
    return None


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list | tuple):
        return ", ".join(_cell(x) for x in v)
    if isinstance(v, Mapping):
        return ", ".join(f"{k}={_cell(x)}" for k, x in v.items())
    return "" if v is None else str(v)


# Culprit fields (profile.attribute.Culprit.to_dict) shown, in order, with their headings.
_CULPRIT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("symbol", "symbol"), ("dso", "object"), ("self_class", "class"),
    ("self_exponent", "k [95%]"), ("share_at_max", "share at max n"),
    ("growth_share", "share of growth"), ("superlinear_share", "superlinear share"),
    ("call_path", "call path"),
)


def _pct(v: Any) -> str:
    return f"{float(v):.1%}" if isinstance(v, int | float) else _cell(v)


def _culprit_row(row: Mapping[str, Any]) -> dict[str, str]:
    if not any(k in row for k, _ in _CULPRIT_COLUMNS):
        return {str(k): _cell(v) for k, v in row.items()}
    out: dict[str, str] = {}
    for key, head in _CULPRIT_COLUMNS:
        if key not in row:
            continue
        v = row[key]
        if key == "self_exponent":
            ci = row.get("self_exponent_ci")
            text = "—" if v is None else f"{float(v):.2f}"
            if v is not None and isinstance(ci, list | tuple) and len(ci) == 2:
                text += f" [{float(ci[0]):.2f}, {float(ci[1]):.2f}]"
            out[head] = text
        elif key.endswith("_share") or key == "share_at_max":
            out[head] = _pct(v)
        elif key == "call_path" and isinstance(v, list | tuple):
            shown = [str(x) for x in v]
            out[head] = " → ".join((["…"] if len(shown) > 5 else []) + shown[-5:])
        else:
            out[head] = _cell(v)
    return out


def culprits_table(extras: Mapping[str, Any]) -> list[dict[str, str]]:
    raw: Any = extras.get("culprits")
    prof = extras.get("profile")
    if raw is None and isinstance(prof, Mapping):
        raw = prof.get("culprits")
    if isinstance(raw, Mapping):
        raw = raw.get("culprits", raw.get("rows", []))
    if not isinstance(raw, list):
        return []
    return [_culprit_row(row) for row in raw if isinstance(row, Mapping)]


def _series_of(probe: Mapping[str, Any]) -> tuple[list[float], list[float]] | None:
    """A probe's plottable series: `points` [[x, y], ...], or `sizes`/`values`, or `x`/`y`,
    looked for on the probe, then in its `details`, then in `details["series"]`."""
    places: list[Mapping[str, Any]] = [probe]
    details = probe.get("details")
    if isinstance(details, Mapping):
        places.append(details)
        if isinstance(details.get("series"), Mapping):
            places.append(details["series"])
    for place in places:
        pts = place.get("points") or place.get("series")
        if isinstance(pts, list) and pts and all(
            isinstance(p, list | tuple) and len(p) >= 2 for p in pts
        ):
            try:
                return [float(p[0]) for p in pts], [float(p[1]) for p in pts]
            except (TypeError, ValueError):
                continue
        for xk, yk in (("sizes", "values"), ("x", "y"), ("sizes", "medians")):
            xs, ys = place.get(xk), place.get(yk)
            if isinstance(xs, list) and isinstance(ys, list) and len(xs) == len(ys) and xs:
                try:
                    return [float(x) for x in xs], [float(y) for y in ys]
                except (TypeError, ValueError):
                    continue
    return None


# ProbeResult.to_dict() fields shown, in order, with their headings.
_PROBE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("measured", "measures"), ("class", "class"), ("cost", "cost"), ("verdict", "verdict"),
    ("finding", "finding"),
)


def doctor_rows(extras: Mapping[str, Any]) -> list[dict[str, Any]]:
    blob: Any = extras.get("doctor")
    if isinstance(blob, Mapping) and "probe" in blob:  # one probe's own sweep
        blob = [blob]
    elif isinstance(blob, Mapping):
        blob = blob.get("probes", blob.get("results", []))
    if isinstance(blob, Mapping):
        blob = [{"probe": k, **v} if isinstance(v, Mapping) else {"probe": k, "finding": v}
                for k, v in blob.items()]
    if not isinstance(blob, list):
        return []
    out = []
    for i, probe in enumerate(p for p in blob if isinstance(p, Mapping)):
        name = str(probe.get("probe") or probe.get("name") or f"probe {i + 1}")
        cells = {head: _cell(probe.get(key)) for key, head in _PROBE_COLUMNS}
        if probe.get("advice"):
            cells["finding"] += " " + _cell(probe["advice"])
        entry: dict[str, Any] = {"name": name, "verdict": _cell(probe.get("verdict")),
                                 "cells": cells, "plot": None}
        many = probe.get("plot_series")
        if isinstance(many, list) and many:
            entry["plot"] = _probe_plot(i, name, probe, many)
            out.append(entry)
            continue
        series = _series_of(probe)
        if series:
            xs, ys = series
            details = probe.get("details")
            src: Mapping[str, Any] = details if isinstance(details, Mapping) else probe
            entry["plot"] = {
                "id": f"probe-{i}", "kind": "probe", "metric": name, "xlog": False,
                "ylog": False, "small": True, "title": name,
                "xlabel": str(src.get("x_label") or "n"),
                "ylabel": str(src.get("y_label") or probe.get("measured") or "value"),
                "layers": [
                    {"type": "line", "x": rnd_list(xs), "y": rnd_list(ys),
                     "color": PALETTE["probe"], "label": name, "dash": False},
                    {"type": "points", "x": rnd_list(xs), "y": rnd_list(ys),
                     "color": PALETTE["probe"], "label": "", "marker": "o", "name": "value"},
                ],
            }
        out.append(entry)
    return out


_SERIES_COLORS = ("probe", "A", "B", "ratio", "cross", "fail")


def _probe_plot(i: int, name: str, probe: Mapping[str, Any], many: list[Any]) -> dict[str, Any]:
    """One small plot of several labelled series: `plot_series` = [{"label", "points"}, ...]
    (added by `quadscope report` from the probe's stored sweeps: median per size)."""
    layers: list[dict[str, Any]] = []
    for j, ser in enumerate(s for s in many if isinstance(s, Mapping)):
        pts = [p for p in ser.get("points", []) if isinstance(p, list | tuple) and len(p) >= 2]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        color = PALETTE[_SERIES_COLORS[j % len(_SERIES_COLORS)]]
        label = str(ser.get("label", f"series {j + 1}"))
        layers.append({"type": "line", "x": rnd_list(xs), "y": rnd_list(ys), "color": color,
                       "label": label, "dash": False})
        layers.append({"type": "points", "x": rnd_list(xs), "y": rnd_list(ys), "color": color,
                       "label": "", "marker": "o", "name": str(ser.get("name", "median"))})
    first = many[0] if isinstance(many[0], Mapping) else {}
    return {"id": f"probe-{i}", "kind": "probe", "metric": name, "xlog": False, "ylog": False,
            "small": True, "title": name, "xlabel": str(first.get("x_label", "n")),
            "ylabel": str(first.get("y_label", "median")), "layers": layers}


__all__ = ["PALETTE", "culprits_table", "doctor_rows", "find_svg", "rnd", "rnd_list",
           "sanitise_svg"]
