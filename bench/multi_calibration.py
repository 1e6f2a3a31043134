"""Calibration of the fit in several sizes: do the exponents' 95% intervals cover the truth?

Simulated sweeps of cost = a + b·n^p·m^q (and sums a + b·n^p + c·m^q, and
nests a + n^p·(1 + c·m^q), p, q in {1, 2}: issue 25) over
true exponents p, q in {0.5, 1, 1.5, 2} (and n log n in n), with log-normal
noise at 1%, 5% and 20% CV, an offset a of none or a third of the smallest
cost, 3 repeats per point (1 at 20% half the time), on the full 5 × 5 grid
and on the star design of `quadscope.run.design` (lines through the middle
plus corners, 10 sizes per axis, at most 30 points). Each trial is fitted by
`quadscope.analyse.multi.analyse_points` exactly as a stored sweep would be.

Reported per cell: how often each exponent's 95% interval holds the true
exponent (the stated rate is 95%), over the power laws only: n log n has no one
exponent (a power fitted to it, offset included, reads anywhere from 1.05 to
1.25 depending on the sizes and the offset), so it is scored by its class
alone; how often
the axis's class is settled and right, a bracket holding the truth, or wrong
(settled on another class, or a bracket that misses it: "confidently wrong"),
and how often separability is judged right (product laws: "no"; sums: "yes").

Run: PYTHONPATH=src python bench/multi_calibration.py [--trials 40] [--boot 400]
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections import defaultdict

import numpy as np

from quadscope.analyse.multi import analyse_points
from quadscope.analyse.multifit import GridPoint
from quadscope.classes import REGISTRY
from quadscope.run.design import Axis, design

GRID_N = (1000, 2000, 4000, 8000, 16000)
GRID_M = (10, 20, 40, 80, 160)
STAR_N = tuple(1000 * 2**k for k in range(10))
STAR_M = tuple(10 * 2**k for k in range(10))
LAWS = {"sqrt n": 0.5, "n": 1.0, "n^1.5": 1.5, "n^2": 2.0}
CLASS_OF = {0.5: "sqrt n", 1.0: "n", 2.0: "n^2"}  # 1.5 lies between classes: a bracket is right


def _f(law: str, x: np.ndarray | float) -> np.ndarray:
    if law == "n log n":
        return np.asarray(x, dtype=float) * np.log(x)
    return np.asarray(x, dtype=float) ** LAWS[law]


def _truth_k(law: str) -> float | None:
    return None if law == "n log n" else LAWS[law]


def _score(growth, law: str) -> str:
    order = REGISTRY.index
    if law == "n^1.5":
        lo, hi = order("n log n"), order("n^2")
        if growth.name is not None:
            return "wrong"
        return "bracket" if order(growth.at_least) <= lo and order(growth.at_most) >= hi else "wrong"
    true = law if law == "n log n" else CLASS_OF[LAWS[law]]
    if growth.name is not None:
        return "right" if growth.name == true else "wrong"
    inside = order(growth.at_least) <= order(true) <= order(growth.at_most)
    return "bracket" if inside else "wrong"


def trial(rng: np.random.Generator, points, law_n: str, law_m: str, kind: str,
          noise: float, offset: bool, repeat: int, n_boot: int) -> dict[str, object]:
    x = np.array(points, dtype=float)
    smallest = float(_f(law_n, x[:, 0].min()) * _f(law_m, x[:, 1].min()))
    if kind == "product":
        clean = _f(law_n, x[:, 0]) * _f(law_m, x[:, 1])
    elif kind == "nest":  # n^p·(1 + c·m^q), the inner constant equal to the m term mid-way
        mid = float(np.sqrt(x[:, 1].min() * x[:, 1].max()))
        clean = _f(law_n, x[:, 0]) * (1.0 + _f(law_m, x[:, 1]) / _f(law_m, mid))
        smallest = float(clean.min())
    else:  # sum: both terms equal at the largest point, so both are seen
        fn, fm = _f(law_n, x[:, 0]), _f(law_m, x[:, 1])
        clean = fn / fn.max() + fm / fm.max()
        smallest = float(clean.min())
    a = smallest / 3 if offset else 0.0
    pts = [GridPoint(tuple(int(s) for s in p),
                     tuple((a + c) * np.exp(rng.normal(0, noise, repeat) - noise**2 / 2)))
           for p, c in zip(points, clean, strict=True)]
    v = analyse_points(("n", "m"), pts, seed=int(rng.integers(1 << 31)), n_boot=n_boot)
    out: dict[str, object] = {"sep": v.separable}
    for i, law in enumerate((law_n, law_m)):
        k = _truth_k(law)
        lo, hi = v.axes[i].interval
        out[f"cover{i}"] = None if k is None else lo <= k <= hi
        out[f"class{i}"] = _score(v.axes[i].growth, law)
    return out


PROSE = """\
`bench/multi_calibration.py` (issue 28): simulated sweeps over two sizes n and m, cost
a + b·f(n)·g(m) (product) or a + f(n)/f(n_max) + g(m)/g(m_max) (sum, both terms equal at the
largest point), or a + f(n)·(1 + g(m)/g(m_mid)) (nest: a per-n overhead plus per-cell work,
issue 25; f in n, n², g in m, m², m_mid the middle of m's range), f in √n, n, n^1.5, n²,
n log n and g in m, m², log-normal noise at 1%, 5% and
20% CV (3 repeats per point; at 20% every other trial has 1), an offset of a third of the
smallest cost in a third of the trials. Two designs: the full 5 × 5 grid (n 1000..16000, m
10..160) and the star `run/design.py` picks from 10 sizes per axis within 30 points (lines
through the middle plus corners). Each trial is fitted by `analyse.multi.analyse_points` as a
stored sweep is. *covered*: the exponent's 95% interval holds the true one (power laws only:
n log n has no one exponent and is scored by class); *class right*: the size's class is settled
and true; *bracket holds*: unsettled, and the bracket holds the truth (n^1.5 lies between
classes: only a bracket from n log n to n² is right); *wrong*: settled on another class, or a
bracket that misses the truth; *separability right*: "not separable" for products, "separable"
for sums, "not separable" for nests, which the product with lower terms should fit."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--boot", type=int, default=400)
    ap.add_argument("--seed", type=int, default=28)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    designs = {"grid 5×5": [(n, m) for n in GRID_N for m in GRID_M],
               "star ≤30": list(design((Axis("n", STAR_N), Axis("m", STAR_M)), max_points=30))}
    laws_n = (*LAWS, "n log n")
    cells: dict[tuple[str, str, float], list[dict[str, object]]] = defaultdict(list)
    t0 = time.monotonic()
    for name, points in designs.items():
        for noise in (0.01, 0.05, 0.20):
            for law_n, law_m, kind in itertools.product(laws_n, ("n", "n^2"), ("product", "sum")):
                for t in range(args.trials):
                    repeat = 1 if noise == 0.20 and t % 2 else 3
                    cells[(name, kind, noise)].append(trial(
                        rng, points, law_n, law_m, kind, noise, offset=bool(t % 3 == 0),
                        repeat=repeat, n_boot=args.boot))
    nest_rng = np.random.default_rng(args.seed + 25)  # the others' draws stay as they were
    for name, points in designs.items():
        for noise in (0.01, 0.05, 0.20):
            for law_n, law_m in itertools.product(("n", "n^2"), ("n", "n^2")):
                for t in range(args.trials):
                    repeat = 1 if noise == 0.20 and t % 2 else 3
                    cells[(name, "nest", noise)].append(trial(
                        nest_rng, points, law_n, law_m, "nest", noise, offset=bool(t % 3 == 0),
                        repeat=repeat, n_boot=args.boot))
    print(PROSE + "\n")
    print(f"{sum(map(len, cells.values()))} trials in {time.monotonic() - t0:.0f} s\n")
    print("| design | law | noise CV | trials | p covered | q covered | "
          "class right | bracket holds | wrong | separability right |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, kind, noise), rows in sorted(cells.items()):
        n = len(rows)
        cov = []
        for i in (0, 1):
            scored = [r[f"cover{i}"] for r in rows if r[f"cover{i}"] is not None]
            cov.append(sum(map(bool, scored)) / len(scored))
        scores = [r[f"class{i}"] for r in rows for i in (0, 1)]
        want = "yes" if kind == "sum" else "no"
        sep = sum(r["sep"] == want for r in rows) / n
        print(f"| {name} | {kind} | {noise:.0%} | {n} | {cov[0]:.1%} | {cov[1]:.1%} | "
              f"{scores.count('right') / len(scores):.1%} | "
              f"{scores.count('bracket') / len(scores):.1%} | "
              f"{scores.count('wrong') / len(scores):.1%} | {sep:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
