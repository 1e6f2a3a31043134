"""Growth classes: how one metric grows with n, or why that cannot be told yet.

Contract: pure functions of (sizes, values) built on numpy and scipy; no I/O,
no printing, deterministic for a given seed. `fit_metric` returns a `Fit`
(see `quadscope.model`) or raises `FitRefusedError` when there is nothing to fit.
This module runs the method below: the models are fitted by
`quadscope.analyse.classfit`, the statistics the verdict needs are gathered
into an `Evidence` record by `quadscope.analyse.evidence`, and the verdict —
class, bracket, deciding size, reason and the `doubts` behind them — is the
fold of the checks of `quadscope.analyse.verdict`. A change of regime is
fitted here (`_split`, `_step`), and for a time named only when one side of
it grows (`_level_shift`). No sentence is written here (`analyse.text`).

Method, in order:
1. Runs are grouped by size and reduced to medians. Each median is weighted by
   1/σ², σ being its standard error from that size's spread shrunk halfway
   towards the relative spread of neighbouring sizes (and never below half of
   it), so that a size whose repeats happen to agree cannot dominate. The
   spread leaves out what every size's r-th run shares (drift between the
   rounds of an interleaved sweep: `classfit._round_free_spreads`). With one
   run per size (accumulate mode) σ is relative to a first power-law fit: timing
   noise is roughly multiplicative. When each value's error is known from how it
   was measured (`sd`: a sampled profile's self time, `quadscope.profile.noise`),
   σ is that error: the scatter of one value at each of four sizes about a
   3-parameter curve leaves one degree of freedom to judge noise from, and a
   slowed top size is absorbed by k, so it read k = 2.84 [2.76, 2.93] for an n²
   whose errors put it at [1.9, 3.8].
2. Each class of the registry (`quadscope.classes`) is fitted as a + b·f(n),
   a, b ≥ 0 (non-negative least squares), and a free power law a + b·n^k,
   k ∈ [0, 4], is fitted alongside.
3. Models are ranked by QAICc (Burnham & Anderson, Model Selection and
   Multimodel Inference, 2nd ed., 2002, §2.4 and §6.2), with the variance
   inflation ĉ estimated from the best 3-parameter fit (floored at 1 when the
   weights came from real repeats). Selection then prefers the simpler class:
   a more complex class must beat every simpler one by ΔQAICc ≥ `SELECT_DELTA`
   (`evidence`). The verdict is `INCONCLUSIVE` whenever another growing class is
   within that margin of the winner, fewer than `MIN_SUPPORT` (`verdict`) of
   bootstrap replicates reach the same verdict, or the free exponent's 95%
   interval excludes the class's effective exponent (a settled class never
   contradicts the k printed beside it: `verdict`'s coherence rule); in that
   last case the bracket also holds the classes just below and just above k
   (`evidence._straddle`), so a k of 1.6 reads "n log n … n²", never "n² … n²",
   and k = 2.71 ± 0.09 reads "n² … n³", never "n³". Every bracket is cut to
   the classes k's interval allows (`verdict.k_ends`).
   With repeated runs (or known errors), a growing verdict must also follow the local slopes of
   the upper half of the sizes (`quadscope.analyse.slopes`): a cost per
   element that rises through the caches, or a staircase of steps, is a
   bracket reaching down to the class of the lowest local slope.
   "1" needs no bootstrap support (it is the null), only a span of a decade.
   A time whose growth adds at most HIDDEN_SHARE across the sizes (at the
   bootstrap's 97.5th percentile) is practically flat: drift between runs
   does as much, so neither the growth nor "1" is settled and the bracket
   runs from "1" to the growth found (`evidence._negligible`).
4. Intervals (exponent k, prediction) come from a bootstrap over runs within
   each size, or over standardised residuals when there is one run per size
   (Efron & Tibshirani, An Introduction to the Bootstrap, 1993, §8–9), or,
   with known errors, a parametric bootstrap drawn from them (inflated by √ĉ,
   ĉ ≥ 1, where the sizes scatter more); with known errors a rise between the
   end sizes beyond their errors also withdraws a settled "1" (`evidence`).
5. Runs at a start-up size (`startup_n`, n = 1: the program's start-up and
   little else) measure the offset a rather than leave it to the fit, where a
   start-up of 40–100% of the smallest size's time trades off against k
   (BENCHMARKS.md §1, issue 25). They are fitted as one more size only where
   they agree with the other sizes: the other sizes' fit finds no change of
   regime, the free power law through every size misfits no more than one
   point's worth beyond the fit without them (the rise of χ² from one added
   point, scaled by ĉ, under the 95th percentile of χ²₁: a test of one linear
   restriction, Seber & Wild, Nonlinear Regression, 1989, §5.3), and the
   verdict with them lies inside the verdict without them. Otherwise the fit
   is the other sizes' alone, marked `startup="ignored"`: a program whose
   small-n cost is another regime loses the narrowing, never the truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from quadscope.analyse import text
from quadscope.analyse.classfit import (
    ClassFit,
    Data,
    Raw,
    best_curve,
    boot_class,
    fit_classes,
    power_grid,
    power_point,
    prepare,
    replicates,
    score_classes,
    symmetric_interval,
)
from quadscope.analyse.classfit import bootstrap_class as bootstrap_class
from quadscope.analyse.classfit import fit_power_law as fit_power_law
from quadscope.analyse.decide import METER
from quadscope.analyse.drift import drift_to_take_out, without_drift
from quadscope.analyse.evidence import HIDDEN_SHARE as HIDDEN_SHARE
from quadscope.analyse.evidence import SELECT_DELTA, Stats, drifts, gather, k_supported
from quadscope.analyse.forecast import forecast_n
from quadscope.analyse.regime import MIN_UPPER_SIZES, Regime, find_regime
from quadscope.analyse.stats import RELATIVE_RESOLUTION, akaike_weights, nice_n
from quadscope.analyse.stats import median_by_size as median_by_size
from quadscope.analyse.terms import find_step, free_offset, pair_chis, step_classes
from quadscope.analyse.verdict import counted_doubts, fold, needs_support, run_checks
from quadscope.classes import INCONCLUSIVE, REGISTRY, Registry
from quadscope.model import Candidate, Doubt, DoubtValue, Fit, Prediction


def fit_metric(
    metric: str,
    sizes: Sequence[float],
    values: Sequence[float],
    *,
    predict_n: int | None = None,
    seed: int = 0,
    n_boot: int = 200,
    registry: Registry = REGISTRY,
    pooled: bool = False,
    strict: bool = False,
    counted: str = "",
    startup_n: int | None = None,
    sd: Sequence[float] | None = None,
    forecast: bool = True,
) -> Fit:
    """How `metric` grows with n, from raw per-run observations (see the module docstring).

    `r2` is the weighted R² of the reported class on the per-size medians, with
    the same weights as the fit. `n_points` counts the finite runs used. The
    candidates are the classes of `registry`, in its order. When the growth
    changes regime inside the sizes (`quadscope.analyse.regime`), the fit is
    the upper regime's, fitted on the sizes above the change alone, and
    `regime_n`, `regime_below` and `regime_k` say where and from what.
    `values` are in the order the runs ran: a time's steady drift over that
    order is taken out first (`quadscope.analyse.drift`). `pooled` says each
    size's runs are consecutive launches of accumulate mode (`analyse.launches`):
    their order is their size, so no drift is taken out, and they share the
    machine's state of the moment, so they are not repeats: each size's median
    is fitted as one observation, its noise judged from the sizes' scatter
    about a smooth curve, as with one run per size (no local slopes' or
    steps' test, whose noise would come from the runs' spread).
    `strict` holds a count's settled class to k's interval as a time's is (no slack for
    lower-order terms): for exact counts that follow no law of one or two terms
    (`analyse.exactfit`), where that slack's reason is gone.
    `counted` names the metric that counted this sweep's work exactly ("" when the work
    was not counted): a time's doubts then advise no meter, their sentences point to the
    work's verdict instead (`verdict.counted_doubts`).
    `startup_n` is the size whose runs measured the start-up apart (method, step 5): the
    fit's `startup` says whether they were used.
    `sd` gives each value's standard error when it is known from how the value was
    measured (a sampled profile's self time: `quadscope.profile.noise`): the medians are
    weighted by it, ĉ never goes below 1 and the replicates are drawn from it
    (`classfit.prepare`), so the noise is not judged from the few degrees of freedom
    that single runs at a few sizes leave.
    With `forecast`, an unsettled time's deciding size is checked by simulating its
    following and fitting it again (`_forecast`); an adaptive sweep's looks, which follow
    it one step at a time and look again, leave it out.
    """
    fit = _fit_metric(metric, sizes, values, predict_n=predict_n, seed=seed, n_boot=n_boot,
                      registry=registry, pooled=pooled, strict=strict, counted=counted,
                      startup_n=startup_n, sd=sd)
    if not forecast or fit.confident or not fit.decide_n or pooled or sd is not None \
            or not drifts(metric):
        return fit

    def refit(s: Sequence[float], v: Sequence[float]) -> Fit:
        return _fit_metric(metric, s, v, predict_n=None, seed=seed, n_boot=n_boot,
                           registry=registry, pooled=False, strict=strict, counted=counted,
                           startup_n=startup_n, sd=None)

    return _forecast(fit, forecast_n(refit, metric, sizes, values, fit, registry, seed),
                     counted)


def _forecast(fit: Fit, n: int | None, counted: str) -> Fit:
    """`fit` advising n (the forecast's size, `analyse.forecast`) instead of its
    `decide_n`; where n is None, the meter (or the work's count) instead of any size."""
    named = fit.decide_n
    if named is None or n == named:
        return fit
    doubts = tuple(_readvise(d, n, counted) if d.decide_n else d for d in fit.doubts)
    return replace(fit, decide_n=n, doubts=doubts,
                   reason=text.readvised(fit.reason, named, n, METER, counted))


def _readvise(d: Doubt, n: int | None, counted: str) -> Doubt:
    """A doubt that named a size advising n instead (None: what decides instead)."""
    if n is not None:
        return replace(d, decide_n=n)
    if counted:
        return replace(d, decide_n=None, meter="", numbers={**d.numbers, "counted": counted})
    return replace(d, decide_n=None, meter=METER)


def _fit_metric(metric: str, sizes: Sequence[float], values: Sequence[float], *,
                predict_n: int | None, seed: int, n_boot: int, registry: Registry,
                pooled: bool, strict: bool, counted: str, startup_n: int | None,
                sd: Sequence[float] | None) -> Fit:
    """`fit_metric` without the forecast: the start-up runs used where they agree."""
    kw = dict(predict_n=predict_n, seed=seed, n_boot=n_boot, registry=registry,
              pooled=pooled, strict=strict, counted=counted)
    err = None if sd is None else np.asarray(sd, dtype=float)
    rest = [i for i, n in enumerate(sizes) if n != startup_n]
    if startup_n is None or pooled or len(rest) == len(sizes) or not rest:
        return _fit_all(metric, sizes, values, sd=err, **kw)  # type: ignore[arg-type]
    free = _fit_all(metric, [sizes[i] for i in rest], [values[i] for i in rest],
                    sd=None if err is None else err[rest], **kw)  # type: ignore[arg-type]
    if free.regime_n is not None or not agrees(metric, sizes, values, rest, err):
        return replace(free, startup="ignored")
    anchored = _fit_all(metric, sizes, values, change=False, sd=err,
                        **kw)  # type: ignore[arg-type]
    if not _inside(anchored, free, registry):
        return replace(free, startup="ignored")
    return replace(anchored, startup="used")


# The 95th percentile of χ² with one degree of freedom: one added point's allowed misfit.
CHI2_1_95 = 3.841


def agrees(metric: str, sizes: Sequence[float], values: Sequence[float],
           rest: Sequence[int], sd: np.ndarray | None = None) -> bool:
    """Whether the runs outside `rest` (the start-up size's) follow the free power law of
    the others: adding them raises its weighted χ² by at most CHI2_1_95 × ĉ, ĉ the
    others' own misfit per degree of freedom (at least 1 with repeats, as in `_fit_range`)."""
    whole = prepare(metric, sizes, values, sd=sd)
    part = prepare(metric, [sizes[i] for i in rest], [values[i] for i in rest],
                   sd=None if sd is None else sd[list(rest)])
    if whole.m - part.m != 1:
        return False
    chi_part = power_point(part)[3]
    chi_whole = power_point(whole)[3]
    dof = part.m - 3
    c_hat = chi_part / dof if dof >= 1 else 1.0
    c_hat = max(c_hat, 1.0) if part.honest else max(c_hat, RELATIVE_RESOLUTION**2)
    return bool(np.isfinite(chi_whole)) and chi_whole - chi_part <= CHI2_1_95 * c_hat


def _span(fit: Fit, registry: Registry) -> tuple[int, int]:
    """The classes a verdict allows, as registry positions (all of them for a bare "?")."""
    if fit.confident:
        return registry.index(fit.cls), registry.index(fit.cls)
    if fit.at_least and fit.at_most:
        return registry.index(fit.at_least), registry.index(fit.at_most)
    return 0, len(registry) - 1


def _inside(anchored: Fit, free: Fit, registry: Registry) -> bool:
    """Whether the verdict with the start-up allows no class the verdict without it rules out."""
    lo, hi = _span(anchored, registry)
    free_lo, free_hi = _span(free, registry)
    return free_lo <= lo and hi <= free_hi


def _fit_all(metric: str, sizes: Sequence[float], values: Sequence[float], *,
             predict_n: int | None, seed: int, n_boot: int, registry: Registry,
             pooled: bool, strict: bool, counted: str, change: bool = True,
             sd: np.ndarray | None = None) -> Fit:
    """`fit_metric` on every run given: the drift taken out, then `_fit_range`."""
    rate = drift_to_take_out(sizes, values) if not pooled and drifts(metric) else None
    drift = None
    if rate is not None:  # a time: the machine's drift is not growth
        values = without_drift(values, rate[0])
        drift = _DriftError(rate[1], tuple(sizes), tuple(values))
    return _fit_range(metric, sizes, values, predict_n=predict_n, seed=seed, n_boot=n_boot,
                      registry=registry, split=True, settle=True, pooled=pooled, drift=drift,
                      strict=strict, counted=counted, change=change, sd=sd)


@dataclass(frozen=True, slots=True)
class _DriftError:
    """The drift taken out of a sweep's runs: its standard error `se`, the whole sweep's
    sizes and (detrended) values in run order, and which runs a part of it fits (`keep`)."""

    se: float
    sizes: tuple[float, ...]
    values: tuple[float, ...]
    keep: np.ndarray | None = None

    def k_error(self, metric: str) -> float:
        """The standard error the drift's own error gives the exponent k: half the change of
        the power law's k when the runs are tilted by −se and +se per run (in the whole
        sweep's order), fitted on the runs `keep` picks.

        The bootstrap resamples runs already detrended, so without it the interval for
        k would treat the drift as known; sizes grow with time in an adaptive sweep,
        so an error in the drift is an error in k (calibration: with 10% drift the
        interval held the true k 82% of the time at 5% noise).
        """
        x = np.asarray(self.sizes, dtype=float)
        pick = np.ones(x.size, dtype=bool) if self.keep is None else self.keep
        ks = [power_point(prepare(metric, x[pick],
                                    np.asarray(without_drift(self.values, d))[pick]))[0]
              for d in (-self.se, self.se)]
        return abs(ks[1] - ks[0]) / 2


def _fit_range(metric: str, sizes: Sequence[float], values: Sequence[float], *,
               predict_n: int | None, seed: int, n_boot: int, registry: Registry,
               split: bool, settle: bool, pooled: bool = False,
               drift: _DriftError | None = None, change: bool = True,
               strict: bool = False, counted: str = "", sd: np.ndarray | None = None) -> Fit:
    """`fit_metric`; `split` looks for a change of regime, and without `settle` a class is only a bracket.

    `drift` is the drift taken out of `values` (None: none), whose error goes into k's
    interval; without `change` no change of regime is looked for (`_split` found only
    noise). The statistics are computed here; the verdict is the fold of the checks'
    doubts (`quadscope.analyse.verdict`).
    """
    data = prepare(metric, sizes, values, pooled, sd=sd)
    rng = np.random.default_rng(seed)
    k, a_pl, b_pl_norm, chi_pl = power_point(data)
    fitted_pl = a_pl + b_pl_norm * (data.n / data.n[-1]) ** k
    raw = fit_classes(data, registry)
    if split and change and (regime := _change(data, raw, chi_pl, registry)) is not None:
        return _split(metric, sizes, values, regime, predict_n=predict_n, seed=seed,
                      n_boot=n_boot, registry=registry, pooled=pooled, drift=drift,
                      strict=strict, counted=counted, sd=sd)
    chis = [chi_pl] + [v[2] for c, v in raw.items() if v is not None and c != "1"]
    dof = data.m - 3
    c_hat = min(chis) / dof if dof >= 1 else 1.0
    c_hat = max(c_hat, 1.0) if data.honest else max(c_hat, RELATIVE_RESOLUTION**2)

    boot = replicates(data, best_curve(data, fitted_pl, raw), rng, n_boot, c_hat)
    power_boot = power_grid(data.n, boot, data.w)
    k_ci = symmetric_interval(k, power_boot[0],
                               extra_se=0.0 if drift is None else drift.k_error(metric))
    fits = score_classes(raw, data, c_hat, registry)
    ev = gather(metric, sizes, values, Stats(data, boot, fits, c_hat, registry), k, k_ci,
                   split=split, settle=settle, pooled=pooled, strict=strict)
    doubts = counted_doubts(run_checks(ev), counted)
    if needs_support(ev, doubts):  # only an unsettled bracket reads the classes k's interval holds
        ev = replace(ev, k_supported=k_supported(fits, dict(ev.exponents), k_ci,
                                                      registry))
    verdict = fold(ev, doubts)
    cls = verdict.cls
    report = fits[cls if cls != INCONCLUSIVE else ev.best]
    if cls == INCONCLUSIVE and ev.chosen == "1":
        report = fits["1"]
    wm = (data.w * data.y).sum() / data.w.sum()
    tss = float((data.w * (data.y - wm) ** 2).sum())
    scores = np.array([fits[c].score for c in registry.names])
    candidates = tuple(
        Candidate(c, fits[c].a, fits[c].b, fits[c].score, float(wt), fits[c].chi2)
        for c, wt in zip(registry.names, akaike_weights(scores), strict=True)
    )
    # With no growth to measure, a power law's k is unidentified (any k fits b = 0):
    # report none rather than a number that only reflects the noise.
    flat = cls == "1"
    return Fit(
        metric=metric,
        cls=cls,
        exponent=None if flat else float(k),
        exponent_ci=None if flat else k_ci,
        coefficients={"a": report.a, "b": report.b,
                      **({"c": report.growth.base}
                         if report.growth.bases and report.growth.base is not None else {})},
        r2=None if tss <= 0 else 1.0 - report.chi2 / tss,
        candidates=candidates,
        n_points=data.groups.n_obs,
        reason=verdict.reason,
        decide_n=verdict.decide_n,
        prediction=None if predict_n is None else _predict(
            int(predict_n), report, [fits[c] for c in ev.leading], data, boot,
            power_boot if cls == INCONCLUSIVE else None),
        best=ev.best,
        at_least=verdict.at_least,
        at_most=verdict.at_most,
        doubts=verdict.doubts,
    )


def _change(data: Data, raw: Mapping[str, Raw | None], chi_pl: float,
            registry: Registry) -> Regime | None:
    """A change of regime, or a step, that beats every single model; None when there is none."""
    singles = [(chi_pl, 3)] + [(v[2], v[3].n_coef) for v in raw.values() if v is not None]
    regime = find_regime(data.n, data.y, data.w, singles, repeated=data.honest)
    # A step must also beat two growth terms, whose sum it can otherwise mimic.
    # With one run per size the noise is judged against a smooth fit, too loosely for a
    # discontinuous candidate: a step is only looked for among repeated runs.
    step = find_step(data.n, data.y, data.w, singles + pair_chis(data.n, data.y, data.w, registry),
                     registry, repeated=data.repeated, select=SELECT_DELTA) if data.repeated else None
    if step is not None and (regime is None or step.delta > regime.delta):
        regime = step  # the same class on both sides fits better than a bend
    return regime

def _predict(at_n: int, report: ClassFit, leading: Sequence[ClassFit], data: Data,
             boot: np.ndarray, power_boot: tuple[np.ndarray, ...] | None) -> Prediction:
    """The reported curve at `at_n`, its interval spanning every leading class's replicates.

    With `power_boot` (the class is not settled, so neither is the extrapolation) the
    interval also spans the free power law's replicates, whose k ranges over what the
    data allow.
    """
    at = np.array([float(at_n)])
    value = float(report.curve(at)[0])
    lows, highs = [], []
    for fit in {f.cls: f for f in (report, *leading)}.values():
        if fit.growth.normalised(data.n, float(data.n[-1])) is None:
            continue  # cannot be refitted here (a base on the edge of floats): no bounds
        a_s, b_s = boot_class(fit.growth, data, boot)
        with np.errstate(over="ignore", invalid="ignore"):
            p = fit.growth.evaluate(a_s, b_s, at)[:, 0]
        lo_p, hi_p = np.nanpercentile(p, [2.5, 97.5])
        lows.append(float(lo_p))
        highs.append(float(hi_p))
    if power_boot is not None:
        k_b, a_b, b_b = power_boot
        with np.errstate(over="ignore", invalid="ignore"):
            p = a_b + b_b * (float(at_n) / data.n[-1]) ** k_b
        lo_p, hi_p = np.nanpercentile(p, [2.5, 97.5])
        lows.append(float(lo_p))
        highs.append(float(hi_p))
    return Prediction(at_n, value, min([*lows, value]), max([*highs, value]))

def _split(metric: str, sizes: Sequence[float], values: Sequence[float], regime: Regime, *,
           predict_n: int | None, seed: int, n_boot: int, registry: Registry,
           pooled: bool = False, drift: _DriftError | None = None,
           strict: bool = False, counted: str = "", sd: np.ndarray | None = None) -> Fit:
    """The fit of a metric that changes regime: the upper regime's, fitted on its sizes alone.

    One class is not extrapolated across the change. Below MIN_UPPER_SIZES
    sizes above it the upper class is at best a bracket, and with two it is
    not fitted at all; either way `decide_n` asks for the sizes that would
    settle it (adaptive mode grows n towards them), and a "regime" doubt says so.
    """
    x = np.asarray(sizes, dtype=float)
    v = np.asarray(values, dtype=float)
    above = x > regime.n_break

    def part(keep: np.ndarray, predict: int | None, settle: bool) -> Fit:
        return _fit_range(metric, x[keep], v[keep], predict_n=predict, seed=seed, n_boot=n_boot,
                          registry=registry, split=False, settle=settle, pooled=pooled,
                          drift=None if drift is None else replace(drift, keep=keep),
                          strict=strict, counted=counted, sd=None if sd is None else sd[keep])

    lower = part(~above, None, True)
    upper_fit = part(above, predict_n, MIN_UPPER_SIZES - regime.sizes_above <= 0) \
        if regime.sizes_above >= 3 else None
    if drifts(metric) and _level_shift(lower, upper_fit, x, v, above, registry):
        # No growth on either side: a shift of the machine's speed, not a change of growth.
        return _fit_range(metric, sizes, values, predict_n=predict_n, seed=seed, n_boot=n_boot,
                          registry=registry, split=True, settle=True, pooled=pooled,
                          drift=drift, change=False, strict=strict, counted=counted, sd=sd)
    at = nice_n(regime.n_break)
    hi_n = float(np.max(x[np.isfinite(x) & np.isfinite(v)]))
    short = MIN_UPPER_SIZES - regime.sizes_above
    decide_n = nice_n(hi_n * 2.0**short) if short > 0 else None
    where = dict(regime_n=at, regime_below=lower.cls if lower.confident else "",
                 regime_k=(regime.k_below, regime.k_above))
    numbers: dict[str, DoubtValue] = {
        "n_break": at, "k_below": regime.k_below, "k_above": regime.k_above,
        "sizes_above": regime.sizes_above, "hi_n": hi_n, "fitted": int(regime.sizes_above >= 3)}
    if regime.sizes_above < 3:
        whole = part(np.ones(x.size, dtype=bool), predict_n, False)
        few = Doubt("regime", "", "", decide_n, numbers=numbers)
        return replace(whole, cls=INCONCLUSIVE, at_least="", at_most="", decide_n=decide_n,
                       reason=text.doubt_text(few, registry), doubts=(few,),
                       **where)  # type: ignore[arg-type]
    upper = upper_fit if upper_fit is not None else part(above, predict_n, short <= 0)
    same = lower.cls if lower.confident and registry[lower.cls].growing else regime.step
    if same and not (upper.at_least and registry.index(upper.at_least) <= registry.index(same)
                     <= registry.index(upper.at_most)):
        stepped = _step(metric, x[above], v[above], same, lower, upper, regime, short, registry,
                        None if sd is None else sd[above])
        if stepped is not None:
            return stepped
    if short > 0:
        lo, hi = _reach_back(upper, lower, regime, registry)
        doubt_ = Doubt("regime", lo, hi, max(decide_n or 0, upper.decide_n or 0), numbers=numbers)
        return replace(upper, reason=text.doubt_text(replace(doubt_, decide_n=decide_n), registry),
                       at_least=lo, at_most=hi, decide_n=doubt_.decide_n,
                       doubts=(*upper.doubts, doubt_), **where)  # type: ignore[arg-type]
    return replace(upper, reason=text.above_regime(at, upper.reason),
                   **where)  # type: ignore[arg-type]


def _flat(fit: Fit, registry: Registry) -> bool:
    """The fit shows no growth: "1", or a bracket that reaches down to "1" (or none)."""
    if fit.confident:
        return not registry[fit.cls].growing
    return fit.at_least in ("", "1")


def _level_shift(lower: Fit, upper: Fit | None, x: np.ndarray, v: np.ndarray,
                 above: np.ndarray, registry: Registry) -> bool:
    """Whether a change of regime in a time is only noise: neither side grows.

    Issue 25: /bin/true under load read "1 … n³ above n ≈ 1,500 (below: k ≈ 0.0)": a
    shift of the level between the runs of small and large sizes (load arriving, a
    frequency change) beats a single law by ΔQAICc ≥ 10 in a few sweeps out of a hundred
    (`bench/flat_noise.py`), yet no growth is seen on either side of it. With fewer than
    three sizes above (`upper` None), the upper side grows when every size's median there
    exceeds the median run below by more than HIDDEN_SHARE, what drift alone makes.
    """
    if not _flat(lower, registry):
        return False
    if upper is not None:
        return _flat(upper, registry)
    ok = np.isfinite(x) & np.isfinite(v)
    below = v[ok & ~above]
    level = float(np.median(below)) if below.size else 0.0
    tops = [float(np.median(v[ok & above & (x == n)])) for n in np.unique(x[ok & above])]
    return level <= 0 or not tops or min(tops) <= (1 + HIDDEN_SHARE) * level


def _reach_back(upper: Fit, lower: Fit, regime: Regime, registry: Registry) -> tuple[str, str]:
    """The upper regime's bracket, reaching back to the neighbour of the regime below.

    Just above a change, the cost still carries what was spent below it (an offset
    that may be negative, which a ≥ 0 cannot follow), so a few sizes overstate or
    understate the new growth.
    """
    lo, hi = upper.at_least, upper.at_most
    if lo and hi and lower.at_least and lower.at_most:
        order = registry.index
        if regime.k_above > regime.k_below:
            near = registry.classes[min(order(lower.at_most) + 1, len(registry) - 1)].name
            lo = min(lo, near, key=order)
        else:
            near = registry.classes[max(order(lower.at_least) - 1, 0)].name
            hi = max(hi, near, key=order)
    return lo, hi


def _step(metric: str, sizes: np.ndarray, values: np.ndarray, name: str, lower: Fit, upper: Fit,
          regime: Regime, short: int, registry: Registry,
          sd: np.ndarray | None = None) -> Fit | None:
    """The upper regime read as class `name` with a free offset: a step, not a new class.

    `name` is the settled class below the change, or the class of the step
    candidate. A per-element cost that steps up leaves the upper sizes a
    negative offset, which a ≥ 0 cannot follow, so they read as a faster class
    on their own (`quadscope.analyse.terms`). When `name` with a free offset is
    what the upper sizes choose, alone, the class below is settled as the same,
    and enough sizes lie above, the verdict is that class with a step; when it
    is only among the choices, the bracket reaches down to it (a "step" doubt).
    None when the upper sizes rule it out.
    """
    data = prepare(metric, sizes.tolist(), values.tolist(), sd=sd)
    near = step_classes(data.n, data.y, data.w, registry, delta=SELECT_DELTA,
                        repeated=data.honest)
    if name not in near:
        return None
    at = nice_n(regime.n_break)
    a, b, _ = free_offset(registry[name], data.n, data.y, data.w)
    below_b = lower.coefficients.get("b", 0.0)
    numbers: dict[str, DoubtValue] = {"n_break": at, "class": name,
                                      "ratio": b / below_b if below_b > 0 else None}
    where = dict(regime_n=at, regime_below=name, regime_k=(regime.k_below, regime.k_above))
    if near == [name] and short <= 0 and lower.cls == name:
        return replace(upper, cls=name, at_least=name, at_most=name, exponent=lower.exponent,
                       exponent_ci=lower.exponent_ci, coefficients={"a": a, "b": b},
                       reason=text.step(numbers), decide_n=None, best=name, doubts=(),
                       **where)  # type: ignore[arg-type]
    lo = min(filter(None, (name, upper.at_least)), key=registry.index)
    hi = max(filter(None, (name, upper.at_most, near[0])), key=registry.index)
    stepped = Doubt("step", lo, hi, upper.decide_n, numbers=numbers)
    return replace(upper, cls=INCONCLUSIVE, at_least=lo, at_most=hi,
                   reason=text.then(text.doubt_text(stepped, registry), upper.reason),
                   doubts=(*upper.doubts, stepped), **where)  # type: ignore[arg-type]
