"""Flat noisy sweeps: how often a program that does not grow (/bin/true) reads as growing.

A constant cost of 1 ms with log-normal noise, on a loaded machine: each run
is slowed ×1.5–4 with probability `spike` (another process took the CPU), and
in half of the sweeps a burst of load slows a run of consecutive runs ×1.3–2
(the load arrived mid-sweep, when adaptive mode had reached its larger sizes).
Three protocols, as users ran /bin/true:
* adaptive — `run_sweep` in adaptive mode (fake clock), `--budget 2` and the
  default 30 s, three repeats;
* four — sizes 1, 10, 100, 1000 with `--repeat 1`;
* fixed — sizes 1..1e6 by ×10, three interleaved repeats.

Scored as bench/calibration.py scores a constant: wrong is a settled growing
class or a bracket without "1"; a change of regime named on these is false.

usage: .venv/bin/python bench/flat_noise.py [--sweeps 200] [--jobs 2]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Fit, Measurement
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore

LEVEL_S = 1e-3
CVS = (0.05, 0.2)
SPIKES = (0.0, 0.05, 0.15)
PROTOCOLS = ("adaptive 2 s", "adaptive 30 s", "four", "fixed")


@dataclass(frozen=True, slots=True)
class Outcome:
    protocol: str
    cv: float
    spike: float
    burst: bool
    kind: str  # right | bracket | bare | wrong
    verdict: str
    regime: bool


def loaded(rng: np.random.Generator, cv: float, spike: float, burst: bool,
           runs: int) -> Callable[[int], float]:
    """The cost of successive runs of a flat program on a loaded machine (see the docstring)."""
    sigma = math.sqrt(math.log1p(cv * cv))
    start = int(rng.integers(runs // 3, runs)) if burst else -1
    length = int(rng.integers(3, max(4, runs // 4)))
    factor = float(rng.uniform(1.3, 2.0))
    calls = [0]

    def one(n: int) -> float:
        i = calls[0]
        calls[0] += 1
        v = LEVEL_S * math.exp(sigma * float(rng.standard_normal()))
        if rng.random() < spike:
            v *= float(rng.uniform(1.5, 4.0))
        if start <= i < start + length:
            v *= factor
        return v

    return one


def _adaptive(disturbed: Callable[[int], float], budget_s: float) -> Fit | None:
    def measure(argv: Sequence[str]) -> Measurement:
        return Measurement(wall_s=disturbed(int(argv[-1])), exit_code=0)

    clock = FakeClock(start=1000.0)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "sim.db")
        spec = SweepSpec(command=("sim", "{n}"), mode="adaptive", budget_s=budget_s, repeat=3)
        sweep = run_sweep(spec, executor=FakeExecutor(measure, clock), clock=clock, store=store)
        runs = [r for r in store.runs(sweep.id) if not r.warmup and r.measurement.ok]
        store.close()
    return fit_runs(runs, seed=0, metrics=("wall_s",))[0].get("wall_s")


def _fixed(disturbed: Callable[[int], float], sizes: Sequence[int], repeat: int,
           rng: np.random.Generator, index: int) -> Fit:
    order: list[int] = []
    for _ in range(repeat):
        round_sizes = list(sizes)
        rng.shuffle(round_sizes)
        order.extend(round_sizes)
    return fit_metric("wall_s", order, [disturbed(n) for n in order], seed=index)


def score(fit: Fit | None) -> tuple[str, str]:
    if fit is None:
        return "bare", "no fit"
    if fit.cls != INCONCLUSIVE:
        return ("right" if fit.cls == "1" else "wrong"), fit.cls
    if not fit.at_least or not fit.at_most:
        return "bare", "?"
    verdict = f"[{fit.at_least} … {fit.at_most}]"
    return ("bracket" if REGISTRY.index(fit.at_least) == 0 else "wrong"), verdict


def one(protocol: str, index: int, seed: int) -> Outcome:
    rng = np.random.default_rng([seed, index, PROTOCOLS.index(protocol)])
    cv, spike = CVS[index % len(CVS)], SPIKES[(index // len(CVS)) % len(SPIKES)]
    burst = bool((index // (len(CVS) * len(SPIKES))) % 2)
    if protocol.startswith("adaptive"):
        budget = float(protocol.split()[1])
        fit = _adaptive(loaded(rng, cv, spike, burst, int(budget / LEVEL_S) // 4), budget)
    elif protocol == "four":
        fit = _fixed(loaded(rng, cv, spike, burst, 4), (1, 10, 100, 1000), 1, rng, index)
    else:
        sizes = tuple(10**i for i in range(7))
        fit = _fixed(loaded(rng, cv, spike, burst, 3 * len(sizes)), sizes, 3, rng, index)
    kind, verdict = score(fit)
    return Outcome(protocol, cv, spike, burst, kind, verdict,
                   fit is not None and fit.regime_n is not None)


def _batch(args: tuple[str, Sequence[int], int]) -> list[Outcome]:
    protocol, indices, seed = args
    return [one(protocol, i, seed) for i in indices]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sweeps", type=int, default=120, help="per protocol")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--protocols", default=";".join(PROTOCOLS))
    args = p.parse_args(argv)
    protocols = [x for x in args.protocols.split(";") if x]
    step = max(1, args.sweeps // 8)
    chunks = [(pr, list(range(i, min(i + step, args.sweeps))), args.seed)
              for pr in protocols for i in range(0, args.sweeps, step)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = [o for part in pool.map(_batch, chunks) for o in part]
    print("| protocol | right (1) | bracket from 1 | bare | wrong | regime named |")
    print("|---|---|---|---|---|---|")
    for pr in protocols:
        mine = [o for o in outcomes if o.protocol == pr]
        c = Counter(o.kind for o in mine)
        print(f"| {pr} | {c['right']} | {c['bracket']} | {c['bare']} | **{c['wrong']}** | "
              f"{sum(o.regime for o in mine)} |")
    bad = [o for o in outcomes if o.kind == "wrong" or o.regime][:15]
    for o in bad:
        print(f"- {o.protocol}, CV {o.cv:.0%}, spike {o.spike:.0%}, burst {o.burst}: "
              f"{o.verdict}{' (regime)' if o.regime else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
