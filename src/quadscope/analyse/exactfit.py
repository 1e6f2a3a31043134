"""Exact counts: the work as a sum of growth terms, its class the fastest term really there.

Contract: pure numpy/scipy on one exactly counted metric's runs (an exact meter's,
`quadscope.meters.exact_metric`); no I/O, deterministic for a seed.
`fit_exact(metric, sizes, values, ...)` returns a `Fit`, or None when the counts
follow no law of one or two growth terms (a change of regime, a step, a cost per
element that moves): the caller then fits them as any metric
(`quadscope.analyse.fitting.fit_metric`), with its checks. No sentence is written
here (`quadscope.analyse.text`).

Why another method. A time's noise is a few percent and unknown; an exact count
repeats to the instruction, and what moves it beyond the algorithm is bookkeeping
(the digits of n in argv, an allocator's rounding), a few parts in 10⁵. A start-up
or linear term beside the growing one is then plain to see, yet a single class
a + b·f(n) cannot follow it, and the free power law reads its curvature as a
k between the terms (mawk's `s = s "x"`, CPython's `s += "x"` on a global: k =
0.96 … 2.45 over less than a decade). So, with each count's σ known:

1. σ of a size's median is JITTER of the count (the bookkeeping's share, an
   assumption stated here and calibrated in bench/calibration.py), or the
   half-range of its repeats where they disagree by more, and never below
   one instruction.
2. Explanations: the constant; each class of the registry, a + b·f(n); each
   pair of growing classes (exponentials aside), a + c·f(n) + b·h(n); every
   coefficient ≥ 0 (non-negative least squares, Lawson & Hanson 1974, ch. 23).
   A pair with a zero coefficient is its single class again and is dropped.
3. Scores: AICc with the known σ (Burnham & Anderson, Model Selection and
   Multimodel Inference, 2nd ed., 2002, §2.4); where even the best pair misses
   by more than σ, the over-dispersion ĉ = χ²/(m − 3) of the best pair
   (ibid. §6.2) scales every χ². When ĉ exceeds MAX_C_HAT (the best pair
   misses by more than ~0.5% of the count) the counts follow no such law:
   None.
4. Selection: the simplest explanation within SELECT of the best (fewest
   coefficients, then the slowest top term). A superset of it within SELECT
   adds nothing the data need. Its class is its fastest term: the work's
   asymptotic class, which is the verdict even while a slower term still
   does most of the work at the sizes measured (the point of counting
   exactly: to find the quadratic before the sizes where it dominates).
5. What keeps it from settling, each one a `Doubt` (sentences in `text`):
   another explanation within SELECT whose fastest term differs, or the
   choice of a refit with one size left out ("exact_tie"); a faster term
   whose share at n_max could reach SURE_SHARE unseen, its upper 95% bound
   from the linear model's standard error ("exact_hidden": a term that
   small is below what is found reliably, and over four sizes a linear
   count that fits to the instruction still leaves n log n 0.5%), unless that
   bound costs under PER_N a step of the term's loop at n_max (`step_cost`: a
   term slower than n per step of f(n), one at least linear per unit n grows
   by; a term faster than n² per run of its innermost loop, `run_cost`),
   which no loop the program runs does, the premise `flat_reach` reads
   flat counts by; a rival whose fastest term costs so little reads as its
   slower terms (`working_top`), and so does a chosen or rival term faster
   than n² under MIN_SHARE of the count whose loop costs under PER_N a run
   (`at_work`: a cost per element that steps up once, as a B-tree or a
   buffer does, bends the counts as a tiny n³ term would). Then a few
   instructions of bookkeeping over a huge span (argv's digits, 1000..4·10⁹)
   are no ground for "1 … n³"; the fastest
   term itself under MIN_SHARE of the work at n_max, too little to tell
   from a bookkeeping artefact ("work_terms", unsettled); a fastest term
   under MINORITY_SHARE of the work while the best law misses the counts by
   more than MAX_C_HAT_MINORITY allows ("exact_misfit": a moving cost per
   element bends counts as a small faster term would). A settled class
   whose fastest term is under half the work at n_max carries a
   "work_terms" doubt too, as a note: the class is settled, the note says
   how much of the work that term is at n_max and where it dominates; a
   settled pair whose fastest term already does most of the work carries one
   that says how the work divides.
6. k is the effective local exponent d log(ŷ − a) / d log n of the chosen
   explanation's growing part at n_max (the start-up a left out, as the
   free power law a + b·nᵏ of a time leaves it) (clipped to [0, 4] as the free power law's), its
   interval from a parametric bootstrap of σ·√ĉ (Efron & Tibshirani 1993,
   §6), widened to the rivals' k when unsettled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.optimize import nnls

from quadscope.analyse import text
from quadscope.analyse.classfit import K_GRID, Data, fit_classes, medians
from quadscope.analyse.stats import akaike_weights, group_runs, nice_n, qaicc
from quadscope.classes import INCONCLUSIVE, REGISTRY, GrowthClass, Registry
from quadscope.model import Candidate, Doubt, DoubtValue, Fit, Prediction

# The relative σ assumed of an exact count: bookkeeping (argv's digits, an allocator's
# rounding) moves a count by parts in 10⁵; 1e-4 stays above that (bench/calibration.py).
JITTER = 1e-4
# Flat counts settle "1" only where a linear term of PER_N a unit of n would have shown
# (`flat_reach`): the least a step of any loop costs, in instructions (a C loop's compare,
# add and branch; CPython's `for` costs about 30). At most out to this span of sizes, the
# span adaptive mode grows a flat cost to (`run.adaptive`). By the same premise a hidden or
# rival term whose bound costs under PER_N a step at n_max is no work (`step_cost`).
PER_N = 10.0
FLAT_SPAN = 1e7
# ΔAICc a more complex explanation must gain over a simpler one, and within which two
# explanations are rivals: the top of Burnham & Anderson's "considerably less" band
# (§2.6) and more, since an exact count is judged against an assumed σ.
SELECT = 10.0
# ĉ beyond which the counts follow no law of one or two terms: the best pair misses by
# √ĉ·JITTER (0.5% at 2500) and the ordinary fit, with its changes of regime, decides.
# Below it the misfit is a wobble the scaled χ² and the bootstrap's σ·√ĉ carry. Measured
# (Valgrind): a C builder calling `strcat` on fields of `i % 10000` (a periodic wobble
# in the string's length) read ĉ = 184-276 at 5000..160000 (misses of 0.15%; n² does
# 95-97% of the work), where changes of regime read 10⁶ and more: mawk's copy switching
# to `rep movsb` (ĉ = 1.7·10⁷), a cost per element stepping ×4 (5.5·10⁶). At 100 the
# builder's counts were left to the ordinary fit, which bracketed them "n log n … n²".
MAX_C_HAT = 2500.0
# A term under this share of the work at n_max is too small to settle a class on.
MIN_SHARE = 0.005
# ĉ beyond which a law of two terms fits the counts only approximately: the best pair
# misses by more than twice the bookkeeping's σ. Burnham & Anderson (2002, §6.2.3) read
# ĉ of 1-4 as overdispersion and larger values as a structure the model lacks. Then a
# fastest term under MINORITY_SHARE of the work at n_max is not settled on: a cost per
# element that moves (a B-tree one level deeper raises it by a quarter to a third, a
# copy changes method at a size) bends the counts as a small faster term would
# (sqlite3's indexed self-join counted at 6250..50000 read "n + n³", ĉ = 18, the n³ term
# 3% of the work, k = 1.06, where the truth is n log n; mawk with a nested loop every 128
# passes, n + n² with the n² term 43% at ĉ = 5.5, stays settled). Simulated counts with
# jitter bounded by σ never exceed it at four sizes (χ² ≤ m).
MAX_C_HAT_MINORITY = 4.0
MINORITY_SHARE = 0.25
# Fewer sizes than this are left to the ordinary fit (which brackets them): over three
# sizes, two-coefficient laws differ by one residual, and a σ of 0.01% turns any
# bookkeeping wobble into a "sure" class (a linear CPython loop read n log n, k = 1.08).
MIN_SIZES = 4
# The share at which a small term is found reliably (bench/calibration.py): the size
# named to confirm a smaller one is where it would reach this, and a faster term that
# could hide at this share unsettles a class.
SURE_SHARE = 0.01
# Two growth terms need four sizes: three coefficients and one size to check them.
PAIR_SIZES = 4
# Sizes beyond this no sweep reaches (as evidence.MAX_DECIDE_N).
MAX_N = 1e12
Z95 = 1.959964


@dataclass(frozen=True, slots=True)
class Counts:
    """One exact metric's medians per size and their known σ."""

    n: np.ndarray
    y: np.ndarray
    sigma: np.ndarray
    n_obs: int

    @property
    def m(self) -> int:
        return int(self.n.size)

    @property
    def w(self) -> np.ndarray:
        return 1.0 / self.sigma**2

    def without(self, j: int) -> Counts:
        keep = np.arange(self.m) != j
        return Counts(self.n[keep], self.y[keep], self.sigma[keep], self.n_obs)


