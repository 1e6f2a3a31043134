"""Everything a report shows, computed once from stored data.

Contract: `analyse(sweep, runs, profile=, doctor=, probe_series=)` is a pure
function of a stored sweep: it never runs a workload, so `quadscope show RUN`
re-fits yesterday's sweep. Every renderer (terminal, JSON, CSV, HTML, PNG) takes the resulting `Analysis` and
none of them re-computes a fit. Warm-up runs and failed runs are kept in
`runs` for the record but never fitted. Runs at the sweep's start-up size
(`Sweep.startup_n`) go to the fits alone, which use them where they agree with
the other sizes (`fitting.fit_metric`, a note where a time's fit left them
out); the memory, kernel and gap checks and A/B comparison read the grid's
runs; start-up runs that failed are dropped with one note, not counted as
failures. Results attached to the sweep travel
as typed records beside the fits: its profile (`Attribution`), its doctor
findings (a `DoctorReport` for the summary sweep, a `ProbeResult` for a probe's
sweep), each probe's plot series and a `doctor --vs` comparison. The notes
end with the advice of every host fact the sweep recorded that likely skewed
its timings (`measure.system`). A settled
time class the caches account for part of (time outgrowing, past the L2
cache, its own growth while the data fit) is widened by the growth that
excess explains, never below memory's class, with a note; with the work
counted the note alone says it (`analyse.memory`). A settled time class faster
than user time supports while the kernel's share rises is widened to user
time's floor likewise (`analyse.kernel`), and a settled wall time faster than
CPU time supports while the runs waited more for a CPU as n grew, preempted by
other work, to CPU time's floor (`analyse.waiting`). In an
instruction-meter sweep, a note says when wall time surely grows faster than
the instructions counted (`time_outgrows_instructions`). There the verdict gives
two answers: the work (the meter's exact count, `Analysis.work_metric`) leads
when its class is settled or bracketed, and the time follows; when the time's
growth surely differs from the settled work's, one sentence with numbers says
why (`analyse.gap`: the kernel's share, the working set leaving a cache, or a
fixed cost; `gap.gap_text`).
What renderers show is decided here too, never by them: the metrics a
compact report shows and each metric's median at the largest size
(`analyse.notable`), and each fit's drawn curve and band (`analyse.curves`).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quadscope import __version__
from quadscope.analyse import text
from quadscope.analyse.anchors import work_anchors
from quadscope.analyse.change import ChangeSummary, change_summary
from quadscope.analyse.follows import work_follows
from quadscope.analyse.gap import gap, gap_text
from quadscope.analyse.headline import (
    class_text,
    exponent_text,
    growth_fraction,
    lead_fit,
    verdict_line,
)
from quadscope.analyse.kernel import kernel_bound
from quadscope.analyse.launches import counted_apart, pool_launches
from quadscope.analyse.memory import memory_bound
from quadscope.analyse.notable import medians_at_max, notable_metrics
from quadscope.analyse.parallel import parallel_bound
from quadscope.analyse.sizestats import size_stats
from quadscope.analyse.text import OUTGROWS_HEADLINE
from quadscope.analyse.thin import thinned
from quadscope.analyse.waiting import wait_bound
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.doctor.records import DoctorReport, MachineComparison, ProbeResult, ProbeSeries
from quadscope.errors import FitRefusedError
from quadscope.measure.system import advice_from_host
from quadscope.meters import exact_metric
from quadscope.metrics import find as find_metric
from quadscope.model import (
    METRICS,
    SCHEMA_VERSION,
    Comparison,
    Doubt,
    Fit,
    Run,
    Sweep,
)

if TYPE_CHECKING:
    # Only annotated here; importing the package at run time would load the samplers.
    from quadscope.analyse.curves import Band
    from quadscope.profile.records import Attribution


@dataclass(frozen=True, slots=True)
class Analysis:
    sweep: Sweep
    runs: tuple[Run, ...]
    fits: Mapping[str, Mapping[str, Fit]]  # variant -> metric -> Fit
    verdict: str
    failures: tuple[Run, ...]
    notes: tuple[str, ...] = ()
    comparison: Comparison | None = None
    profile: Attribution | None = None
    doctor: DoctorReport | ProbeResult | None = None
    probe_series: Mapping[str, tuple[ProbeSeries, ...]] = field(default_factory=dict)  # by probe
    doctor_vs: MachineComparison | None = None
    # What renderers show, decided here (analyse.notable, analyse.curves), never by them.
    notable: tuple[str, ...] = ()  # the metrics a compact report shows
    at_max: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # variant -> metric
    bands: Mapping[str, Mapping[str, Band]] = field(default_factory=dict)  # variant -> metric

    @property
    def size_word(self) -> str:
        """The size variable's name in reports: "i" for launches, else "n"."""
        return "i" if self.sweep.mode == "accumulate" else "n"

    @property
    def work_metric(self) -> str | None:
        """The metric the sweep's meter counts exactly (the work), None for a timed sweep."""
        return exact_metric(self.sweep.meter)

    @property
    def change(self) -> ChangeSummary | None:
        """The A/B result in one line (analyse.change), or None without a comparison."""
        return change_summary(self.comparison, self.fits.get("A", {}), self.fits.get("B", {}),
                              self.size_word, work=self.work_metric)

    def measured(self, variant: str = "A") -> tuple[Run, ...]:
        """The runs that count: not warm-up, exited 0, not timed out."""
        return tuple(
            r for r in self.runs if r.variant == variant and not r.warmup and r.measurement.ok
        )

    @property
    def counted_in_place(self) -> frozenset[int]:
        """The seqs of the launches counted in place of their timed runs (accumulate mode,
        `analyse.launches.counted_apart`): their times are the counter's, never fitted, so
        they are shown for the count alone. Empty for any other sweep."""
        if self.sweep.mode != "accumulate":
            return frozenset()
        apart: set[int] = set()
        for v in {r.variant for r in self.runs}:
            _timed, counted = counted_apart(self.measured(v), self.work_metric or "instructions")
            apart.update(r.seq for r in counted)
        return frozenset(apart)

    def metric_runs(self, variant: str, metric: str) -> tuple[Run, ...]:
        """`measured(variant)` whose `metric` is a measurement of it: without the launches
        counted in place unless `metric` is their count. The per-size tables and plots of
        an accumulate sweep once showed those launches' 1.1 s under Valgrind as timed runs."""
        runs = self.measured(variant)
        apart = self.counted_in_place
        if not apart or metric == (self.work_metric or "instructions"):
            return runs
        return tuple(r for r in runs if r.seq not in apart)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema": SCHEMA_VERSION,
            "quadscope_version": __version__,
            "sweep": self.sweep.to_dict(),
            "verdict": self.verdict,
            "notes": list(self.notes),
            "runs": [r.to_dict() for r in self.runs],
            # The shape: fits[metric] for the command; the --vs command's beside it.
            "fits": {m: f.to_dict() for m, f in self.fits.get("A", {}).items()},
            "failures": [
                {
                    "seq": r.seq,
                    "variant": r.variant,
                    "size_n": r.size_n,
                    "exit_code": r.measurement.exit_code,
                    "timed_out": r.measurement.timed_out,
                    "stderr_tail": r.measurement.stderr_tail,
                }
                for r in self.failures
            ],
        }
        # Each notable metric's per-size table (`show --sizes`): n, runs, min, median, max, spread.
        d["size_stats"] = self._size_stats("A")
        if "B" in self.fits:
            d["vs_fits"] = {m: f.to_dict() for m, f in self.fits["B"].items()}
            d["vs_size_stats"] = self._size_stats("B")
        if self.comparison is not None:
            d["comparison"] = self.comparison.to_dict()
            if (change := self.change) is not None:
                d["comparison"]["summary"] = change.text
                d["comparison"]["direction"] = change.direction
        if self.profile is not None:
            d["profile"] = self.profile.to_dict()
            d["culprits"] = d["profile"]["culprits"]
        if self.doctor is not None:
            d["doctor"] = self._doctor_dict(self.doctor)
        return d

    def _size_stats(self, variant: str) -> dict[str, list[dict[str, float | int | None]]]:
        """`{metric: [row per size]}` of `sizestats.size_stats` for each notable metric fitted
        (the metrics a compact report shows, the headline's first), as the terminal's table."""
        fits = self.fits.get(variant, {})
        lead = lead_fit(fits, self.work_metric)
        chosen = dict.fromkeys([*([lead.metric] if lead else []), *self.notable])
        return {m: [row.to_dict() for row in size_stats(self.metric_runs(variant, m), m)]
                for m in chosen if m in fits}

    def _doctor_dict(self, doctor: DoctorReport | ProbeResult) -> dict[str, Any]:
        """The stored doctor blob, each probe with its plot's series as `plot_series`."""
        def probe(r: ProbeResult) -> dict[str, Any]:
            series = self.probe_series.get(r.probe)
            d = r.to_dict()
            return {**d, "plot_series": [s.to_dict() for s in series]} if series else d

        if isinstance(doctor, DoctorReport):
            return {**doctor.to_dict(), "probes": [probe(r) for r in doctor.results]}
        return probe(doctor)


