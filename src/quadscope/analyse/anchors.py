"""A time class the counted work contradicts: widened to the bracket between the two.

Contract: `work_anchors(fits, runs, work)` is pure: given one variant's fits, its
measured runs and the metric counting the work exactly, it returns the fits with
each time metric (wall_s, cpu_s, user_s) that settled on a class other than the
work's turned into the bracket between the two classes, with an "anchor" doubt,
and one note per metric it widened, when all of these hold:

* the work's class is settled (`Fit.confident`) and grows, with no change of regime,
  and so is the time's, on a neighbouring class (`NEIGHBOURS`), with no change of
  regime of its own;
* a time faster than the work is not carried by the kernel (`follows.kernel_outgrows`:
  system time surely grows faster, work the instructions do not count) and, for wall
  time, not by waiting (CPU time does not grow as fast: a program that sleeps or
  blocks longer with n truly pays that in wall time).

Why: time is the work times what each instruction costs, and that cost is bounded
above (a miss to DRAM) and below (an L1 hit), so in the long run the program's own
time grows as its own instructions do. A time that settles faster or slower than the
work over the sizes swept is reading a transition (the working set leaving a cache,
a start-up still fading, contention that rose with the runs), which ends, not a
class to extrapolate: calling it the time's class predicts wrongly beyond the sizes.
Measured (issue 25, busy --cores 1 --memory 64): mawk `s = s "x"` at 10k..40k settled
CPU time on "n³" (k = 2.87 [2.70, 3.04]) beside the work counted "n²"; CPython
`sorted` at 62.5k..4M settled CPU time on "n" (k = 0.94 ± 0.15) where the work is
n log n. The bracket keeps what the time showed (its end, and k beside it) and
holds the class it will keep; the gap sentence (`analyse.gap`) says what the
difference is over these sizes. Only a neighbouring class: a time two classes or more
from the work (linear time beside a constant count) is more than a cost per
instruction moves over a sweep, and says the count misses work (a child not traced,
a `rep movs` counted once, the kernel's), which `analysis.time_outgrows_instructions`
then names; the time keeps its class.

The same bound cuts a time bracket (`cut_to_work`): where the work is settled and
the time's k interval lies wholly above the work's exponent (`gap.work_k`, at the
timed sweep's largest size), the bracket keeps no class slower than the work's (an
instruction costs at least an L1 hit); wholly below it, a CPU or user time's keeps
none faster, unless system time surely outgrows the work. Measured (busy --cores 1
--memory 64): coreutils `sort`, work n log n (k = 1.07 at 1M lines), CPU time
k = 1.18 [1.17, 1.20] read "n … n²": linear is what neither lens allows. A cut that
would leave one class is not made: the time's interval excludes the work's
exponent, so it does not settle on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse import text
from quadscope.analyse.follows import kernel_outgrows
from quadscope.analyse.gap import work_k
from quadscope.analyse.headline import bracketed, label
from quadscope.analyse.verdict import COHERENCE_TOL as TOL
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, Fit, Run

TIMES = ("wall_s", "cpu_s", "user_s")
# How far apart (in classes of the registry) a time and the work may be for the work to
# anchor the time: n² beside n³, n beside n log n (module docstring).
NEIGHBOURS = 1


def _settled(work: Fit) -> bool:
    """The work settled on one growing class, with no change of regime: what anchors a time."""
    return (work.confident and work.regime_n is None and work.cls in REGISTRY
            and REGISTRY[work.cls].growing)


def anchored(time: Fit, work: Fit) -> bool:
    """Whether a settled time class is one the counted work contradicts (module docstring;
    the kernel and waiting are `work_anchors`' to rule out, as they need the other fits)."""
    if not _settled(work):
        return False
    if not time.confident or time.regime_n is not None or time.cls not in REGISTRY:
        return False
    apart = abs(REGISTRY.index(time.cls) - REGISTRY.index(work.cls))
    return 0 < apart <= NEIGHBOURS


def _faster(time: Fit, work: Fit) -> bool:
    return REGISTRY.index(time.cls) > REGISTRY.index(work.cls)


def _waits(wall: Fit, fits: Mapping[str, Fit]) -> bool:
    """Wall time's excess may be waiting: CPU time does not grow as fast as wall time."""
    cpu = fits.get("cpu_s")
    if cpu is None:
        return True
    grows = cpu.cls if cpu.confident else cpu.at_most
    return grows not in REGISTRY or REGISTRY.index(grows) < REGISTRY.index(wall.cls)


def work_anchors(fits: Mapping[str, Fit], runs: Sequence[Run],
                 work: str | None) -> tuple[dict[str, Fit], list[str]]:
    """The fits with each time class the counted work contradicts bracketed, and a note
    for each (module docstring)."""
    out = dict(fits)
    counted = fits.get(work) if work else None
    sizes = [r.size_n for r in runs if r.measurement.ok]
    if counted is None or not sizes:
        return out, []
    kernel = kernel_outgrows(fits, counted, float(max(sizes)))
    notes = []
    for metric in TIMES:
        time = fits.get(metric)
        if time is None or not anchored(time, counted):
            continue
        faster = _faster(time, counted)
        if faster and (kernel or (metric == "wall_s" and _waits(time, fits))):
            continue
        lo, hi = (counted.cls, time.cls) if faster else (time.cls, counted.cls)
        doubt = Doubt("anchor", lo, hi, None, numbers={
            "time": time.cls, "work": counted.cls, "k": time.exponent or 0.0})
        said = text.doubt_text(doubt, REGISTRY)
        out[metric] = replace(time, cls=INCONCLUSIVE, best=time.best or time.cls,
                              at_least=lo, at_most=hi, decide_n=None, reason=said,
                              doubts=(*time.doubts, doubt))
        notes.append(f"{metric}: {said}")
    return _cut(out, counted, float(max(sizes)), kernel, notes)


def cut_to_work(time: Fit, work: Fit, k_work: float | None, *,
                below: bool = True) -> tuple[str, str] | None:
    """The time bracket's ends cut at the work's class on the side the time's k interval
    surely leaves it (module docstring); `below`: whether the cut from above is allowed
    (the kernel's or waiting's growth may carry a time past the work). None where nothing
    is cut, or the cut would leave one class."""
    if (time.confident or not bracketed(time) or time.regime_n is not None or k_work is None
            or not _settled(work)
            or time.exponent_ci is None):
        return None
    order = REGISTRY.index
    lo, hi = time.at_least, time.at_most
    if not order(lo) <= order(work.cls) <= order(hi):
        return None
    k_lo, k_hi = time.exponent_ci
    if k_lo > k_work + TOL and order(lo) < order(work.cls):
        lo = work.cls
    elif below and k_hi < k_work - TOL and order(hi) > order(work.cls):
        hi = work.cls
    else:
        return None
    return None if lo == hi else (lo, hi)


def _cut(fits: dict[str, Fit], work: Fit, at_n: float, kernel: bool,
         notes: list[str]) -> tuple[dict[str, Fit], list[str]]:
    """`fits` with each time bracket `cut_to_work` cuts, and a note for each."""
    k_work = work_k(work, at_n)
    for metric in TIMES:
        time = fits.get(metric)
        if time is None:
            continue
        ends = cut_to_work(time, work, k_work, below=metric != "wall_s" and not kernel)
        if ends is None:
            continue
        fits[metric] = replace(time, at_least=ends[0], at_most=ends[1])
        above = ends[0] == work.cls
        k_lo, k_hi = time.exponent_ci or (0.0, 0.0)
        notes.append(
            f"{metric}: its k interval [{k_lo:.2f}, {k_hi:.2f}] lies "
            f"{'above' if above else 'below'} the work's exponent ({k_work or 0.0:.2f}, "
            f"{label(work.cls)}, counted exactly), and an instruction's cost is bounded: no "
            f"class {'slower' if above else 'faster'} than the work's, so "
            f"{label(ends[0])} … {label(ends[1])} "
            f"(time alone: {label(time.at_least)} … {label(time.at_most)})")
    return fits, notes