def counts(metric: str, sizes: Sequence[float], values: Sequence[float],
           jitter: float = JITTER) -> Counts:
    """Medians per size with σ = the larger of `jitter`·count and the repeats' half-range."""
    groups, y = medians(metric, sizes, values)
    with np.errstate(invalid="ignore"):
        half_range = np.nan_to_num((np.nanmax(groups.padded, axis=1)
                                    - np.nanmin(groups.padded, axis=1)) / 2)
    sigma = np.maximum.reduce([jitter * np.abs(y), half_range, np.ones_like(y)])
    return Counts(groups.sizes, y, sigma, groups.n_obs)


@dataclass(frozen=True, slots=True)
class Explanation:
    """a + Σ bᵢ·fᵢ(n): its growing terms slowest first, each b on the raw scale, and χ²."""

    terms: tuple[GrowthClass, ...]
    a: float
    b: tuple[float, ...]
    chi2: float

    @property
    def n_coef(self) -> int:
        return 1 + len(self.terms) + sum(1 for t in self.terms if t.base is not None)

    @property
    def top(self) -> str:
        return self.terms[-1].name if self.terms else "1"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.terms)

    def parts(self, n: np.ndarray) -> np.ndarray:
        """(1 + terms, n.size): the start-up a, then each term's b·f(n)."""
        rows = [np.full(n.shape, self.a)]
        rows += [np.reshape(t.evaluate(0.0, b, n), n.shape)
                 for t, b in zip(self.terms, self.b, strict=True)]
        return np.vstack(rows)

    def curve(self, n: np.ndarray) -> np.ndarray:
        return self.parts(np.asarray(n, dtype=float)).sum(axis=0)

    def shares(self, n_at: float) -> np.ndarray:
        """Each term's share of the work at `n_at` (the start-up's first)."""
        p = self.parts(np.array([n_at]))[:, 0]
        return p / p.sum() if p.sum() > 0 else np.zeros_like(p)

    def exponent(self, n_at: float) -> float:
        """d log(ŷ − a) / d log n at `n_at`: the growing part's local exponent, the start-up
        a left out as the free power law a + b·nᵏ leaves it (so "n², k = 2.00", not the 1.38
        a CPython start-up of 140M instructions made of it), clipped to [0, 4]."""
        if self.terms and self.terms[-1].outgrows_powers:
            return float(K_GRID[-1])
        h = 1e-3
        lo, hi = self.parts(np.array([n_at * (1 - h), n_at * (1 + h)]))[1:].sum(axis=0)
        if not (lo > 0 and hi > 0):
            return 0.0
        k = np.log(hi / lo) / np.log((1 + h) / (1 - h))
        return float(np.clip(k, K_GRID[0], K_GRID[-1]))


