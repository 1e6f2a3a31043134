"""Speedscope export of a profiled sweep: its call tree at the largest n, for speedscope.app.

Contract: `SpeedscopeRenderer().render(analysis) -> bytes` is the JSON file
`--speedscope FILE` writes (https://www.speedscope.app/file-format-schema.json,
one "sampled" profile, weights in seconds), made by
`profile.flametree.speedscope` from the tree the profile stored. A sweep with
no profile raises a `UsageError` naming how to make one.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from quadscope.errors import UsageError
from quadscope.render.base import Renderer
from quadscope.textsafe import command_text

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.profile.records import FlameTree


def profile_tree(analysis: Analysis, flag: str) -> FlameTree:
    """The stored call tree of the sweep's profile, or a UsageError saying how to get one."""
    tree = analysis.profile.flame_tree if analysis.profile is not None else None
    if tree is None:
        raise UsageError(f"{flag} needs a profiled sweep: run with --profile, or "
                         f"`quadscope profile {analysis.sweep.id}` first")
    return tree


class SpeedscopeRenderer(Renderer):
    name = "speedscope"
    flag = "--speedscope"
    metavar = "FILE"
    help = "write the profile's call tree as a speedscope file (needs a profiled sweep)"
    extension = ".speedscope.json"
    folder = False

    def render(self, analysis: Analysis) -> bytes:
        from quadscope.profile.flametree import speedscope  # only profiles need it

        tree = profile_tree(analysis, self.flag)
        n = tree.sizes[-1]
        name = f"{command_text(analysis.sweep.command, analysis.sweep.shell)} at n = {n}"
        return (json.dumps(speedscope(tree, name), ensure_ascii=False) + "\n").encode("utf-8")
