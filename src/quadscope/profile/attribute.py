"""Which functions make it grow: per-function cost series, fits, ranking. Pure.

Contract: `attribute(profiles, *, fit=fit_metric, max_culprits=, min_samples=,
seed=)` takes one `StackProfile` per size (at least two sizes; fewer raise
FitRefusedError) and returns an `AttributionResult`: the `Culprit`s, best
first, the per-function `Series`, notes, and whether the total grows faster
than linear.
A function is a (symbol, dso) pair, kernel symbols included. At each size its
*self* cost is the weight of samples whose leaf it is and its *inclusive* cost
the weight of samples with it anywhere on the stack (counted once per sample,
so recursion does not double it), both converted to seconds by scaling that
size's total weight to its measured `reference_s`.

For each function f, with n₀ the smallest and n₁ the largest profiled size:
  share_at_max      = self(n₁) / total(n₁)
  growth            = self(n₁) − self(n₀)
  excess            = its cost at n₁ beyond the straight line through its costs
                      at the two sizes before (`linear_excess`): the offset cancels
                      in differences, so a constant start-up cost has none;
                      nor has a function whose cost did not grow from n₀ to n₁
                      (`grown_excess`: sampled noise, not growth)
  growth_share      = max(growth, 0) / Σ_g max(growth_g, 0)
  superlinear_share = max(excess, 0) / Σ_g max(excess_g, 0)
                      (an excess within EXCESS_Z of its Poisson sampling error,
                      `excess_sd`, counts as none: `sampled_excess`; so does that
                      of a function under CLASS_MIN_SHARE at n₁: `ranked_excess`)
(With two sizes only, excess is self(n₁) − self(n₀)·n₁/n₀. Scaling the smallest
size's cost linearly, as that formula does, counts a program's constant
start-up as "expected growth" and drove every share to 0 for a quadratic
Python program whose start-up dominates at n₀.)
A function ranks only when its own samples can carry a series: at least
`MIN_FUNCTION_SAMPLES` samples at the largest size and seen at two sizes or
more; the others are folded into one `OTHER` row. Interpreter start-up, once
`startup.fold_startup` has folded it into `STARTUP`, never ranks.
Both shares are normalised by the sum of the *positive* parts over every
function, not by the total's net change: when some functions shrink, the net
change is smaller than the growth of the others, and dividing by it gave
shares above 100%. So each share is in [0, 1], and over all functions they sum
to 1 (or are all 0 when nothing grows). A shrinking function has share 0.
The ranking is by contribution to super-linear growth: when the total itself
grows faster than linear (its excess is over `SUPERLINEAR_MIN` of total(n₁)),
functions are ordered by superlinear_share; otherwise by growth_share. A
function that is 10% at n₀ and 90% at n₁ therefore outranks one that stays at
90%. Growth classes and exponents come from `fit_metric` on the per-size self
costs (at least 3 sizes; with 2 the exponent is the two-point log-log slope
and the class is inconclusive), each size weighted by its honest error
(`noise.sampled_sd`: the Poisson error of its samples and the load between
single recordings), so a class settles only where the sizes rule out its
neighbours by more than a recording's slowdown; otherwise it is a bracket or
inconclusive and the exponent is kept. A function under `CLASS_MIN_SHARE` of the time
at n₁ keeps its exponent but its class is inconclusive: its series rests on a
few samples, too few to tell n from n log n. This follows the "scalability
bug" attribution of Coppa, Demetrescu & Finocchi, "Input-Sensitive Profiling"
(PLDI 2012), with sizes fixed by the sweep instead of inferred.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE
from quadscope.errors import FitRefusedError
from quadscope.model import Fit
from quadscope.profile.noise import sampled_sd, samples_per_second
from quadscope.profile.perfscript import is_kernel_dso
from quadscope.profile.records import Culprit
from quadscope.profile.stacks import Frame, Stack, StackProfile
from quadscope.profile.startup import STARTUP

SUPERLINEAR_MIN = 0.05
MIN_SHARE = 0.005  # functions below this share at every size are not fitted
# Below this share at the largest size a function's class is reported inconclusive:
# at the usual ~2000 samples that is under 100 samples, split over 4-5 sizes.
CLASS_MIN_SHARE = 0.05
MIN_SAMPLES = 1000  # at the largest size, below it attribution is rough (a note says so)
MAX_CULPRITS = 10
# A function with fewer samples than this at the largest size has a Poisson error
# over 30%: it cannot support a fit, so it is folded into OTHER.
MIN_FUNCTION_SAMPLES = 10
# A function's excess over the line counts toward the super-linear ranking only beyond
# this many of its sampling standard deviations (one-sided, about 2.3% by chance alone).
EXCESS_Z = 2.0
OTHER = "other"

FitFn = Callable[..., Fit]


@dataclass(frozen=True, slots=True)
class Series:
    """Seconds per profiled size for every function: self and inclusive."""

    sizes: tuple[int, ...]
    total_s: tuple[float, ...]
    self_s: Mapping[Frame, tuple[float, ...]]
    inclusive_s: Mapping[Frame, tuple[float, ...]]
    per_second: tuple[float, ...] = ()  # samples per second of cost at each size (0: unknown)


def series(profiles: Sequence[StackProfile]) -> Series:
    ordered = sorted(profiles, key=lambda p: p.size_n)
    k = len(ordered)
    self_s: dict[Frame, list[float]] = {}
    incl_s: dict[Frame, list[float]] = {}
    for i, prof in enumerate(ordered):
        scale = prof.seconds_per_weight()
        for stack, w in prof.stacks.items():
            if not stack:
                continue
            sec = w * scale
            self_s.setdefault(stack[-1], [0.0] * k)[i] += sec
            for f in set(stack):
                incl_s.setdefault(f, [0.0] * k)[i] += sec
    return Series(
        tuple(p.size_n for p in ordered),
        tuple(p.reference_s if p.total_weight else 0.0 for p in ordered),
        {f: tuple(v) for f, v in self_s.items()},
        {f: tuple(v) for f, v in incl_s.items()},
        tuple(samples_per_second(p) for p in ordered),
    )


def two_point_exponent(n0: float, n1: float, c0: float, c1: float) -> float | None:
    """log(c1/c0) / log(n1/n0): the growth exponent between two sizes, None if undefined."""
    if c0 <= 0 or c1 <= 0 or n1 <= n0:
        return None
    return math.log(c1 / c0) / math.log(n1 / n0)


def hottest_path(stacks: Mapping[Stack, int], frame: Frame) -> tuple[Frame, ...]:
    """The heaviest root-first path ending at `frame` (its outermost occurrence on each stack)."""
    weights: dict[tuple[Frame, ...], int] = {}
    for stack, w in stacks.items():
        if frame in stack:
            path = stack[: stack.index(frame) + 1]
            weights[path] = weights.get(path, 0) + w
    if not weights:
        return (frame,)
    return max(weights.items(), key=lambda kv: (kv[1], kv[0]))[0]


@dataclass(frozen=True, slots=True)
class AttributionResult:
    culprits: tuple[Culprit, ...]
    series: Series
    notes: tuple[str, ...]
    superlinear: bool


def attribute(
    profiles: Sequence[StackProfile],
    *,
    fit: FitFn = fit_metric,
    max_culprits: int = MAX_CULPRITS,
    min_samples: int = MIN_SAMPLES,
    seed: int = 0,
) -> AttributionResult:
    if len(profiles) < 2:
        raise FitRefusedError(
            "profiling needs at least 2 sizes to tell what grows: give --sizes with 3 or more"
        )
    ser = series(profiles)
    ordered = sorted(profiles, key=lambda p: p.size_n)
    n0, n1 = ser.sizes[0], ser.sizes[-1]
    t1 = ser.total_s[-1]
    notes: list[str] = []
    if ordered[-1].samples < min_samples:
        notes.append(
            f"only {ordered[-1].samples} samples at n={n1} (fewer than {min_samples}): shares are "
            "rough and small functions may be missed; profile larger sizes or longer runs"
        )
    total_excess = linear_excess(ser.sizes, ser.total_s)
    superlinear = t1 > 0 and total_excess > SUPERLINEAR_MIN * t1
    per_sample = ordered[-1].samples / t1 if t1 > 0 else 0.0
    candidates = [
        f for f, v in ser.self_s.items()
        if f != STARTUP
        and any(ser.total_s[i] > 0 and v[i] / ser.total_s[i] >= MIN_SHARE for i in range(len(v)))
    ]
    # Few samples make a function noise only while its share is small too: when a
    # whole profile is thin (a short program, a loaded machine), the function holding
    # most of the time at n₁ is still the one to name, with an unsettled class.
    noise = [f for f in candidates
             if not (t1 > 0 and ser.self_s[f][-1] / t1 >= CLASS_MIN_SHARE)
             and (v_samples(ser.self_s[f], per_sample) < MIN_FUNCTION_SAMPLES
                  or sum(1 for x in ser.self_s[f] if x > 0) < 2)]
    candidates = [f for f in candidates if f not in noise]
    grown = sum(max(v[-1] - v[0], 0.0) for v in ser.self_s.values())
    excess_pos = sum(max(ranked_excess(ser, v), 0.0) for v in ser.self_s.values())
    scored = []
    for f in candidates:
        v = ser.self_s[f]
        excess = ranked_excess(ser, v)
        growth = max(v[-1] - v[0], 0.0) / grown if grown > 0 else 0.0
        sl = max(excess, 0.0) / excess_pos if superlinear and excess_pos > 0 else 0.0
        key = (sl, growth) if superlinear else (growth, v[-1])
        scored.append((key, f, growth, sl))
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    # Functions that are neither visible at n₁ nor part of the growth are noise here.
    scored = [s for s in scored if s[2] >= MIN_SHARE or (t1 > 0 and ser.self_s[s[1]][-1] / t1 >= MIN_SHARE)]
    culprits = []
    for _, f, growth, sl in scored[:max_culprits]:
        v = ser.self_s[f]
        cls, k, ci = _fit_function(fit, f, ser.sizes, v, seed, ser.per_second)
        if k is None:
            k = two_point_exponent(n0, n1, v[0], v[-1])
        share = v[-1] / t1 if t1 > 0 else 0.0
        if share < CLASS_MIN_SHARE:
            cls = INCONCLUSIVE
        path = hottest_path(ordered[-1].stacks, f)
        culprits.append(
            Culprit(
                symbol=f.symbol,
                dso=f.dso,
                self_class=cls,
                self_exponent=k,
                self_exponent_ci=ci,
                share_at_max=share,
                growth_share=growth,
                superlinear_share=sl,
                inclusive_share_at_max=ser.inclusive_s[f][-1] / t1 if t1 > 0 else 0.0,
                self_s=v,
                call_path=tuple(p.label() for p in path),
                user_caller=_user_caller(path) if is_kernel_dso(f.dso) else None,
            )
        )
    other = _other(noise, ser, t1, grown)
    if other is not None:
        culprits.append(other)
    return AttributionResult(tuple(culprits), ser, tuple(notes), superlinear)


def v_samples(v: Sequence[float], per_second: float) -> float:
    """Samples behind a function's cost at the largest size."""
    return v[-1] * per_second