def _pair(f: GrowthClass, h: GrowthClass, c: Counts) -> Explanation | None:
    nf, nh = f.normalised(c.n, float(c.n[-1])), h.normalised(c.n, float(c.n[-1]))
    if nf is None or nh is None:
        return None
    x = np.column_stack([np.ones(c.m), nf[0], nh[0]])
    coef, _ = nnls(x / c.sigma[:, None], c.y / c.sigma)
    if coef[1] <= 0 or coef[2] <= 0:
        return None  # a single class again, fitted as such
    r = (c.y - x @ coef) / c.sigma
    return Explanation((f, h), float(coef[0]), (float(coef[1]) / nf[1], float(coef[2]) / nh[1]),
                       float(r @ r))


def explanations(c: Counts, registry: Registry, pair_sizes: int = PAIR_SIZES) -> list[Explanation]:
    """The constant, every class alone, and every pair of growing classes (see step 2);
    pairs only from `pair_sizes` sizes up."""
    data = Data(group_runs(c.n.tolist(), c.y.tolist()), c.n, c.y, c.w, True)
    out = []
    for raw in fit_classes(data, registry).values():
        if raw is None:
            continue
        a, b, chi2, growth = raw
        if not growth.growing:
            out.append(Explanation((), a, (), chi2))
        elif b > 0:
            out.append(Explanation((growth,), a, (b,), chi2))
    if c.m >= pair_sizes:
        growing = [g for g in registry if g.growing and not g.bases]
        out += [e for f, h in combinations(growing, 2) if (e := _pair(f, h, c)) is not None]
    return out


def c_hat_of(found: Sequence[Explanation], m: int) -> float:
    """ĉ of the global model, a pair (which holds every class alone as a zero coefficient):
    the smallest χ² over m − 3, and 1 when it fits within σ or no size is left to judge."""
    if m <= 3 or not found:
        return 1.0
    return max(1.0, min(e.chi2 for e in found) / (m - 3))


def aicc(chi2: float, c_hat: float, m: int, n_coef: int) -> float:
    """AICc with σ known (K = n_coef), or QAICc once ĉ is estimated (K = n_coef + 1; Burnham
    & Anderson 2002, §2.4, §6.2), as `stats.qaicc` caps a small sample's denominator at 1."""
    if c_hat > 1.0:
        return float(qaicc(chi2, c_hat, m, n_coef))
    k = n_coef
    return chi2 + 2 * k + 2 * k * (k + 1) / max(m - k - 1, 1)


def scores(found: Sequence[Explanation], m: int, c_hat: float) -> np.ndarray:
    return np.array([aicc(e.chi2, c_hat, m, e.n_coef) for e in found])