def metric_series(runs: Sequence[Run], metric: str) -> tuple[list[float], list[float]]:
    """(sizes, values) of one metric over runs, skipping runs where it was not counted."""
    sizes: list[float] = []
    values: list[float] = []
    for r in runs:
        v = r.value(metric)
        if v is not None:
            sizes.append(float(r.size_n))
            values.append(v)
    return sizes, values


def peaks(runs: Sequence[Run]) -> dict[str, float]:
    """Each metric's largest measured value: a count that never passed 1 did not grow."""
    out: dict[str, float] = {}
    for metric in METRICS:
        _, values = metric_series(runs, metric)
        if values:
            out[metric] = max(values)
    return out


def fit_runs(
    runs: Sequence[Run],
    *,
    predict_n: int | None = None,
    seed: int = 0,
    metrics: Sequence[str] = METRICS,
    n_boot: int | None = None,
    pooled: bool = False,
    progress: Callable[[str], None] | None = None,
    exact: Collection[str] = (),
    work_counted: str = "",
    startup_n: int | None = None,
    forecast: bool = True,
) -> tuple[dict[str, Fit], list[str]]:
    """Fit every metric that was counted; notes say which could not be fitted and why.

    `n_boot` (bootstrap replicates) defaults to `fit_metric`'s, as every report uses;
    fewer serve only adaptive mode's intermediate looks (see `run.adaptive`).
    `pooled`: the runs are accumulate mode's pooled launches (`fit_metric`).
    `progress` is told the name of each metric before it is fitted.
    `exact`: metrics the sweep's meter counts exactly, fitted as sums of growth terms
    (`analyse.exactfit`), or as any metric when their counts follow no such law; with one
    counted, the other metrics' doubts advise no meter (`verdict.counted_doubts`).
    `work_counted`: the metric counted exactly on other runs (accumulate mode's launches
    counted in place, fitted apart), so these runs' doubts advise no meter either.
    `startup_n`: the size of the runs among `runs` that measured the start-up apart
    (`Sweep.startup_n`), which `fit_metric` uses where they agree with the other sizes;
    a metric counted exactly is fitted without them.
    `forecast`: an unsettled time's deciding size is checked by simulating its following
    (`fit_metric`'s); adaptive mode's looks, which follow it a step at a time, leave it out.
    """
    # Imported here, not at the top: fitting loads scipy, which `quadscope --help` must not.
    from quadscope.analyse.exactfit import MIN_SIZES as MIN_LAW_SIZES
    from quadscope.analyse.exactfit import fit_exact
    from quadscope.analyse.fitting import fit_metric

    fits: dict[str, Fit] = {}
    refused: list[tuple[str, str]] = []
    # The work counted exactly: a time's advice then points to its verdict, never to a meter.
    work = work_counted or ("" if pooled else next((m for m in exact
                                                      if metric_series(runs, m)[1]), ""))
    for metric in metrics:
        counted_here = metric in exact and not pooled
        sizes, values = metric_series([r for r in runs if r.size_n != startup_n]
                                      if counted_here and startup_n is not None else runs, metric)
        if not values:
            continue
        if progress is not None:
            progress(metric)
        boot: dict[str, Any] = {} if n_boot is None else {"n_boot": n_boot}
        try:
            counted = metric in exact and not pooled
            exactly = (fit_exact(metric, sizes, values, predict_n=predict_n, seed=seed, **boot)
                       if counted else None)
            # Counts at enough sizes that follow no law of one or two terms: their class
            # is held to k's interval as a time's is (`fitting.fit_metric`'s `strict`).
            lawless = counted and len(set(sizes)) >= MIN_LAW_SIZES
            fit = exactly if exactly is not None else fit_metric(
                metric, sizes, values, predict_n=predict_n, seed=seed, pooled=pooled,
                strict=lawless, counted=work if metric not in exact else "",
                startup_n=None if counted else startup_n, forecast=forecast, **boot)
            few = counted and len(set(sizes)) < MIN_LAW_SIZES
            if few:
                fit = few_counts(fit, sizes, values, MIN_LAW_SIZES)
            elif lawless and exactly is None:
                fit = unseen_term(fit, sizes, values) or fit
            fits[metric] = fit
        except FitRefusedError as exc:
            refused.append((metric, str(exc)))
    return fits, text.refusals(refused)  # one note per sentence, naming its metrics


