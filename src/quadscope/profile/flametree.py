"""The differential call tree as data: for the interactive flame graph and the exports.

Contract: `flame_tree(small, large, classes=)` is a pure function of the
profiles at the smallest and the largest n; it returns a `FlameTree`
(`profile.records`) of `FlameNode`s whose `value_s` are seconds at the largest
n, each node also carrying `dso`, `k` (the two-point exponent of its inclusive
time between the two sizes, `attribute.two_point_exponent`), `cls` (a
culprit's fitted class, when it is one), `samples` (at the largest n) and
`excess`: its share of the whole program's growth beyond linear. Its
`to_dict()` is d3-flame-graph's format (`name`, `value`, `children`). Nodes
under `MIN_SHARE` of the total are pruned (their time stays in their parent).
`collapse(tree)` merges tall single-child chains (a frame whose one child
holds nearly all of it) into one node named "a → … → z", for display, and
keeps the tree's sizes (the flame graph's tooltips name them). A frame of the
user's own program (`ownership.is_user_frame`: its binary or source file) is
never merged into the chain above it, so it is never hidden behind "…": only
runtime and library frames are.
`speedscope(tree, name)` and `folded(tree)` write it in speedscope's file
format and as folded stacks (flamegraph.pl, one `a;b;c value` line per stack).

Growth beyond linear: a frame's cost at the largest n beyond the straight line
through its costs at the smaller sizes (`attribute.linear_excess`; give
`middle`, the profile at the size before the largest, so a constant start-up
cost cancels out instead of counting as "expected linear growth"); its share
of the root's excess says how much of the superlinear growth it carries. A
frame with fewer than `MIN_FRAME_SAMPLES` samples at the largest n gets no
excess (`noise`: drawn neutral): a Poisson count that small has a relative
error over 30%, and a frame absent at the smallest n because it was sampled
once is not the culprit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from quadscope.profile.attribute import linear_excess, two_point_exponent
from quadscope.profile.flamegraph import MIN_FRAME_SAMPLES, Node, build_tree
from quadscope.profile.ownership import is_user_frame
from quadscope.profile.records import FlameNode, FlameTree
from quadscope.profile.stacks import Frame, StackProfile
from quadscope.profile.startup import STARTUP

MIN_SHARE = 0.001  # nodes below 0.1% of the total are not kept
CHAIN_SHARE = 0.98  # a child holding this much of its parent continues the parent's chain


def flame_tree(small: StackProfile, large: StackProfile, *,
               classes: Mapping[Frame, str] | None = None,
               middle: StackProfile | None = None) -> FlameTree:
    """The call tree at `large`, each node's growth measured against `small` (and `middle`)."""
    root = build_tree(small, large)
    mid_root = build_tree(middle, large) if middle is not None else None
    n0, n1 = small.size_n, large.size_n
    sizes = (n0, middle.size_n, n1) if middle is not None else (n0, n1)
    classes = classes or {}

    def excess_of(node: Node, mid: Node | None) -> float:
        costs = ((node.small_s, mid.small_s, node.large_s) if mid is not None
                 else (node.small_s, node.large_s))
        return linear_excess(sizes, costs)

    total_excess = max(excess_of(root, mid_root), 0.0)

    def flame_node(node: Node, mid: Node | None, name: str, dso: str,
                   cls: str | None) -> FlameNode:
        noise = node.large_samples < MIN_FRAME_SAMPLES
        excess = 0.0
        # Start-up is folded only once its cost was found not to grow (`startup`):
        # what is left of its excess is sampling noise, so it is drawn neutral.
        if not noise and total_excess > 0 and (name, dso) != (STARTUP.symbol, STARTUP.dso):
            excess = excess_of(node, mid) / total_excess
        k = two_point_exponent(n0, n1, node.small_s, node.large_s)
        kids = tuple(flame_node(c, None if mid is None else mid.children.get(f, Node(f)),
                                f.label(), f.dso, classes.get(f))
                     for f, c in sorted(node.children.items(), key=lambda kv: -kv[1].large_s)
                     if c.large_s >= MIN_SHARE * root.large_s)
        return FlameNode(name=name, dso=dso, value_s=round(node.large_s, 9),
                         k=None if k is None else round(k, 3), samples=round(node.large_samples),
                         excess=round(max(min(excess, 1.0), -1.0), 4), noise=noise,
                         cls=cls or None, children=kids)

    return FlameTree(flame_node(root, mid_root, "all", "", None), (n0, n1))


def collapse(tree: FlameTree) -> FlameTree:
    """The tree with single-child chains merged into one node "a → … → z" (for display)."""
    return replace(tree, root=_collapse(tree.root))


def _collapse(top: FlameNode) -> FlameNode:
    node = top
    chain = [node.name]
    while True:
        kids = node.children
        if len(kids) != 1 or node.value_s <= 0 or kids[0].value_s < CHAIN_SHARE * node.value_s:
            break
        child = kids[0]
        # The user's own function starts a node of its own: "…" hides runtime frames only.
        if is_user_frame(child.name, child.dso):
            break
        chain.append(child.name)
        node = replace(child, value_s=node.value_s) if child.value_s > node.value_s else child
    if len(chain) > 2:
        node = replace(node, name=f"{chain[0]} → … → {chain[-1]}", collapsed=len(chain))
    elif len(chain) == 2:
        node = replace(node, name=f"{chain[0]} → {chain[1]}", collapsed=2)
    return replace(node, children=tuple(_collapse(c) for c in node.children))


def _paths(tree: FlameTree) -> list[tuple[tuple[str, ...], float]]:
    """(root-first names, self value) of every node with time of its own; the root excluded."""
    out: list[tuple[tuple[str, ...], float]] = []

    def walk(node: FlameNode, path: tuple[str, ...]) -> None:
        own = node.value_s - sum(c.value_s for c in node.children)
        if path and own > 1e-12:
            out.append((path, own))
        for c in node.children:
            walk(c, (*path, c.name))

    walk(tree.root, ())
    return out


def folded(tree: FlameTree) -> list[str]:
    """Folded stacks at the largest n, values in microseconds (whole numbers, as tools expect)."""
    return [f"{';'.join(p)} {round(v * 1e6)}" for p, v in _paths(tree) if round(v * 1e6) > 0]


def speedscope(tree: FlameTree, name: str) -> dict[str, Any]:
    """The tree as a speedscope file (https://www.speedscope.app/file-format-schema.json)."""
    frames: list[dict[str, str]] = []
    index: dict[str, int] = {}
    samples: list[list[int]] = []
    weights: list[float] = []
    for path, own in _paths(tree):
        stack = []
        for fname in path:
            if fname not in index:
                index[fname] = len(frames)
                frames.append({"name": fname})
            stack.append(index[fname])
        samples.append(stack)
        weights.append(round(own, 9))
    return {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": frames},
        "profiles": [{"type": "sampled", "name": name, "unit": "seconds", "startValue": 0,
                      "endValue": round(sum(weights), 9), "samples": samples,
                      "weights": weights}],
        "name": name,
        "exporter": "quadscope",
    }


__all__ = ["collapse", "flame_tree", "folded", "speedscope"]
