"""Time that outgrows user time while the kernel's share rises: a caveat, not a class.

Contract: `kernel_bound(fits, runs, work=None)` is pure: given one variant's
fits and measured runs, it returns the fits with each settled time verdict
(wall_s, cpu_s) widened down to what user time alone supports, and a note for
each, when:

* user time's slowest supported class (its settled class, or its bracket's
  floor) is slower than time's class; and
* the kernel's share of the CPU time (sys_s / (user_s + sys_s), medians) is at
  least `gap.SYS_SHARE` at the largest size and has risen by `gap.SYS_RISE`
  since the smallest.

Why: what the kernel does for a program on fresh memory changes regime at
thresholds inside a sweep (malloc switching to mmap above 128 KiB, so every
allocation faults its pages in; transparent huge pages), so a time class
settled on user plus system time can be the transition rather than the
growth: mawk's `s = s "x"` at 10k..160k read "cubic: CPU time grows as n³
(k = 2.70 [2.28, 3.13])" while its work is n² and user time alone n² or n³
(the kernel's share rose from 0% to 35%). Widened, the verdict keeps what the
data support and the doubt (check "kernel") names `--meter instructions`,
so the default meter counts the work (`run.counting.open_reason`). With the
work counted (`work`) nothing is widened: the work leads, and the gap
sentence (`analyse.gap`) says what the kernel carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse import text
from quadscope.analyse.gap import SYS_RISE, SYS_SHARE, sys_share
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, Fit, Run

TIME_METRICS = ("wall_s", "cpu_s")


def floor_class(fit: Fit | None) -> str:
    """The slowest class a fit supports: its settled class, or its bracket's floor."""
    if fit is None:
        return ""
    return fit.cls if fit.confident else fit.at_least


def kernel_bound(fits: Mapping[str, Fit], runs: Sequence[Run],
                 work: str | None = None) -> tuple[dict[str, Fit], list[str]]:
    """The fits with time verdicts the kernel's rising share may account for widened to
    what user time supports, and a note for each (see the module docstring)."""
    out = dict(fits)
    sizes = sorted({r.size_n for r in runs})
    user_floor = floor_class(fits.get("user_s"))
    if work or len(sizes) < 2 or user_floor not in REGISTRY:
        return out, []
    low, high = sys_share(runs, sizes[0]), sys_share(runs, sizes[-1])
    if high is None or high < SYS_SHARE or (low is not None and high - low < SYS_RISE):
        return out, []
    notes = []
    order = REGISTRY.index
    for metric in TIME_METRICS:
        fit = fits.get(metric)
        if fit is None or not fit.confident or order(user_floor) >= order(fit.cls):
            continue
        doubt = Doubt("kernel", user_floor, fit.cls, None, meter="instructions",
                      numbers={"metric": metric, "share_lo": low if low is not None else 0.0,
                               "share_hi": high, "lo_n": float(sizes[0]),
                               "hi_n": float(sizes[-1]), "user": user_floor})
        said = text.doubt_text(doubt, REGISTRY)
        out[metric] = replace(fit, cls=INCONCLUSIVE, best=fit.best or fit.cls,
                              at_least=user_floor, at_most=fit.cls, decide_n=None,
                              reason=said, doubts=(*fit.doubts, doubt))
        notes.append(f"{metric}: {said}")
    return out, notes
