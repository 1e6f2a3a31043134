"""Wall time that grows slower than CPU time as the program runs on more CPUs at larger n.

Contract: `parallel_bound(fits, runs)` is pure: given one variant's fits and
measured runs, it returns the fits with the wall-time verdict given a
"parallel" doubt, and a note, when the runs used more CPUs at once as n grew:

* the median CPU/wall ratio (user + sys over wall: CPUs busy at once) at the
  largest size is at least MIN_CPUS, which one thread cannot reach, and at
  least PARALLEL_RISE times the smallest size's.

Where CPU time's fastest supported class (its class, or its bracket's top) is
faster than wall time's, wall time's verdict is widened up to it, from its own
floor: the bracket [wall floor, CPU top], and CPU time leads the headline
(`headline.time_fit`). Otherwise the verdict stands and the doubt only says
why wall time may lag (`analyse.gap` names it when the work is counted).
Either way the doubt names `--meter instructions`, and the default meter
counts the work (`run.counting.open_reason`).

Why: a program that starts threads (or a pipeline of processes) once its
input is large enough divides its wall time by the CPUs it keeps busy, and
that number rises with n until it reaches the machine's cores, then stops.
Over the sizes where it rises, wall time grows slower than the work; beyond,
as the work does. Measured (issue 25, this 2-core machine, idle): GNU `sort`
of 62.5k..1M random numbers sorts on one thread below 128k lines and on two
above, CPU/wall 0.99 at 62.5k and 1.6 at 1M; wall time settled
"linear: n (k = 0.93 ± 0.08)" where the work, n log n, read k = 1.08 counted
and CPU time k = 1.20, and the sort went uncounted.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse import text
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, Fit, Run

MIN_CPUS = 1.15  # CPU/wall at the largest size: more than one CPU busy at once, surely
PARALLEL_RISE = 1.2  # ... and this many times the smallest size's: the parallelism grew


def cpus(runs: Sequence[Run], n: int) -> float | None:
    """The median CPU/wall ratio of the runs at size n: the CPUs kept busy at once."""
    got = [cpu / r.measurement.wall_s for r in runs if r.size_n == n
           and (cpu := r.value("cpu_s")) is not None and r.measurement.wall_s > 0]
    return statistics.median(got) if got else None


def spread_out(runs: Sequence[Run]) -> dict[str, float] | None:
    """The CPUs busy at once at the smallest and largest sizes, where they rose with n as the
    module docstring says; else None."""
    sizes = sorted({r.size_n for r in runs})
    if len(sizes) < 3:
        return None
    lo, hi = cpus(runs, sizes[0]), cpus(runs, sizes[-1])
    if lo is None or hi is None or hi < MIN_CPUS or hi < PARALLEL_RISE * lo:
        return None
    return {"cpus_lo": lo, "cpus_hi": hi, "lo_n": float(sizes[0]), "hi_n": float(sizes[-1])}


def _ends(fit: Fit) -> tuple[str, str]:
    """The slowest and fastest classes a fit supports: its settled class twice, or its
    bracket's ends (as `kernel.floor_class`, not imported: `gap` asks this module)."""
    return (fit.cls, fit.cls) if fit.confident else (fit.at_least, fit.at_most)


def parallel_bound(fits: Mapping[str, Fit], runs: Sequence[Run],
                   work: str | None = None) -> tuple[dict[str, Fit], list[str]]:
    """The fits with a "parallel" doubt on wall time, widened up to CPU time's growth where
    that is faster, and a note (see the module docstring); `work`, the metric that counted
    the work where the sweep did (its sentence then names no meter)."""
    out = dict(fits)
    wall, cpu = fits.get("wall_s"), fits.get("cpu_s")
    if wall is None or cpu is None:
        return out, []
    (floor, top), (_, cpu_top) = _ends(wall), _ends(cpu)
    if floor not in REGISTRY or top not in REGISTRY or cpu_top not in REGISTRY:
        return out, []
    numbers = spread_out(runs)
    if numbers is None:
        return out, []
    wider = REGISTRY.index(cpu_top) > REGISTRY.index(top)
    doubt = Doubt("parallel", floor, cpu_top if wider else top, None, meter="instructions",
                  numbers={**numbers, "cpu": cpu_top, **({"counted": work} if work else {})})
    said = text.doubt_text(doubt, REGISTRY)
    if not wider:
        out["wall_s"] = replace(wall, doubts=(*wall.doubts, doubt))
        return out, [f"wall_s: {said}"]
    out["wall_s"] = replace(wall, cls=INCONCLUSIVE, best=wall.best or wall.cls,
                            at_least=floor, at_most=cpu_top, decide_n=None,
                            reason=said, doubts=(*wall.doubts, doubt))
    return out, [f"wall_s: {said}"]
