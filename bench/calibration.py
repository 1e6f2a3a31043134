"""Calibration: how often quadscope is confidently wrong where the truth is known.

Simulated sweeps (quadscope.workloads.synthetic) of every true law — constant,
log n, √n, n, n log n, n², n³ and an exponential — with log-normal noise at
1%, 5% and 20% CV, one planted outlier in half of them, slow drift in half,
and a start-up offset drawn from none, a third or four fifths of the smallest
run, in both protocols:
* fixed — each law's own sizes, 3 interleaved repeats, fitted by `fit_metric`
  exactly as a stored sweep would be;
* adaptive — the default protocol: `run_sweep` in adaptive mode with the
  default 30 s budget and 3 repeats, from the law's smallest size, on a fake
  clock whose executor returns the disturbed cost of each run (the plan stops
  at its own verdict: optional stopping is part of what is calibrated); the
  stored runs are then fitted as `quadscope show` would.
Laws that change regime (linear turning quadratic, a per-element cost that
steps up) are simulated too, scored against the class above the change: the
growth for large n. Two growth terms (a + c·n + b·n² with the terms equal at
or beyond the top size) are scored against what dominates at the largest size
measured, as issue 9 asks a verdict to name them: the faster term where it is
at least the slower one there, and either term where the slower still leads
(the faster is then the class for larger n, right too).

Exact counts (`--protocol exact`, issue 25): what an exact meter (`--meter
instructions`) records, fitted by `quadscope.analyse.exactfit` as a stored sweep
of that meter would be. Each size's count is the truth scaled to 10⁹ at the top,
a constant start-up term (none, a third or four fifths of the smallest count),
times a bookkeeping jitter uniform in ±JITTER_EXACT (±0.01%), rounded to an
integer, recorded twice (repeats agree, as the meter's plan stops there). Every
single law, and a faster second term worth 1%, 3% and 10% of the work at the
largest size (`SHARES`: n + n², n log n + n², n + n³, n² + n³), on the law's own
sizes ("exact") and on its four largest alone ("exact4": three octaves, as
`--sizes 6250..50000`). A two-term law is scored by its asymptotic class, the
faster term. The rates: a second term named (the settled class is the faster
term) or seen (a bracket reaching it), to be ≥ 90% from 1% up; a false second
term on a single law (a class or bracket faster than the law, or a term
reported), to be ≤ 0.5%.

Each verdict is scored against the truth:
* right class — the settled class is the true one;
* right bracket — unsettled, and the bracket [at_least, at_most] holds the truth;
* bare — unsettled and no bracket at all;
* confidently wrong — a settled class that is not the truth, or a bracket that
  excludes it. Goal: at most 0.5% of sweeps.
For the power laws (√n, n, n², n³) the 95% interval of the free exponent k
should hold the true k 93–97% of the time. A change of regime named on a
single law is a false one: goal at most 1% at 5% CV.

Start-up runs (`--protocol startup`, issue 25): the fixed protocol with n = 1 in
every round, fitted as a sweep with its start-up measured apart (`startup`), the
same runs without them (`startup-ignored`), and n = 1 another regime
(`startup-regime`: its cost ×0.25, a shortcut, or ×4, a first-run cost, in turn),
where the start-up must be left out rather than make a verdict wrong.

usage: .venv/bin/python bench/calibration.py [--per-class 1000] [--jobs 2]
           [--protocol fixed|adaptive|both|exact|startup] [--laws 'n;n^2'] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Fit, Measurement
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore
from quadscope.workloads.synthetic import (
    Scenario,
    Truth,
    broken_truth,
    cost,
    simulate,
    truth_for,
    two_terms,
)

# True law -> (the class that names it, sizes of a fixed sweep, true exponent or None).
LAWS: dict[str, tuple[str, tuple[int, ...], float | None]] = {
    "1": ("1", tuple(1000 * 2**i for i in range(8)), None),
    "log n": ("log n", tuple(10 ** (3 + i) for i in range(7)), None),
    "sqrt n": ("sqrt n", tuple(1000 * 4**i for i in range(7)), 0.5),
    "n": ("n", tuple(1000 * 2**i for i in range(8)), 1.0),
    "n log n": ("n log n", tuple(1000 * 2**i for i in range(8)), None),
    "n^2": ("n^2", tuple(1000 * 2**i for i in range(7)), 2.0),
    "n^3": ("n^3", tuple(100 * 2**i for i in range(6)), 3.0),
    "exp": ("c^n", tuple(range(10, 24, 2)), None),
}
# Laws that change regime: (law below, law above, threshold, jump in slope, upper class).
_BROKEN_SIZES = tuple(1000 * 2**i for i in range(10))
BROKEN: dict[str, tuple[str, str, float, float, str]] = {
    "n → n² at 16k": ("n", "n^2", 16_000.0, 1.0, "n^2"),
    "n → n² at 64k": ("n", "n^2", 64_000.0, 1.0, "n^2"),
    "n, ×4 per element at 16k": ("n", "n", 16_000.0, 4.0, "n"),
    "n², ×4 per step at 16k": ("n^2", "n^2", 16_000.0, 4.0, "n^2"),
}
# Two growth terms: (law, extra law, where they cross as a multiple of the top size, class).
# A term that crosses beyond the top is small at these n: the verdict must not be the law.
_TWO_SIZES = tuple(1000 * 2**i for i in range(8))
TWO: dict[str, tuple[str, str, float, str]] = {
    "n + n², equal at the top": ("n", "n^2", 1.0, "n^2"),
    "n + n², equal at 4× the top": ("n", "n^2", 4.0, "n^2"),
    "n + n³, equal at 2× the top": ("n", "n^3", 2.0, "n^3"),
}
# Adaptive protocol: each law from its smallest size, scaled to cost `top_s` at `ref_n`.
ADAPTIVE: dict[str, tuple[int, int, float]] = {
    "1": (1000, 10**6, 0.05), "log n": (1000, 10**6, 0.05), "sqrt n": (1000, 10**6, 0.1),
    "n": (1000, 10**6, 0.5), "n log n": (1000, 10**6, 0.5), "n^2": (100, 10**4, 0.5),
    "n^3": (10, 1000, 0.5), "exp": (10, 30, 0.5),
    "n → n² at 16k": (1000, 10**6, 0.5), "n → n² at 64k": (1000, 10**6, 0.5),
    "n, ×4 per element at 16k": (1000, 10**6, 0.5), "n², ×4 per step at 16k": (100, 10**5, 0.5),
    "n + n², equal at the top": (1000, 128_000, 0.5), "n + n², equal at 4× the top": (1000, 128_000, 0.5),
    "n + n³, equal at 2× the top": (1000, 128_000, 0.5),
}
# Exact counts: a faster term worth this share of the work at the largest size
# (law, faster law, share), on the two-term sizes.
SHARES: dict[str, tuple[str, str, float]] = {
    f"{law} + {extra} at {share:.0%}": (law, extra, share)
    for law, extra in (("n", "n^2"), ("n log n", "n^2"), ("n", "n^3"), ("n^2", "n^3"))
    for share in (0.01, 0.03, 0.1)
}
# Start-up runs (`--protocol startup`): the fixed protocol with n = 1 in every round, fitted
# with them used (`startup`) and on the same runs without them (`startup-ignored`); and with
# n = 1 another regime (`startup-regime`: its cost times each of STARTUP_OFF in turn).
STARTUP_N = 1
STARTUP_DRAWS = {"startup": 2, "startup-ignored": 2, "startup-regime": 3}
STARTUP_OFF = (0.25, 4.0)
JITTER_EXACT = 1e-4  # a count's bookkeeping jitter, ± this share, uniform
EXACT_TOP = 1e9  # the count at the largest size
EXACT_PROTOCOLS = ("exact", "exact4")
BUDGET_S = 30.0
EXP_BASE = 1.6
CVS = (0.01, 0.05, 0.2)
OFFSETS = (0.0, 0.33, 0.8)
REPEAT = 3


@dataclass(frozen=True, slots=True)
class Outcome:
    law: str
    protocol: str  # fixed | adaptive
    cv: float
    scenario: str
    kind: str  # right | bracket | bare | wrong
    covered: bool | None  # the k interval holds the true k (power laws only)
    verdict: str
    regime: bool  # a change of regime was named
    faster: str = ""  # exact: "named", "seen" or "" (a faster term than the law's, see `_exact`)
    fallback: bool = False  # exact: the counts followed no law of ≤ 2 terms (ordinary fit)


def _score(truths: Sequence[str], cls: str, lo: str, hi: str) -> str:
    """right, bracket, bare or wrong: a verdict is right when it names (or its bracket holds)
    any of `truths`."""
    if cls != INCONCLUSIVE:
        return "right" if cls in truths else "wrong"
    if not lo or not hi:
        return "bare"
    a, b = REGISTRY.index(lo), REGISTRY.index(hi)
    return "bracket" if any(a <= REGISTRY.index(t) <= b for t in truths) else "wrong"


def _truths(law: str, truth: Truth, truth_cls: str, top_n: float) -> tuple[str, ...]:
    """The classes a verdict may name: for two growth terms, what dominates at `top_n`."""
    if law not in TWO:
        return (truth_cls,)
    first, second, _, _ = TWO[law]
    slower = Truth(first, 0.0, truth.b).at(top_n)
    faster = Truth(second, 0.0, truth.extra_b).at(top_n)
    # Terms equal at the top (as "equal at the top" means) count as the faster one's.
    return (second,) if faster >= slower * (1 - 1e-9) else (first, second)


def _scenario(index: int) -> Scenario:
    """The grid's `index`-th cell: CV i % 3,outlier (i // 3) % 2, drift (i // 6) % 2, offset (i // 12) % 3."""
    return Scenario(cv=CVS[index % len(CVS)], outlier=5.0 if (index // 3) % 2 else 0.0,
                    drift=0.1 if (index // 6) % 2 else 0.0,
                    offset_share=OFFSETS[(index // 12) % len(OFFSETS)])


def _truth(law: str, sizes: Sequence[int], offset: float, top_s: float = 0.5) -> tuple[Truth, str]:
    """The simulated truth of `law` over `sizes`, and the class it should be judged as."""
    if law in BROKEN:
        below, above, threshold, jump, upper = BROKEN[law]
        return broken_truth(below, above, sizes, threshold, jump, offset, top_s=top_s), upper
    if law in TWO:
        first, second, cross, faster = TWO[law]
        return two_terms(first, second, sizes, cross * max(sizes), offset, top_s=top_s), faster
    return truth_for(law, sizes, offset, base=EXP_BASE, top_s=top_s), LAWS[law][0]


def _adaptive_runs(truth: Truth, scenario: Scenario, start_n: int, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """The runs an adaptive sweep with the default budget stores, on a fake clock."""
    disturbed = cost(truth, scenario, rng, expected_runs=60)

    def measure(argv: Sequence[str]) -> Measurement:
        return Measurement(wall_s=disturbed(int(argv[-1])), exit_code=0)

    clock = FakeClock(start=1000.0)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "sim.db")
        spec = SweepSpec(command=("sim", "{n}"), mode="adaptive", budget_s=BUDGET_S,
                         start_n=start_n, repeat=REPEAT)
        sweep = run_sweep(spec, executor=FakeExecutor(measure, clock), clock=clock, store=store)
        runs = [r for r in store.runs(sweep.id) if not r.warmup and r.measurement.ok]
        store.close()
    return runs, sweep.startup_n


def one(law: str, index: int, seed: int, protocol: str = "fixed") -> Outcome:
    """The `index`-th simulated sweep of `law` in `protocol`: its scenario cycles through the grid."""
    sizes = _BROKEN_SIZES if law in BROKEN else _TWO_SIZES if law in TWO else LAWS[law][1]
    k_true = LAWS[law][2] if law in LAWS else None
    keys = [*LAWS, *BROKEN, *TWO]
    draw = STARTUP_DRAWS.get(protocol, int(protocol == "adaptive"))
    rng = np.random.default_rng([seed, index, keys.index(law), draw])
    scenario = _scenario(index)
    fit: Fit | None
    if protocol == "fixed":
        truth, truth_cls = _truth(law, sizes, scenario.offset_share)
        ns, vs = simulate(truth, scenario, sizes, REPEAT, rng)
        fit = fit_metric("wall_s", ns, vs, seed=index)
        top_n = float(max(sizes))
    elif protocol in STARTUP_DRAWS:
        truth, truth_cls = _truth(law, sizes, scenario.offset_share)
        ns, vs = simulate(truth, scenario, (STARTUP_N, *sizes), REPEAT, rng)
        if protocol == "startup-regime":  # n = 1 takes a shortcut, or pays a first-run cost
            factor = STARTUP_OFF[index % len(STARTUP_OFF)]
            vs = [v * factor if n == STARTUP_N else v for n, v in zip(ns, vs, strict=True)]
        if protocol == "startup-ignored":
            keep = [i for i, n in enumerate(ns) if n != STARTUP_N]
            fit = fit_metric("wall_s", [ns[i] for i in keep], [vs[i] for i in keep], seed=index)
        else:
            fit = fit_metric("wall_s", ns, vs, seed=index, startup_n=STARTUP_N)
        top_n = float(max(sizes))
    else:
        start_n, ref_n, top_s = ADAPTIVE[law]
        truth, truth_cls = _truth(law, (start_n, ref_n), scenario.offset_share, top_s)
        runs, startup_n = _adaptive_runs(truth, scenario, start_n, rng)
        # As `quadscope show` fits it: the start-up runs (n = 1 below --start) apart.
        fit = fit_runs(runs, seed=0, metrics=("wall_s",), startup_n=startup_n)[0].get("wall_s")
        top_n = float(max((r.size_n for r in runs if r.size_n != startup_n), default=start_n))
    if fit is None:
        kind, verdict, covered, regime = "bare", "no fit", None, False
    else:
        kind = _score(_truths(law, truth, truth_cls, top_n), fit.cls, fit.at_least, fit.at_most)
        verdict = fit.cls if fit.cls != INCONCLUSIVE else f"[{fit.at_least} … {fit.at_most}]"
        covered = None
        if k_true is not None:
            ci = fit.exponent_ci
            covered = ci is not None and ci[0] <= k_true <= ci[1]
        regime = fit.regime_n is not None
    label = (f"outlier×{scenario.outlier:g} " if scenario.outlier else "") + (
        f"drift {scenario.drift:.0%} " if scenario.drift else "")
    label += f"offset {scenario.offset_share:.0%}"
    return Outcome(law, protocol, scenario.cv, label, kind, covered, verdict, regime)


def exact_truth(law: str, sizes: Sequence[int], offset: float) -> tuple[Truth, str, str]:
    """The truth of a law (or of a law with a faster term at its share of the work at the
    top), the class it is scored as (the fastest term), and the single law below it."""
    if law in SHARES:
        first, extra, share = SHARES[law]
        lower = truth_for(first, sizes, offset, top_s=1.0)
        top = lower.at(max(sizes))
        extra_b = share * top / (1 - share) / Truth(extra, 0.0, 1.0).at(max(sizes))
        return Truth(first, lower.a, lower.b, extra_law=extra, extra_b=extra_b), extra, first
    truth = truth_for(law, sizes, offset, base=EXP_BASE, top_s=1.0)
    return truth, LAWS[law][0], LAWS[law][0]


def exact_counts(truth: Truth, sizes: Sequence[int], rng: np.random.Generator,
                 jitter: float = JITTER_EXACT) -> tuple[list[float], list[float]]:
    """Each size's count (scaled to EXACT_TOP at the top, jittered, an integer) twice."""
    scale = EXACT_TOP / truth.at(max(sizes))
    ns: list[float] = []
    vs: list[float] = []
    for n in sizes:
        count = float(round(truth.at(n) * scale * (1 + rng.uniform(-jitter, jitter))))
        ns += [float(n), float(n)]
        vs += [count, count]
    return ns, vs


def _exact(law: str, index: int, seed: int, protocol: str) -> Outcome:
    """One simulated exact-count sweep, fitted as an exact meter's stored sweep would be."""
    from quadscope.analyse.exactfit import fit_exact

    sizes = _TWO_SIZES if law in SHARES else LAWS[law][1]
    sizes = sizes[-4:] if protocol == "exact4" else sizes
    keys = [*LAWS, *SHARES]
    rng = np.random.default_rng([seed, index, keys.index(law), EXACT_PROTOCOLS.index(protocol)])
    offset = OFFSETS[index % len(OFFSETS)]
    truth, truth_cls, below = exact_truth(law, sizes, offset)
    ns, vs = exact_counts(truth, sizes, rng)
    fit = fit_exact("instructions", ns, vs, seed=index, n_boot=50)
    fallback = fit is None
    if fit is None:
        fit = fit_metric("instructions", ns, vs, seed=index)
    kind = _score((truth_cls,), fit.cls, fit.at_least, fit.at_most)
    verdict = fit.cls if fit.cls != INCONCLUSIVE else f"[{fit.at_least} … {fit.at_most}]"
    idx = REGISTRY.index
    top = fit.cls if fit.cls != INCONCLUSIVE else fit.at_most
    reported = any(d.check == "work_terms" for d in fit.doubts)
    if law in SHARES:
        faster = "named" if fit.cls == truth_cls else (
            "seen" if top and idx(top) >= idx(truth_cls) else "")
    else:  # a false term: named (settled, or a term reported) or a bracket reaching faster
        named = (fit.confident and idx(fit.cls) > idx(below)) or reported
        faster = "named" if named else "seen" if top and idx(top) > idx(below) else ""
    return Outcome(law, protocol, 0.0, f"offset {offset:.0%}", kind, None, verdict, False,
                   faster, fallback)


def _batch(args: tuple[str, Sequence[int], int, str]) -> list[Outcome]:
    law, indices, seed, protocol = args
    if protocol in EXACT_PROTOCOLS:
        return [_exact(law, i, seed, protocol) for i in indices]
    return [one(law, i, seed, protocol) for i in indices]


def run(per_class: int, jobs: int, seed: int = 0, protocols: Sequence[str] = ("fixed",),
        laws: Sequence[str] = (*LAWS, *BROKEN, *TWO)) -> list[Outcome]:
    chunks = []
    for protocol in protocols:
        for law in laws:
            idx = list(range(per_class))
            step = max(1, per_class // (4 * jobs))
            chunks += [(law, idx[i:i + step], seed, protocol) for i in range(0, per_class, step)]
    if jobs <= 1:
        return [o for c in chunks for o in _batch(c)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [o for part in pool.map(_batch, chunks) for o in part]


def _rate(outcomes: Sequence[Outcome], pick: Callable[[Outcome], bool]) -> str:
    hits = [o for o in outcomes if pick(o)]
    return f"{len(hits)} of {len(outcomes)} ({len(hits) / max(len(outcomes), 1):.2%})"


def exact_markdown(outcomes: Sequence[Outcome], elapsed_s: float) -> str:
    """The exact protocols' tables: per law, its verdicts, a faster term named or seen."""
    per = len(outcomes) // max(1, len({(o.law, o.protocol) for o in outcomes}))
    lines = [f"{per} simulated exact-count sweeps per law and protocol (counts 10⁹ at the top, "
             f"jitter ±{JITTER_EXACT:.2%}, start-up 0 / ⅓ / ⅘ of the smallest count, two agreeing "
             f"repeats per size); {len(outcomes)} sweeps in {elapsed_s:.0f} s."]
    for protocol in dict.fromkeys(o.protocol for o in outcomes):
        mine_p = [o for o in outcomes if o.protocol == protocol]
        lines += ["", f"### {protocol} protocol", "",
                  "| true law | right class | right bracket | confidently wrong | faster term "
                  "named | faster term seen (bracket) | ordinary fit (no ≤ 2-term law) |",
                  "|---|---|---|---|---|---|---|"]
        for law in dict.fromkeys(o.law for o in mine_p):
            mine = [o for o in mine_p if o.law == law]
            c = Counter(o.kind for o in mine)
            f = Counter(o.faster for o in mine)
            lines.append(f"| {law} | {c['right']} | {c['bracket']} | **{c['wrong']}** | "
                         f"{f['named']} | {f['seen']} | {sum(o.fallback for o in mine)} |")
        single = [o for o in mine_p if o.law in LAWS]
        two = [o for o in mine_p if o.law in SHARES]
        lines += ["", "False second term on single laws (a faster class settled or a term "
                      f"reported): **{_rate(single, lambda o: o.faster == 'named')}** (goal ≤ 0.5%); "
                      "a bracket reaching a faster class (honest doubt, not a claim): "
                      f"{_rate(single, lambda o: o.faster == 'seen')}; confidently wrong: "
                      f"{_rate(mine_p, lambda o: o.kind == 'wrong')}."]
        for share in sorted({SHARES[o.law][2] for o in two}):
            at = [o for o in two if SHARES[o.law][2] == share]
            lines.append(f"Faster term at {share:.0%} of the work: named "
                         f"**{_rate(at, lambda o: o.faster == 'named')}**, named or seen "
                         f"{_rate(at, lambda o: bool(o.faster))} (goal ≥ 90%).")
        wrong = [o for o in mine_p if o.kind == "wrong"][:12]
        if wrong:
            lines += ["", "Confidently wrong (first 12):", ""]
            lines += [f"- {o.law}, {o.scenario}: {o.verdict}" for o in wrong]
    return "\n".join(lines)


def markdown(outcomes: Sequence[Outcome], per_class: int, elapsed_s: float) -> str:
    def per_law(protocol: str, single: bool) -> int:
        mine = [o for o in outcomes if o.protocol == protocol and (o.law in LAWS) == single]
        return len(mine) // max(1, len({o.law for o in mine}))

    parts = []
    for protocol in dict.fromkeys(o.protocol for o in outcomes):
        single, mixed = per_law(protocol, True), per_law(protocol, False)
        parts.append(f"{single} {protocol}" if mixed in (0, single) else
                     f"{single} {protocol} ({mixed} per law that changes regime or has two terms)")
    per = " and ".join(parts) or str(per_class)
    lines = [
        f"{per} simulated sweeps per true law ({REPEAT} repeats per size; "
        f"adaptive: default {BUDGET_S:.0f} s budget), noise CV 1% / 5% / 20%, an outlier (×5) in "
        "half, 10% drift in half, start-up offset 0 / ⅓ / ⅘ of the smallest run; "
        f"{len(outcomes)} sweeps in {elapsed_s:.0f} s.",
    ]
    for protocol in dict.fromkeys(o.protocol for o in outcomes):
        mine_p = [o for o in outcomes if o.protocol == protocol]
        lines += ["", f"### {protocol} protocol", "",
                  "| true law | right class | right bracket | bare | confidently wrong "
                  "| k covered (95%) | regime named |",
                  "|---|---|---|---|---|---|---|"]
        for law in dict.fromkeys(o.law for o in mine_p):
            mine = [o for o in mine_p if o.law == law]
            c = Counter(o.kind for o in mine)
            cov = [o.covered for o in mine if o.covered is not None]
            cover = f"{sum(cov) / len(cov):.1%}" if cov else "—"
            lines.append(f"| {law} | {c['right']} | {c['bracket']} | {c['bare']} | "
                         f"**{c['wrong']}** | {cover} | {sum(o.regime for o in mine)} |")
        single = [o for o in mine_p if o.law in LAWS]
        broken = [o for o in mine_p if o.law in BROKEN]
        two = [o for o in mine_p if o.law in TWO]
        lines += ["", f"Confidently wrong on single laws: **{_rate(single, lambda o: o.kind == 'wrong')}"
                      f"** (goal ≤ 0.5%); bare: {_rate(single, lambda o: o.kind == 'bare')}. On laws "
                      f"that change regime: {_rate(broken, lambda o: o.kind == 'wrong')}; with two growth "
                      f"terms: {_rate(two, lambda o: o.kind == 'wrong')}.",
                  "False changes of regime on single laws at 5% CV: "
                  f"**{_rate([o for o in single if o.cv == 0.05], lambda o: o.regime)}** "
                  f"(goal ≤ 1%); at any CV: {_rate(single, lambda o: o.regime)}."]
        wrong = [o for o in mine_p if o.kind == "wrong"][:12]
        if wrong:
            lines += ["", "Confidently wrong (first 12):", ""]
            lines += [f"- {o.law}, CV {o.cv:.0%}, {o.scenario}: {o.verdict}" for o in wrong]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-class", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--protocol", choices=("fixed", "adaptive", "both", "exact", "startup"),
                   default="both",
                   help="exact: simulated exact counts (the exact and exact4 protocols); "
                        "startup: the fixed protocol with start-up runs at n = 1, used, "
                        "ignored, and another regime")
    p.add_argument("--adaptive-per-class", type=int, default=None,
                   help="sweeps per law in the adaptive protocol (each is a whole simulated "
                        "adaptive run, ~0.1-1 s): default --per-class")
    p.add_argument("--adaptive-per-mixed", type=int, default=None,
                   help="adaptive sweeps per law that changes regime or has two growth terms "
                        "(the slowest to simulate): default --adaptive-per-class")
    p.add_argument("--laws", default="", help="only these true laws, separated by ;")
    p.add_argument("--quick", action="store_true",
                   help="36 fixed and 6 adaptive sweeps per law")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    if args.protocol == "exact":
        chosen = [law.strip() for law in args.laws.split(";") if law.strip()] or [*LAWS, *SHARES]
        found = run(36 if args.quick else args.per_class, args.jobs, args.seed, EXACT_PROTOCOLS,
                    chosen)
        print("## Calibration: simulated exact counts of known truth\n")
        print(exact_markdown(found, time.monotonic() - t0))
        return 0
    protocols = (("fixed", "adaptive") if args.protocol == "both" else
                 tuple(STARTUP_DRAWS) if args.protocol == "startup" else (args.protocol,))
    outcomes: list[Outcome] = []
    for protocol in protocols:
        if args.quick:
            per_class = 6 if protocol == "adaptive" else 36
        elif protocol == "adaptive" and args.adaptive_per_class is not None:
            per_class = args.adaptive_per_class
        else:
            per_class = args.per_class
        chosen = [law.strip() for law in args.laws.split(";") if law.strip()] or [*LAWS, *BROKEN, *TWO]
        mixed = [law for law in chosen if law not in LAWS]
        per_mixed = per_class
        if protocol == "adaptive" and not args.quick and args.adaptive_per_mixed is not None:
            per_mixed = args.adaptive_per_mixed
        if per_mixed != per_class and mixed:
            outcomes += run(per_class, args.jobs, args.seed, (protocol,),
                            [law for law in chosen if law in LAWS])
            outcomes += run(per_mixed, args.jobs, args.seed, (protocol,), mixed)
        else:
            outcomes += run(per_class, args.jobs, args.seed, (protocol,), chosen)
    print("## Calibration: simulated sweeps of known truth\n")
    print(markdown(outcomes, args.per_class if not args.quick else 36, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
