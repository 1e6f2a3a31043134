"""Accuracy: quadscope's verdicts against big_O's on the same measured data.

Every accuracy-suite workload (quadscope.workloads.SUITE, programs of known
complexity) is swept with the real executor through `run_sweep` + `analyse`.
The wall_s data of that one sweep is then classified three ways:

* quadscope — the verdict `analyse` gives (fit_metric over every run);
* quadscope (medians) — `fit_metric` over the median per size, the same
  points big_O gets, so the two are compared on exactly equal input;
* big_O 0.11.0 — `big_o.infer_big_o_class(ns, medians)`, its documented entry
  point for externally measured times. Its classes map to ours (Constant→1,
  Logarithmic→log n, Linear→n, Linearithmic→n log n, Quadratic→n^2,
  Cubic→n^3, Exponential→c^n; Polynomial a·n^k→ the class of the nearest
  k in {0, ½, 1, 2, 3}). big_O has no "inconclusive".

Each verdict is correct (in the workload's `acceptable` set), inconclusive, or
confidently wrong. Goal: quadscope is never confidently wrong.

usage: .venv/bin/python bench/accuracy.py [--repeat 5] [--only name,name]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import log, medians_by_size, scratch_store, sweep, table

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, NAMES
from quadscope.errors import FitRefusedError
from quadscope.run.spec import SweepSpec
from quadscope.workloads import SUITE, WORKLOADS, build

BIG_O_NAMES = {
    "Constant": "1",
    "Logarithmic": "log n",
    "Linear": "n",
    "Linearithmic": "n log n",
    "Quadratic": "n^2",
    "Cubic": "n^3",
    "Exponential": "c^n",
}
_POLY = ((0.0, "1"), (0.5, "sqrt n"), (1.0, "n"), (2.0, "n^2"), (3.0, "n^3"))


def big_o_verdict(sizes: list[int], values: list[float]) -> str:
    """big_O's class for (sizes, values), in our class names.

    big_O fits each class with `np.linalg.lstsq(..., rcond=-1)` and reads the
    residual sum it returns; for large n (n³ at n = 10⁹ is 10²⁷) the design
    matrix is numerically rank-deficient, lstsq returns no residual and big_O
    raises IndexError. Then we call it again with `classes=` limited to the
    classes it can fit on this data (its documented parameter), and say so.
    """
    import big_o
    import numpy as np
    from big_o.complexities import ALL_CLASSES

    ns, t = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    note = ""
    try:
        best, _ = big_o.infer_big_o_class(ns, t)
    except (IndexError, ValueError, np.linalg.LinAlgError):
        usable = []
        for cls in ALL_CLASSES:
            try:
                cls().fit(ns, t)
            except (IndexError, ValueError, np.linalg.LinAlgError):
                continue
            usable.append(cls)
        best, _ = big_o.infer_big_o_class(ns, t, classes=usable)
        note = f" ({len(ALL_CLASSES) - len(usable)} classes unfittable)"
    name = type(best).__name__
    if name == "Polynomial":
        _, k = best.coefficients()
        return min(_POLY, key=lambda p: abs(p[0] - float(k)))[1] + note
    return BIG_O_NAMES.get(name, name) + note


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    expected: str
    acceptable: tuple[str, ...]
    quadscope: str
    exponent: str
    quadscope_medians: str
    big_o: str
    other: str  # other metrics' verdicts vs their truth
    sweep_s: float


def measure(names: tuple[str, ...], repeat: int) -> list[Row]:
    rows = []
    with scratch_store() as store:
        for name in names:
            w = WORKLOADS[name]
            path = build(name)
            spec = SweepSpec(command=w.argv(path), name=f"accuracy {name}", sizes=w.sizes,
                             repeat=repeat, warmup=1, timeout_s=30.0)
            swept = sweep(spec, store)
            fit = swept.analysis.fits["A"].get("wall_s")
            sizes, medians = medians_by_size(swept.analysis)
            try:
                med_cls = fit_metric("wall_s", sizes, medians).cls
            except FitRefusedError:
                med_cls = INCONCLUSIVE
            try:
                bo = big_o_verdict(sizes, medians)
            except Exception as exc:  # big_O's own failure is a result, not a crash
                bo = f"error: {type(exc).__name__}"
            other = ", ".join(
                f"{m} {swept.verdict(m)} (truth {cls})" for m, cls in w.metrics
            )
            k = "—"
            if fit is not None and fit.exponent is not None:
                k = f"{fit.exponent:.2f}"
            row = Row(name, w.expected, tuple(sorted(w.acceptable)), swept.verdict(), k,
                      med_cls, bo, other, swept.elapsed_s)
            log(f"accuracy: {name}: expected {w.expected}, quadscope {row.quadscope} "
                f"(medians {med_cls}), big_O {bo} [{swept.elapsed_s:.1f} s]")
            rows.append(row)
    return rows


def kind(row: Row, verdict: str) -> str:
    verdict = verdict.split(" (")[0]  # drop a note such as "(2 classes unfittable)"
    return WORKLOADS[row.name].verdict_kind(verdict) if verdict in _KNOWN else "wrong"


_KNOWN = {*NAMES, INCONCLUSIVE}


def counts(rows: list[Row], attr: str) -> dict[str, int]:
    out = {"correct": 0, "inconclusive": 0, "wrong": 0}
    for r in rows:
        out[kind(r, getattr(r, attr))] += 1
    return out


def markdown(rows: list[Row], repeat: int) -> str:
    mark = {"correct": "✓", "inconclusive": "?", "wrong": "✗"}

    def cell(r: Row, attr: str) -> str:
        v = getattr(r, attr)
        return f"{v} {mark[kind(r, v)]}"

    body = table(
        ["workload", "expected (accepted)", "quadscope", "k", "quadscope on medians", "big_O",
         "other metrics (quadscope)"],
        [[r.name, f"{r.expected} ({', '.join(r.acceptable)})", cell(r, "quadscope"),
          r.exponent, cell(r, "quadscope_medians"), cell(r, "big_o"), r.other or "—"]
         for r in rows],
    )
    summary = table(
        ["classifier", "correct ✓", "inconclusive ?", "confidently wrong ✗"],
        [[label, c["correct"], c["inconclusive"], c["wrong"]]
         for label, c in (("quadscope (all runs)", counts(rows, "quadscope")),
                           ("quadscope (medians)", counts(rows, "quadscope_medians")),
                           ("big_O 0.11.0 (medians)", counts(rows, "big_o")))],
    )
    total = sum(r.sweep_s for r in rows)
    return (f"{len(rows)} workloads, each swept once over its suggested sizes with "
            f"`--repeat {repeat}` and one warm-up ({total:.0f} s of sweeping); all three "
            "classifiers read that same sweep's wall_s.\n\n" + summary + "\n\n" + body)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--only", default="", help="comma-separated workload names")
    args = p.parse_args(argv)
    names = tuple(args.only.split(",")) if args.only else SUITE
    rows = measure(names, args.repeat)
    print(markdown(rows, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