def _simplicity(e: Explanation, registry: Registry) -> tuple[int, int, tuple[int, ...]]:
    return (e.n_coef, registry.index(e.top), tuple(registry.index(t) for t in e.names))


def choose(found: Sequence[Explanation], m: int, c_hat: float,
           registry: Registry) -> tuple[Explanation, list[Explanation]]:
    """The simplest explanation within SELECT of the best, and the others within SELECT."""
    s = scores(found, m, c_hat)
    near = [e for e, v in zip(found, s, strict=True) if v - s.min() < SELECT]
    near.sort(key=lambda e: _simplicity(e, registry))
    return near[0], near[1:]


def _superset(e: Explanation, of: Explanation) -> bool:
    return set(of.names) <= set(e.names)


def hidden_bound(chosen: Explanation, h: GrowthClass, c: Counts, c_hat: float,
                 n_at: float | None = None) -> float:
    """The upper 95% bound, in the count's units, of a term h at n_max (or at `n_at` beyond
    it), were it added to `chosen`: 0 where h cannot be fitted at these sizes, inf where
    the columns are singular.

    Weighted least squares of the chosen's columns and h's, unconstrained: the
    bound is max(b̂, 0) + 1.96·se(b̂) with se from (XᵀWX)⁻¹·ĉ, carried to `n_at`
    by h's own growth, f(n_at)/f(n_max).
    """
    n_top = float(c.n[-1])
    n_at = n_top if n_at is None else max(n_at, n_top)
    cols = [np.ones(c.m)]
    for t in (*chosen.terms, h):
        norm = t.normalised(c.n, n_top)
        if norm is None:
            return 0.0
        cols.append(norm[0])
    x = np.column_stack(cols) / c.sigma[:, None]
    yw = c.y / c.sigma
    xtx = x.T @ x
    try:
        cov = np.linalg.inv(xtx) * c_hat
    except np.linalg.LinAlgError:
        return math.inf
    coef = cov @ (x.T @ yw) / c_hat
    upper = max(float(coef[-1]), 0.0) + Z95 * float(np.sqrt(max(cov[-1, -1], 0.0)))
    if n_at > n_top:
        with np.errstate(over="ignore"):
            upper *= float(h.f(np.array([n_at]))[0] / h.f(np.array([n_top]))[0])
    return upper


def hidden_share(chosen: Explanation, h: GrowthClass, c: Counts, c_hat: float,
                 n_at: float | None = None) -> float:
    """The upper 95% bound of a term h's share of the growing work at n_max (or at `n_at`
    beyond it), were it added to `chosen` (`hidden_bound`)."""
    n_at = float(c.n[-1]) if n_at is None else max(n_at, float(c.n[-1]))
    upper = hidden_bound(chosen, h, c, c_hat, n_at)
    total = float(chosen.curve(np.array([n_at]))[0])
    # Of the work that grows: a start-up under which the growing terms are a sliver does not
    # make a faster term as large as they are negligible (CPython's `l[0] = l[0] + "x"`:
    # 140M of start-up, a linear 0.4M and a quadratic 0.26M at n = 4096 read "n or n log n
    # — not quadratic"). A constant has no growing work: its share is of the whole count.
    growing = total - chosen.a if chosen.terms else total
    return upper / growing if growing > 0 and math.isfinite(upper) else 1.0


def step_cost(h: GrowthClass, upper: float, n_at: float) -> float:
    """What a term of class h that is `upper` at `n_at` costs a step of its loop there: a
    term slower than n is a loop of f(n) steps (upper / f(n_at)); one at least linear adds
    d(b·f)/dn for each unit n grows by (upper·k/n_at, k its local exponent), since its
    inner work may cost a fraction of an instruction a unit (a copy, CPython's n²/64)."""
    if not (upper > 0 and math.isfinite(upper) and n_at > 0):
        return upper if upper <= 0 else math.inf
    if h.sublinear:
        f_at = float(h.f(np.array([n_at]))[0])
        return upper / f_at if f_at > 0 else math.inf
    eps = 1e-3
    lo, hi = h.f(np.array([n_at * (1 - eps), n_at * (1 + eps)]))
    if not (lo > 0 and hi > 0 and math.isfinite(hi)):
        return math.inf
    k = float(np.log(hi / lo) / np.log((1 + eps) / (1 - eps)))
    return upper * k / n_at


