"""Folded-stack export of a profiled sweep: `frame;frame;frame value` lines at the largest n.

Contract: `FoldedRenderer().render(analysis) -> bytes` is the text `--folded
FILE` writes, Brendan Gregg's folded format (flamegraph.pl, inferno, speedscope
all read it), values in microseconds, made by `profile.flametree.folded` from
the tree the profile stored. A sweep with no profile raises a `UsageError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quadscope.render.base import Renderer
from quadscope.render.speedscope import profile_tree

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis


class FoldedRenderer(Renderer):
    name = "folded"
    flag = "--folded"
    metavar = "FILE"
    help = "write the profile's stacks at the largest n, folded (needs a profiled sweep)"
    extension = ".folded"
    folder = False

    def render(self, analysis: Analysis) -> bytes:
        from quadscope.profile.flametree import folded  # only profiles need it

        lines = folded(profile_tree(analysis, self.flag))
        return ("\n".join(lines) + "\n").encode("utf-8")
