"""Calibration: how often quadscope is confidently wrong where the truth is known.

Simulated sweeps (quadscope.workloads.synthetic) of every true law — constant,
log n, √n, n, n log n, n², n³ and an exponential — with log-normal noise at
1%, 5% and 20% CV, one planted outlier in half of them, slow drift in half,
and a start-up offset drawn from none, a third or four fifths of the smallest
run. Each is fitted by `fit_metric` exactly as a stored sweep would be.

Each verdict is scored against the truth:
* right class — the settled class is the true one;
* right bracket — unsettled, and the bracket [at_least, at_most] holds the truth;
* bare — unsettled and no bracket at all;
* confidently wrong — a settled class that is not the truth, or a bracket that
  excludes it. Goal: at most 0.5% of sweeps.
For the power laws (√n, n, n², n³) the 95% interval of the free exponent k
should hold the true k 93–97% of the time.

usage: .venv/bin/python bench/calibration.py [--per-class 1000] [--jobs 2] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.workloads.synthetic import Scenario, simulate, truth_for

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
CVS = (0.01, 0.05, 0.2)
OFFSETS = (0.0, 0.33, 0.8)
REPEAT = 3


@dataclass(frozen=True, slots=True)
class Outcome:
    law: str
    cv: float
    scenario: str
    kind: str  # right | bracket | bare | wrong
    covered: bool | None  # the k interval holds the true k (power laws only)
    verdict: str


def _score(truth: str, cls: str, lo: str, hi: str) -> str:
    if cls != INCONCLUSIVE:
        return "right" if cls == truth else "wrong"
    if not lo or not hi:
        return "bare"
    i, a, b = REGISTRY.index(truth), REGISTRY.index(lo), REGISTRY.index(hi)
    return "bracket" if a <= i <= b else "wrong"


def one(law: str, index: int, seed: int) -> Outcome:
    """The `index`-th simulated sweep of `law`: its scenario cycles through the grid."""
    truth_cls, sizes, k_true = LAWS[law]
    rng = np.random.default_rng([seed, index, list(LAWS).index(law)])
    cv = CVS[index % len(CVS)]
    outlier = 5.0 if (index // 3) % 2 else 0.0
    drift = 0.1 if (index // 6) % 2 else 0.0
    offset = OFFSETS[(index // 12) % len(OFFSETS)]
    scenario = Scenario(cv=cv, outlier=outlier, drift=drift, offset_share=offset)
    truth = truth_for(law, sizes, offset)
    ns, vs = simulate(truth, scenario, sizes, REPEAT, rng)
    fit = fit_metric("wall_s", ns, vs, seed=index)
    kind = _score(truth_cls, fit.cls, fit.at_least, fit.at_most)
    covered = None
    if k_true is not None and fit.exponent_ci is not None:
        covered = fit.exponent_ci[0] <= k_true <= fit.exponent_ci[1]
    elif k_true is not None:
        covered = False
    label = (f"outlier×{outlier:g} " if outlier else "") + (f"drift {drift:.0%} " if drift else "")
    label += f"offset {offset:.0%}"
    verdict = fit.cls if fit.cls != INCONCLUSIVE else f"[{fit.at_least} … {fit.at_most}]"
    return Outcome(law, cv, label, kind, covered, verdict)


def _batch(args: tuple[str, Sequence[int], int]) -> list[Outcome]:
    law, indices, seed = args
    return [one(law, i, seed) for i in indices]


def run(per_class: int, jobs: int, seed: int = 0) -> list[Outcome]:
    chunks = []
    for law in LAWS:
        idx = list(range(per_class))
        step = max(1, per_class // (4 * jobs))
        chunks += [(law, idx[i:i + step], seed) for i in range(0, per_class, step)]
    if jobs <= 1:
        return [o for c in chunks for o in _batch(c)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [o for part in pool.map(_batch, chunks) for o in part]


def markdown(outcomes: Sequence[Outcome], per_class: int, elapsed_s: float) -> str:
    lines = [
        f"{per_class} simulated fixed sweeps per true law ({REPEAT} repeats per size), noise "
        "CV 1% / 5% / 20%, an outlier (×5) in half, 10% drift in half, start-up offset 0 / ⅓ / ⅘ "
        f"of the smallest run; {len(outcomes)} fits in {elapsed_s:.0f} s.",
        "",
        "| true law | right class | right bracket | bare | confidently wrong | k covered (95%) |",
        "|---|---|---|---|---|---|",
    ]
    for law in LAWS:
        mine = [o for o in outcomes if o.law == law]
        c = Counter(o.kind for o in mine)
        cov = [o.covered for o in mine if o.covered is not None]
        cover = f"{sum(cov) / len(cov):.1%}" if cov else "—"
        lines.append(f"| {law} | {c['right']} | {c['bracket']} | {c['bare']} | "
                     f"**{c['wrong']}** | {cover} |")
    total = Counter(o.kind for o in outcomes)
    n = max(len(outcomes), 1)
    lines += ["", f"Confidently wrong: **{total['wrong']} of {len(outcomes)} "
                  f"({total['wrong'] / n:.2%})** (goal ≤ 0.5%); bare: {total['bare'] / n:.1%}."]
    wrong = [o for o in outcomes if o.kind == "wrong"][:12]
    if wrong:
        lines += ["", "Confidently wrong (first 12):", ""]
        lines += [f"- {o.law}, CV {o.cv:.0%}, {o.scenario}: {o.verdict}" for o in wrong]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-class", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="36 sweeps per law")
    args = p.parse_args(argv)
    per_class = 36 if args.quick else args.per_class
    t0 = time.monotonic()
    outcomes = run(per_class, args.jobs, args.seed)
    print("## Calibration: simulated sweeps of known truth\n")
    print(markdown(outcomes, per_class, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