def run_cost(h: GrowthClass, upper: float, n_at: float) -> float:
    """What one run of the innermost loop of a term of class h that is `upper` at `n_at`
    costs: a term faster than n² (n³: k = 3) is n^(k-2) passes over a loop whose whole run,
    d(b·f)/dn for each unit n grows by (`step_cost`), costs k·b·n; n² and slower as
    `step_cost`. A vectorised copy makes a step cost a fraction of an instruction, but a
    whole run of a loop (its call, its set-up) costs at least PER_N: an n³ term of 1M
    instructions at n = 32000 is 0.003 instructions a run (CPython `b += b"x"` counted at
    4000..32000 read "n² … n³" beside a quadratic copy of 0.046 instructions a byte)."""
    k = h.order[0]
    cost = step_cost(h, upper, n_at)
    if not (2.0 < k < math.inf) or not math.isfinite(cost):
        return cost
    return cost / n_at ** (k - 2.0)


def hidden(chosen: Explanation, h: GrowthClass, c: Counts, c_hat: float) -> float:
    """h's share at n_max as `hidden_share` bounds it, or 0 when the bound leaves h no room
    to be work at all: a term whose upper bound costs under PER_N a step of its loop at
    n_max (`step_cost`) is not a loop the program runs, as `flat_reach` reads flat counts.
    Without this a few instructions of bookkeeping that grow over a huge span (the digits of
    n in argv, 19 instructions a digit over n = 1000..4·10⁹ beside a 145k-instruction
    start-up) are the growing work a cubic term of 34 instructions at 4·10⁹ (2σ, a cost of
    10⁻⁸ a unit of n) is 19% of: "1 … n³" for a constant program."""
    n_top = float(c.n[-1])
    if run_cost(h, hidden_bound(chosen, h, c, c_hat), n_top) < PER_N:
        return 0.0
    return hidden_share(chosen, h, c, c_hat)


def working_names(e: Explanation, n_at: float) -> tuple[str, ...]:
    """e's terms up to its fastest that can be work at `n_at` (`step_cost` at least PER_N;
    none: the constant): a rival straight line through flat counts, 8·10⁻⁹ instructions a
    unit of n over 1000..4·10⁹, is no linear class beside a chosen log n."""
    parts = e.parts(np.array([n_at]))[1:, 0]
    total = e.a + float(parts.sum())
    kept = len(e.terms)
    while kept and not _works(e.terms[kept - 1], float(parts[kept - 1]), total, n_at):
        kept -= 1
    return e.names[:kept]


def _works(h: GrowthClass, part: float, total: float, n_at: float) -> bool:
    """Whether a term the counts ask for, `part` of the `total` count at `n_at`, can be
    work: its step costs PER_N (`step_cost`), and where it is under MIN_SHARE of the count
    (as `decide` reads the chosen's fastest term), too little to tell from bookkeeping, a
    run of its innermost loop does too (`run_cost`): a cost per element that steps up
    once near the top (GNU sort's at 250000 lines, +0.2%) reads as an n³ term of 0.3%
    whose loop costs 10⁻⁴ a run."""
    return step_cost(h, part, n_at) >= PER_N and not _small(h, part, total, n_at)


def _small(h: GrowthClass, part: float, total: float, n_at: float) -> bool:
    """A term faster than n² under MIN_SHARE of the `total` count at `n_at` whose innermost
    loop costs under PER_N a run (`run_cost`): a step in the cost per element, not a loop.
    (Slower terms that small keep the MIN_SHARE doubt `decide` gives them.)"""
    return (h.order[0] > 2.0 and total > 0 and part < MIN_SHARE * total
            and run_cost(h, part, n_at) < PER_N)


def at_work(e: Explanation, c: Counts, n_at: float) -> Explanation:
    """The chosen e with its fastest terms left out while they are under MIN_SHARE of the
    count at `n_at` and a run of their innermost loop costs under PER_N (`_small`),
    refitted on the counts: the class is read from the terms that can be work, and what
    the others took up is left to the hidden terms' bounds (`hidden`), as for any term
    unseen. (A chosen term that merely costs under PER_N a step, as argv's digits over a
    huge span do, stays: the counts ask for it and it is all the growth there is.)"""
    parts = e.parts(np.array([n_at]))[1:, 0]
    kept = len(e.terms)
    while kept and _small(e.terms[kept - 1], float(parts[kept - 1]), e.a + float(parts.sum()),
                          n_at):
        kept -= 1
    if kept == len(e.terms):
        return e
    return _refit(Explanation(e.terms[:kept], e.a, e.b[:kept], math.inf), c, c.y)


def working_top(e: Explanation, n_at: float) -> str:
    """The class e reads as where its faster terms are no work (`working_names`)."""
    names = working_names(e, n_at)
    return names[-1] if names else "1"


def flat_reach(c: Counts, start_up: float) -> float:
    """Where a constant count is judged free of a hidden linear term: the size at which work
    of PER_N a unit of n would be SURE_SHARE of the count (or at n_max, if beyond; at most
    FLAT_SPAN times the smallest size). Counts flat over a few sizes say nothing of the
    sizes beyond them: a Python's 354M-instruction start-up hid `sum(range(n))` over
    n = 1..25, read "constant"."""
    reach = min(SURE_SHARE * start_up / PER_N, FLAT_SPAN * max(float(c.n[0]), 1.0))
    return max(float(c.n[-1]), reach)


