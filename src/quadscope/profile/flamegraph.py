"""A differential flame graph as one self-contained SVG: width is now, colour is growth.

Contract: `render_svg(small, large, classes=...) -> str` draws the call tree of
`large` (the profile at the largest n) in the icicle-free, root-at-bottom
layout of Brendan Gregg's flamegraph.pl: a frame's width is its inclusive share
at the largest n. Its colour is `growth_colour(k − 1)`, k being the two-point
exponent of the frame's inclusive cost between the smallest and the largest n
(`attribute.two_point_exponent`): red when it grows faster than linear, blue
when slower, grey near linear; a frame absent at the smallest n is deep red.
A frame with fewer than `MIN_FRAME_SAMPLES` samples at the largest n is drawn
in the neutral `UNMEASURED` colour whatever its k (`frame_colour`): one or two
samples cannot measure growth, and red there would send people after noise.
Every frame carries a `<title>` (symbol, dso, class when fitted, k, share).
No script, no stylesheet link, no external reference: it opens offline, and
every name is XML-escaped. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from quadscope.profile.attribute import two_point_exponent
from quadscope.profile.stacks import Frame, StackProfile

WIDTH_PX = 1200
ROW_PX = 17
MIN_WIDTH_PX = 0.3  # narrower frames are not drawn (flamegraph.pl's --minwidth)
NEUTRAL = 0.05  # |k − 1| below this is drawn grey: linear within sampling noise
NEW_FRAME = math.inf
# A frame with n samples has a relative error of about 1/sqrt(n) (Poisson), so
# under 10 samples at the largest n (over 30%) its k cannot be told from 1.
MIN_FRAME_SAMPLES = 10
UNMEASURED = "rgb(225,225,215)"


def growth_colour(delta: float | None) -> str:
    """`rgb(...)` for k − 1: grey near 0, red (saturating at +1) above, blue (at −1) below."""
    if delta is None:
        return "rgb(200,200,200)"
    if abs(delta) < NEUTRAL:
        return "rgb(190,190,190)"
    t = min(abs(delta), 1.0)
    if delta > 0:
        return f"rgb({round(230 + 25 * t)},{round(190 - 170 * t)},{round(190 - 170 * t)})"
    return f"rgb({round(190 - 150 * t)},{round(200 - 90 * t)},{round(230 + 25 * t)})"


def frame_colour(delta: float | None, samples_at_max: float) -> str:
    """`growth_colour(delta)`, or `UNMEASURED` when the frame has too few samples at the largest n."""
    if samples_at_max < MIN_FRAME_SAMPLES:
        return UNMEASURED
    return growth_colour(delta)


@dataclass(slots=True)
class Node:
    frame: Frame | None
    small_s: float = 0.0
    large_s: float = 0.0
    # Samples at the largest n, estimated as the weight's share of the samples:
    # perf's periods vary slightly per sample, so this is not an exact count.
    large_samples: float = 0.0
    children: dict[Frame, Node] = field(default_factory=dict)


def build_tree(small: StackProfile, large: StackProfile) -> Node:
    root = Node(None)
    for prof, attr in ((small, "small_s"), (large, "large_s")):
        scale = prof.seconds_per_weight()
        total = prof.total_weight
        per_weight = prof.samples / total if total else 0.0
        for stack, w in prof.stacks.items():
            sec = w * scale
            node = root
            nodes = [node]
            for f in stack:
                node = node.children.setdefault(f, Node(f))
                nodes.append(node)
            for nd in nodes:
                setattr(nd, attr, getattr(nd, attr) + sec)
                if prof is large:
                    nd.large_samples += w * per_weight
    return root


def frame_delta(node: Node, n0: int, n1: int) -> float | None:
    if node.large_s <= 0:
        return None
    if node.small_s <= 0:
        return NEW_FRAME
    k = two_point_exponent(n0, n1, node.small_s, node.large_s)
    return None if k is None else k - 1.0


def render_svg(
    small: StackProfile,
    large: StackProfile,
    *,
    classes: Mapping[Frame, str] | None = None,
    title: str = "quadscope differential flame graph",
) -> str:
    classes = classes or {}
    root = build_tree(small, large)
    n0, n1 = small.size_n, large.size_n
    total = root.large_s
    rects: list[tuple[Node, Frame, float, int, float]] = []
    max_depth = 0

    def walk(node: Node, x: float, depth: int) -> None:
        nonlocal max_depth
        for f in sorted(node.children, key=lambda fr: (fr.label(), fr.dso)):
            child = node.children[f]
            w = child.large_s / total * WIDTH_PX if total > 0 else 0.0
            if w >= MIN_WIDTH_PX:
                max_depth = max(max_depth, depth)
                rects.append((child, f, x, depth, w))
                walk(child, x, depth + 1)
            x += w

    walk(root, 0.0, 0)
    rows = max_depth + 1
    top = 40
    base = top + rows * ROW_PX  # rows go from the root at the bottom up, as in flamegraph.pl
    height = base + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH_PX}" '
        f'height="{height}" viewBox="0 0 {WIDTH_PX} {height}">',
        f'<rect x="0" y="0" width="{WIDTH_PX}" height="{height}" fill="rgb(248,248,248)"/>',
        f'<text x="{WIDTH_PX // 2}" y="18" text-anchor="middle" font-family="Verdana" '
        f'font-size="14">{escape(title)}</text>',
        f'<text x="{WIDTH_PX // 2}" y="34" text-anchor="middle" font-family="Verdana" '
        f'font-size="11">width: share of time at n={n1}; colour: growth from n={n0} to '
        f"n={n1} relative to linear (red faster, blue slower, grey linear)</text>",
    ]
    out.extend(_rect(node, x, base - (depth + 1) * ROW_PX, w, n0, n1, total, classes.get(f))
               for node, f, x, depth, w in rects)
    ly = base + 20
    for i, (delta, text) in enumerate(((1.0, "k−1 ≥ 1"), (0.0, "linear"), (-1.0, "k−1 ≤ −1"))):
        lx = 10 + 100 * i
        out.append(f'<rect x="{lx}" y="{ly}" width="14" height="12" fill="{growth_colour(delta)}"/>')
        out.append(f'<text x="{lx + 18}" y="{ly + 10}" font-family="Verdana" '
                   f'font-size="11">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _rect(
    node: Node, x: float, y: int, w: float, n0: int, n1: int, total: float, cls: str | None
) -> str:
    assert node.frame is not None
    delta = frame_delta(node, n0, n1)
    share = node.large_s / total if total > 0 else 0.0
    if node.large_samples < MIN_FRAME_SAMPLES:
        growth = f"too few samples ({node.large_samples:.0f}) at n={n1} to measure growth"
    elif delta is None:
        growth = "k unknown"
    elif delta == NEW_FRAME:
        growth = f"absent at n={n0}"
    else:
        growth = f"k = {delta + 1:.2f}"
    tip = f"{node.frame.symbol} ({node.frame.dso})\n"
    tip += (f"class {cls}, " if cls else "") + f"{growth}, {share:.1%} at n={n1}"
    colour = frame_colour(None if delta is None else min(delta, 10.0), node.large_samples)
    label = node.frame.label()
    chars = int((w - 6) / 7)
    text = ""
    if chars >= 3:
        shown = label if len(label) <= chars else label[: chars - 2] + ".."
        text = (f'<text x="{x + 3:.1f}" y="{y + 12}" font-family="Verdana" '
                f'font-size="11">{escape(shown)}</text>')
    return (f"<g><title>{escape(tip)}</title>"
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW_PX - 1}" '
            f'fill={quoteattr(colour)} rx="2" ry="2"/>{text}</g>')