# Instruction counts that move less than this over the whole sweep do not grow: an exact
# meter still sees a few instructions of bookkeeping vary with n, too little to class.
FLAT_COUNT_GROWTH = 1.01


def startup_runs(runs: Sequence[Run], startup_n: int | None,
                 variants: Sequence[str]) -> tuple[dict[str, list[Run]], str]:
    """Each variant's runs at the start-up size (`Sweep.startup_n`), and a note when a
    variant's start-up failed: its start-up runs are then dropped, not counted as failures,
    and the sweep is fitted on its sizes as if none had been planned."""
    starts: dict[str, list[Run]] = {v: [] for v in variants}
    if startup_n is None:
        return starts, ""
    failed: list[Run] = []
    for v in variants:
        tried = [r for r in runs if r.variant == v and not r.warmup and r.size_n == startup_n]
        bad = [r for r in tried if not r.measurement.ok]
        failed.extend(bad)
        starts[v] = [] if bad else tried
    note = text.startup_failed(startup_n, _failure_codes(failed)) if failed else ""
    return starts, note


def startup_notes(fits: Mapping[str, Fit], startup_n: int | None, runs: int) -> list[str]:
    """One note where the start-up runs were measured but a time's fit left them out."""
    if startup_n is None or not runs:
        return []
    ignored = [m for m, f in fits.items() if f.startup == "ignored"
               and (found := find_metric(m)) is not None and found.unit == "s"]
    return [text.startup_ignored(startup_n, ignored)] if ignored else []


