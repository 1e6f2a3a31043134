"""Which function makes it grow, from exact per-function instruction counts. Pure.

Contract: `exact_growth(sizes, counts, *, fit=fit_metric)` takes one merged
`CallgrindCounts` per size (ascending, at least two) and returns an
`ExactGrowth`: every function doing `MIN_SHARE` of the work or more itself
(self count) at the largest size, fitted (its self and inclusive counts
against n with `fit_metric`, metric "instructions"), ranked by its share of
the program's work beyond linear at the largest size
(`attribute.linear_excess`, on self counts), and the
`ExactCulprit`: the user's function that carries the growth, with the
sentence `culprit_sentence` writes.

The user's function is chosen among functions of the program's own objects
(`is_user_object`: not under the system's library folders), start-up code
(`(below main)`, `_start`, PLT stubs) aside. What a user function *carries* is
its own code plus its calls into libraries (the calls' inclusive counts): for
main → append_field → strcat, append_field carries strcat's work, and main
carries none of it (its call goes to a user function, which carries it
itself). The culprit is the user function whose carried count has the most
excess beyond linear; its sentence names the library callee whose calls hold
most of that excess and the line of the costliest call ("its calls to strcat
at line 7 are n²": where a function was inlined into its caller, that line is
still the inlined code's), or its own code.

Exact counts repeat run after run, so one run per size is a fit's whole data;
a count equal at every size is the constant class, not a fit's doubt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from quadscope.analyse.change import class_label
from quadscope.analyse.fitting import fit_metric
from quadscope.errors import FitRefusedError
from quadscope.model import Fit
from quadscope.profile.attribute import linear_excess
from quadscope.profile.callgrind_format import (
    UNKNOWN,
    CallgrindCounts,
    FunctionKey,
    FunctionSite,
)
from quadscope.profile.ownership import STARTUP_NAMES, SYSTEM_PREFIXES
from quadscope.units import fmt_count

FitFn = Callable[..., Fit]
METRIC = "instructions"
SUPERLINEAR_MIN = 0.05  # the program's excess over this share of its work: it grows faster than n
MIN_SHARE = 0.001  # functions with less of the work at the largest n are not listed
# glibc picks a string function's variant for the CPU (`__strcat_avx2`); the user called strcat.
_VARIANT = re.compile(r"^_*(?P<base>[a-z][a-z0-9]*?)(?:_(?:avx2|avx|evex|evex512|sse2|sse3|"
                      r"ssse3|sse4_1|sse4_2|erms|unaligned|rtm|generic|ifunc|nocache|"
                      r"aligned)[a-z0-9_]*)+$")


@dataclass(frozen=True, slots=True)
class ExactFunction:
    name: str
    obj: str
    file: str
    line: int
    user: bool  # in the program's own binary, not a library
    self_ir: tuple[int, ...]  # per size
    inclusive_ir: tuple[int, ...]
    self_class: str
    self_exponent: float | None
    inclusive_class: str
    inclusive_exponent: float | None
    superlinear_share: float  # of the program's self excess beyond linear, at the largest n
    growth_share: float  # of the program's self growth from the smallest n to the largest
    share_at_max: float  # self count / total, at the largest n
    caller: str | None  # for a library function, the user function calling it most


@dataclass(frozen=True, slots=True)
class ExactCulprit:
    name: str
    file: str
    line: int
    via: str | None  # the library function whose calls carry the growth; None: its own code
    cls: str
    exponent: float | None
    share_at_max: float  # of all the work at the largest n, what `via` (or its code) does
    size_n: int
    grows_superlinearly: bool
    call_site: FunctionSite | None = None  # where it calls `via` most: an inlined loop's line


@dataclass(frozen=True, slots=True)
class ExactGrowth:
    sizes: tuple[int, ...]
    total_ir: tuple[int, ...]
    functions: tuple[ExactFunction, ...]  # ranked, most growth beyond linear first
    culprit: ExactCulprit | None
    sentence: str


def is_user_object(obj: str) -> bool:
    """True for the program's own binaries; False for the system's libraries and unknowns."""
    return obj.startswith("/") and not obj.startswith(SYSTEM_PREFIXES) and "valgrind" not in obj


def plain_name(name: str) -> str:
    """A libc variant as the user called it (`__strcat_avx2` -> strcat); others unchanged."""
    m = _VARIANT.match(name)
    return m.group("base") if m else name


def _fit(values: Sequence[int], sizes: Sequence[int], fit: FitFn, seed: int) -> tuple[str, float | None]:
    if len(set(values)) == 1:
        return "1", 0.0
    f = fit(METRIC, list(sizes), [float(v) for v in values], seed=seed)
    return f.cls, f.exponent


def _shares(excess: dict[FunctionKey, float]) -> dict[FunctionKey, float]:
    positive = sum(max(v, 0.0) for v in excess.values())
    return {f: (max(v, 0.0) / positive if positive > 0 else 0.0) for f, v in excess.items()}


def _caller(f: FunctionKey, last: CallgrindCounts) -> str | None:
    callers = {c: v for (c, callee), v in last.calls_ir.items() if callee == f and c != f}
    users = {c: v for c, v in callers.items() if is_user_object(c.obj)}
    pick = users or callers
    return max(pick, key=lambda c: (pick[c], c)).name if pick else None


def _library_calls(counts: CallgrindCounts, f: FunctionKey) -> dict[FunctionKey, int]:
    """f's calls into libraries, per callee: the work f carries besides its own code."""
    return {c: v for c, v in counts.callees(f).items() if not is_user_object(c.obj)}


