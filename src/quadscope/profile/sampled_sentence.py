"""The user's function named from time samples, when Callgrind did not count the program. Pure.

Contract: `sampled_culprit(culprits, tree, superlinear=, size_n=, profiles=, fit=)`
returns one sentence naming the user's function that carries the most
sampled growth, or None when no culprit lies under a function of the user's
own code. Each ranked `Culprit` is credited to its *user function*: itself
when its frame is the user's (`ownership.is_user_frame`), else the kernel
row's `user_caller`, else the innermost frame of its call path that is the
user's (a frame's object is read from the flame tree, which carries every
frame's object). Shares of the growth beyond linear (of the growth, when
nothing grows faster than n) are summed per user function; the largest is
named. Its class is fitted (`fit`, the profile's own fitting) on its
*inclusive* time at every profiled size (every sample under it, scaled to
seconds as `attribute` scales self time): the rows under one function split
its samples, each too few to settle, while their sum is the function's cost.
The library function carrying the most of it is named too:

    remember_user (users.py) makes it grow: its time with what it calls grows
    as n² (k = 1.97), 96% of the growth beyond linear, most in calls to memcmp
    (time samples at n = 8k)

A function whose calls the sweep itself timed (`measured`: a `python:` target's
function) is fitted on those runs instead, many and unperturbed by a sampler:
their exact instruction counts where the sweep counted them (`exactfit`: "its
calls, counted exactly by the sweep, grow as n²"), else their times ("its
calls, timed by the sweep, grow as n² (k = 1.98)"). A class the samples
did not settle is written with its exponent ("about n^1.9"). Callgrind's
exact sentence (`exact_attach`) replaces this one where it names a function.
The driver stores it in `Attribution.extra["culprit_sentence"]`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from quadscope.analyse.change import class_label
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.errors import FitRefusedError
from quadscope.profile.attribute import FitFn
from quadscope.profile.exact_growth import plain_name
from quadscope.profile.noise import sampled_sd, samples_per_second
from quadscope.profile.ownership import is_user_frame
from quadscope.profile.records import Culprit, FlameNode, FlameTree
from quadscope.profile.stacks import UNKNOWN, StackProfile
from quadscope.units import fmt_count

MIN_SHARE = 0.05  # a user function carrying less of the growth is not named


@dataclass(frozen=True, slots=True)
class _Credit:
    name: str
    dso: str
    share: float
    top: Culprit  # the row carrying most of it
    via: str | None  # that row's library function, when it is not the user's own code
    at_max: float = 0.0  # its rows' share of the time at the largest n


@dataclass(frozen=True, slots=True)
class Measured:
    """A function whose every call the sweep timed (a `python:` target): its runs' times."""

    name: str
    sizes: tuple[int, ...]
    seconds: tuple[float, ...]  # one per run, beside `sizes`
    counted: tuple[tuple[int, float], ...] = ()  # (n, instructions) of the runs counted


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
    rows: dict[tuple[str, str], list[tuple[float, Culprit, str | None]]] = {}
    for c in culprits:
        who = user_function(c, objects)
        share = _share(c, superlinear)
        if who is None or share <= 0:
            continue
        own = who == (c.symbol, c.dso)
        rows.setdefault(who, []).append((share, c, None if own else plain_name(c.symbol)))
    credits = []
    for (name, dso), got in rows.items():
        # The row carrying most of it; a nameless one ([libc.so.6]) only when all are.
        got.sort(key=lambda r: -r[0])
        _, top, via = next((r for r in got if r[1].symbol != UNKNOWN), got[0])
        credits.append(_Credit(name, dso, sum(r[0] for r in got), top, via,
                               sum(r[1].share_at_max for r in got)))
    return sorted(credits, key=lambda x: -x.share)


def _share(c: Culprit, superlinear: bool) -> float:
    return c.superlinear_share if superlinear else c.growth_share


def inclusive_seconds(profiles: Sequence[StackProfile], name: str, dso: str) -> list[float]:
    """Seconds of every sample with the function on its stack, at each profile's size."""
    out = []
    for p in profiles:
        w = sum(weight for stack, weight in p.stacks.items()
                if any(f.symbol == name and f.dso == dso for f in stack))
        out.append(w * p.seconds_per_weight())
    return out