def _by_size(sizes: Sequence[float], values: Sequence[float]) -> dict[float, list[float]]:
    by_size: dict[float, list[float]] = {}
    for n, v in zip(sizes, values, strict=True):
        by_size.setdefault(n, []).append(v)
    return by_size


def unseen_term(fit: Fit, sizes: Sequence[float], values: Sequence[float]) -> Fit | None:
    """`fit` of counts the ordinary fit read "1", made a bracket "1" … the fastest class where
    the counts stayed within FLAT_COUNT_GROWTH but a term of PER_N a unit of n would not have
    shown above what they could hide (their scatter and twice their jitter); None otherwise.

    A Python's 143M start-up counted at n = 2, 5, 20 hid `x in list`'s n², read "constant"
    and passed --fail-above n (the rule `exactfit.flat_reach` applies to counts the exact
    fit reads). Counts that do not repeat fall to the ordinary fit as well: node's
    instructions at n = 8, 32, 128, 512 (527.9M, 517.0M, 514.4M, 523.2M; 516.6M to 520.5M
    at n = 8 alone, V8's threads) settled "constant" for `a.includes` in a loop, n², whose
    4·n² instructions at 512 are 0.2% of the count."""
    from quadscope.analyse.exactfit import JITTER, PER_N  # here: exactfit loads scipy

    by_size = _by_size(sizes, values)
    lo, hi = min(by_size), max(by_size)
    meds = [statistics.median(by_size[n]) for n in sorted(by_size)]
    first, last = meds[0], meds[-1]
    seen = max(last - first, max(meds) - min(meds)) + 2 * JITTER * first  # what could hide
    if not (first > 0 and last <= first * FLAT_COUNT_GROWTH and fit.cls == "1"
            and PER_N * (hi - lo) <= seen):
        return None
    reason = (f"counted at {len(by_size)} sizes up to n = {text.fmt_n(hi)}: the counts did "
              f"not grow, but a term of {PER_N:.0f} a unit of n would not show below "
              f"n = {text.fmt_n(lo + seen / PER_N)}")
    return dataclasses.replace(fit, cls=INCONCLUSIVE, at_least="1", at_most=REGISTRY.names[-1],
                               reason=reason, doubts=(), decide_n=None)


