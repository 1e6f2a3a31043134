"""Interpreter start-up: one `start-up` frame instead of a tall tree of imports. Pure.

Contract: `fold_startup(profiles, interpreted=True)` returns the profiles with
every start-up stack replaced by the one-frame stack `(STARTUP,)` (weights
summed, samples and times unchanged), plus a sentence saying so, when the
start-up stacks' cost does not grow with n; otherwise the profiles unchanged
and no sentence. The sentence names what starts: an interpreter's imports,
site and encodings (`interpreted`), or a native program's dynamic loader, and
a cost under a millisecond is not worth a sentence for a native program.
`attribute` never ranks `STARTUP` as a culprit; the flame graph draws it as
one node beside the program's own work.

Two tests, both required. A stack is a start-up *candidate* when one of its
frames is the interpreter loading itself: the import system
(`importlib._bootstrap`, `_bootstrap_external`, `zipimport`), `site`,
`encodings`, CPython's own init/finalize entry points, the dynamic loader, or
py-spy's samples with no Python frame at all (`STARTUP_MARKERS`,
`STARTUP_SYMBOLS`). Names alone are not enough: a program that imports a
module per item, or does its work at import time, pays that import cost at
every n and then it is the culprit, not noise. So the candidates are folded
only when their summed self time does not grow with n: the least-squares
slope of log(cost) on log(n) over the profiled sizes is below
`MAX_STARTUP_EXPONENT`, and their share of the time falls from the smallest
size to the largest (the program outgrows them). A fixed cost has slope 0 up
to noise, but that noise is large: each size's samples are scaled to its
measured CPU time, which includes work the sampler does not see (pyenv's
shell shim before the interpreter starts, ~0.1 s here) and py-spy slows the
import-heavy start more than the loop, so start-up measured at 5 sizes drifted
by slopes of -0.1 to 0.3 between two profiles of one loaded machine. 0.5 is
√n, the slowest growth quadscope names besides log n: a cost growing that fast
is the program's, not the interpreter's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from quadscope.profile.stacks import Frame, Stack, StackProfile

STARTUP = Frame("start-up", "[interpreter]")
MAX_STARTUP_EXPONENT = 0.5
NATIVE_QUIET_S = 1e-3  # a native program's start-up below this is folded without a word
# Substrings of a frame's symbol or object that mark the interpreter loading itself.
STARTUP_MARKERS = (
    "<frozen importlib._bootstrap",  # importlib._bootstrap and _bootstrap_external
    "<frozen zipimport>",
    "<frozen site>",
    "encodings/__init__.py",
    "importlib/_bootstrap",  # a CPython built without frozen modules
    "/site.py",
)
# py-spy's samples taken while no Python frame exists (profile/python.py).
NO_PYTHON_FRAME = Frame("[no Python frame]", "[python]")
STARTUP_SYMBOLS = frozenset({
    NO_PYTHON_FRAME.symbol,
    "Py_InitializeFromConfig", "Py_InitializeEx", "pyinit_main", "Py_FinalizeEx",
    "_dl_start", "_dl_start_user", "dl_main", "_dl_relocate_object",
})


@dataclass(frozen=True, slots=True)
class StartupFold:
    profiles: tuple[StackProfile, ...]
    note: str | None
    exponent: float | None  # the candidates' log-log slope; None without two sizes to fit


def is_startup_frame(frame: Frame) -> bool:
    if frame.symbol in STARTUP_SYMBOLS:
        return True
    text = f"{frame.symbol} {frame.dso}"
    return any(m in text for m in STARTUP_MARKERS)


def is_startup_stack(stack: Stack) -> bool:
    return any(is_startup_frame(f) for f in stack)


def loglog_slope(sizes: Sequence[int], costs: Sequence[float]) -> float | None:
    """Least-squares slope of log(cost) on log(n) over the sizes with cost > 0."""
    pts = [(math.log(n), math.log(c)) for n, c in zip(sizes, costs, strict=True) if c > 0 and n > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx <= 0:
        return None
    return sum((x - mx) * (y - my) for x, y in pts) / sxx


def fold_startup(profiles: Sequence[StackProfile], interpreted: bool = True) -> StartupFold:
    ordered = sorted(profiles, key=lambda p: p.size_n)
    costs = [p.seconds_per_weight() * sum(w for st, w in p.stacks.items() if is_startup_stack(st))
             for p in ordered]
    if not any(costs):
        return StartupFold(tuple(ordered), None, None)
    k = loglog_slope([p.size_n for p in ordered], costs)
    first, last = ordered[0].reference_s, ordered[-1].reference_s
    outgrown = first > 0 and last > 0 and costs[-1] / last < costs[0] / first
    # Seen at one size only: it does not grow if that size is not the largest.
    grows = costs[-1] > 0 if k is None else (k >= MAX_STARTUP_EXPONENT or not outgrown)
    if grows:
        return StartupFold(tuple(ordered), None, k)
    folded = []
    for p in ordered:
        stacks: dict[Stack, int] = {}
        for st, w in p.stacks.items():
            key = (STARTUP,) if is_startup_stack(st) else st
            stacks[key] = stacks.get(key, 0) + w
        folded.append(replace(p, stacks=stacks))
    slope = "" if k is None else f" (k = {k:.2f})"
    cost_s = statistics.median(costs)
    what = ("interpreter start-up (imports, site, encodings)" if interpreted
            else "program start-up (the dynamic loader, before main)")
    note = (f"{what} costs about {_fmt_s(cost_s)} at each size and does not grow with "
            f"n{slope}: folded into one 'start-up' frame, never a culprit")
    quiet = not interpreted and cost_s < NATIVE_QUIET_S
    return StartupFold(tuple(folded), None if quiet else note, k)


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"