def linear_excess(sizes: Sequence[int], v: Sequence[float]) -> float:
    """Cost at the largest size beyond the line through the two sizes before it.

    With sizes n_a < n_m < n₁: v₁ − (v_m + (v_m − v_a)·(n₁ − n_m)/(n_m − n_a)). A
    constant or a + b·n has none, whatever its offset; a superlinear cost has
    the more the faster it grows. With two sizes: v₁ − v₀·n₁/n₀.
    """
    if len(v) < 3:
        return v[-1] - v[0] * sizes[-1] / sizes[0]
    na, nm, n1 = sizes[-3], sizes[-2], sizes[-1]
    excess = v[-1] - (v[-2] + (v[-2] - v[-3]) * (n1 - nm) / (nm - na))
    # Rounding leaves ~1e-17 for a constant; that is no growth.
    return 0.0 if abs(excess) <= 1e-9 * max(abs(x) for x in v) else excess


def _excess_weights(sizes: Sequence[int], k: int) -> list[tuple[int, float]]:
    """(index, coefficient) of each cost in `linear_excess`, a linear combination of them."""
    if k < 3:
        return [(k - 1, 1.0), (0, -sizes[-1] / sizes[0])]
    r = (sizes[-1] - sizes[-2]) / (sizes[-2] - sizes[-3])
    return [(k - 1, 1.0), (k - 2, -(1.0 + r)), (k - 3, r)]