def faster_than(name: str, registry: Registry) -> list[GrowthClass]:
    """The growing classes without a base that grow faster than `name`."""
    order = registry.index(name)
    return [g for g in registry if g.growing and not g.bases and registry.index(g.name) > order]


def carried_by(chosen: Explanation, c: Counts, c_hat: float, registry: Registry) -> float | None:
    """The size whose count alone carries `chosen`'s fastest term, or None.

    With each size left out in turn (the jackknife idea of Quenouille 1956 and
    Tukey 1958, applied to the selection), the best explanation whose fastest
    term is no faster than `chosen`'s slower one must still be worse by
    SELECT: otherwise that one size (a step in the bookkeeping at the top, an
    allocator changing its strategy) is all that asks for the faster term.
    The refits hold pairs down to three sizes, so four sizes can be checked.
    Only a pair is checked: a class alone is asked for by every size.
    """
    if len(chosen.terms) < 2:
        return None
    limit = registry.index(chosen.terms[-2].name)
    for j in range(c.m):
        sub = c.without(j)
        # Three sizes left fit any pair exactly, which the small-sample term then weighs.
        found = explanations(sub, registry, pair_sizes=3)
        s = scores(found, sub.m, c_hat)
        slower = [v for e, v in zip(found, s, strict=True) if registry.index(e.top) <= limit]
        if not slower or min(slower) - s.min() < SELECT:
            return float(c.n[j])
    return None


def cross_n(e: Explanation, n_from: float) -> float | None:
    """Where e's fastest term becomes more than half the work (None beyond MAX_N)."""
    grid = np.geomspace(n_from, MAX_N, 600)
    p = e.parts(grid)
    over = np.nonzero(p[-1] > p[:-1].sum(axis=0))[0]
    return float(grid[over[0]]) if over.size else None


def reach_n(e: Explanation, share: float, n_from: float) -> int | None:
    """The size where e's fastest term would be `share` of the work (None beyond MAX_N)."""
    grid = np.geomspace(n_from, MAX_N, 600)
    p = e.parts(grid)
    total = p.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        hit = np.nonzero(p[-1] >= share * total)[0]
    return nice_n(float(grid[hit[0]])) if hit.size else None


def part_n(first: Explanation, second: Explanation, n_from: float, tol: float) -> int | None:
    """The smallest size beyond `n_from` where two explanations part by more than `tol`."""
    grid = np.geomspace(n_from, MAX_N, 600)[1:]
    p1, p2 = first.curve(grid), second.curve(grid)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(p1 - p2) / np.maximum(np.maximum(p1, p2), np.finfo(float).tiny)
    hit = np.nonzero(np.where(np.isfinite(rel), rel, 1.0) > tol)[0]
    return nice_n(float(grid[hit[0]])) if hit.size else None


def _refit(e: Explanation, c: Counts, y: np.ndarray) -> Explanation:
    """`e`'s terms refitted on other medians `y` at the same sizes (its bases kept)."""
    n_top = float(c.n[-1])
    norms = [t.normalised(c.n, n_top) for t in e.terms]
    x = np.column_stack([np.ones(c.m), *(nm[0] for nm in norms if nm is not None)])
    coef, _ = nnls(x / c.sigma[:, None], y / c.sigma)
    r = (y - x @ coef) / c.sigma
    bs = tuple(float(b) / nm[1] for b, nm in zip(coef[1:], norms, strict=True) if nm is not None)
    return Explanation(e.terms, float(coef[0]), bs, float(r @ r))


def exponent_interval(e: Explanation, c: Counts, c_hat: float, seed: int,
                      n_boot: int) -> tuple[float, float]:
    """k's 95% interval: a parametric bootstrap about e's curve with σ·√ĉ."""
    rng = np.random.default_rng(seed)
    fitted = e.curve(c.n)
    n_top = float(c.n[-1])
    ks = [_refit(e, c, fitted + c.sigma * np.sqrt(c_hat) * rng.standard_normal(c.m)).exponent(n_top)
          for _ in range(n_boot)]
    k = e.exponent(n_top)
    lo, hi = np.percentile(ks, [2.5, 97.5])
    half = max(k - float(lo), float(hi) - k, 0.0)
    return max(k - half, float(K_GRID[0])), min(k + half, float(K_GRID[-1]))


@dataclass(frozen=True, slots=True)
class Decision:
    """What the counts settle: the chosen explanation, the class or INCONCLUSIVE, the bracket,
    the rival explanations and the doubts."""

    chosen: Explanation
    cls: str
    at_least: str
    at_most: str
    rivals: tuple[Explanation, ...]
    doubts: tuple[Doubt, ...]
    c_hat: float


