"""Time that grows as the counted work does: a time bracket the work decides.

Contract: `work_follows(fits, runs, work)` is pure: given one variant's fits, its
measured runs and the metric counting the work exactly, it returns the fits with
each time metric's bracket (wall_s, cpu_s, user_s) settled on the work's class,
and one note naming those it settled, when all of these hold:

* the work's class is settled (`Fit.confident`), with no change of regime;
* the time's own verdict is a bracket that holds the work's class and at most its
  neighbours (`NEIGHBOURS`: "√n … n log n" around n, never "1 … n³") and an
  exponent interval at most one power wide (`MAX_WIDTH`), with no change of regime
  and none of the doubts that say the time grows otherwise than one power
  (`OTHERWISE`: a regime or step, local slopes that rise through the caches, the
  kernel's share growing faster);
* the work's exponent, taken at the timed sweep's largest size (`gap.work_k`: the
  local k of its fitted terms there), lies in the time's 95% exponent interval;
* system time does not surely grow faster than the work (`kernel_outgrows`): the
  instructions counted are the program's own, and the kernel's work is not among them.

Why: time is the work times what each unit of it costs. The cost of an instruction
is bounded (an L1 hit to a miss to DRAM), so over the sizes measured time can
outgrow the work only by what the caches, the kernel or the load add, and the
time's own data then show it, as an interval that excludes the work's exponent
(`gap.differs`, which names the cause). Where the time's interval holds the work's
exponent, the time's data show no such gap, and the bracket they left is their
noise: the one class both the work and the time support is the work's. Measured
(issue 25, busy --cores 1 --memory 64 at a load of 9): coreutils `tac` (work n,
exact) read CPU time "√n … n log n" beside k = 0.89 [0.76, 1.03]; CPython set
membership (work n) "n or n log n" beside k = 1.03 [0.83, 1.23]. A time whose
interval excludes the work's exponent keeps its own verdict and the gap sentence
says why (mawk `s = s "x"`, CPU time k = 3.25 [2.73, 3.77] beside work n²).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse.gap import work_k
from quadscope.analyse.headline import bracket_text, bracketed, label, metric_words, time_fit
from quadscope.analyse.verdict import COHERENCE_TOL as TOL
from quadscope.classes import REGISTRY
from quadscope.model import Fit, Run

TIMES = ("wall_s", "cpu_s", "user_s")
# Doubts that say the time grows otherwise than one power: the work cannot settle those.
OTHERWISE = frozenset({"regime", "step", "slopes", "kernel"})
# The widest time bracket the work may settle, in classes from one end to the other:
# "√n … n log n" (2). A wider one ("1 … n³") is the time saying next to nothing, and the
# work's class would become the time's verdict on no evidence of the time's own.
NEIGHBOURS = 2
# ... and the widest exponent interval: one power, n to n² (an interval wider holds a
# linear and a quadratic time alike).
MAX_WIDTH = 1.0


def follows(time: Fit, work: Fit, at_n: float) -> bool:
    """Whether the time's bracket may settle on the work's class (module docstring)."""
    if not work.confident or work.regime_n is not None or work.cls not in REGISTRY:
        return False
    if time.confident or not bracketed(time) or time.regime_n is not None:
        return False
    if any(d.check in OTHERWISE for d in time.doubts):
        return False
    order = REGISTRY.index
    if not order(time.at_least) <= order(work.cls) <= order(time.at_most):
        return False
    if order(time.at_most) - order(time.at_least) > NEIGHBOURS:
        return False
    k, ci = work_k(work, at_n), time.exponent_ci
    return (k is not None and ci is not None and ci[1] - ci[0] <= MAX_WIDTH
            and ci[0] - TOL <= k <= ci[1] + TOL)


def work_follows(fits: Mapping[str, Fit], runs: Sequence[Run],
                 work: str | None) -> tuple[dict[str, Fit], list[str]]:
    """The fits with each time bracket the counted work decides settled, and a note."""
    out = dict(fits)
    counted = fits.get(work) if work else None
    sizes = [r.size_n for r in runs if r.measurement.ok]
    if counted is None or not sizes or kernel_outgrows(fits, counted, float(max(sizes))):
        return out, []
    settled = [m for m in TIMES if (t := fits.get(m)) is not None
               and follows(t, counted, float(max(sizes)))]
    if not settled:
        return out, []
    for metric in settled:
        out[metric] = replace(fits[metric], cls=counted.cls, best=counted.cls,
                              at_least=counted.cls, at_most=counted.cls, reason="",
                              decide_n=None)
    shown = time_fit({m: fits[m] for m in settled}) or fits[settled[0]]
    lo, hi = shown.exponent_ci or (0.0, 0.0)
    return out, [
        f"{shown.metric}: {metric_words(shown.metric)} alone left {bracket_text(shown)} "
        f"(k = {shown.exponent or 0.0:.2f} [{lo:.2f}, {hi:.2f}]); "
        f"the work, counted exactly, grows as {label(counted.cls)} and that interval holds "
        f"its exponent: {', '.join(metric_words(m) for m in settled)} "
        f"{'grows' if len(settled) == 1 else 'grow'} as the work does"]


def kernel_outgrows(fits: Mapping[str, Fit], work: Fit, at_n: float) -> bool:
    """The kernel's share surely grows faster than the work: system time settled on a faster
    class, or its exponent's 95% interval lies above the work's (work the instructions do
    not count, as page faults of freshly mapped memory)."""
    sys, k = fits.get("sys_s"), work_k(work, at_n)
    if sys is None or k is None or work.cls not in REGISTRY:
        return False
    if sys.confident and sys.cls in REGISTRY and REGISTRY.index(sys.cls) > REGISTRY.index(work.cls):
        return True
    return sys.exponent_ci is not None and sys.exponent_ci[0] > k + TOL