def excess_sd(sizes: Sequence[int], v: Sequence[float], per_second: Sequence[float]) -> float:
    """The standard deviation of `linear_excess` that sampling alone gives it.

    A cost of v seconds rests on v·p samples at p samples a second, a Poisson count:
    its variance is v/p seconds². The excess is a linear combination Σ cᵢ·vᵢ of the
    costs, so its variance is Σ cᵢ²·vᵢ/pᵢ. 0 where the rate is unknown."""
    if len(per_second) != len(v):
        return 0.0
    var = sum(c * c * v[i] / per_second[i] for i, c in _excess_weights(sizes, len(v))
              if per_second[i] > 0)
    return math.sqrt(var)


def sampled_excess(sizes: Sequence[int], v: Sequence[float], per_second: Sequence[float]) -> float:
    """`grown_excess` where it stands out of the sampling noise (EXCESS_Z of its
    `excess_sd`), else 0. Along a linear axis on a loaded machine a function of 4% of
    the time, sampled 20-25 times a size, showed an excess of half its cost, under one
    standard deviation, and outranked the linear function holding 94% of the growth."""
    excess = grown_excess(sizes, v)
    return excess if excess > EXCESS_Z * excess_sd(sizes, v, per_second) else 0.0


def ranked_excess(ser: Series, v: Sequence[float]) -> float:
    """`sampled_excess` of a function holding at least CLASS_MIN_SHARE of the time at the
    largest size, else 0. A smaller function's cost at one size is a few samples of one
    recording, and a burst of load landing in it moves it more than its Poisson error
    says: in CI under load, a linear `sum(range(200 n))` of 2-4% of the time (by hand,
    under busy: 2, 8 and 82 ms at n = 1k, 2k, 4k, a significant excess) outranked the
    quadratic function holding 98% of the growth, whose own excess (three sizes, one
    recording each) was within its noise. Too small to be given a class, it is too small
    to lead the ranking."""
    t1 = ser.total_s[-1]
    if t1 <= 0 or v[-1] / t1 < CLASS_MIN_SHARE:
        return 0.0
    return sampled_excess(ser.sizes, v, ser.per_second)