def terms_numbers(e: Explanation, n_max: float) -> dict[str, DoubtValue]:
    """The explanation as numbers a Doubt carries: each term's class, coefficient, share."""
    shares = e.shares(n_max)
    out: dict[str, DoubtValue] = {"n_max": n_max, "a": e.a, "share_a": float(shares[0]),
                                  "terms": " + ".join(e.names) or "1"}
    for i, (t, b) in enumerate(zip(e.terms, e.b, strict=True), start=1):
        out[f"term{i}"] = t.name
        out[f"b{i}"] = b
        out[f"share{i}"] = float(shares[i])
    out["class"] = e.top
    out["share"] = float(shares[-1]) if e.terms else 0.0
    out["first"] = e.terms[-2].name if len(e.terms) > 1 else ""
    return out


def decide(c: Counts, registry: Registry = REGISTRY) -> Decision | None:
    """The class the counts settle, or a bracket and why (steps 2–5 of the module docstring)."""
    found = explanations(c, registry)
    c_hat = c_hat_of(found, c.m)
    if c_hat > MAX_C_HAT or not found:
        return None
    chosen, near = choose(found, c.m, c_hat, registry)
    n_max = float(c.n[-1])
    chosen = at_work(chosen, c, n_max)
    rival_tops = {id(e): working_top(e, n_max) for e in near}
    rivals = [e for e in near if not _superset(e, chosen) and rival_tops[id(e)] != chosen.top]
    doubts: list[Doubt] = []
    tops = {chosen.top, *(rival_tops[id(e)] for e in rivals)}
    carrier = carried_by(chosen, c, c_hat, registry)
    if rivals or carrier is not None:
        other = rivals[0] if rivals else None
        if carrier is not None:
            tops.add(chosen.terms[-2].name)
        tol = 3 * JITTER * np.sqrt(c_hat)
        decide_n = part_n(chosen, other, n_max, tol) if other is not None else nice_n(4 * n_max)
        numbers: dict[str, DoubtValue] = {
            "chosen": " + ".join(chosen.names) or "1",
            "other": (" + ".join(working_names(other, n_max)) or "1") if other else "",
            "carried_by": carrier, "lo_n": float(c.n[0]), "hi_n": n_max}
        doubts.append(Doubt("exact_tie", min(tops, key=registry.index),
                            max(tops, key=registry.index), decide_n, numbers=numbers))
    hid = [(h, s) for h in faster_than(max(tops, key=registry.index), registry)
           if (s := hidden(chosen, h, c, c_hat)) >= SURE_SHARE]
    if hid:
        h, share = hid[-1]
        tops.add(h.name)
        doubts.append(Doubt("exact_hidden", chosen.top, h.name, nice_n(4 * n_max),
                            numbers={"class": h.name, "share": share, "n_max": n_max,
                                     "chosen": chosen.top}))
    elif not chosen.terms and (linear := registry.get("n")) is not None:
        # A constant: a term of PER_N a unit of n must have shown by flat_reach. What hides
        # one hides any faster term too, so the bracket reaches the fastest class.
        n_at = flat_reach(c, chosen.a)
        share = hidden_share(chosen, linear, c, c_hat, n_at)
        if share >= SURE_SHARE:
            tops.add(registry.names[-1])
            doubts.append(Doubt("exact_hidden", chosen.top, linear.name, nice_n(n_at),
                                numbers={"class": linear.name, "share": min(share, 1.0),
                                         "n_max": n_at, "chosen": chosen.top}))
    numbers = terms_numbers(chosen, n_max)
    top_share = float(numbers["share"])  # type: ignore[arg-type]
    slower = chosen.terms[-2].name if len(chosen.terms) > 1 else "1"
    if chosen.terms and top_share < MIN_SHARE:
        tops.add(slower)
        doubts.append(Doubt("work_terms", slower, chosen.top,
                            reach_n(chosen, SURE_SHARE, n_max),
                            numbers={**numbers, "settled": 0}))
    if len(chosen.terms) > 1 and top_share < MINORITY_SHARE and c_hat > MAX_C_HAT_MINORITY:
        tops.add(slower)
        doubts.append(Doubt("exact_misfit", slower, chosen.top, nice_n(4 * n_max),
                            numbers={**numbers, "c_hat": c_hat}))
    cls = chosen.top if not doubts else INCONCLUSIVE
    if cls != INCONCLUSIVE and len(chosen.terms) > 1:
        # The terms, as a note: where the fastest is still a minority, where it takes over;
        # else how the work divides (and `gap.work_k` reads the law beyond the sizes counted).
        cross = cross_n(chosen, n_max) if top_share < 0.5 else None
        doubts.append(Doubt("work_terms", slower, chosen.top,
                            None if cross is None else nice_n(cross),
                            numbers={**numbers, "settled": 1}))
    lo, hi = min(tops, key=registry.index), max(tops, key=registry.index)
    return Decision(chosen, cls, lo if cls == INCONCLUSIVE else cls,
                    hi if cls == INCONCLUSIVE else cls, tuple(rivals), tuple(doubts), c_hat)