def few_counts(fit: Fit, sizes: Sequence[float], values: Sequence[float], needed: int) -> Fit:
    """`fit` of exact counts at fewer sizes than a class needs (`needed`), made honest about
    what they do show: counts that grew by more than FLAT_COUNT_GROWTH are not constant, so
    where the ordinary fit read "1" (its small-sample penalty picks it, settled or as "no
    growth detected", from counts that rose 18% over 64× n) the verdict is a bracket
    starting above "1" and reaching the fastest class, carrying a "few_counts" doubt
    whose sentence says what a count at one more size would do. A growing class the fit
    settled (list.index's counts, b·n exactly) stands."""
    by_size = _by_size(sizes, values)
    lo, hi = min(by_size), max(by_size)
    first, last = statistics.median(by_size[lo]), statistics.median(by_size[hi])
    if (flat := unseen_term(fit, sizes, values)) is not None:
        return flat
    if first <= 0 or last <= first * FLAT_COUNT_GROWTH or (fit.confident and fit.cls != "1"):
        return fit  # flat counts, or a growing class the counts' own fit settled
    # A settled "1" from growing counts (at 64, 1024 and 4096 rising 140M → 165M, under
    # load) read "constant" and passed --fail-above n.
    at_least = fit.at_least if fit.at_least and fit.at_least != "1" else REGISTRY.names[1]
    # Nor do they rule out any growth above them: naive fib counted at n = 1, 4 and 16 (start-up
    # plus 2k calls) read "log n … n³ — not exponential" beside CPU time's cⁿ at n = 32.
    at_most = REGISTRY.names[-1]
    if REGISTRY.index(at_least) > REGISTRY.index(at_most):
        at_least = at_most
    # Its own doubt: the bracket's top is assumed (the fastest class), not measured, so
    # `headline.lead_fit` lets it lead a time bracket only when it is narrower.
    doubt = Doubt("few_counts", at_least, at_most, numbers={
        "sizes": len(by_size), "needed": needed, "growth": last / first - 1,
        "lo_n": float(lo), "hi_n": float(hi)})
    return dataclasses.replace(fit, cls=INCONCLUSIVE, at_least=at_least, at_most=at_most,
                               reason=text.doubt_text(doubt, REGISTRY), doubts=(doubt,),
                               decide_n=None)


def count_growth(runs: Sequence[Run], metric: str = "instructions") -> float | None:
    """Median `metric` at the largest size over its median at the smallest; None without counts."""
    at: dict[int, list[float]] = {}
    for r in runs:
        v = getattr(r.measurement, metric)
        if v is not None:
            at.setdefault(r.size_n, []).append(float(v))
    if len(at) < 2:
        return None
    lo, hi = statistics.median(at[min(at)]), statistics.median(at[max(at)])
    return hi / lo if lo > 0 else None


def time_outgrows_instructions(fits: Mapping[str, Fit], growth: float | None = None) -> str:
    """A note when wall time surely grows faster than the instructions counted, else "".

    Surely: the slowest class the wall-time data support is above the fastest
    the instruction counts support (each fit's 95% bracket, `at_least` and
    `at_most`; a settled class is its own bracket); or wall time surely grows
    while the counts moved by less than 1% over the sweep (`growth`, from
    `count_growth`), a change too small to class.
    """
    wall, count = fits.get("wall_s"), fits.get("instructions")
    if wall is None or count is None:
        return ""
    slowest = wall.at_least or (wall.cls if wall.confident else "")
    fastest = count.at_most or (count.cls if count.confident else "")
    if slowest and growth is not None and growth <= FLAT_COUNT_GROWTH and REGISTRY.index(slowest) > 0:
        return text.flat_count_note(slowest, growth)
    if not slowest or not fastest or REGISTRY.index(slowest) <= REGISTRY.index(fastest):
        return ""
    return text.outgrows_note(slowest, fastest)


def _prefixed(progress: Callable[[str], None] | None,
              variant: str) -> Callable[[str], None] | None:
    """`progress`, told "VARIANT METRIC" for each metric."""
    if progress is None:
        return None
    told = progress
    return lambda metric: told(f"{variant} {metric}")