def _class_words(cls: str, k: float | None) -> str:
    if cls != INCONCLUSIVE:
        return class_label(cls) + ("" if k is None else f" (k = {k:.2f})")
    return "growing" if k is None else f"about n^{k:.1f}"


def _growth(best: _Credit, profiles: Sequence[StackProfile], fit: FitFn | None,
            seed: int, measured: Measured | None) -> tuple[str, bool | None]:
    """The words for its growth, and whether they say it grows faster than n (None: the
    sampled attribution decides)."""
    if measured is not None and measured.name == best.name and (exact := _counted(measured)):
        return exact
    if fit is not None and measured is not None and measured.name == best.name:
        with contextlib.suppress(FitRefusedError):
            f = fit("wall_s", list(measured.sizes), list(measured.seconds), seed=seed)
            growth = REGISTRY.get(f.cls)
            words = f"its calls, timed by the sweep, grow as {_class_words(f.cls, f.exponent)}"
            return words, None if growth is None else growth.superlinear
    # Sizes where no sample fell under it (a short run unwound with DWARF) are left out.
    # Each size's value is one recording's samples: weighted by its honest error
    # (`noise.sampled_sd`), as the rows' self times are.
    seen = [(p.size_n, v, samples_per_second(p)) for p, v in zip(profiles, inclusive_seconds(
        profiles, best.name, best.dso), strict=True) if v > 0]
    if fit is not None and len(seen) >= 3:
        with contextlib.suppress(FitRefusedError):
            f = fit(f"time of {best.name}", [n for n, _, _ in seen], [v for _, v, _ in seen],
                    seed=seed, sd=list(sampled_sd([v for _, v, _ in seen],
                                                  [r for _, _, r in seen])), strict=True)
            return f"its time with what it calls grows as {_class_words(f.cls, f.exponent)}", None
    c = best.top
    what = f"its calls to {best.via} are" if best.via else "its own code is"
    growth = REGISTRY.get(c.self_class)
    # A row fitted "1" that carries growth beyond linear is a fit of too few samples.
    cls = (INCONCLUSIVE if c.superlinear_share > 0 and growth is not None
           and not growth.superlinear else c.self_class)
    return f"{what} {_class_words(cls, c.self_exponent)}", None


def _counted(measured: Measured) -> tuple[str, bool | None] | None:
    """Words for the sweep's exact counts of the calls (`fit_exact`), when it counted them."""
    from quadscope.analyse.exactfit import fit_exact

    if len({n for n, _ in measured.counted}) < 4:
        return None
    f = fit_exact("instructions", [n for n, _ in measured.counted],
                  [v for _, v in measured.counted])
    if f is None or f.cls == INCONCLUSIVE:
        return None
    growth = REGISTRY.get(f.cls)
    return (f"its calls, counted exactly by the sweep, grow as {_class_words(f.cls, f.exponent)}",
            None if growth is None else growth.superlinear)


def sampled_culprit(culprits: Sequence[Culprit], tree: FlameTree | None, *,
                    superlinear: bool, size_n: int, profiles: Sequence[StackProfile] = (),
                    fit: FitFn | None = None, seed: int = 0,
                    measured: Measured | None = None) -> str | None:
    credits = _credits(culprits, frame_objects(tree), superlinear)
    if not credits or credits[0].share < MIN_SHARE:
        return None
    best = credits[0]
    where = PurePosixPath(best.dso).name
    grows, faster = _growth(best, sorted(profiles, key=lambda p: p.size_n), fit, seed, measured)
    verb = "makes it grow" if superlinear or faster else "does the most growing work"
    of = "of the growth beyond linear" if superlinear else "of the growth"
    share = f"{100 * best.share:.0f}% {of}"
    if faster is not None:  # the class is the sweep's; the samples say where the time goes
        share = f"{100 * min(best.at_max, 1.0):.0f}% of the time"
    via = f", most in calls to {best.via}" if best.via and grows.startswith("its ti") else ""
    return (f"{best.name} ({where}) {verb}: {grows}, {share}{via} "
            f"(time samples at n = {fmt_count(size_n)})")


__all__ = ["Measured", "frame_objects", "inclusive_seconds", "sampled_culprit", "user_function"]
