"""Wall time that outgrows CPU time while the runs wait for a CPU: other work's load, not the program's.

Contract: `wait_bound(fits, runs)` is pure: given one variant's fits and
measured runs, it returns the fits with a wall-time verdict widened down to
what CPU time supports, and a note, when:

* CPU time's slowest supported class (its settled class, or its bracket's
  floor) is slower than wall time's (its class, or its bracket's floor: a
  bracket of one class above a change of regime is a class too; mawk
  `s = s "x"` under busy read "n³ above n ≈ 24,000" on the clock, CPU time
  "n² … n³");
* the runs waited more at the largest size than at the smallest: the median
  wall/CPU ratio there is at least WAIT_RISE times the smallest size's; and
* the waiting is preemption, not the program's own: involuntary context
  switches at the largest size number at least MIN_PREEMPTED (the scheduler
  took the CPU away), while the voluntary ones (the program sleeping or
  blocking on I/O) stay within VOLUNTARY_SLACK of the smallest size's.

Why: on a machine doing something else, a run that fits in one time slice
finishes without waiting, and a run of seconds shares its CPU with the other
work for all of them, so wall/CPU rises with n and wall time gains growth the
program lacks. Measured (issue 25): the cache_step workload (linear work)
under `busy --cores 1 --memory 64` at a load of 5.6 on 2 CPUs waited 1.4× at
n = 4k and 6.9× at 1M (151 involuntary switches, 1 voluntary), and wall time
settled "quadratic: n² (k = 1.95)". CPU time (user + sys, the scheduler's
runtime) is what the program paid. The widened wall verdict lets CPU time lead
the headline (`headline.time_fit`), and its doubt (check "waiting") names
`--meter instructions`, so the default meter counts the work
(`run.counting.open_reason`). A program that sleeps or waits for I/O raises
its voluntary switches, and its wall time stays as measured.

A wall time left unsettled (a bracket, or nothing) whose k's 95% interval is
wider than CPU time's by NARROWER or more, while the runs at the largest size
waited (wall/CPU at least WAIT_RISE there, grown or not) and were preempted as
above (`preempted`), gets the same "waiting" doubt, its bracket unchanged: CPU
time then leads the headline (`headline.time_fit`). Measured (issue 25, busy
--cores 1 --memory 64 at a load of 8–11): mawk `s = s "x"` at 1..160k waited
4.4× at the largest size (209 preemptions), and its wall time read "√n … n²"
beside k = 1.14 [0.93, 1.36] (1–20 ms of waiting on 1 ms runs weighs the small
sizes), where CPU time read k = 2.58 [2.41, 2.76] (truth n²); CPU time's
interval was the narrower in 9 of the 12 CPython and coreutils sweeps.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse import text
from quadscope.analyse.kernel import floor_class
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, Fit, Run

WAIT_RISE = 1.5  # wall/CPU at the largest size over the smallest's: waiting that grew
MIN_PREEMPTED = 5.0  # involuntary context switches at the largest size: the CPU taken away
VOLUNTARY_SLACK = 2.0  # voluntary switches may rise this much (times, plus this many)
NARROWER = 0.1  # CPU time's k interval narrower than wall time's by at least this share


def _median(runs: Sequence[Run], n: int, value: str) -> float | None:
    got = [v for r in runs if r.size_n == n and (v := r.value(value)) is not None]
    return statistics.median(got) if got else None


def _ratio(runs: Sequence[Run], n: int) -> float | None:
    """The median wall/CPU ratio of the runs at size n (None without CPU time)."""
    got = [r.measurement.wall_s / cpu for r in runs if r.size_n == n
           and (cpu := r.value("cpu_s")) is not None and cpu > 0]
    return statistics.median(got) if got else None


def _numbers(runs: Sequence[Run]) -> dict[str, float] | None:
    """The wall/CPU ratios at the smallest and largest sizes, the preemptions and voluntary
    switches there, for runs preempted at the largest size (MIN_PREEMPTED) whose voluntary
    switches did not rise (a program that sleeps or blocks more as n grows); else None."""
    sizes = sorted({r.size_n for r in runs})
    if len(sizes) < 3:
        return None
    lo, hi = _ratio(runs, sizes[0]), _ratio(runs, sizes[-1])
    inv = _median(runs, sizes[-1], "involuntary_ctx_switches")
    vol_lo = _median(runs, sizes[0], "voluntary_ctx_switches")
    vol_hi = _median(runs, sizes[-1], "voluntary_ctx_switches")
    if lo is None or hi is None or inv is None or vol_lo is None or vol_hi is None:
        return None
    if inv < MIN_PREEMPTED or vol_hi > VOLUNTARY_SLACK * vol_lo + VOLUNTARY_SLACK:
        return None
    return {"ratio_lo": lo, "ratio_hi": hi, "lo_n": float(sizes[0]), "hi_n": float(sizes[-1]),
            "preempted": inv, "voluntary": vol_hi}


def waited(runs: Sequence[Run]) -> dict[str, float] | None:
    """The numbers of waiting that grew with n and was preemption (module docstring), or None."""
    got = _numbers(runs)
    return got if got and got["ratio_hi"] >= WAIT_RISE * max(got["ratio_lo"], 1.0) else None


def preempted(runs: Sequence[Run]) -> dict[str, float] | None:
    """The numbers of runs that waited for a CPU at the largest size, grown or not: wall
    time at least WAIT_RISE × the CPU time there, preempted at least MIN_PREEMPTED times,
    the voluntary switches not rising (module docstring); else None."""
    got = _numbers(runs)
    return got if got and got["ratio_hi"] >= WAIT_RISE else None


def _width(fit: Fit) -> float:
    lo, hi = fit.exponent_ci or (0.0, float("inf"))
    return hi - lo


def _waited_bracket(wall: Fit, cpu: Fit | None, runs: Sequence[Run],
                    counted: Mapping[str, str]) -> Doubt | None:
    """A "waiting" doubt for a wall time left unsettled whose k's interval is wider than CPU
    time's while the runs were preempted (`preempted`): the width is the machine's load."""
    if (wall.confident or cpu is None or wall.exponent_ci is None or cpu.exponent_ci is None
            or _width(cpu) * (1 + NARROWER) >= _width(wall)):
        return None
    numbers = preempted(runs)
    floor, top = floor_class(cpu), cpu.cls if cpu.confident else cpu.at_most
    if numbers is None or floor not in REGISTRY or top not in REGISTRY:
        return None
    return Doubt("waiting", floor, top, None, numbers={**numbers, "cpu": floor, **counted})


def wait_bound(fits: Mapping[str, Fit], runs: Sequence[Run],
               work: str | None = None) -> tuple[dict[str, Fit], list[str]]:
    """The fits with a wall-time verdict the runs' waiting may account for widened to what
    CPU time supports, and a note (see the module docstring); `work`, the metric that
    counted the work where the sweep did (its sentence then names no meter)."""
    counted = {"counted": work} if work else {}
    out = dict(fits)
    wall, cpu_floor = fits.get("wall_s"), floor_class(fits.get("cpu_s"))
    order = REGISTRY.index
    if wall is not None and (late := _waited_bracket(wall, fits.get("cpu_s"), runs, counted)):
        said = text.doubt_text(late, REGISTRY)
        out["wall_s"] = replace(wall, doubts=(*wall.doubts, late))
        return out, [f"wall_s: {said}"]
    floor = floor_class(wall)
    if (wall is None or floor not in REGISTRY or cpu_floor not in REGISTRY
            or order(cpu_floor) >= order(floor)):
        return out, []
    top = wall.cls if wall.confident else wall.at_most
    numbers = waited(runs)
    if numbers is None or top not in REGISTRY:
        return out, []
    doubt = Doubt("waiting", cpu_floor, top, None, meter="instructions",
                  numbers={**numbers, "cpu": cpu_floor, **counted})
    said = text.doubt_text(doubt, REGISTRY)
    out["wall_s"] = replace(wall, cls=INCONCLUSIVE, best=wall.best or wall.cls,
                            at_least=cpu_floor, at_most=top, decide_n=None,
                            reason=said, doubts=(*wall.doubts, doubt))
    return out, [f"wall_s: {said}"]