def analyse(
    sweep: Sweep,
    runs: Sequence[Run],
    *,
    profile: Attribution | None = None,
    doctor: DoctorReport | ProbeResult | None = None,
    probe_series: Mapping[str, tuple[ProbeSeries, ...]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Analysis:
    """Fit each variant's metrics, compare A with B when there is a B, and name the verdict.

    `profile`, `doctor` and `probe_series` are results attached to the sweep,
    passed through to the renderers as they are. `progress` is told what is
    fitted next ("A wall_s"), for a long fit's progress line.
    """
    runs = tuple(sorted(runs, key=lambda r: r.seq))
    startup_n = sweep.startup_n
    failures = tuple(r for r in runs if not r.warmup and not r.measurement.ok
                     and r.size_n != startup_n)
    variants = ["A"] + (["B"] if sweep.vs_command is not None else [])
    extra_verdict = ""  # said after the headline: the instruction meter never replaces time
    fits: dict[str, dict[str, Fit]] = {}
    notes: list[str] = []
    measured = {v: [r for r in runs if r.variant == v and not r.warmup and r.measurement.ok]
                for v in variants}
    pooled = sweep.mode == "accumulate"
    counted = exact_metric(sweep.meter)
    in_place: dict[str, tuple[Run, ...]] = {v: () for v in variants}
    if pooled:  # single launches, pooled into sizes for the fits (analyse.launches)
        for v, good in list(measured.items()):  # launches counted in place are fitted apart
            timed, in_place[v] = counted_apart(good, counted or "instructions")
            measured[v] = list(pool_launches(timed))
    measured, thin_note = thinned(measured)  # 10,000 sizes: fitted on 100 (analyse.thin)
    if thin_note:
        notes.append(thin_note)
    starts, start_note = startup_runs(runs, startup_n, variants)
    if start_note:
        notes.append(start_note)
    for variant in variants:
        good = [r for r in measured[variant] if r.size_n != startup_n]
        measured[variant] = good
        if not good:
            tried = [r for r in runs if r.variant == variant and not r.warmup]
            if tried:
                notes.append(text.all_failed(variant, len(tried)))
            fits[variant] = {}
            continue
        f, n = fit_runs([*starts[variant], *good], predict_n=sweep.predict_n, seed=sweep.seed,
                        pooled=pooled, progress=_prefixed(progress, variant),
                        exact=(counted,) if counted else (),
                        work_counted=counted if counted and in_place[variant] else "",
                        startup_n=startup_n if starts[variant] else None)
        n.extend(startup_notes(f, startup_n, len(starts[variant])))
        if counted and in_place[variant]:  # accumulate mode's counts, one launch each
            work, more = fit_runs(in_place[variant], predict_n=sweep.predict_n,
                                  seed=sweep.seed, metrics=(counted,), exact=(counted,))
            f, n = {**f, **work}, n + more
        f, cached = memory_bound(f, good, sweep.host, work=counted)
        n.extend(cached)
        f, kernel = kernel_bound(f, good, work=counted)
        n.extend(kernel)
        f, waits = wait_bound(f, good, work=counted)
        n.extend(waits)
        f, spread = parallel_bound(f, good, work=counted)
        n.extend(spread)
        f, followed = work_follows(f, good, counted)
        n.extend(followed)
        f, anchors = work_anchors(f, good, counted)
        n.extend(anchors)
        if pooled:  # the sentences say n; a launch's variable is i
            f = {m: dataclasses.replace(x, reason=text.sized(x.reason, "i"))
                 for m, x in f.items()}
            n = [text.sized(x, "i") for x in n]
        fits[variant] = f
        if counted:
            outgrows = time_outgrows_instructions(
                f, count_growth([*good, *in_place[variant]], counted))
            if outgrows:
                n.append(outgrows)
            found = gap(f, good, sweep.host, counted)  # why the time's class is not the work's
            if variant == "A" and (found or outgrows):
                extra_verdict = f"; {gap_text(found)}" if found else OUTGROWS_HEADLINE
        notes.extend(f"{variant}: {x}" if len(variants) > 1 else x for x in n)
    size_word = "i" if sweep.mode == "accumulate" else "n"
    n_max = max((r.size_n for r in runs if r.variant == "A" and not r.warmup and r.measurement.ok),
                default=None)
    verdict = verdict_line(fits.get("A", {}), size_word,
                           None if n_max is None else float(n_max), peaks(measured["A"]),
                           work=exact_metric(sweep.meter))
    verdict += extra_verdict
    comparison = None
    if "B" in fits and fits["A"] and fits["B"]:
        from quadscope.analyse.compare import compare  # only A/B sweeps need it

        data = {v: {m: metric_series(in_place[v] if m == counted and in_place[v]
                                     else measured[v], m) for m in fits[v]}
                for v in ("A", "B")}
        comparison = compare("A", data["A"], fits["A"], "B", data["B"], fits["B"],
                             exact=(counted,) if counted else ())
    notes.extend(advice_from_host(sweep.host))  # what likely skewed the timings, and the fix

    return Analysis(
        sweep=sweep,
        runs=runs,
        fits=fits,
        verdict=verdict,
        failures=failures,
        notes=tuple(notes),
        comparison=comparison,
        profile=profile,
        doctor=doctor,
        probe_series=dict(probe_series or {}),
        # The launches counted in place are set apart from the times shown (bands, values
        # at the largest i) whether or not the sweep then led with their count.
        **_shown(fits, runs, in_place,
                 counted or ("instructions" if any(in_place.values()) else None),
                 lead=_lead_metric(fits.get("A", {}), sweep.meter)),
    )


def _shown(fits: Mapping[str, Mapping[str, Fit]], runs: Sequence[Run],
           in_place: Mapping[str, Sequence[Run]], counted: str | None,
           lead: str | None = None) -> dict[str, Any]:
    """What the renderers show beside the fits (`notable`, `at_max`, `bands`): from every
    run, or where accumulate mode counted launches in place (`analyse.launches`), the
    time from the timed launches and the count from the counted ones."""
    from quadscope.analyse.curves import fit_bands  # numpy: `quadscope --help` reads this module

    apart = {r.seq for rs in in_place.values() for r in rs}
    if not apart or counted is None:
        return {"notable": notable_metrics(fits, runs, lead=lead), "at_max": medians_at_max(runs),
                "bands": fit_bands(fits, runs)}
    timed = [r for r in runs if r.seq not in apart]
    work_runs = [r for r in runs if r.seq in apart]
    work_fits = {v: {counted: fs[counted]} for v, fs in fits.items() if counted in fs}
    time_fits = {v: {m: f for m, f in fs.items() if m != counted} for v, fs in fits.items()}
    notable = notable_metrics(time_fits, timed, lead=lead)
    shown = tuple(m for m in METRICS if m in notable or (m == counted and work_fits))
    at_max = {v: dict(values) for v, values in medians_at_max(timed).items()}
    for v, values in medians_at_max(work_runs).items():
        if counted in values:
            at_max.setdefault(v, {})[counted] = values[counted]
    bands = {v: dict(b) for v, b in fit_bands(time_fits, timed).items()}
    for v, b in fit_bands(work_fits, work_runs).items():
        bands.setdefault(v, {}).update(b)
    return {"notable": shown, "at_max": at_max, "bands": bands}


def refuse_if_nothing(analysis: Analysis) -> None:
    """Raise when nothing of the main command, or of the --vs command, could be fitted.

    A verdict on A alone would then be a lie by omission: the comparison asked for is missing.
    """
    if not analysis.fits.get("A"):
        failed = [r for r in analysis.failures if r.variant == "A"]
        codes = _failure_codes(failed)
        good = analysis.measured("A")
        if not good:
            raise FitRefusedError(text.nothing_to_fit(codes))
        raise FitRefusedError(text.too_few_sizes(len(failed), codes, len(good),
                                                 sorted({r.size_n for r in good}),
                                                 analysis.sweep.startup_n))
    if analysis.sweep.vs_command is not None and not analysis.fits.get("B"):
        failed = [r for r in analysis.failures if r.variant == "B"]
        raise FitRefusedError(text.vs_not_fitted(len(failed), _failure_codes(failed),
                                                 len(analysis.measured("B"))))


def _failure_codes(failed: Sequence[Run]) -> list[int | str]:
    return sorted({"timeout" if r.measurement.timed_out else r.measurement.exit_code
                   for r in failed}, key=str)


def _lead_metric(fits: Mapping[str, Fit], meter: str) -> str | None:
    """The metric the headline leads with (`headline.lead_fit`), shown in every table."""
    from quadscope.analyse.headline import lead_fit

    fit = lead_fit(fits, exact_metric(meter))
    return None if fit is None else fit.metric


__all__ = ["INCONCLUSIVE", "Analysis", "analyse", "class_text", "exponent_text", "fit_runs",
           "growth_fraction", "metric_series", "peaks", "verdict_line"]
