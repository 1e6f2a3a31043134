"""`quadscope demo`: two built-in before/after stories, measured live on this machine.

Contract: builds the built-in C workloads it needs (a C compiler is the only
requirement), runs two A/B sweeps through the same session (`run.session`:
host facts and skew checks recorded, the default meter's executor and its
counting, so the work is counted where time leaves the class open: story 1's
launches in place, `run.accumulate`) → `analyse` →
terminal renderer path as `quadscope run`, stores both in the results database
(so `quadscope list` and `show` see them) and prints, after each report, what
the fits say in one sentence. Nothing is claimed that was not measured: the
sentences are built from the fits. `--quick` is a shorter version for tests.

1. Accumulating cost (`--accumulate`): a logger that probes app.0.dat,
   app.1.dat, … for a free name on every launch (launch i probes i names)
   against its fix that names files by time and pid.
2. Accidentally quadratic (sizes of n): a top-down "highest free hole"
   allocator that scans every earlier region on each allocation, against its
   fix that remembers the lowest region.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope.analyse.headline import (
    accumulated_total,
    bracket_text,
    bracketed,
    exponent_text,
    label,
    lead_fit,
    metric_words,
    trivial,
)
from quadscope.classes import REGISTRY
from quadscope.commands.common import (
    add_store_option,
    open_store,
    print_analysis,
    terminal_width,
)
from quadscope.units import fmt_count

if TYPE_CHECKING:  # the rest is imported where used: `quadscope --help` stays cheap
    from quadscope.analyse.analysis import Analysis
    from quadscope.model import Fit
    from quadscope.run.spec import SweepSpec
    from quadscope.store import Store


@dataclass(frozen=True, slots=True)
class DemoPlan:
    """How much the demo measures: launches for story 1, sizes and repeats for story 2."""

    launches: int
    sizes: tuple[int, ...]
    repeat: int


# Launches: launch i of the probing logger costs ~10 µs per earlier file over
# ~1 ms of process start-up: 600 launches make the slope plain through the
# noise of a shared machine; the probing side's total cost grows as K².
# Sizes: a decade and a half of n, the largest first-fit run ~0.3 s.
FULL = DemoPlan(launches=600, sizes=(1000, 2000, 4000, 8000, 16000, 32000), repeat=5)
QUICK = DemoPlan(launches=300, sizes=(1000, 2000, 4000, 8000, 16000), repeat=3)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        description="Builds small C programs with known scaling bugs and their fixes, sweeps "
        "them and prints quadscope's verdicts. The sweeps are stored like any other.",
    )
    p.add_argument("--quick", action="store_true",
                   help=f"a shorter run ({QUICK.launches} launches, {len(QUICK.sizes)} sizes)")
    p.add_argument("--no-perf", action="store_true",
                   help="do not count with perf (rusage and the clock only)")
    add_store_option(p)
    p.set_defaults(func=run)


def _sweep(spec: SweepSpec, store: Store, no_perf: bool) -> Analysis:
    from quadscope.analyse.analysis import analyse
    from quadscope.commands.run import RichProgress  # the same progress bar as `quadscope run`
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    measuring = session.choose(spec, no_perf=no_perf)
    counting = session.choose_counting(spec, no_perf=no_perf)  # `--meter auto`, as `run`
    progress = RichProgress()
    try:
        sweep = session.start(spec, store=store, clock=SystemClock(),
                              machine=session.Machine.real(), measuring=measuring,
                              progress=progress, counting=counting)
    finally:
        progress.stop()
    return analyse(sweep, store.runs(sweep.id))


def _fit(analysis: Analysis, variant: str, metric: str = "wall_s") -> Fit | None:
    return analysis.fits.get(variant, {}).get(metric)


def _grows(fit: Fit | None, size_word: str, how: str = "") -> str:
    """'is constant', 'grows as n²', a bracket 'grows as n or n log n', or 'is not settled';
    `how` (what was measured, "instructions, counted exactly") opens the parenthesis."""
    if fit is None:
        return "could not be fitted"
    k = exponent_text(fit)
    k = f"k = {k}" if k and not k.startswith("≥") else f"k {k}" if k else ""
    k = ", ".join(filter(None, (how, k)))
    k = f" ({k})" if k else ""
    if trivial(fit):
        return f"is constant{k}"
    if fit.confident:
        return f"grows as {label(fit.cls, size_word)}{k}"
    if bracketed(fit) and REGISTRY.index(fit.at_most) - REGISTRY.index(fit.at_least) >= 3:
        # A wide bracket (√i … i², log i … cⁱ on a loaded machine) names no class: saying
        # "grows as log i … cⁱ" would read as a claim of exponential growth.
        fits = f"anything from {label(fit.at_least, size_word)} to {label(fit.at_most, size_word)} fits"
        inside = "; ".join(filter(None, (k.strip(" ()"), fits)))
        if fit.exponent_ci is not None and fit.exponent_ci[0] > 0:
            return f"grows ({inside})"
        where = "launches" if size_word == "i" else "sizes"
        return f"has no class settled over these {where} ({inside})"
    if bracketed(fit):
        return f"grows as {bracket_text(fit, size_word)}{k}"
    return f"is not settled yet{k}"


def accumulate_sentence(analysis: Analysis, launches: int) -> str:
    """What the fits of story 1 say, for a reader who has not met accumulate mode: the work
    per launch where it was counted (`run.accumulate`), with the time beside it."""
    from quadscope.meters import exact_metric

    work = exact_metric(analysis.sweep.meter)
    parts = []
    for variant, who in (("A", "probing logger"), ("B", "fixed logger")):
        fit = _fit(analysis, variant)
        counted = _fit(analysis, variant, work) if work else None
        tail = (f", so {accumulated_total(fit, launches)}" if fit is not None
                else f" after {launches} launches")
        if counted is not None:
            parts.append(f"the {who}'s work per launch, against the launch index i, "
                         f"{_grows(counted, 'i', f'{work}, counted exactly')}; its wall time "
                         f"per launch {_grows(fit, 'i')}{tail}")
            continue
        parts.append(f"the {who}'s wall time per launch, against the launch index i, "
                     f"{_grows(fit, 'i')}{tail}")
    return "Verdict: " + "; ".join(parts) + "."


def sizes_sentence(analysis: Analysis) -> str:
    """What story 2 shows: A's class, then how much faster B is and how that gap grows with n.

    Each side's class is the one its headline leads with (`headline.lead_fit`): the
    work, counted exactly, when its class is settled or bracketed, else the time.
    The gap is the measured B/A wall-time ratio at the smallest and the largest
    n: it says what the fix is worth even when B's own time is not settled
    (its runs are mostly process start-up, so its bracket stays wide).
    """
    work = analysis.work_metric
    a, b = (lead_fit(analysis.fits.get(v, {}), work) for v in ("A", "B"))
    says = f"Verdict: the scanning allocator's {_lead_grows(a, work)}"
    comp = analysis.comparison
    wall = next((m for m in comp.metrics if m.metric == "wall_s"), None) if comp else None
    ratios = sorted(wall.ratios, key=lambda r: r.size_n) if wall else []
    if ratios and ratios[-1].ratio > 0:
        first, last = ratios[0], ratios[-1]
        says += (f"; the fixed one's wall time is {_faster(last.ratio)} at "
                 f"n = {fmt_count(last.size_n)}")
        if len(ratios) > 1 and first.ratio > 0 and first.ratio > 1.5 * last.ratio:
            says += f" (against {_faster(first.ratio)} at n = {fmt_count(first.size_n)})"
    else:
        says += "; the fixed one's wall time could not be compared"
    if b is None:
        return says + "."
    if b.metric == work:
        own = f"its own work {_grows(b, 'n')}"
    elif trivial(b):
        own = "its own time stays flat: at these n it is process start-up"
    elif b.confident:
        own = f"its own time grows as {label(b.cls, 'n')}"
    else:
        bracket = f" ({bracket_text(b, 'n')})" if bracketed(b) else ""
        own = f"its own class is not settled at these n{bracket}"
        if b.reason.startswith("start-up cost dominates"):
            own += ": its runs are mostly process start-up"
    return f"{says}; {own}."


def _lead_grows(fit: Fit | None, work: str | None) -> str:
    """"work (instructions, counted exactly) grows as n² (k = 1.99 ± 0.00)" where the
    headline leads with the counted work, else "wall time grows as n² (k = …)"."""
    if fit is not None and fit.metric == work:
        return f"work {_grows(fit, 'n', f'{work}, counted exactly')}"
    return f"{metric_words(fit.metric) if fit else 'wall time'} {_grows(fit, 'n')}"


def _faster(ratio: float) -> str:
    """B/A in words: 0.0041 -> "244× faster", 0.5 -> "2.0× faster", 2.0 -> "2.0× slower"."""
    factor = 1 / ratio if ratio <= 1 else ratio
    times = f"{factor:.0f}×" if factor >= 10 else f"{factor:.1f}×"
    return f"{times} {'faster' if ratio <= 1 else 'slower'}"


def run(args: argparse.Namespace) -> int:
    # Closing commits and removes the run journal: a clean exit leaves no file behind.
    with open_store(args) as store:
        return _demo(args, store)


def _demo(args: argparse.Namespace, store: Store) -> int:
    from quadscope.run.spec import SweepSpec
    from quadscope.workloads import WORKLOADS, build

    plan = QUICK if args.quick else FULL
    t0 = time.monotonic()
    paths = {name: build(name) for name in ("log_probe", "log_fixed", "first_fit",
                                             "first_fit_fixed")}
    say = _Say(sys.stdout, terminal_width())

    say("quadscope demo 1/2: A, a logger that probes app.0.dat, app.1.dat, … for a free "
        "name on each launch, against B, one that names files by time and pid; "
        f"{plan.launches} launches each, in fresh directories", after="\n")
    with tempfile.TemporaryDirectory(prefix="quadscope-demo-") as tmp:
        dir_a, dir_b = Path(tmp) / "probe", Path(tmp) / "fixed"
        dir_a.mkdir()
        dir_b.mkdir()
        spec = SweepSpec(
            command=WORKLOADS["log_probe"].argv(paths["log_probe"], workdir=dir_a),
            vs_command=WORKLOADS["log_fixed"].argv(paths["log_fixed"], workdir=dir_b),
            name="demo: log probe vs fixed", mode="accumulate", runs=plan.launches,
        )
        acc = _sweep(spec, store, args.no_perf)
    print_analysis(acc)
    say(accumulate_sentence(acc, plan.launches), before="\n", after="\n")

    say("quadscope demo 2/2: A, a top-down allocator that scans every earlier region for "
        "the highest free hole, against B, one that remembers its lowest region; "
        f"n = {plan.sizes[0]}..{plan.sizes[-1]} allocations", after="\n")
    spec = SweepSpec(
        command=WORKLOADS["first_fit"].argv(paths["first_fit"]),
        vs_command=WORKLOADS["first_fit_fixed"].argv(paths["first_fit_fixed"]),
        name="demo: first-fit scan vs fixed", mode="sizes", sizes=plan.sizes,
        repeat=plan.repeat, warmup=1,
    )
    ff = _sweep(spec, store, args.no_perf)
    print_analysis(ff)
    say(sizes_sentence(ff), before="\n")
    say(f"Both sweeps are stored (sweeps {acc.sweep.id} and {ff.sweep.id}): "
        f"`quadscope show {acc.sweep.id}`, `quadscope list`. "
        f"Demo took {time.monotonic() - t0:.0f} s.", before="\n")
    return 0


@dataclass(frozen=True, slots=True)
class _Say:
    """The demo's own prose, broken between clauses to the terminal's width as the
    reports are (`render.terminal.fit_words`), flushed before the next sweep starts."""

    out: Any
    width: int

    def __call__(self, text: str, *, before: str = "", after: str = "") -> None:
        from quadscope.render.terminal import fit_words

        self.out.write(f"{before}{fit_words(text, self.width)}\n{after}")
        self.out.flush()
