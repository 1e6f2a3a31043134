"""How much one recording's time moves between repeats, and what that does to sampled classes.

Part 1 measures `profile.noise.LOAD_CV`'s source: 25 single runs of the profiler's
known-culprit program (`profile.programs.QUADRATIC`) at each of n = 1k, 2k, 4k, 8k,
CPU seconds (user + sys) from wait4, and prints each size's SD/median, robust
IQR/1.349/median and slowest/median. Run it quiet and under
`/work/shared/tools/busy --cores 1 --memory 64 -- python bench/recording_spread.py`.

Part 2 draws simulated per-function self times: truth × one measured run's
ratio to its size's median (resampled from part 1, so the load's heavy tail is
the machine's own), plus the Poisson error of `--samples` samples at each size;
each series is fitted as attribution did before (no errors given) and now
(`noise.sampled_sd`), and the verdicts are scored: settled right, settled wrong
(the failure this bench guards), or a bracket holding the truth.

    PYTHONPATH=src python bench/recording_spread.py [--trials 40] [--samples 600]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

import numpy as np

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.profile.noise import sampled_sd
from quadscope.profile.programs import QUADRATIC

LAWS = {
    "n": lambda n: n,
    "n log n": lambda n: n * math.log(n),
    "n^2": lambda n: n * n,
    "n^3": lambda n: n**3,
}
GRIDS = {"4 sizes 1k-8k": (1000, 2000, 4000, 8000),
         "5 sizes 1k-16k": (1000, 2000, 4000, 8000, 16000)}


def _cpu_s(binary: str, n: int) -> float:
    pid = os.fork()
    if pid == 0:
        os.execv(binary, [binary, str(n)])
    _, _, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime


def measure(runs: int) -> list[float]:
    """Part 1: every run's ratio to its size's median CPU time, and the table."""
    binary = str(QUADRATIC.build())
    ratios: list[float] = []
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| n | median ms | SD/median | IQR/1.349/median | slowest/median |")
    print("|---|---|---|---|---|")
    for n in QUADRATIC.sizes:
        xs = [_cpu_s(binary, n) for _ in range(runs)]
        med = statistics.median(xs)
        q = statistics.quantiles(xs, n=4)
        print(f"| {n} | {med * 1e3:.2f} | {statistics.stdev(xs) / med:.3f} | "
              f"{(q[2] - q[0]) / 1.349 / med:.3f} | {max(xs) / med:.2f} |", flush=True)
        ratios.extend(x / med for x in xs)
    return ratios


def _verdict(fit_cls: str, lo: str, hi: str, truth: str) -> str:
    if fit_cls != INCONCLUSIVE:
        return "right" if fit_cls == truth else "WRONG"
    if lo and hi and REGISTRY.index(lo) <= REGISTRY.index(truth) <= REGISTRY.index(hi):
        return "bracket"
    return "other"


def simulate(ratios: list[float], trials: int, samples: int, seed: int) -> None:
    """Part 2: the verdicts before (no errors) and now (honest errors) on drawn series."""
    rng = np.random.default_rng(seed)
    print(f"\n{trials} series per cell, {samples} samples of the function at each size")
    print("| law | sizes | before: right / WRONG / bracket | now: right / WRONG / bracket |")
    print("|---|---|---|---|")
    for law, f in LAWS.items():
        for grid_name, sizes in GRIDS.items():
            before: dict[str, int] = {}
            now: dict[str, int] = {}
            for t in range(trials):
                truth = np.array([f(n) for n in sizes], dtype=float)
                truth = truth / truth[-1] * 0.05  # 50 ms at the largest size
                load = rng.choice(ratios, size=len(sizes))
                rate = samples / (truth * load)  # `samples` samples at every size
                drawn = rng.poisson(truth * load * rate) / rate
                for out, sd in ((before, None), (now, sampled_sd(drawn.tolist(), rate.tolist()))):
                    fit = fit_metric("self time of f", list(sizes), drawn.tolist(), seed=t,
                                     sd=None if sd is None else list(sd), strict=sd is not None)
                    v = _verdict(fit.cls, fit.at_least, fit.at_most, law)
                    if v == "WRONG":
                        print(f"  {'now' if sd is not None else 'before'} wrong: {law} read "
                              f"{fit.cls}, k = {fit.exponent} {fit.exponent_ci}, load × "
                              f"{np.round(load, 2).tolist()}", file=sys.stderr)
                    out[v] = out.get(v, 0) + 1
            cells = [f"{d.get('right', 0)} / {d.get('WRONG', 0)} / {d.get('bracket', 0)}"
                     for d in (before, now)]
            print(f"| {law} | {grid_name} | {cells[0]} | {cells[1]} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--samples", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    simulate(measure(args.runs), args.trials, args.samples, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