def grown_excess(sizes: Sequence[int], v: Sequence[float]) -> float:
    """`linear_excess` of a function whose cost grew from the smallest size to the largest,
    else 0: a flat function's sampled times wobble, and a dip before the last size reads as
    excess over the line (a flat 1.2, 1.3, 0.9, 1.0 ms outranked a linear function's real
    growth along that function's own axis on a loaded machine)."""
    return linear_excess(sizes, v) if v[-1] > v[0] else 0.0


def _other(noise: Sequence[Frame], ser: Series, t1: float, grown: float) -> Culprit | None:
    """The functions too thinly sampled to rank, as one row, when they add up to anything."""
    if not noise:
        return None
    self_s = tuple(sum(ser.self_s[f][i] for f in noise) for i in range(len(ser.sizes)))
    if t1 <= 0 or self_s[-1] / t1 < MIN_SHARE:
        return None
    growth = sum(max(ser.self_s[f][-1] - ser.self_s[f][0], 0.0) for f in noise)
    many = "s" if len(noise) != 1 else ""
    return Culprit(symbol=f"{OTHER} ({len(noise)} function{many}, few samples)", dso="",
                   self_class=INCONCLUSIVE, self_exponent=None, self_exponent_ci=None,
                   share_at_max=self_s[-1] / t1,
                   growth_share=growth / grown if grown > 0 else 0.0, superlinear_share=0.0,
                   inclusive_share_at_max=self_s[-1] / t1, self_s=self_s, call_path=())


def _user_caller(path: Sequence[Frame]) -> str | None:
    """The innermost real user function of a root-first path, by symbol.

    Frames in a bracketed pseudo-object (`[vsyscall]`, `[vdso]`, `[unknown]`,
    `[kernel.kallsyms]`) are skipped: they are where the work was handed to the
    kernel, not the code that asked for it (`tick_loop`, not `[vsyscall]`).
    """
    return next((p.symbol for p in reversed(path)
                 if not is_kernel_dso(p.dso) and not p.dso.startswith("[")), None)


def _fit_function(
    fit: FitFn, f: Frame, sizes: Sequence[int], values: Sequence[float], seed: int,
    per_second: Sequence[float] = (),
) -> tuple[str, float | None, tuple[float, float] | None]:
    """The class, exponent and its interval of one function's self time, each size's
    value weighted by its honest error (`noise.sampled_sd`: samples and load), a settled
    class held to k's interval as a time's is."""
    if len(sizes) < 3:
        return INCONCLUSIVE, None, None
    rates = per_second if len(per_second) == len(values) else (0.0,) * len(values)
    try:
        # A time: a settled class is held to k's interval as a sweep's time is (`strict`:
        # the metric's name is no registered time), never EXPONENT_SLACK outside it.
        res = fit(f"self time of {f.symbol}", list(sizes), list(values), seed=seed,
                  sd=list(sampled_sd(values, rates)), strict=True)
    except FitRefusedError:
        return INCONCLUSIVE, None, None
    return res.cls, res.exponent, res.exponent_ci
