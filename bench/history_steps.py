"""`quadscope history`'s step test on simulated series of known truth: false steps and power.

Each series is ten sweeps of one n log n program (a fifth of the smallest run
start-up; six sizes 1000..32000, three repeats each, log-normal noise of the
CV given, `workloads.synthetic`), fitted as `history` fits them, at the
reference n 32000. "flat" series change nothing; "session" adds a drift
between sweeps no sweep's runs can see (each sweep's costs times exp(0.03·z));
"step" multiplies the cost of the last five sweeps. Two tests judge them:

* own intervals (what `history` does): each sweep's median at the reference
  n with its own standard error (`analyse.history.own_cost`);
* fit's interval alone: each sweep's fitted cost and its 95% bootstrap
  interval (the segmentation and thresholds the same).

Each row gives the series with any false mark (a step or a growth change
where none happened, or a step anywhere but at the true one) and, for
"step", the series whose true step was marked.

usage: .venv/bin/python bench/history_steps.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine

from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.history import build_history, own_cost
from quadscope.model import Fit, Sweep
from quadscope.workloads.synthetic import Scenario, Truth, simulate, truth_for

SIZES = [1000, 2000, 4000, 8000, 16000, 32000]
SWEEPS = 10
AT = 5  # the first sweep after a step
CASES = [  # (label, noise CV, session drift σ, step factor)
    ("flat", 0.05, 0.0, 1.0), ("flat", 0.10, 0.0, 1.0), ("session", 0.05, 0.03, 1.0),
    ("step", 0.05, 0.0, 1.1), ("step", 0.05, 0.0, 1.2), ("step", 0.10, 0.0, 2.0)]

Series = tuple[list[tuple[Sweep, Fit]], list[tuple[float, float] | None]]


def series(cv: float, session: float, step: float, rng: np.random.Generator) -> Series:
    base = truth_for("n log n", SIZES, 0.2, top_s=0.5)
    entries, own = [], []
    for i in range(SWEEPS):
        f = math.exp(session * float(rng.standard_normal())) * (step if i >= AT else 1.0)
        n, v = simulate(Truth(base.law, base.a * f, base.b * f), Scenario(cv=cv), SIZES, 3, rng)
        sweep = Sweep(id=i + 1, name="x", mode="sizes", command=("p", "{n}"),
                      created_at=float(i))
        entries.append((sweep, fit_metric("wall_s", n, v, predict_n=SIZES[-1],
                                          seed=int(rng.integers(1 << 30)))))
        own.append(own_cost(n, v, SIZES[-1]))
    return entries, own


def judge(s: Series, stepped: bool, own: bool) -> tuple[bool, bool]:
    """(a false mark, the true step marked)."""
    entries, measured = s
    h = build_history(entries, name="x", metric="wall_s", ref_n=SIZES[-1], order="time",
                      measured=measured if own else None)
    steps = {i for i, p in enumerate(h.points) if p.step is not None}
    changed = any(p.class_changed for p in h.points)
    return bool(steps - ({AT} if stepped else set())) or changed, AT in steps


def _found(results: list[tuple[bool, bool]], stepped: bool, count: int) -> str:
    return f"{sum(t for _, t in results)}/{count}" if stepped else "—"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="10 series a case, not 30")
    args = p.parse_args(argv)
    count = 10 if args.quick else 30
    m = machine()
    print(f"`bench/history_steps.py{' --quick' if args.quick else ''}` on {m['date']}: "
          f"{m['nproc']} cores, kernel {m['kernel']}, {m['cpu']}, Python {m['python']}.\n")
    print(f"{count} series a case of {SWEEPS} simulated sweeps of an n log n program "
          f"(sizes {SIZES[0]}..{SIZES[-1]}, 3 repeats, seeded); a false mark is a step or "
          "a change of growth anywhere but at the true step.\n")
    print("| case | noise CV | session drift | step | own intervals: false marks | "
          "found | fit's interval alone: false marks | found |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(7)
    for label, cv, session, step in CASES:
        made = [series(cv, session, step, rng) for _ in range(count)]
        stepped = step != 1.0
        own = [judge(s, stepped, True) for s in made]
        fit = [judge(s, stepped, False) for s in made]
        print(f"| {label} | {cv:.0%} | {session:.0%} | ×{step:g} | "
              f"{sum(f for f, _ in own)}/{count} | {_found(own, stepped, count)} | "
              f"{sum(f for f, _ in fit)}/{count} | {_found(fit, stepped, count)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
