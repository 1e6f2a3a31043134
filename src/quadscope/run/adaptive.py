"""Adaptive sweeps: grow n until the verdicts are confident or the budget is spent.

Contract: `AdaptivePlan` is a `Plan` (see `plan`): it decides from the runs
it is given and the remaining budget it is told, nothing else (no clock, no
store, no runner), so the same history and budgets give the same batches
wherever the runs execute. It never asks for more than the budget: every
run's timeout is the user's `--timeout` capped by what is left of the budget
when the run starts, and a size is only started when the runs already
measured predict that it fits. Runs therefore go to the runner one at a time,
except that a step's runs (its warm-ups, a size's repeats, a refinement round)
go in one batch when what is left covers one more run than the step holds at
`--timeout`: then the budget cannot bind inside the step. It grows n
geometrically from `start_n` (by 4 while start-up cost still dominates, then by
2), measures `repeat` runs of each variant per size (and, after each growth
step, one more at the smallest size: sizes grow with time, so without it the
machine's drift would pass for growth; the fit takes it out, `analyse.drift`),
ends growth at a size whose runs hit the user's `--timeout`. Short of the MIN_SIZES sizes a fit
needs, once the cost grows, it makes them up below the largest size rather
than above it (`_fill_in`: a size below costs a fraction of one above). Once
four or more sizes are in, it looks (re-fits) after growth steps and stops
once the time verdict is reached (wall_s, or the `--until` metrics): its
class, or a bracket of two neighbouring classes (it settles the question a
user came with: "n or n log n: not quadratic") whose next growth step towards
the size that would decide it (one doubling, as the look after it asks again)
is not affordable within what the budget affords and at most DECIDE_SPEND times
what the sweep has spent (or DECIDE_FLOOR of the budget, if more), or, over the constant's settling
span, a bracket from "1" whose medians rise by at most the drift margin
(`_flat`, `_level`), the same at two looks in a row (stopping at the first
good-looking verdict is optional stopping, which inflates false confidence:
Armitage, McPherson & Rowe, "Repeated significance tests on accumulating
data", JRSS A 132, 1969). A flat
verdict (such a bracket, or a settled "1") stops growth only once the sizes
span FLAT_SPAN (or n reaches MAX_EXACT_SIZE) or FLAT_SPEND of the budget is spent:
growth hidden under a start-up cost shows only where the work outgrows it, and
a flat cost makes every size as cheap as the first. A size at which every run
fails (a non-zero exit, not a timeout) is the program's limit: growth ends
there. A look fits with LOOK_BOOT bootstrap replicates; one that would stop
the sweep is fitted again as the report fits it, and that fit decides. Looks cost real
time, read off the budget: one is skipped while the runs since the last have
cost less than it did, at most MAX_SKIPPED_LOOKS steps in a row (`_look_due`).
The second look comes from one more run at the widest-spread sizes, not from
a larger size: in sequential designs the confirming look is whatever new data
is cheapest, and a larger size costs ×4 the time so far for n²
(bench/time_to_verdict.py --simulate: 75% of the sweep's time on bubble sort
went to that step). Each next size is priced by extrapolating the medians
measured so far (a power law or, where the local slope is steeper than any
polynomial class, K_EXP_PRICE, the dearer of it and the exponential through
the last two sizes): a step in n may multiply the predicted time by at most
COST_STEP (4; e would be the cheapest ratio when the size a verdict needs is
unknown, as the sizes' costs sum to about r/(r−1) of the last, which itself
overshoots the needed one by (r−1)/ln r on average: 4 costs 2.9× that size,
e 2.72×), unless the new size is predicted under CHEAP_S, and, short of
MIN_SIZES sizes, is shortened until it fits in half the budget left; no size is started
that does not fit there, and a new size whose first runs show its other
repeats past that (a price is an extrapolation) keeps those runs alone and
ends growth. While growing, a run's timeout is also capped at GROWTH_SLACK
times its predicted time, and a size that does not finish in it becomes a
ceiling: n goes back to the geometric middle between it and the largest size
that did, and later sizes halve the gap to the ceiling (in log n) rather
than jump past it, so steep growth (exponential, n³) still gets its sizes
within the budget; the cap is never less than what the sweep has spent so far
(between MIN_GROWTH_TIMEOUT_S and MAX_GROWTH_FLOOR_S), so a blind early step
into an exponential costs at most as much as the sweep before it. A fit
that names a size beyond those measured (`decide_n`; a change of regime with
too few sizes above it names one too, see `_wants_larger`) keeps n growing
towards it while affordable.
Where the verdicts are not yet reached and growth is over, it adds repeats at the
sizes whose spread is widest (relative median absolute deviation), in a
shuffled order, A and B alternating. Given earlier runs (a resumed sweep) it
goes on from the size after the largest measured, without warm-ups.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from collections.abc import Generator, Sequence

import numpy as np

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.exactfit import FLAT_SPAN
from quadscope.analyse.regime import MIN_UPPER_SIZES
from quadscope.classes import REGISTRY
from quadscope.model import Fit, Run
from quadscope.run.plan import Batch, PlannedRun, Scheduled
from quadscope.run.sizes import MAX_EXACT_SIZE

MIN_SIZES = 4
# Growing n to settle a two-class bracket is worth at most this many times what the
# sweep has spent so far, or this share of the budget if more: the bracket already
# answers whether the cost is quadratic. Sharpening n … n log n to n by growing on
# cost the memory workload 0.75 of a 10-repeat grid's time, stopping at the bracket
# 0.24 (bench/time_to_verdict.py).
DECIDE_SPEND = 1.0
DECIDE_FLOOR = 0.05
FAST_GROWTH = 4
SLOW_GROWTH = 2
# Refinement stops adding repeats at a size beyond max(this, 3 × --repeat).
MAX_REPEATS = 10
# Approaching a size that did not finish, steps narrower than this share of n stop.
MIN_STEP = 0.125
# The steepest local power law the pricing of a next size believes.
K_PRICE = 12.0
# Only a local power law steeper than this may be priced as an exponential.
K_EXP_PRICE = 4.0
# A growth step may multiply the predicted run time by at most this much (runs
# predicted under CHEAP_S excepted): steep growth then takes small steps in n. Steps
# multiplying the cost by r cost r/(r−1)·(r−1)/ln r = r/ln r times the size a verdict
# needs, least at r = e (2.72); 4 costs 2.9, the 16 used before 5.8.
COST_STEP = 4.0
CHEAP_S = 0.1
# Short of MIN_SIZES sizes, one between those measured is taken first once the largest
# size costs this many times the smallest: start-up cost no longer dominates.
FILL_RATIO = 2.0
# The sizes the next run's time is extrapolated from.
PREDICT_SIZES = 3
# While growing, a run may take this many times its predicted time before it
# counts as not finishing, and never less than what the sweep has spent so far, kept
# between MIN_GROWTH_TIMEOUT_S and MAX_GROWTH_FLOOR_S: tiny runs are noisy, and a run
# cut off makes its size a ceiling, but a blind step (early on, priced from start-up
# alone) into an exponential costs its whole cap. A fixed floor of 0.5 s cost a
# Fibonacci sweep of 0.07 s of runs a second on two such steps (96, then 48, from 24),
# and a floor of a second cost a second per step; 0.25 s cut off 0.1 s runs on a
# machine loaded ×3 (measured). Bounding the loss by what was spent is the ski-rental
# rule of `_look_due` again: a cut-off step costs at most as much as the sweep so far.
GROWTH_SLACK = 8.0
MIN_GROWTH_TIMEOUT_S = 0.05
MAX_GROWTH_FLOOR_S = 0.5
# The metric adaptive mode waits for unless --until names others: the headline's time.
TIME_METRIC = "wall_s"
# Bootstrap replicates of a look that cannot stop the sweep; a look that would stop it
# is fitted again with the full analysis's (fit_metric's default), so a sweep stops on
# the verdict its report shows.
LOOK_BOOT = 50
# A flat verdict stops growth only once the sizes span FLAT_SPAN (or n is at MAX_EXACT_SIZE)
# or FLAT_SPEND of the budget is spent: growth hidden under a start-up cost shows only
# at the sizes where the work outgrows it, and a flat program's sizes all cost the
# same, so more n is cheap. 10^7 shows 0.1 ns of work per element under 1 ms of exec at
# 15% of the cost; far beyond it, a drift of a few percent over the sweep reads as
# log n (a constant swept to 2^53 was called log n). Half the budget: a Python's 0.1-0.3 s
# start-up under a load of 5 on 2 CPUs hid `list.insert(0)`'s n² up to n = 4096, where a
# quarter of 30 s was spent; the n² showed at 16384 (2.4× the start-up) and 65536 (20×).
FLAT_SPEND = 0.5
# While growing, at most this many steps in a row go without a look (see `_look_due`).
MAX_SKIPPED_LOOKS = 2
# A verdict does not stop growth while the slope between the two largest sizes exceeds its
# exponent interval's top by BEND_SLACK plus BEND_Z standard errors (see `_bends_up`); a
# median's relative noise is taken as at least BEND_MIN_CV.
BEND_Z = 3.0
BEND_SLACK = 0.1
BEND_MIN_CV = 0.01


def _medians(runs: Sequence[Run], metric: str = "wall_s") -> dict[int, float]:
    by: dict[int, list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if v is not None:
            by[r.size_n].append(v)
    return {n: float(np.median(v)) for n, v in sorted(by.items())}


def _relative_spread(runs: Sequence[Run], metric: str = "wall_s") -> dict[int, float]:
    by: dict[int, list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if v is not None:
            by[r.size_n].append(v)
    out: dict[int, float] = {}
    for n, vals in by.items():
        arr = np.asarray(vals)
        med = float(np.median(arr))
        mad = float(np.median(np.abs(arr - med)))
        # One run says nothing about spread: treat it as the widest, so it gets repeats first.
        out[n] = math.inf if len(vals) < 2 else (mad / med if med > 0 else 0.0)
    return out


def estimate_wall_s(runs: Sequence[Run], n: int) -> float:
    """Wall time at n, extrapolated from the medians of up to the last PREDICT_SIZES sizes.

    The local power law log t = α + k·log n (k ≥ 1: at least linear) is
    fitted by least squares. Where its slope is steeper than any polynomial
    class (K_EXP_PRICE), the cost may be exponential, and the price is the
    dearer of the power law and the exponential through the last two sizes:
    sizes whose start-up cost still shows flatten both fits, and a cⁿ priced
    too cheaply costs a size whose runs take several times their price
    (bench/time_to_verdict.py --simulate: the whole budget on one size). With
    one size the growth is taken as linear.
    """
    med = {m: t for m, t in _medians(runs).items() if m > 0 and t > 0}
    if not med or n <= 0:
        return 0.0
    sizes = sorted(med)[-PREDICT_SIZES:]
    last = sizes[-1]
    if len(sizes) < 2:
        return med[last] * n / last
    x = np.array(sizes, dtype=float)
    y = np.log([med[m] for m in sizes])
    k = float(np.polyfit(np.log(x), y, 1)[0])
    # Pricing, not fitting: a steep local slope (exponential growth) is believed up to K_PRICE.
    k = min(max(k, 1.0), K_PRICE)
    power = math.exp(float(np.log(med[last]) + k * math.log(n / last)))
    # Only a slope steeper than any polynomial class may be an exponential: on three noisy
    # sizes of a linear cost an exponential fits about as well, and its extrapolation
    # (×10⁵ to n = 180e6 from 8e6..32e6, measured) ended growth at once.
    if k > K_EXP_PRICE:
        beta = float(y[-1] - y[-2]) / float(x[-1] - x[-2])
        if beta > 0:
            with np.errstate(over="ignore"):
                return max(power, float(med[last] * np.exp(min(beta * (n - last), 700.0))))
    return power


def _flat(fit: Fit) -> bool:
    """The verdict is a bracket from the constant up to at most the slowest growth (1 … log n).

    Such a metric is flat but for a slow term its runs cannot rule out. Past
    the constant's settling span, more n does not narrow that bracket: with
    sizes spread evenly in log n, the standard error of a log n term's rise
    across the sizes is about σ·Δf / (sd(f)·√m), where Δf/sd(f) does not change
    with the span (σ a median's noise, m the sizes; the least-squares slope's
    variance, e.g. Draper & Smith, Applied Regression Analysis, 3rd ed.,
    1998, §1.4). Only more runs shrink it, and a drift between runs, which
    rises with log n as n grows with time, only grows with more n: adaptive
    mode stops there and reports the bracket.
    """
    names = REGISTRY.names
    return (not fit.confident and fit.at_least == names[0] and fit.at_most in names
            and REGISTRY.index(fit.at_most) <= 1)


def _level(runs: Sequence[Run], metric: str) -> bool:
    """No growing class rises above HIDDEN_SHARE of the cost in a robust fit to the medians.

    A flat metric's bracket may still reach far up (1 … n³) when the runs
    cannot pin the exponent, and more n does not narrow it (see `_flat`). The
    medians per size shrug off single slow runs, and the Theil–Sen slope of
    the medians against each growing class's f(n) (Sen, "Estimates of the
    regression coefficient based on Kendall's tau", JASA 63, 1968) shrugs off
    an outlying median: when that slope times f's span adds at most
    HIDDEN_SHARE of the median level for every class, the metric shows no
    growth beyond the margin fitting itself allows as drift (`_negligible`).
    One size below the largest may be left out (the first, say, measured on a
    colder machine): a single odd size must not keep n growing, while real
    growth rises across the others too. The largest is never left out: growth
    hidden under a start-up cost shows there first.
    """
    # Imported here, not at the top: fitting loads scipy, which `quadscope --help` must not.
    from scipy.stats import theilslopes

    from quadscope.analyse.fitting import HIDDEN_SHARE

    med = _medians(runs, metric)
    all_sizes = np.array(sorted(med), dtype=float)
    all_values = np.array([med[n] for n in sorted(med)])

    def rises(keep: np.ndarray) -> bool:
        sizes, values = all_sizes[keep], all_values[keep]
        level = float(np.median(values))
        if not level > 0:
            return True
        for growth in (g for g in REGISTRY if g.growing):
            scaled = growth.normalised(sizes, float(sizes[-1]))
            if scaled is None:
                continue  # not fittable at these sizes, as in fitting
            g = scaled[0]
            if float(theilslopes(values, g)[0]) * float(g[-1] - g[0]) > HIDDEN_SHARE * level:
                return True
        return False

    if all_sizes.size <= MIN_SIZES:
        return False
    return any(not rises(np.arange(all_sizes.size) != out) for out in range(all_sizes.size - 1))


def _bends_up(runs: Sequence[Run], metric: str, fit: Fit) -> bool:
    """The cost between the two largest sizes rises faster than the verdict allows.

    A cost that steepens just below the largest size (a change of regime, n → n²
    at 64k) shows first as one top size above the fit, and a fit over many
    sizes below it, each agreeing with the lower regime, can stay confident in
    it with that one size left out (calibration, adaptive: "n" at 128k, 25%
    above the line at 1% noise). The local slope ln(m₂/m₁)/ln(n₂/n₁) of the
    two largest sizes' medians is compared with the top of the verdict's
    exponent interval; a median's standard error is about 1.25·σ/√r (σ from
    the runs' median absolute deviation, ×1.4826, at least BEND_MIN_CV). An
    exponential verdict, or one with no exponent, is never held back: nothing
    grows faster.
    """
    if fit.exponent_ci is None or REGISTRY.names[-1] in (fit.cls, fit.at_most):
        return False
    by: dict[int, list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if v is not None and v > 0:
            by[r.size_n].append(v)
    if len(by) < 2:
        return False
    lo, hi = sorted(by)[-2:]
    span = math.log(hi / lo)
    m_lo, m_hi = float(np.median(by[lo])), float(np.median(by[hi]))
    var = 0.0
    for vals, med in ((by[lo], m_lo), (by[hi], m_hi)):
        cv = max(1.4826 * float(np.median(np.abs(np.asarray(vals) - med))) / med, BEND_MIN_CV)
        var += (1.2533 * cv) ** 2 / len(vals)
    local = math.log(m_hi / m_lo) / span
    return local > fit.exponent_ci[1] + BEND_SLACK + BEND_Z * math.sqrt(var) / span


class AdaptivePlan:
    """The adaptive policy (see the module docstring) as a `Plan`.

    It keeps its place between calls (the size it is at, whether it is still
    growing, its seeded shuffle) in a generator that yields one batch per call.
    """

    def __init__(self, *, variants: Sequence[str], repeat: int, warmup: int,
                 timeout_s: float | None, seed: int, until: Sequence[str] = (),
                 start_n: int = 1) -> None:
        self.variants = tuple(variants)
        self.repeat = repeat
        self.warmup = warmup
        self.timeout_s = timeout_s
        self.seed = seed
        self.until = tuple(until)
        self.start_n = start_n
        self.rng = random.Random(seed)
        self.user_timeout_hit = False
        self.budget_out = False
        self.runs: Sequence[Run] = ()
        self.history: list[Run] = []  # runs that are not warm-ups
        self.remaining_s = 0.0
        self._budget_s: float | None = None  # what was left at the first call
        self._previous: list[tuple[str, str, str]] = []  # verdicts at the last check
        self._ceiling: int | None = None  # a size that did not finish: never reached again
        self._cut: set[int] = set()  # sizes whose repeats the budget could not afford
        self._first_look = False  # the verdicts are reached at this check, not at the last
        # What looks cost, read off the budget: the budget left when the last look was
        # taken, how much of it that look took, and the steps grown since it.
        self._look_at_s: float | None = None
        self._look_s = 0.0
        self._looked = False  # a look was taken since the last batch was handed out
        self._told: tuple[float, int] | None = None  # (remaining_s, runs) at the last call
        self._skipped = 0
        self._fits: dict[tuple[str, int, int | None], dict[str, Fit]] = {}
        self._steps = self._go()

    @property
    def total_runs(self) -> None:
        return None

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        if remaining_s is None:
            raise ValueError("an adaptive plan needs a budget")
        if self._looked and self._told is not None:
            # The budget fell by the look, the batch after it and the harness around it.
            before_s, before_runs = self._told
            ran_s = sum(r.measurement.wall_s for r in history[before_runs:])
            self._look_s = max(before_s - remaining_s - ran_s, 0.0)
            self._looked = False
        self._told = (remaining_s, len(history))
        if self._budget_s is None:
            self._budget_s = remaining_s
        self.runs = history
        self.history = [r for r in history if not r.warmup]
        self.remaining_s = remaining_s
        return next(self._steps, None)

    def _hand_over(self, planned: Sequence[PlannedRun],
                   cap_s: float | None = None) -> Generator[Batch, None, bool]:
        """Yield `planned` as batches, in order; False when the budget ran out first.

        `cap_s` (a growth step's allowance) caps each run's timeout like --timeout.
        """
        user = self.timeout_s if cap_s is None else (
            cap_s if self.timeout_s is None else min(cap_s, self.timeout_s))
        i = 0
        while i < len(planned):
            left = self.remaining_s
            if left <= 0:
                self.budget_out = True
                return False
            if user is not None and user * (len(planned) - i + 1) <= left:
                # One more run's worth of slack than the step needs: neither the
                # clock's rounding nor harness time can make the budget bind in it.
                limit, step = user, planned[i:]
            else:
                limit, step = (left if user is None else min(user, left)), planned[i:i + 1]
            yield tuple(Scheduled(p, limit) for p in step)
            for run in self.runs[len(self.runs) - len(step):]:
                if run.measurement.timed_out:
                    if user is not None and limit >= user:
                        self.user_timeout_hit = True
                    else:
                        self.budget_out = True
            i += len(step)
        return True

    def measured(self, variant: str = "A") -> list[Run]:
        return [r for r in self.history if r.variant == variant and r.measurement.ok]

    def sizes(self) -> list[int]:
        return sorted({r.size_n for r in self.history})

    def measure_size(self, n: int, repeats: int,
                     cap_s: float | None = None) -> Generator[Batch, None, None]:
        planned = [PlannedRun(v, n, rep) for rep in range(repeats) for v in self.variants]
        if cap_s is None:
            yield from self._hand_over(planned)
            return
        # A new size's first runs go alone: if they do not finish, its other repeats are not
        # run; nor are they when the first runs, now measured, show them past what the
        # budget affords (a price is only an extrapolation): n then grows no further.
        first = len(self.variants)
        yield from self._hand_over(planned[:first], cap_s)
        if self.user_timeout_hit and cap_s < MAX_GROWTH_FLOOR_S:
            # A cap this short may have caught a stall of the machine, not the cost: one
            # more try before n becomes a ceiling (an exponential is cut off twice, at
            # most twice what the sweep had spent; a stall of 80 ms at the first run of
            # n = 4000 ended a linear sweep's growth there, measured on a fake clock).
            self.user_timeout_hit = False
            yield from self._hand_over(planned[:first], cap_s)
        if self.user_timeout_hit:
            return
        if planned[first:] and not self.affordable(n, len(planned) - first):
            self._ceiling = n if self._ceiling is None else min(self._ceiling, n)
            self._cut.add(n)
            return
        yield from self._hand_over(planned[first:], cap_s)

    def _anchor(self) -> Generator[Batch, None, None]:
        """One more run of each variant at the smallest size, after a growth step.

        Sizes grow with time, so a machine that drifts over the sweep would
        pass for growth; the smallest size, run again after each step, shows
        the drift alone, and the fit takes it out (`quadscope.analyse.drift`).
        It is the cheapest run there is.
        """
        measured = self.measured()
        if len({r.size_n for r in measured}) < 2:
            return
        n0 = min(r.size_n for r in measured)
        done = sum(1 for r in self.history if r.variant == "A" and r.size_n == n0)
        yield from self._hand_over([PlannedRun(v, n0, done) for v in self.variants])

    @property
    def spent_s(self) -> float:
        """What the sweep has spent of its budget so far (runs, looks and harness)."""
        return (self._budget_s or 0.0) - self.remaining_s

    def growth_cap_s(self, n: int) -> float | None:
        """How long a run at a new size n may take before it counts as not finishing."""
        if not self.measured():
            return None
        floor = min(max(self.spent_s, MIN_GROWTH_TIMEOUT_S), MAX_GROWTH_FLOOR_S)
        return max(GROWTH_SLACK * estimate_wall_s(self.measured(), n), floor)

    def verdicts_confident(self, growing: bool) -> tuple[bool, int | None]:
        """Whether the watched metrics' verdicts are reached, and the largest decide_n asked for.

        Reached: a settled class, or a bracket of two neighbouring classes whose
        deciding size is out of reach (`_wants_larger`); and the same verdicts
        as at the previous look. A look fits with LOOK_BOOT bootstrap replicates;
        one that would stop the sweep is taken again with the full analysis's, and
        that one decides.
        """
        reached, seen, decide = self._look(growing, LOOK_BOOT)
        if reached and seen == self._previous:
            reached, seen, decide = self._look(growing, None)
        held = seen == self._previous
        self._previous = seen
        self._first_look = reached and not held and bool(seen)
        self._looked, self._look_at_s, self._skipped = True, self.remaining_s, 0
        return reached and held and bool(seen), decide

    def _fit(self, variant: str, n_boot: int | None) -> dict[str, Fit]:
        """The watched metrics' fits to a variant's runs so far; the same runs are fitted once."""
        runs = self.measured(variant)
        key = (variant, len(runs), n_boot)
        if key not in self._fits:
            # A look is cheap and follows the deciding size a step at a time, looking again:
            # it needs no forecast of following it all the way (`fitting.fit_metric`).
            self._fits[key] = fit_runs(runs, seed=self.seed, metrics=self.until or (TIME_METRIC,),
                                       n_boot=n_boot, forecast=False)[0]
        return self._fits[key]

    def _look(self, growing: bool,
              n_boot: int | None) -> tuple[bool, list[tuple[str, str, str]], int | None]:
        """(reached, the verdicts seen, the largest decide_n asked for) from one fit per variant."""
        decide: int | None = None
        sizes = self.sizes()
        span = sizes[-1] / max(sizes[0], 1)
        reached = True
        seen: list[tuple[str, str, str]] = []
        for v in self.variants:
            for metric, fit in self._fit(v, n_boot).items():
                # A bracket from "1" over the constant's settling span whose medians do not
                # rise is flat too, whatever its top: its looks agree on that, not its top.
                level = (not fit.confident and fit.at_least == REGISTRY.names[0]
                         and span >= REGISTRY.classes[0].settling_span
                         and _level(self.measured(v), metric))
                seen.append(("flat", "", "") if level else (fit.cls, fit.at_least, fit.at_most))
                # A slow-growth verdict is final only over its class's settling span, and so
                # is a flat bracket over the constant's.
                # A settled constant is flat too: more n is as cheap, and it is where
                # growth hidden under a start-up cost would show.
                flat = _flat(fit) or level or (fit.confident
                                               and fit.cls == REGISTRY.names[0])
                settles = REGISTRY.get(fit.cls) or (REGISTRY.classes[0] if flat else None)
                if growing and settles is not None and span < settles.settling_span:
                    reached = False
                    continue
                if flat:
                    # Beyond that span, more n cannot narrow it (see _flat), but growth
                    # hidden under a start-up cost shows only at larger n: while n is cheap
                    # (a flat cost is the same at every size), it grows on.
                    if growing and (self._cheap_to_grow()
                                    or _bends_up(self.measured(v), metric, fit)):
                        reached = False
                    continue
                if self._wants_larger(fit):
                    decide = max(decide or 0, fit.decide_n or 0)
                if not fit.confident and not self._narrow(fit):
                    reached = False
                elif growing and _bends_up(self.measured(v), metric, fit):
                    reached = False  # the top steepens: a larger size tells more
        return reached, seen, decide

    def _cheap_to_grow(self) -> bool:
        """The sizes span less than FLAT_SPAN, n is below MAX_EXACT_SIZE, and less than
        FLAT_SPEND of the budget is spent."""
        sizes = self.sizes()
        budget = self._budget_s or 0.0
        return (bool(sizes) and sizes[-1] < min(MAX_EXACT_SIZE, FLAT_SPAN * max(sizes[0], 1))
                and self.spent_s < FLAT_SPEND * budget)

    def _look_due(self) -> bool:
        """Whether a look is worth its cost after this growth step.

        A look (fitting the runs so far) costs real time, read off the budget as
        what the budget lost around it beyond its runs' wall time: about a
        tenth of a second, many times what a step of millisecond runs costs, so
        looking after every step can cost a sweep of fast runs most of its time.
        A look is taken once the sweep has spent at least the last look's cost
        since it (the break-even rule of ski rental: looks then cost at most
        about as much as everything else; Karlin, Manasse, Rudolph & Sleator,
        "Competitive snoopy caching", Algorithmica 3, 1988), and after at most
        MAX_SKIPPED_LOOKS steps without one, so n does not run far past its
        verdict. On a fake clock looks cost nothing and come after every step.
        """
        if self._look_at_s is None or self._skipped >= MAX_SKIPPED_LOOKS:
            return True
        return self._look_at_s - self.remaining_s - self._look_s >= self._look_s

    def _narrow(self, fit: Fit) -> bool:
        """A bracket of at most two neighbouring classes that no affordable size narrows."""
        if fit.at_least not in REGISTRY or fit.at_most not in REGISTRY:
            return False
        width = REGISTRY.index(fit.at_most) - REGISTRY.index(fit.at_least)
        # A change of regime may want larger sizes without naming one (decide_n None):
        # then n grows while it can.
        # A change of regime with too few sizes above it grows on while affordable (its
        # upper class is the verdict for large n, see `_wants_larger`).
        worth = self.affordable if fit.regime_n is not None else self._worth_deciding
        # The plan looks again after each step, so only the next step towards the deciding
        # size must be worth it (a power calculation names that size, `analyse.decide`,
        # often several doublings on: its whole path may be, and the looks stop it sooner).
        step = None if fit.decide_n is None else min(fit.decide_n,
                                                     SLOW_GROWTH * max(self.sizes(), default=1))
        return width <= 1 and not (self._wants_larger(fit) and (step is None or worth(step)))

    def _worth_deciding(self, n: int) -> bool:
        """Growing to n, where a two-class bracket would settle, is affordable and costs at
        most DECIDE_SPEND times what the sweep has spent so far (or DECIDE_FLOOR of the
        budget, if more)."""
        # Growing there by doubling costs about twice the last size: 1 + 1/2 + 1/4 + ….
        cost = 2 * self.repeat * len(self.variants) * estimate_wall_s(self.measured(), n)
        allowed = max(DECIDE_SPEND * self.spent_s, DECIDE_FLOOR * (self._budget_s or 0.0))
        return self.affordable(n) and cost <= allowed

    def _wants_larger(self, fit: Fit) -> bool:
        """The fit names a size beyond those measured that would decide it.

        A change of regime with fewer than MIN_UPPER_SIZES sizes above it
        always does (fitting names the size that would give them): its upper
        class, the verdict for large n, is at best a bracket until then, so
        growth goes on past the change while the budget affords it.
        """
        top = max(self.sizes(), default=0)
        if fit.regime_n is not None and sum(n > fit.regime_n for n in self.sizes()) < MIN_UPPER_SIZES:
            return True
        return bool(fit.decide_n) and (fit.decide_n or 0) > top

    def refine(self) -> Generator[Batch, None, bool]:
        """One more run per variant at the widest-spread sizes (up to 3), shuffled.

        False when every size already has the most repeats worth taking.
        """
        counts: dict[int, int] = defaultdict(int)
        for r in self.history:
            if r.variant == "A":
                counts[r.size_n] += 1
        cap = max(MAX_REPEATS, 3 * self.repeat)
        spread = {n: s for n, s in _relative_spread(self.measured()).items()
                  if counts[n] < cap and n not in self._cut}
        if not spread:
            return False
        widest = sorted(spread, key=lambda n: spread[n], reverse=True)[:3]
        self.rng.shuffle(widest)
        yield from self._hand_over([PlannedRun(v, n, counts[n]) for n in widest
                                    for v in self.variants])
        return True

    def affordable(self, n: int, runs: int | None = None) -> bool:
        """Whether `runs` runs at n (a size's repeats of every variant) fit in half the budget left."""
        runs = self.repeat * len(self.variants) if runs is None else runs
        return estimate_wall_s(self.measured(), n) * runs < 0.5 * self.remaining_s

    def next_size(self, n: int) -> int:
        med = _medians(self.measured())
        first = med[min(med)] if med else 0.0
        last = med[max(med)] if med else 0.0
        factor = FAST_GROWTH if last < 2 * first else SLOW_GROWTH
        grown = max(n + 1, n * factor)
        runs = self.measured()
        # Short of the sizes a fit needs, a step also shrinks until the budget affords it.
        short = self._finished() < MIN_SIZES
        while grown > n + 1 and ((short and not self.affordable(grown)) or (
                (cost := estimate_wall_s(runs, grown)) > CHEAP_S and cost > COST_STEP * last)):
            grown = n + (grown - n) // 2
        # Sizes stay within what a fit, reading them as doubles, tells apart.
        grown = min(grown, MAX_EXACT_SIZE)
        if self._ceiling is not None and grown >= self._ceiling:
            # Below a size that did not finish, approach it by halving the gap (in log n).
            return self._between(n, self._ceiling) or self._ceiling
        return grown

    def _fill_in(self, n: int) -> int | None:
        """Short of MIN_SIZES sizes, one between two measured ones, once the cost grows.

        A fit needs MIN_SIZES sizes, and once the cost grows a size below the
        largest costs less than one above it (×COST_STEP at most, for steep
        growth; the middle costs a fraction of the largest): the sizes are made
        up below, at the geometric middle of the widest gap (as in `_between`),
        once the largest size's median is more than FILL_RATIO times the
        smallest's, or n is more than the budget affords. While start-up cost
        dominates, growth goes on (by FAST_GROWTH, see `next_size`): the span
        is what is missing, and sizes cost the same anywhere.
        """
        done = sorted({r.size_n for r in self.measured()})
        if not 2 <= len(done) < MIN_SIZES:
            return None
        med = _medians(self.measured())
        if med[done[-1]] <= FILL_RATIO * med[done[0]] and self.affordable(n):
            return None
        tried = set(self.sizes())
        middles = [(hi / max(lo, 1), mid) for lo, hi in itertools.pairwise(done)
                   if (mid := self._between(lo, hi)) is not None and mid not in tried]
        return max(middles)[1] if middles else None

    def _between(self, lo: int, hi: int) -> int | None:
        """The geometric middle of lo and hi, if it is a step worth measuring from both.

        Short of the sizes a fit needs, any step of n is worth it (steep growth
        may leave only a few units of n between fast and too slow).
        """
        mid = round(math.sqrt(lo * hi))
        gap = 1 if self._finished() < MIN_SIZES else max(1, math.ceil(lo * MIN_STEP))
        return mid if lo + gap <= mid <= hi - gap else None

    def _go(self) -> Generator[Batch, None, None]:
        n = self.next_size(max(self.sizes())) if self.history else max(self.start_n, 1)
        if self.warmup and not self.history:
            warmups = [PlannedRun(v, n, 0, warmup=True) for _ in range(self.warmup)
                       for v in self.variants]
            if not (yield from self._hand_over(warmups)):
                return
        growing = True
        confirming = False  # a refinement round to look again before growing on
        looked_again = False  # at most one such round per size: then growth goes on
        while not self.budget_out and self.remaining_s > 0:
            if growing and not confirming:
                looked_again = False
                fill = self._fill_in(n)
                if fill is not None:
                    # Made up below the largest size: looked at before growing on, and n
                    # priced again with what the new size shows (never dearer than before).
                    yield from self.measure_size(fill, self.repeat)
                    if self.measured():
                        n = min(n, self.next_size(max(r.size_n for r in self.measured())))
                else:
                    beyond = (self._ceiling is not None and n >= self._ceiling) or (
                        n in self.sizes() and n >= MAX_EXACT_SIZE)
                    # Two finished sizes are enough to price the next one.
                    if beyond or (self._finished() >= 2 and not self.affordable(n)):
                        growing = False
                        continue
                    yield from self.measure_size(n, self.repeat, self.growth_cap_s(n))
                    if self._failed_at(n):
                        # The program refuses this size (it exits non-zero every time):
                        # its limit, not a cost; larger sizes would only fail too.
                        self._ceiling = n if self._ceiling is None else min(self._ceiling, n)
                        growing = False
                        continue
                    if not self.user_timeout_hit:
                        yield from self._anchor()
                    if self.user_timeout_hit:
                        growing = False
                        back = self.step_back(n)
                        if back is not None:
                            n, growing = back, True
                            continue
                    n = self.next_size(n)
                    if not self.measured():
                        if len(self.sizes()) >= MIN_SIZES:
                            return  # every run so far failed: growing further only burns budget
                        continue
            if self._finished() < MIN_SIZES:
                if not growing:
                    return  # cannot reach enough sizes: the fit will say why
                continue
            if growing and not confirming and not self._look_due():
                self._skipped += 1
                continue
            confirming = False
            confident, decide = self.verdicts_confident(growing)
            if confident and self._enough_repeats():
                return
            if growing and self._first_look and not looked_again and (yield from self.refine()):
                # Reached at this look only: look again after one more run at the
                # widest-spread sizes, not after a larger size (×4 the time so far for n²).
                confirming = looked_again = True
                continue
            below_ceiling = self._ceiling is None or n < self._ceiling
            if (not growing and decide and decide > max(self.sizes()) and below_ceiling
                    and not self.user_timeout_hit and self.affordable(n)):
                growing = True
                continue
            if not growing and not (yield from self.refine()):
                return

    def step_back(self, failed_n: int) -> int | None:
        """The geometric middle between the largest size that finished and the smallest that did not.

        None when no size lies strictly between them or the middle is not affordable.
        """
        self._ceiling = failed_n if self._ceiling is None else min(self._ceiling, failed_n)
        done = [r.size_n for r in self.measured() if r.size_n < self._ceiling]
        if not done:
            return None
        mid = self._between(max(done), self._ceiling)
        if mid is None or not self.affordable(mid):
            return None
        self.user_timeout_hit = False
        return mid

    def _failed_at(self, n: int) -> bool:
        """Every run at n (two at least) failed (a non-zero exit, not a timeout), with sizes
        below it that did not: the program's own limit."""
        at = [r for r in self.history if r.size_n == n]
        return (len(at) >= 2  # one failure may be a fluke (another process's OOM kill)
                and not any(r.measurement.ok or r.measurement.timed_out for r in at)
                and any(r.size_n < n for r in self.measured()))

    def _finished(self) -> int:
        """How many sizes have a run that finished."""
        return len({r.size_n for r in self.measured()})

    def _enough_repeats(self) -> bool:
        """Every size has --repeat runs, but for one whose repeats the budget could not afford."""
        counts: dict[int, int] = defaultdict(int)
        for r in self.measured():
            counts[r.size_n] += 1
        return all(c >= self.repeat for n, c in counts.items() if n not in self._cut)