def _reason(d: Decision, registry: Registry) -> str:
    return "; ".join(text.doubt_text(x, registry) for x in d.doubts)


def _decide_n(d: Decision) -> int | None:
    if d.cls != INCONCLUSIVE:
        return None
    return max((x.decide_n for x in d.doubts if x.decide_n), default=None)


def _candidates(c: Counts, found: Sequence[Explanation], c_hat: float,
                registry: Registry) -> tuple[Candidate, ...]:
    """Every class alone with its score, as the ordinary fit lists them."""
    by_name = {e.top: e for e in found if len(e.terms) <= 1}
    rows = []
    for g in registry:
        e = by_name.get(g.name)
        if e is None:
            rows.append((g.name, 0.0, 0.0, float(np.inf), float(np.inf)))
        else:
            score = aicc(e.chi2, c_hat, c.m, e.n_coef)
            rows.append((g.name, e.a, e.b[0] if e.b else 0.0, score, e.chi2))
    weights = akaike_weights(np.array([r[3] for r in rows]))
    return tuple(Candidate(r[0], r[1], r[2], r[3], float(wt), r[4])
                 for r, wt in zip(rows, weights, strict=True))


def _prediction(at_n: int, d: Decision, c: Counts, seed: int, n_boot: int) -> Prediction:
    """The chosen explanation at `at_n`, its interval over the bootstrap and the rivals."""
    rng = np.random.default_rng(seed + 1)
    at = np.array([float(at_n)])
    fitted = d.chosen.curve(c.n)
    values = [float(_refit(d.chosen, c, fitted + c.sigma * np.sqrt(d.c_hat)
                           * rng.standard_normal(c.m)).curve(at)[0]) for _ in range(n_boot)]
    values += [float(e.curve(at)[0]) for e in d.rivals]
    value = float(d.chosen.curve(at)[0])
    lo, hi = np.nanpercentile(values[:n_boot], [2.5, 97.5])
    return Prediction(at_n, value, min(float(lo), value, *values[n_boot:]),
                      max(float(hi), value, *values[n_boot:]))


def fit_exact(metric: str, sizes: Sequence[float], values: Sequence[float], *,
              predict_n: int | None = None, seed: int = 0, n_boot: int = 200,
              registry: Registry = REGISTRY) -> Fit | None:
    """How an exactly counted metric grows (see the module docstring); None when the
    counts follow no law of one or two terms and the ordinary fit should decide."""
    c = counts(metric, sizes, values)
    if c.n.size < MIN_SIZES:  # a + b·f(n) through three points leaves one degree of freedom
        return None
    d = decide(c, registry)
    if d is None:
        return None
    found = explanations(c, registry)
    n_max = float(c.n[-1])
    flat = d.cls == "1"
    k = d.chosen.exponent(n_max)
    k_ci = exponent_interval(d.chosen, c, d.c_hat, seed, n_boot)
    if d.cls == INCONCLUSIVE:
        # A rival's k where its fastest term can be work: a line of 10⁻⁸ a unit of n is no k = 1.
        ks = [e.exponent(n_max) for e in d.rivals if working_top(e, n_max) == e.top]
        k_ci = (min([k_ci[0], *ks]), max([k_ci[1], *ks]))
    single = {e.top: e for e in found if len(e.terms) <= 1}
    shown = single.get(d.chosen.top if d.cls == INCONCLUSIVE else d.cls)
    a, b = (shown.a, shown.b[0] if shown.b else 0.0) if shown is not None else (d.chosen.a, 0.0)
    coefficients = {"a": a, "b": b}
    if shown is not None and shown.terms and shown.terms[-1].base is not None:
        coefficients["c"] = float(shown.terms[-1].base)
    wm = float((c.w * c.y).sum() / c.w.sum())
    tss = float((c.w * (c.y - wm) ** 2).sum())
    return Fit(
        metric=metric, cls=d.cls, exponent=None if flat else k,
        exponent_ci=None if flat else k_ci, coefficients=coefficients,
        r2=None if tss <= 0 else 1.0 - d.chosen.chi2 / tss,
        candidates=_candidates(c, found, d.c_hat, registry), n_points=c.n_obs,
        reason=_reason(d, registry), decide_n=_decide_n(d),
        prediction=None if predict_n is None else _prediction(int(predict_n), d, c, seed, n_boot),
        best=d.chosen.top, at_least=d.at_least, at_most=d.at_most, doubts=d.doubts)


__all__ = ["JITTER", "MAX_C_HAT", "MIN_SHARE", "MIN_SIZES", "SELECT", "Counts", "Decision", "Explanation",
           "counts", "decide", "explanations", "fit_exact"]