def _candidates(last: CallgrindCounts) -> list[FunctionKey]:
    return sorted(f for f in last.functions()
                  if is_user_object(f.obj) and f.name not in STARTUP_NAMES
                  and not f.name.startswith("0x"))


def _growth(sizes: Sequence[int], v: Sequence[int], superlinear: bool) -> float:
    """What ranks a series: its excess beyond linear, or (nothing superlinear) its growth."""
    return linear_excess(sizes, v) if superlinear else float(v[-1] - v[0])


def find_culprit(sizes: Sequence[int], counts: Sequence[CallgrindCounts], *,
                 fit: FitFn = fit_metric, seed: int = 0) -> ExactCulprit | None:
    """The user function whose own code and library calls carry the most excess growth.

    When the program grows no faster than n, the one carrying the most growth.
    """
    total = counts[-1].total_ir
    superlinear = total > 0 and linear_excess(sizes, [c.total_ir for c in counts]) \
        > SUPERLINEAR_MIN * total
    best: tuple[float, FunctionKey, FunctionKey | None, list[int]] | None = None
    for f in _candidates(counts[-1]):
        own = [c.self_ir.get(f, 0) for c in counts]
        per_callee: dict[FunctionKey, list[int]] = {}
        for i, c in enumerate(counts):
            for callee, v in _library_calls(c, f).items():
                per_callee.setdefault(callee, [0] * len(counts))[i] += v
        carried = [own[i] + sum(s[i] for s in per_callee.values()) for i in range(len(counts))]
        grows = _growth(sizes, carried, superlinear)
        if best is not None and grows <= best[0]:
            continue
        parts = {callee: _growth(sizes, s, superlinear) for callee, s in per_callee.items()}
        top = max(parts, key=lambda k: (parts[k], k), default=None)
        if top is not None and parts[top] >= 0.5 * max(grows, 0.0) and parts[top] > 0:
            best = (grows, f, top, per_callee[top])
        else:
            best = (grows, f, None, own)
    if best is None:
        return None
    _, f, via, series = best
    cls, k = _fit(series, sizes, fit, seed)
    site = counts[-1].sites.get(f)
    called_at = None if via is None else counts[-1].call_sites.get((f, via))
    return ExactCulprit(f.name, site.file if site else UNKNOWN, site.line if site else 0,
                        None if via is None else plain_name(via.name), cls, k,
                        series[-1] / total if total else 0.0, sizes[-1], superlinear,
                        called_at if called_at and called_at.line else None)


def _at(c: ExactCulprit) -> str:
    """" at line 7" in the function's own file, " at util.h:7" in another (inlined code)."""
    if c.call_site is None:
        return ""
    if c.call_site.file == c.file:
        return f" at line {c.call_site.line}"
    return f" at {PurePosixPath(c.call_site.file).name}:{c.call_site.line}"


def culprit_sentence(c: ExactCulprit | None) -> str:
    """One line naming the user's function: "append_field (csvjoin.c:14) makes it grow: …"."""
    if c is None:
        return "no function of the program itself was counted (is it a script or a library call?)"
    where = PurePosixPath(c.file).name if c.file != UNKNOWN else ""
    site = f" ({where}:{c.line})" if where and c.line else ""
    what = f"its calls to {c.via}{_at(c)} are" if c.via else "its own code is"
    verb = "makes it grow" if c.grows_superlinearly else "does the most growing work"
    return (f"{c.name}{site} {verb}: {what} {class_label(c.cls)}, "
            f"{100 * c.share_at_max:.0f}% of the work at n = {fmt_count(c.size_n)}")


def exact_growth(sizes: Sequence[int], counts: Sequence[CallgrindCounts], *,
                 fit: FitFn = fit_metric, seed: int = 0) -> ExactGrowth:
    """Every function's exact growth, ranked, and the user's function that carries it."""
    if len(sizes) < 2 or len(sizes) != len(counts):
        raise FitRefusedError("exact per-function growth needs counts at two sizes or more")
    last = counts[-1]
    total = last.total_ir
    every = last.functions()
    excess = {f: linear_excess(sizes, [c.self_ir.get(f, 0) for c in counts]) for f in every}
    shares = _shares(excess)  # over every function, so the rows left out still count
    grown = _shares({f: float(last.self_ir.get(f, 0) - counts[0].self_ir.get(f, 0))
                     for f in every})
    listed = [f for f in every if total and last.self_ir.get(f, 0) >= MIN_SHARE * total]
    rows = []
    for f in listed:
        self_ir = tuple(c.self_ir.get(f, 0) for c in counts)
        incl_ir = tuple(c.inclusive(f) for c in counts)
        s_cls, s_k = _fit(self_ir, sizes, fit, seed)
        i_cls, i_k = _fit(incl_ir, sizes, fit, seed)
        site = last.sites.get(f)
        user = is_user_object(f.obj)
        rows.append(ExactFunction(f.name, f.obj, site.file if site else UNKNOWN,
                                  site.line if site else 0, user, self_ir, incl_ir, s_cls, s_k,
                                  i_cls, i_k, shares[f], grown[f], self_ir[-1] / total,
                                  None if user else _caller(f, last)))
    rows.sort(key=lambda r: (-r.superlinear_share, -r.share_at_max, r.name, r.obj))
    culprit = find_culprit(sizes, counts, fit=fit, seed=seed)
    return ExactGrowth(tuple(sizes), tuple(c.total_ir for c in counts), tuple(rows), culprit,
                       culprit_sentence(culprit))
