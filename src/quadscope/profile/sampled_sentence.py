"""The user's function named from time samples, when Callgrind did not count the program. Pure.

Contract: `sampled_culprit(culprits, tree, superlinear=)` returns one sentence
naming the user's function that carries the most sampled growth, or None
when no culprit lies under a function of the user's own code. Each ranked
`Culprit` is credited to its *user function*: itself when its frame is the
user's (`ownership.is_user_frame`), else the kernel row's `user_caller`, else
the innermost frame of its call path that is the user's (a frame's object is
read from the flame tree, which carries every frame's object). Shares of the
growth beyond linear (of the growth, when nothing grows faster than n) are
summed per user function; the largest names the sentence, with the library
function that carries most of it:

    remember_user (users.py) makes it grow: its calls to memcmp are n², 49% of
    the growth beyond linear (time samples at n = 8k)

A class the samples did not settle is written with its exponent
("grows as about n^1.9"). Callgrind's exact sentence (`exact_attach`) replaces
this one where it names a function. The driver stores it in
`Attribution.extra["culprit_sentence"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from quadscope.analyse.change import class_label
from quadscope.classes import INCONCLUSIVE
from quadscope.profile.exact_growth import plain_name
from quadscope.profile.ownership import is_user_frame
from quadscope.profile.records import Culprit, FlameNode, FlameTree
from quadscope.units import fmt_count

MIN_SHARE = 0.05  # a user function carrying less of the growth is not named


@dataclass(frozen=True, slots=True)
class _Credit:
    name: str
    dso: str
    share: float
    top: Culprit  # the row carrying most of it
    via: str | None  # that row's library function, when it is not the user's own code


def frame_objects(tree: FlameTree | None) -> dict[str, str]:
    """Every frame's name → its object, a user's object first when a name has several."""
    out: dict[str, str] = {}

    def walk(node: FlameNode) -> None:
        if node.name not in out or (is_user_frame(node.name, node.dso)
                                    and not is_user_frame(node.name, out[node.name])):
            out[node.name] = node.dso
        for c in node.children:
            walk(c)

    if tree is not None:
        walk(tree.root)
    return out


def user_function(c: Culprit, objects: dict[str, str]) -> tuple[str, str] | None:
    """(name, object) of the user's function a culprit row is credited to, or None."""
    if is_user_frame(c.symbol, c.dso):
        return c.symbol, c.dso
    callers = ([c.user_caller] if c.user_caller else []) + list(reversed(c.call_path[:-1]))
    for name in callers:
        if is_user_frame(name, objects.get(name, "")):
            return name, objects[name]
    return None


def _credits(culprits: Sequence[Culprit], objects: dict[str, str],
             superlinear: bool) -> list[_Credit]:
    by_user: dict[tuple[str, str], _Credit] = {}
    for c in culprits:
        who = user_function(c, objects)
        share = c.superlinear_share if superlinear else c.growth_share
        if who is None or share <= 0:
            continue
        was = by_user.get(who)
        via = None if who == (c.symbol, c.dso) else plain_name(c.symbol)
        if was is None:
            by_user[who] = _Credit(who[0], who[1], share, c, via)
        else:
            top, top_via = (c, via) if share > _share(was.top, superlinear) else (was.top, was.via)
            by_user[who] = _Credit(who[0], who[1], was.share + share, top, top_via)
    return sorted(by_user.values(), key=lambda x: -x.share)


def _share(c: Culprit, superlinear: bool) -> float:
    return c.superlinear_share if superlinear else c.growth_share


def _growth(c: Culprit) -> str:
    if c.self_class != INCONCLUSIVE:
        return class_label(c.self_class)
    return "growing" if c.self_exponent is None else f"about n^{c.self_exponent:.1f}"


def sampled_culprit(culprits: Sequence[Culprit], tree: FlameTree | None, *,
                    superlinear: bool, size_n: int) -> str | None:
    credits = _credits(culprits, frame_objects(tree), superlinear)
    if not credits or credits[0].share < MIN_SHARE:
        return None
    best = credits[0]
    where = PurePosixPath(best.dso).name
    what = f"its calls to {best.via} are" if best.via else "its own code is"
    verb = "makes it grow" if superlinear else "does the most growing work"
    of = "of the growth beyond linear" if superlinear else "of the growth"
    return (f"{best.name} ({where}) {verb}: {what} {_growth(best.top)}, "
            f"{100 * best.share:.0f}% {of} (time samples at n = {fmt_count(size_n)})")


__all__ = ["frame_objects", "sampled_culprit", "user_function"]
