"""The statistics the verdict's checks read, gathered into one `Evidence` record.

Contract: pure numpy/scipy on the prepared medians, bootstrap replicates and
class fits of `quadscope.analyse.classfit`; no I/O, no sentences.
`gather(metric, sizes, values, stats, k, k_ci, ...)` returns the `Evidence`
(`quadscope.analyse.verdict`) of one metric: the chosen and best classes and
the runner-up of a tie (bootstrap support, Burnham & Anderson 2002, §5.3;
leaving each size out, the jackknife idea of Quenouille 1956 and Tukey 1958),
and, as the method of `quadscope.analyse.fitting` asks, the rank test of a
constant (Kendall 1938), the growth the runs could hide or that is too small
to tell from drift (`HIDDEN_SHARE`), the classes k straddles, the local
slopes (`quadscope.analyse.slopes`) and a second growth term
(`quadscope.analyse.terms`). `k_supported` is the classes an unsettled
bracket holds by k's interval; the checks and their fold are `verdict`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import kendalltau, norm

from quadscope.analyse.classfit import K_GRID, ClassFit, Data, boot_class, left_out_chis, power_grid
from quadscope.analyse.decide import Advice, Extension, constant_n, exponent_n, pair_n, tie_n
from quadscope.analyse.slopes import swing
from quadscope.analyse.stats import nice_n, nnls2, qaicc
from quadscope.analyse.terms import doubt
from quadscope.analyse.verdict import EXPONENT_SLACK, MIN_SUPPORT, Evidence, Hidden, Slopes, Tie
from quadscope.classes import GrowthClass, Registry
from quadscope.metrics import find as find_metric

# Burnham & Anderson (2002, §2.6) read Δ of 4–7 as "considerably less support";
# we take the top of that band: below it the more complex class is not clearly better.
SELECT_DELTA = 6.0
# How far a settled class's effective exponent may lie outside k's 95% interval: half a unit
# of the two decimals k is printed with, so a reader never sees a class the interval excludes.
COHERENCE_TOL = 0.005
# Largest size that `decide_n` may name: beyond it no sweep is practical.
MAX_DECIDE_N = 1e12
# A "1" verdict is withdrawn when the runs rise with n at this one-sided significance,
TREND_P = 0.01
# or when a growth term of any class this large a share of the cost at n_max cannot be
# ruled out: start-up cost and noise can hide slow growth over any span of sizes.
HIDDEN_SHARE = 0.15


# ---------------------------------------------------------------------------
# Verdict.


def _tie(c1: ClassFit, c2: ClassFit, top: ClassFit, data: Data, advice: Advice) -> Tie:
    """Why c1 and c2 cannot be told apart (start-up dominating `top`, or both fit as well),
    and what would tell them apart (`quadscope.analyse.decide.tie_n`)."""
    lo_n, hi_n = float(data.n[0]), float(data.n[-1])
    grow = float(top.growth.evaluate(0.0, top.b, np.array([hi_n]))[0]) if top.growth.growing else 0.0
    total = top.a + grow
    frac = grow / total if total > 0 and np.isfinite(total) else 1.0
    share = float(frac) if top.growth.growing and frac < 0.5 else None
    return Tie(c1.cls, c2.cls, lo_n, hi_n, advice.n, share, advice.meter)


def _rise(data: Data, boot: np.ndarray, growth: GrowthClass,
          b: float | None = None) -> tuple[float, float, float] | None:
    """(point, upper, b_upper): the rise of a `growth` term across the sizes, as shares of the cost.

    The rise is what b·f(n) adds from the smallest size to the largest, over
    the median cost; the upper value takes b_upper, the 97.5th percentile of
    the bootstrap b, the point value `b` (the fit on the data) when given. None
    when the class cannot be fitted here or the cost is not positive.
    """
    if growth.normalised(data.n, float(data.n[-1])) is None:
        return None
    _, b_s = boot_class(growth, data, boot)
    b_hi = float(np.nanpercentile(b_s, 97.5)) if b_s.size else 0.0
    level = float(np.median(data.y))
    if not np.isfinite(b_hi) or level <= 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        span = growth.evaluate(0.0, 1.0, data.n[[0, -1]])
        unit = float(span[-1] - span[0]) / level
    if not np.isfinite(unit):
        return None
    return max(b or 0.0, 0.0) * unit, max(b_hi, 0.0) * unit, b_hi


def _hidden(data: Data, boot: np.ndarray, growth: GrowthClass) -> float | None:
    """The share when the runs cannot rule out a `growth` term above HIDDEN_SHARE of the cost.

    The 97.5th percentile of the bootstrap b of a + b·f(n) says how much growth
    of that shape the noise could hide over the measured sizes; where it could
    be a sizeable part of the cost, "constant" is not yet shown.
    """
    rise = _rise(data, boot, growth)
    return None if rise is None or rise[1] <= HIDDEN_SHARE else rise[1]


def _hidden_walk(st: Stats) -> tuple[Hidden, ...]:
    """The growing classes the runs could hide above HIDDEN_SHARE, with `_hidden`'s share.

    Slow growth hides first: the walk goes up from the slowest class while each could
    hide. The first (slowest) names what would rule it out (`decide.constant_n`).
    """
    hidden: list[Hidden] = []
    for g in (g for g in st.registry if g.growing):
        if (share := _hidden(st.data, st.boot, st.fits[g.name].growth)) is None:
            break
        advice = (st.advise_constant(st.fits[g.name].growth) if not hidden
                  else Advice(None))
        hidden.append(Hidden(g.name, share, advice.n, advice.meter))
    return tuple(hidden)


def _negligible(st: Stats, fit: ClassFit) -> tuple[float, int | None] | None:
    """(upper rise, n) when the growth `fit` finds adds at most HIDDEN_SHARE across the sizes.

    A rise that small is within what a sweep's own drift produces: machine
    state shifts timings by several percent between runs and set-ups
    (Mytkowicz et al., "Producing wrong data without doing anything obviously
    wrong!", ASPLOS 2009; Kalibera & Jones, "Rigorous benchmarking in
    reasonable time", ISMM 2013), and in adaptive mode n grows with time, so
    drift rises with log n. The growth is then practically equivalent to none
    (an equivalence margin, as in Schuirmann's two one-sided tests, J.
    Pharmacokinet. Biopharm. 15, 1987): neither it nor a constant is settled.
    The n returned is where either answer would be reached with probability
    `decide.POWER`: the growth found, were it real, chosen alone
    (`decide.tie_n`), and a constant ruling out the slowest growth
    (`decide.constant_n`); None when no affordable n is (a time: the
    instructions meter decides instead).
    """
    if not fit.growth.growing:
        return None
    rise = _rise(st.data, st.boot, fit.growth, fit.b)
    if rise is None or rise[1] > HIDDEN_SHARE:
        return None
    slowest = next(g for g in st.registry if g.growing)
    grows, flat = st.advise((fit.cls,)), st.advise_constant(st.fits[slowest.name].growth)
    both = None if grows.n is None or flat.n is None else max(grows.n, flat.n)
    return rise[1], both


def drifts(metric: str) -> bool:
    """Whether `metric` is a time: clocks drift with the machine's state, counts of events do not."""
    found = find_metric(metric)
    return found is not None and found.unit == "s"


def _rising(sizes: Sequence[float], values: Sequence[float]) -> tuple[float, float] | None:
    """(τ, p) when the raw runs rise with n beyond chance (one-sided Kendall test), else None.

    Model selection on a handful of medians can prefer a constant while every
    run at the largest sizes sits above every run at the smallest; a rank test
    on the runs themselves (Kendall 1938) keeps that from becoming a confident "1".
    """
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 5 or np.ptp(y[ok]) == 0:
        return None
    res = kendalltau(x[ok], y[ok], alternative="greater")
    tau, p = float(res.statistic), float(res.pvalue)
    return (tau, p) if np.isfinite(p) and p < TREND_P else None


def _known_rise(data: Data) -> tuple[float, float] | None:
    """(1, p) when the largest size's value exceeds the smallest's beyond their given errors
    (one-sided z test at TREND_P), else None.

    With errors known (`classfit.prepare`'s `sd`) a rise needs no rank test: one
    recording slowed 2-5× by load at a middle size breaks the ranks of a linear
    cost over five sizes, inflates ĉ for every model, and left "1", the null that
    needs no support, settled though the ends were over four standard errors apart.
    """
    sigma = 1.0 / np.sqrt(data.w[[0, -1]])
    z = float((data.y[-1] - data.y[0]) / np.hypot(sigma[0], sigma[1]))
    p = float(norm.sf(z))
    return (1.0, p) if p < TREND_P else None


def exponents(fits: Mapping[str, ClassFit], data: Data,
              registry: Registry) -> tuple[tuple[str, float], ...]:
    """Every class's effective exponent at these sizes, the scale `verdict.fold` judges it on.

    The k a free power law a + b·n^k finds on the class's own noise-free fitted curve
    at these sizes: the same estimator as the data's k, offset included,
    so a + b·n² reads 2 whatever a is, and n log n reads about 1.1–1.2. A class
    whose fit has no growing part (b = 0) is judged on its shape alone, f(n);
    "1" is 0 and a class beyond every power the top of k's search. The curves are
    searched in one batched `power_grid` (each row as it would be alone).
    """
    out: dict[str, float] = {}
    rows: list[np.ndarray] = []
    searched: list[str] = []
    for growth in registry:
        fit = fits[growth.name]
        if not growth.growing:
            out[growth.name] = 0.0
        elif growth.outgrows_powers:
            out[growth.name] = float(K_GRID[-1])
        elif np.isfinite(fit.score) and fit.b > 0:
            rows.append(np.asarray(fit.curve(data.n), dtype=float))
            searched.append(growth.name)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                shape = growth.evaluate(0.0, 1.0, data.n)
            if bool(np.all(np.isfinite(shape)) and shape[-1] > 0):
                rows.append(shape / shape[-1])
                searched.append(growth.name)
            else:
                out[growth.name] = float(growth.order[0])
    if rows:
        ks = power_grid(data.n, np.stack(rows), data.w)[0]
        out.update(zip(searched, (float(k) for k in ks), strict=True))
    return tuple((growth.name, out[growth.name]) for growth in registry)


def _straddle(k: float, fits: Mapping[str, ClassFit], table: Mapping[str, float],
              registry: Registry) -> tuple[str, str]:
    """The fastest class whose effective exponent is at most k, and the slowest at least k.

    Either is "" when no fitted class lies on that side; a class beyond every
    power is left out (its effective exponent is the top of k's search).
    """
    below, above = "", ""
    for growth in registry:
        fit = fits[growth.name]
        if growth.outgrows_powers or not np.isfinite(fit.score):
            continue
        k_eff = table[growth.name] if growth.growing and fit.b > 0 else 0.0
        if k_eff <= k:
            below = growth.name
        elif not above:
            above = growth.name
    return below, above


# Leave-one-out drops at most this many blocks of neighbouring sizes, so a sweep
# of 600 launches (one size each) is checked in 20 refits, not 600.
MAX_LEAVE_OUT = 20


def _leave_out(data: Data, c_hat: float, registry: Registry) -> tuple[set[str], set[str]]:
    """Refit every class with each size (or block of sizes) left out in turn.

    Returns the classes chosen in some refit and the classes within
    SELECT_DELTA of the best in some refit. A verdict that one size carries —
    an outlier at the top, a step at one size — changes when that size is
    dropped, so a confident class must be the choice of every refit and a
    bracket must hold every class some refit leaves standing (the jackknife
    idea of Quenouille 1956 and Tukey 1958, applied to the selection).
    """
    chosen: set[str] = set()
    leading: set[str] = set()
    if data.m < 4:
        return chosen, leading
    blocks = np.array_split(np.arange(data.m), min(data.m, MAX_LEAVE_OUT))
    keeps = np.ones((len(blocks), data.m), dtype=bool)
    for i, block in enumerate(blocks):
        keeps[i, block] = False
    chis = left_out_chis(data, keeps, registry)
    n_coef = np.array([g.n_coef for g in registry])
    scores = np.where(np.isfinite(chis), qaicc(chis, c_hat, keeps.sum(1)[:, None], n_coef),
                      np.inf)
    for row in scores:
        names = [g.name for g, d in zip(registry, row - np.min(row), strict=True)
                 if d < SELECT_DELTA]
        chosen.add(names[0])
        leading.update(names)
    return chosen, leading


def _select(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched selection over the last axis (ordered as the registry): (chosen, unique).

    chosen is the simplest class within SELECT_DELTA of the best score; unique
    says no other growing class is within that margin too.
    """
    delta = scores - np.min(scores, axis=-1, keepdims=True)
    near = delta < SELECT_DELTA
    chosen = np.argmax(near, axis=-1)
    growing_near = near.copy()
    growing_near[..., 0] = False
    unique = (chosen == 0) | (growing_near.sum(-1) == 1)
    return chosen, unique


def _bootstrap_verdicts(data: Data, boot: np.ndarray, c_hat: float,
                        classes: Sequence[GrowthClass]) -> np.ndarray:
    """(n_boot,) index in the registry of each replicate's confident verdict, −1 when it has none.

    Selection frequencies over bootstrap replicates measure how stable a chosen
    model is (Burnham & Anderson 2002, §5.3; Buckland, Burnham & Augustin 1997).
    ĉ stays the one estimated on the data: a replicate's medians scatter about
    the observed ones, not about the truth, so re-estimating ĉ on them would
    roughly double it and halve every ΔQAICc.
    """
    n_boot = boot.shape[0]
    chi = np.full((n_boot, len(classes)), np.inf)
    sw = data.w.sum()
    a1 = np.maximum((boot * data.w).sum(-1) / sw, 0.0)
    chi[:, 0] = (data.w * (boot - a1[:, None]) ** 2).sum(-1)
    # An exponential keeps the base fitted on the data: refitting c per replicate would
    # cost a grid search each, and the base barely moves between replicates.
    for i, growth in enumerate(classes[1:], start=1):
        norm = growth.normalised(data.n, float(data.n[-1]))
        if norm is not None:
            chi[:, i] = nnls2(norm[0], boot, data.w)[2]
    n_coef = np.array([growth.n_coef for growth in classes])
    scores = qaicc(chi, c_hat, data.m, n_coef)
    chosen, unique = _select(scores)
    return np.where(unique, chosen, -1)


def k_supported(fits: Mapping[str, ClassFit], table: Mapping[str, float],
                k_ci: tuple[float, float], registry: Registry) -> tuple[str, ...]:
    """The growing classes whose own exponent lies in k's 95% interval (± EXPONENT_SLACK).

    The exponent is the one a free power law sees on the class's fitted
    curve; with the classes within SELECT_DELTA of the best they are the
    classes an unsettled verdict's bracket holds (`verdict.fold`).
    """
    supported = []
    for growth in registry:
        fit = fits[growth.name]
        if growth.growing and np.isfinite(fit.score) and fit.b > 0:
            k_eff = table[growth.name]
            # A class beyond every power is only seen by k when k's interval is pinned at
            # its bound; an interval that merely reaches the bound says k is unidentified.
            beyond = growth.outgrows_powers and k_ci[0] < k_eff - 1.0
            if k_ci[0] - EXPONENT_SLACK <= k_eff <= k_ci[1] + EXPONENT_SLACK and not beyond:
                supported.append(growth.name)
    return tuple(supported)


@dataclass(frozen=True, slots=True)
class Stats:
    """What every piece of evidence is computed from: the medians, replicates and class fits."""

    data: Data
    boot: np.ndarray
    fits: Mapping[str, ClassFit]
    c_hat: float
    registry: Registry

    def tie(self, c1: str, c2: str, top: str) -> Tie:
        """Why classes c1 and c2 cannot be told apart (`top`'s start-up share, see `_tie`)."""
        return _tie(self.fits[c1], self.fits[c2], self.fits[top], self.data,
                    self.advise((c1, c2)))

    def advise(self, classes: Sequence[str]) -> Advice:
        """What would settle which of `classes` holds (`decide.tie_n`)."""
        return tie_n(Extension.of(self.data, self.c_hat), self.fits, classes, self.boot,
                     self.registry, SELECT_DELTA)

    def advise_constant(self, growth: GrowthClass) -> Advice:
        """What would rule out a hidden `growth` term (`decide.constant_n`)."""
        return constant_n(Extension.of(self.data, self.c_hat), self.fits, growth, HIDDEN_SHARE)


def gather(metric: str, sizes: Sequence[float], values: Sequence[float], st: Stats, k: float,
           k_ci: tuple[float, float], *, split: bool, settle: bool, pooled: bool,
           strict: bool = False) -> Evidence:
    """The statistics the checks of `quadscope.analyse.verdict` read (see `Evidence`).

    `sizes` and `values` are the runs (for the rank test); `k` and `k_ci` the free
    power law's exponent and interval; `split` asks for the second-term test (not
    within a regime already split off) and without `settle` no class is settled;
    `strict` judges a count's coherence with k's interval as a time's (`fit_metric`).
    """
    data, fits, registry = st.data, st.fits, st.registry
    ev = Evidence(metric, registry, settle, *_selection(st), float(data.n[0]), float(data.n[-1]),
                  k, k_ci, bool(k >= K_GRID[-1] - 1e-9), (), (),
                  exponents=exponents(fits, data, registry), cut=split)
    ev = _tied(ev, st)
    if ev.chosen == "1":
        ev = _constant(ev, st, data.n.tolist() if pooled else sizes,
                       data.y.tolist() if pooled else values)
    elif not ev.other:
        # A settled time is never a class k's interval excludes: judged on its effective
        # exponent, so an offset that lowers k lowers the class's exponent alike. A count
        # (exact, or nearly) has an interval of its tiny noise about one power, which any
        # lower-order term puts off the class (n² + c·n reads k = 1.97 ± 0.001): there the
        # slack stays, and the second-term check speaks for the other term. Not for counts
        # known to follow no law of one or two terms (`strict`): mawk's `s = s "x"` counted
        # at 2500..20000 (a copy whose cost per byte changes at glibc's `rep movsb`
        # threshold) read "n³" beside k = 2.83 [2.79, 2.87].
        k_eff = dict(ev.exponents)[ev.chosen]
        tol = COHERENCE_TOL if drifts(metric) or strict else EXPONENT_SLACK
        if k_eff < k_ci[0] - tol or k_eff > k_ci[1] + tol:
            straddle = _straddle(k, fits, dict(ev.exponents), registry)
            advice = exponent_n(Extension.of(data, st.c_hat), fits, *straddle, k_ci, registry,
                                SELECT_DELTA)
            ev = replace(ev, straddle=straddle, straddle_advice=(advice.n, advice.meter))
    # Growth found (the chosen class, or the best growing one where the runs rise) that adds
    # too little across the sizes to tell from drift settles neither it nor a constant.
    grower = ev.chosen if ev.chosen != "1" else (
        min(registry.names[1:], key=lambda c: fits[c].score) if ev.trend is not None else "")
    negligible = _negligible(st, fits[grower]) if grower and drifts(metric) else None
    ev = replace(ev, grower=grower, negligible=negligible)
    if negligible is not None and ev.chosen != "1":
        ev = replace(ev, hidden=_hidden_walk(st))
    if ev.chosen != "1":
        second = doubt(fits[ev.chosen].growth, data.n, data.y, data.w, fits[ev.chosen].chi2,
                       registry, repeated=data.honest, max_n=MAX_DECIDE_N) if split else None
        if second is not None:
            # Where the faster term would be read alone (`decide.pair_n`), not where it
            # merely equals the slower one: there both still show.
            advice = pair_n(Extension.of(data, st.c_hat), fits,
                            registry[str(second.numbers["first"])],
                            registry[str(second.numbers["class"])], registry, SELECT_DELTA)
            second = replace(second, decide_n=advice.n, meter=advice.meter)
        ev = replace(ev, slopes=_slopes(ev, st) if negligible is None else None,
                     second_term=second)
    return ev if drifts(metric) else _uncounted(ev)


def _uncounted(ev: Evidence) -> Evidence:
    """The evidence without a meter to advise: only a time is decided by counting the work."""
    def tie(t: Tie | None) -> Tie | None:
        return None if t is None else replace(t, meter="")
    second = None if ev.second_term is None else replace(ev.second_term, meter="")
    advice = None if ev.straddle_advice is None else (ev.straddle_advice[0], "")
    return replace(ev, tie=tie(ev.tie), rising_tie=tie(ev.rising_tie), loo_tie=tie(ev.loo_tie),
                   straddle_advice=advice,
                   hidden=tuple(replace(h, meter="") for h in ev.hidden), second_term=second)


def _selection(st: Stats) -> tuple[str, str]:
    """(chosen, best): the simplest class within SELECT_DELTA of the best, and the best."""
    names = st.registry.names
    scores = np.array([st.fits[c].score for c in names])
    best = names[int(np.argmin(scores))]  # argmin takes the first, i.e. simpler, on ties
    chosen = next(c for c in names if st.fits[c].score - st.fits[best].score < SELECT_DELTA)
    return chosen, best


def _tied(ev: Evidence, st: Stats) -> Evidence:
    """The leading classes, what leaving a size out chooses, and the runner-up of a tie."""
    names, fits, chosen, best = st.registry.names, st.fits, ev.chosen, ev.best
    delta = {c: fits[c].score - fits[best].score for c in names}
    leading = [c for c in names if delta[c] < SELECT_DELTA]
    verdicts = _bootstrap_verdicts(st.data, st.boot, st.c_hat, [fits[c].growth for c in names])
    support = float(np.mean(verdicts == names.index(chosen)))
    rivals = [c for c in leading if c not in (chosen, "1")] if chosen != "1" else []
    if chosen == "1":
        leading = ["1"]
    loo_chosen, loo_leading = _leave_out(st.data, st.c_hat, st.registry)
    shaky = tuple(sorted(loo_chosen - {chosen}, key=st.registry.index))
    ev = replace(ev, leading=tuple(leading), loo_leading=tuple(loo_leading), shaky=shaky)
    if not (rivals or (chosen != "1" and (support < MIN_SUPPORT or shaky))):
        return ev
    # The runner-up: the best rival on the data, else what leaving a size out chooses,
    # else the bootstrap's favourite alternative.
    if rivals:
        other = best if best != chosen else min(rivals, key=lambda c: delta[c])
    elif shaky:
        other = shaky[-1]
    else:
        alt = verdicts[(verdicts >= 0) & (verdicts != names.index(chosen))]
        other = names[int(np.bincount(alt).argmax())] if alt.size else (
            min((c for c in names if c != chosen), key=lambda c: delta[c])
        )
    return replace(ev, leading=tuple(dict.fromkeys([chosen, other, *leading])), other=other,
                   tie_by="rival" if rivals else "leave_one_out" if shaky else "bootstrap",
                   tie=st.tie(chosen, other, best))


def _constant(ev: Evidence, st: Stats, sizes: Sequence[float], values: Sequence[float]) -> Evidence:
    """A constant chosen: whether the runs rise, the growth they could hide, what one size carries.

    Pooled launches are given as their per-size medians: one observation per pool
    (their runs move together).
    """
    data, fits = st.data, st.fits
    rise = _rising(sizes, values)
    trend: tuple[float, float | None] | None = rise
    if rise is None and ev.k_ci[0] > 0.5 and data.y[0] > 0 and data.y[-1] > 1.5 * data.y[0]:
        # Too few points for a rank test, yet the exponent's interval excludes flat
        # and the cost grew by half: not evidence of a constant.
        trend = (1.0, None)
    if trend is None and data.known:
        trend = _known_rise(data)
    hidden = _hidden_walk(st)
    rising_tie = None
    if trend is not None:
        growing = min(st.registry.names[1:], key=lambda c: fits[c].score)
        rising_tie = st.tie("1", growing, growing)
    loo_tie = st.tie("1", ev.shaky[-1], ev.shaky[-1]) if ev.shaky else None
    return replace(ev, trend=trend, rising_tie=rising_tie, hidden=hidden, loo_tie=loo_tie)


def _slopes(ev: Evidence, st: Stats) -> Slopes | None:
    """The local slopes' swing about the judged class: the chosen one, or the best where a
    tie or k's interval already unsettles it (`quadscope.analyse.slopes`)."""
    judged = ev.best if ev.other or ev.straddle is not None else ev.chosen
    if not st.data.honest or not st.registry[judged].growing:
        return None
    data = st.data
    swung = swing(data.n, data.y, data.w, st.fits[judged].curve(data.n), st.registry)
    if swung is None:
        return None
    return Slopes(judged, swung.at_least, swung.low, swung.high, swung.n_low, swung.n_high,
                  nice_n(10 * float(data.n[-1])))
