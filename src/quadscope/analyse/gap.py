"""Why the time's class differs from the work's: one cause, with the numbers the sweep has.

Contract: `gap(fits, runs, host, work)` is pure. Given one variant's fits, its
measured runs, the sweep's host facts and the metric counting the work exactly,
it returns a `Gap` when the work's class is settled and the time's growth
surely differs from it, else None:

* surely differs: the work's exponent (the local k of its fitted curve at
  the timed sweep's largest size, which counting may not have reached;
  `analyse.exactfit`) lies outside the time's 95% exponent interval, or the
  time settled on another class;
* the time is the headline's (`headline.time_fit`: wall time, or CPU time);
* where the work was counted up to the timed sweep's largest size, the time per
  unit of work moved the gap's way by more than PER_MOVE from the smallest
  counted size or over the top of them (`_cost_moved`): two exponents of two models may part while the
  time keeps step with the work.

The cause is read from what every timed run records, first match wins:

* time grows faster, and the kernel's share of the CPU time at the largest
  size is at least SYS_SHARE and has risen by SYS_RISE since the smallest:
  "kernel" (page faults of freshly mapped memory, copies in system calls);
* time grows faster, and the working set (peak RSS at a size less that at the
  smallest) crosses the L2 cache (or LLC_SHARE of the last-level cache) inside
  the sizes: "cache", with the size where it crosses, interpolated in log n
  between the two sizes either side;
* wall time grows slower, and the program kept more CPUs busy at the largest
  size than at the smallest (`analyse.parallel.spread_out`): "parallel", with
  the CPUs busy at either end;
* time grows slower, and the time fit's offset (start-up, which does not
  grow) is at least START_SHARE of the time at the largest size: "start-up";
* time grows faster, and other work kept LOAD_CPUS or more busy over the
  sweep (the host's `other_load`, `measure.system.OtherLoad`): "load", with
  the CPUs it kept busy;
* otherwise "unexplained", still with the numbers looked at (the kernel's
  share, the working set against the cache).

In every case `per_work` is the time per unit of work at the largest counted
size over that at the smallest (a rise means each instruction got dearer), so
the sentence can say how much the cost per instruction moved. The words are
`gap_text`'s. Thresholds are descriptive (what share is worth naming),
not statistical: the decision that the two differ is the intervals'.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quadscope.analyse.text import fmt_n
from quadscope.classes import REGISTRY
from quadscope.host import Host
from quadscope.measure.system import LOAD_CPUS, OtherLoad
from quadscope.model import Fit, Run
from quadscope.units import fmt_bytes

SYS_SHARE = 0.25  # the kernel's share of CPU time at max n worth naming as the cause
SYS_RISE = 0.10  # ... and how much it must have risen since min n (absolute share)
START_SHARE = 0.25  # a fixed cost this large a share of the time at max n flattens it
PER_MOVE = 1.05  # the least rise in time per instruction that is a gap (as `_per_instruction`)
LLC_SHARE = 0.25  # without the L2's size: this share of the last-level cache (as `memory`)


@dataclass(frozen=True, slots=True)
class Gap:
    """The time's growth against the work's, and the one cause the data point to."""

    metric: str  # the time metric compared (wall_s or cpu_s)
    k_time: float
    k_work: float
    faster: bool  # time grows faster than the work
    cause: str  # "kernel", "cache", "parallel", "start-up", "load" or "unexplained"
    n_max: int
    n_min: int
    sys_share_max: float | None  # the kernel's share of CPU time at n_max
    sys_share_min: float | None
    working_set_bytes: float | None  # peak RSS at n_max less that at n_min
    cache_bytes: int | None
    cache: str  # "L2 cache" or "last-level cache"
    cross_n: int | None  # where the working set crosses the cache
    start_share: float | None  # the time fit's offset over the time at n_max
    per_work: float | None  # time per unit of work at the largest counted size / smallest
    per_work_n: tuple[int, int] | None = None  # those two sizes (smallest, largest)
    cpus: tuple[float, float] | None = None  # CPUs busy at once at n_min and n_max
    other_load: tuple[float, int] | None = None  # CPUs other work kept busy, of how many


def _medians(runs: Sequence[Run], metric: str) -> dict[int, float]:
    at: dict[int, list[float]] = {}
    for r in runs:
        v = r.value(metric)
        if v is not None and math.isfinite(v):
            at.setdefault(r.size_n, []).append(v)
    return {n: statistics.median(vs) for n, vs in sorted(at.items())}


def work_k(work: Fit, at_n: float | None = None) -> float | None:
    """The work's exponent: its local k at the largest size counted, 0 for work that does
    not grow. With `at_n` (the timed sweep's largest size, often beyond the counted ones),
    the local exponent of the fitted a + b·f(n) there, so the two are compared at one n:
    a start-up term that flattens the work at the sizes counted fades by the largest."""
    if work.exponent is None:
        return 0.0 if work.confident and work.cls == "1" else None
    if at_n is not None and (k := _terms_k(work, at_n)) is not None:
        return k
    growth = REGISTRY.get(work.cls)
    a, b = work.coefficients.get("a"), work.coefficients.get("b")
    if at_n is None or growth is None or not growth.growing or a is None or not b or b <= 0:
        return work.exponent
    k = _local_k(lambda n: float(growth.evaluate(a, b, [n])[0]), at_n)
    return work.exponent if k is None else k


_H = 1e-3  # the relative step of a local exponent's central difference


def _local_k(curve: Callable[[float], float], at_n: float) -> float | None:
    """d log curve / d log n at `at_n` (a central difference), None where it is not positive."""
    lo, hi = curve(at_n * (1 - _H)), curve(at_n * (1 + _H))
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return None
    return math.log(hi / lo) / math.log((1 + _H) / (1 - _H))


def _terms_k(work: Fit, at_n: float) -> float | None:
    """The local exponent at `at_n` of the growing terms an exact count settled on (its
    "work_terms" note: a + c·n + b·n², the start-up left out as `exactfit` leaves it), so
    beyond the sizes counted the slower term still lowers k as it did within them."""
    note = next((d for d in work.doubts if d.check == "work_terms" and d.numbers.get("settled")),
                None)
    if note is None:
        return None
    parts = []
    for i in (1, 2):
        name, b = note.numbers.get(f"term{i}"), note.numbers.get(f"b{i}")
        growth = REGISTRY.get(str(name))
        if growth is None or growth.bases or not isinstance(b, (int, float)) or b <= 0:
            return None
        parts.append((growth, float(b)))
    import numpy as np  # as `work_k`'s callers have it loaded; this module stays light

    with np.errstate(over="ignore", invalid="ignore"):
        return _local_k(lambda n: sum(float(g.evaluate(0.0, b, [n])[0]) for g, b in parts),
                        at_n)


def differs(time: Fit, work: Fit, at_n: float | None = None) -> bool:
    """Whether the time surely grows otherwise than the settled work (module docstring),
    the work's exponent taken at `at_n` (`work_k`)."""
    k = work_k(work, at_n)
    if not work.confident or k is None:
        return False
    if time.confident and time.cls != work.cls:
        return True
    ci = time.exponent_ci
    return ci is not None and not ci[0] <= k <= ci[1]


def _sys_share(user: Mapping[int, float], sys: Mapping[int, float], n: int) -> float | None:
    u, s = user.get(n), sys.get(n)
    if u is None or s is None or u + s <= 0:
        return None
    return s / (u + s)


def sys_share(runs: Sequence[Run], n: int) -> float | None:
    """The kernel's share of the CPU time at size n: the median system time over the median
    user plus system time there (`analyse.kernel` asks it too)."""
    return _sys_share(_medians(runs, "user_s"), _medians(runs, "sys_s"), n)


def crossing(rss: Mapping[int, float], cache: float) -> int | None:
    """The size where the working set (RSS less that at the smallest size) reaches `cache`,
    interpolated in log n and log bytes between the sizes either side; None if it never
    does or already has at the second size (no size below it inside)."""
    sizes = sorted(rss)
    if len(sizes) < 2:
        return None
    base = rss[sizes[0]]
    for lo, hi in itertools.pairwise(sizes):
        w_lo, w_hi = rss[lo] - base, rss[hi] - base
        if w_hi >= cache:
            if w_lo <= 0 or w_hi <= w_lo:
                return hi
            frac = math.log(cache / w_lo) / math.log(w_hi / w_lo)
            return _two_digits(math.exp(math.log(lo) + frac * math.log(hi / lo)))
    return None


def _two_digits(n: float) -> int:
    """An interpolated size to two significant digits ("n ≈ 150000", not 152002)."""
    return int(float(f"{n:.2g}"))


def _both(time: Mapping[int, float], work: Mapping[int, float]) -> list[int]:
    """The sizes both timed and counted, with positive medians, smallest first."""
    return [n for n in sorted(work) if n in time and work[n] > 0 and time[n] > 0]


def _per(time: Mapping[int, float], work: Mapping[int, float], lo: int, hi: int) -> float:
    """The time per unit of work at `hi` over that at `lo`."""
    return (time[hi] / work[hi]) / (time[lo] / work[lo])


def _per_work(time: Mapping[int, float],
              work: Mapping[int, float]) -> tuple[float, tuple[int, int]] | None:
    """The time per unit of work at the largest counted size over that at the smallest,
    and those two sizes."""
    both = _both(time, work)
    if len(both) < 2:
        return None
    return _per(time, work, both[0], both[-1]), (both[0], both[-1])


def _cost_moved(time: Mapping[int, float], work: Mapping[int, float], faster: bool) -> bool:
    """Whether the time per unit of work moved the gap's way by more than PER_MOVE, from
    the smallest counted size or over the top of them (the largest against the largest at
    most a quarter of it: start-up, dear per instruction, weighs least there, while a
    second thread started early shows from the smallest). Two exponents of two models can
    part while the time keeps step with the work (CPython `bytes +=` counted a + c·n + b·n²,
    k 1.77 at 128000; CPU time's a + b·n^k read k = 2.18 [1.99, 2.37], yet each instruction
    cost 1.0× as much at 128000 as at 8000): no gap is said then."""
    both = _both(time, work)
    if len(both) < 2:
        return True  # nothing to measure it by: the intervals alone decide
    hi = both[-1]
    for lo in {both[0], max((n for n in both if n * 4 <= hi), default=both[0])}:
        per = _per(time, work, lo, hi)
        if (per > PER_MOVE) if faster else (per < 1 / PER_MOVE):
            return True
    return False


def other_load(host: Host) -> tuple[float, int] | None:
    """The CPUs other work kept busy over the sweep and the online CPUs (`other_load`,
    "1.02/2"), None where it was not recorded or does not read."""
    return OtherLoad.parse(host.other_load)


def _cache(host: Host) -> tuple[int | None, str]:
    if host.l2_bytes:
        return host.l2_bytes, "L2 cache"
    if host.llc_bytes:
        return round(LLC_SHARE * host.llc_bytes), "last-level cache"
    return None, ""


def gap(fits: Mapping[str, Fit], runs: Sequence[Run], host: Host, work: str | None) -> Gap | None:
    """The time's growth against the work's, and its cause (module docstring); None if alike."""
    from quadscope.analyse.headline import time_fit
    from quadscope.analyse.parallel import spread_out  # parallel -> kernel -> gap

    counted = fits.get(work) if work else None
    timed = time_fit(fits)
    if counted is None or timed is None or timed.exponent is None:
        return None
    time = _medians(runs, timed.metric)
    if len(time) < 2:
        return None
    n_min, n_max = min(time), max(time)
    # Within the sizes counted the work's own k is the one the headline gives (its slower
    # terms included, the start-up left out); beyond them, its fitted law's slope there.
    counted_n = max(_medians(runs, counted.metric), default=0)
    at_n = float(n_max) if n_max > counted_n else None
    k = work_k(counted, at_n)
    if not differs(timed, counted, at_n) or k is None:
        return None
    faster, cpus = timed.exponent > k, None
    user, sys = _medians(runs, "user_s"), _medians(runs, "sys_s")
    share_max, share_min = _sys_share(user, sys, n_max), _sys_share(user, sys, n_min)
    rss = _medians(runs, "max_rss_bytes")
    ws = rss[max(rss)] - rss[min(rss)] if len(rss) >= 2 else None
    cache_bytes, cache = _cache(host)
    cross = crossing(rss, cache_bytes) if cache_bytes else None
    a = timed.coefficients.get("a", 0.0) if timed.regime_n is None else 0.0
    start = a / time[n_max] if a > 0 and time[n_max] > 0 else None
    if faster and share_max is not None and share_max >= SYS_SHARE and (
            share_min is None or share_max - share_min >= SYS_RISE):
        cause = "kernel"
    elif faster and cross is not None:
        cause = "cache"
    elif not faster and timed.metric == "wall_s" and (spread := spread_out(runs)):
        cause, cpus = "parallel", (spread["cpus_lo"], spread["cpus_hi"])
    elif not faster and start is not None and start >= START_SHARE:
        cause = "start-up"
    elif faster and (load := other_load(host)) is not None and load[0] >= LOAD_CPUS:
        cause = "load"
    else:
        cause = "unexplained"
    counts = _medians(runs, work or "")
    if at_n is None and not _cost_moved(time, counts, faster):
        return None  # the time follows the work where both were measured: the k's model it
    per = _per_work(time, counts)
    return Gap(timed.metric, timed.exponent, k, faster, cause, n_max, n_min,
               share_max, share_min, ws, cache_bytes, cache, cross, start,
               None if per is None else per[0], None if per is None else per[1], cpus,
               other_load(host))


_TIME_WORDS = {"wall_s": "wall time", "cpu_s": "CPU time", "user_s": "user time"}


def _per_instruction(g: Gap) -> str:
    """", each instruction costing 1.6× as much at n = 64000 as at n = 1000" (nothing under
    5%, nor a cost per instruction that moved against the gap: counted only below the
    cache, where start-up still weighs, it fell while the time outgrew the work), between
    the smallest and largest sizes counted."""
    if (g.per_work is None or g.per_work_n is None
            or abs(math.log(g.per_work)) < math.log(PER_MOVE) or (g.per_work > 1) != g.faster):
        return ""
    lo, hi = g.per_work_n
    return (f", each instruction costing {g.per_work:.2g}× as much at n = {fmt_n(hi)} as at "
            f"n = {fmt_n(lo)}")


def _rose(g: Gap) -> str:
    """": each instruction cost 3× as much at n = 16000 as at n = 1000" ("" without counts,
    or under PER_MOVE)."""
    if (g.per_work is None or g.per_work_n is None
            or abs(math.log(g.per_work)) < math.log(PER_MOVE)):
        return ""  # "cost 1× as much" beside "grows faster" would read as its contradiction
    lo, hi = g.per_work_n
    return f": each instruction cost {g.per_work:.2g}× as much at n = {fmt_n(hi)} as at n = {fmt_n(lo)}"


def gap_text(g: Gap) -> str:
    """One sentence: the time's growth against the work's, with the cause the data show
    (`analyse.gap`): "wall time grows faster than the work (k 1.35 vs 1.00): the working
    set leaves the 2 MiB L2 cache at n ≈ 40000 (18 MiB at n = 1000000)"."""
    who = _TIME_WORDS.get(g.metric, g.metric)
    head = (f"{who} grows {'faster' if g.faster else 'slower'} than the work "
            f"(k {g.k_time:.2f} vs {g.k_work:.2f})")
    at_max = f"n = {fmt_n(g.n_max)}"
    if g.cause == "kernel" and g.sys_share_max is not None:
        since = ("" if g.sys_share_min is None
                 else f", against {g.sys_share_min:.0%} at n = {fmt_n(g.n_min)}")
        return (f"{head}: the kernel carries the excess, {g.sys_share_max:.0%} of the CPU time "
                f"at {at_max} is system time{since}")
    if g.cause == "cache" and g.cross_n is not None and g.cache_bytes:
        held = "" if g.working_set_bytes is None else (
            f" ({fmt_bytes(g.working_set_bytes)} at {at_max})")
        return (f"{head}: the working set leaves the {fmt_bytes(g.cache_bytes)} {g.cache} at "
                f"n ≈ {fmt_n(g.cross_n)}{held}{_per_instruction(g)}")
    if g.cause == "parallel" and g.cpus is not None:
        return (f"{head}: the program kept {g.cpus[0]:.1f} CPUs busy at n = {fmt_n(g.n_min)} "
                f"and {g.cpus[1]:.1f} at {at_max}, and wall time divides the work among them")
    if g.cause == "start-up" and g.start_share is not None:
        return (f"{head}: a fixed cost (start-up) is still {g.start_share:.0%} of the time at "
                f"{at_max}, so the time has not yet taken on the work's growth")
    # A cost per instruction that moved against the gap (start-up's instructions are the
    # dearest, so it fell from the smallest size while the time outgrew the work above it:
    # mawk `s = s "x"`, 0.43× beside "grows faster") would contradict the head: left out.
    rose = _rose(g) if g.per_work is None or (g.per_work > 1) == g.faster else ""
    if g.cause == "load" and g.other_load is not None:
        busy, cpus = g.other_load
        return (f"{head}{rose}, while other work kept {busy:.1f} of the {cpus} CPUs busy "
                "during the sweep, sharing the caches and memory with the runs")
    if not g.faster:
        return head + rose
    kernel = ("" if g.sys_share_max is None
              else f" (system time {g.sys_share_max:.0%} of the CPU time)")
    caches = ""
    if g.working_set_bytes is not None and g.cache_bytes:
        within = "within" if g.working_set_bytes < g.cache_bytes else "beyond"
        caches = (f" (working set {fmt_bytes(max(g.working_set_bytes, 0.0))}, {within} the "
                  f"{fmt_bytes(g.cache_bytes)} {g.cache})")
    return f"{head}{rose}; neither the kernel{kernel} nor the caches{caches} explain it"
