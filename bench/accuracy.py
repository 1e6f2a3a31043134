"""Accuracy: quadscope's verdicts against big_O's on the same measured data.

Every accuracy-suite workload (quadscope.workloads.SUITE, programs of known
complexity) is swept twice with the real executor through `run_sweep` +
`analyse`: over its suggested sizes, and in adaptive mode (the default
protocol) with the default 30 s budget from its smallest size. The wall_s data
of each sweep is then classified three ways:

* quadscope — the verdict `analyse` gives (fit_metric over every run);
* quadscope (medians) — `fit_metric` over the median per size, the same
  points big_O gets, so the two are compared on exactly equal input;
* big_O 0.11.0 — `big_o.infer_big_o_class(ns, medians)`, its documented entry
  point for externally measured times. Its classes map to ours (Constant→1,
  Logarithmic→log n, Linear→n, Linearithmic→n log n, Quadratic→n^2,
  Cubic→n^3, Exponential→c^n; Polynomial a·n^k→ the class of the nearest
  k in {0, ½, 1, 2, 3}). big_O has no "inconclusive".

Each verdict is one of: a right class (settled and in the workload's
`acceptable` set); a right bracket (not settled, but the bracket `at_least` …
`at_most` contains an acceptable class and spans at most two neighbouring
classes); bare (not settled, and no bracket that narrow); confidently wrong (a
settled class outside `acceptable`, or a bracket that excludes every acceptable
class); or no verdict (nothing could be fitted). big_O only ever gives a class.
Goal, in both modes: 0 confidently wrong, 0 without a verdict, at most 1 in 6
bare. `--quick` sweeps a third of the suite with a 10 s adaptive budget.

`--real` sweeps real programs instead (bench/real_programs.py: CPython,
coreutils, sqlite3, mawk, C), each as `quadscope run` does through the
session with the default meter (`auto`), over its fixed grid and in adaptive
mode with a 20 s budget; each row judges the work verdict (the instructions
counted, where time alone left the class open), the time verdict (the
headline's time fit), what the headline and gates lead with, and big_O on
the wall-time medians. `--busy` runs everything under
`../shared/tools/busy --cores 1 --memory 64`; `--save FILE` keeps the rows and
`--side-by-side QUIET.json BUSY.json` prints BENCHMARKS.md's subsection.
`--suite-as-run` sweeps the C suite the same way (30 s adaptive budget) and
judges its rows as `--real` does.

usage: .venv/bin/python bench/accuracy.py [--quick] [--repeat 3] [--only name,name]
       .venv/bin/python bench/accuracy.py --real [--busy] [--save rows.json]
       .venv/bin/python bench/accuracy.py --side-by-side quiet.json busy.json
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import busy_load, log, medians_by_size, scratch_store, sweep, table
from real_programs import Program, programs

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.errors import FitRefusedError, QuadscopeError
from quadscope.model import Fit
from quadscope.run.spec import SweepSpec
from quadscope.store import Store
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


RIGHT_CLASS, RIGHT_BRACKET, BARE, WRONG, NONE = (
    "right class", "right bracket", "bare", "confidently wrong", "no verdict")
KINDS = (RIGHT_CLASS, RIGHT_BRACKET, BARE, WRONG, NONE)
MARK = {RIGHT_CLASS: "✓", RIGHT_BRACKET: "✓[]", BARE: "?", WRONG: "✗", NONE: "∅"}
# Adaptive mode's default budget (`quadscope run --budget`), and --quick's.
BUDGET_S = 30.0
QUICK_BUDGET_S = 10.0
# --quick's workloads: one of each kind of trouble the suite holds.
QUICK = ("constant", "linear_offset", "sort", "linear_quadratic", "fibonacci", "cache_step",
         "short_linear")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One classifier's answer: a class, or a bracket (at_least, at_most), or nothing."""

    cls: str
    at_least: str = ""
    at_most: str = ""

    def text(self) -> str:
        if self.cls != INCONCLUSIVE or not self.at_least:
            return self.cls
        return f"{self.at_least} … {self.at_most}" if self.at_least != self.at_most else self.cls


def kind(name: str, v: Verdict | None) -> str:
    """Where one verdict falls (see the module docstring), on workload `name`'s truth."""
    return judged(WORKLOADS[name].acceptable, v)


def judged(ok: frozenset[str] | set[str], v: Verdict | None) -> str:
    """Where one verdict falls (see the module docstring), given the classes that are true."""
    if v is None:
        return NONE
    if v.cls != INCONCLUSIVE:
        return RIGHT_CLASS if v.cls in ok else WRONG
    if v.at_least not in REGISTRY or v.at_most not in REGISTRY:
        return BARE
    lo, hi = REGISTRY.index(v.at_least), REGISTRY.index(v.at_most)
    inside = [c for c in ok if lo <= REGISTRY.index(c) <= hi]
    if not inside:
        return WRONG
    return RIGHT_BRACKET if hi - lo <= 1 else BARE


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    mode: str  # "sizes" or "adaptive"
    quadscope: Verdict | None
    exponent: str
    quadscope_medians: Verdict | None
    big_o: Verdict | None
    other: str  # other metrics' verdicts vs their truth
    sizes: str
    sweep_s: float


def _verdict(fit: Fit | None) -> Verdict | None:
    return None if fit is None else Verdict(fit.cls, fit.at_least, fit.at_most)


def _classify(name: str, mode: str, spec: SweepSpec, store: Store) -> Row:
    w = WORKLOADS[name]
    swept = sweep(spec, store)
    fit = swept.analysis.fits["A"].get("wall_s")
    sizes, medians = medians_by_size(swept.analysis)
    try:
        med = _verdict(fit_metric("wall_s", sizes, medians))
    except FitRefusedError:
        med = None
    try:
        bo: Verdict | None = Verdict(big_o_verdict(sizes, medians).split(" (")[0])
    except Exception:  # big_O's own failure is a result (no verdict), not a crash
        bo = None
    other = ", ".join(f"{m} {swept.verdict(m)} (truth {cls})" for m, cls in w.metrics)
    k = "—" if fit is None or fit.exponent is None else f"{fit.exponent:.2f}"
    span = f"{sizes[0]}..{sizes[-1]} ({len(sizes)})" if sizes else "—"
    row = Row(name, mode, _verdict(fit), k, med, bo, other, span, swept.elapsed_s)
    log(f"accuracy: {name} [{mode}]: expected {w.expected}, quadscope "
        f"{row.quadscope.text() if row.quadscope else '∅'} ({kind(name, row.quadscope)}), "
        f"big_O {bo.cls if bo else '∅'} [{swept.elapsed_s:.1f} s, n {span}]")
    return row


def measure(names: tuple[str, ...], repeat: int, budget_s: float) -> list[Row]:
    rows = []
    with scratch_store() as store:
        for name in names:
            w = WORKLOADS[name]
            path = build(name)
            fixed = SweepSpec(command=w.argv(path), name=f"accuracy {name}", sizes=w.sizes,
                              repeat=repeat, warmup=1, timeout_s=30.0)
            rows.append(_classify(name, "sizes", fixed, store))
            adaptive = SweepSpec(command=w.argv(path), name=f"accuracy {name} adaptive",
                                 mode="adaptive", budget_s=budget_s, start_n=w.sizes[0],
                                 repeat=repeat, warmup=1)
            rows.append(_classify(name, "adaptive", adaptive, store))
    return rows


def counts(rows: list[Row], attr: str) -> dict[str, int]:
    out = dict.fromkeys(KINDS, 0)
    for r in rows:
        out[kind(r.name, getattr(r, attr))] += 1
    return out


def markdown(rows: list[Row], repeat: int, budget_s: float) -> str:
    def cell(r: Row, attr: str) -> str:
        v = getattr(r, attr)
        return f"{v.text() if v else '—'} {MARK[kind(r.name, v)]}"

    body = table(
        ["workload", "mode", "expected (accepted)", "n", "quadscope", "k",
         "quadscope on medians", "big_O", "other metrics (quadscope)"],
        [[r.name, r.mode, f"{WORKLOADS[r.name].expected} "
          f"({', '.join(sorted(WORKLOADS[r.name].acceptable))})", r.sizes,
          cell(r, "quadscope"), r.exponent, cell(r, "quadscope_medians"), cell(r, "big_o"),
          r.other or "—"] for r in rows],
    )
    summary_rows = []
    for mode in ("sizes", "adaptive"):
        of = [r for r in rows if r.mode == mode]
        for label, attr in (("quadscope (all runs)", "quadscope"),
                            ("quadscope (medians)", "quadscope_medians"),
                            ("big_O 0.11.0 (medians)", "big_o")):
            c = counts(of, attr)
            summary_rows.append([mode, label, *(c[k] for k in KINDS)])
    summary = table(["mode", "classifier", *(f"{k} {MARK[k]}" for k in KINDS)], summary_rows)
    total = sum(r.sweep_s for r in rows)
    names = len({r.name for r in rows})
    return (f"{names} workloads, each swept over its suggested sizes with `--repeat {repeat}` "
            f"and one warm-up, and in adaptive mode from its smallest size with a "
            f"{budget_s:.0f} s budget ({total:.0f} s of sweeping); every classifier reads the "
            "same sweep's wall_s. Goal in both modes: 0 confidently wrong, 0 without a "
            "verdict, at most 1 in 6 bare.\n\n" + summary + "\n\n" + body)


# Real programs (bench/real_programs.py), swept as `quadscope run` sweeps them: the session,
# the default meter (`auto`: the work is counted when time alone leaves the class open).
REAL_BUDGET_S = 20.0


@dataclass(frozen=True, slots=True)
class RealRow:
    name: str
    mode: str
    truth: frozenset[str]
    work: Verdict | None  # the instructions fit, when the work was counted
    work_k: str
    time: Verdict | None  # the headline's time fit (`headline.time_fit`)
    time_k: str
    lead: Verdict | None  # what the headline and the gates lead with (`headline.lead_fit`)
    big_o: Verdict | None  # big_O on the wall-time medians
    headline: str
    sizes: str
    counted: str  # sizes counted, or why none
    sweep_s: float


def _k(fit: Fit | None) -> str:
    if fit is None or fit.exponent is None:
        return "—"
    ci = fit.exponent_ci
    return f"{fit.exponent:.2f}" + ("" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]")


def _real_spec(prog: Program, mode: str, repeat: int, budget_s: float) -> SweepSpec:
    common = dict(command=prog.command, shell=prog.shell, setup=prog.setup, repeat=repeat,
                  warmup=1, timeout_s=120.0, name=f"accuracy {prog.name} {mode}")
    if mode == "sizes":
        return SweepSpec(sizes=prog.sizes, **common)  # type: ignore[arg-type]
    return SweepSpec(mode="adaptive", budget_s=budget_s, start_n=prog.sizes[0],
                     **common)  # type: ignore[arg-type]


def sweep_real(prog: Program, mode: str, store: Store, repeat: int, budget_s: float) -> RealRow:
    """One real program swept as `quadscope run` does (session, default meter), then judged."""
    import time

    from quadscope.analyse.analysis import analyse
    from quadscope.analyse.headline import lead_fit, time_fit
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    spec = _real_spec(prog, mode, repeat, budget_s)
    t0 = time.monotonic()
    sw = session.start(spec, store=store, clock=SystemClock(), machine=session.Machine.real())
    elapsed = time.monotonic() - t0
    analysis = analyse(sw, store.runs(sw.id))
    fits = analysis.fits.get("A", {})
    work_metric = analysis.work_metric
    work = fits.get(work_metric) if work_metric else None
    timed, lead = time_fit(fits), lead_fit(fits, work_metric)
    sizes, medians = medians_by_size(analysis)
    grid = [(n, m) for n, m in zip(sizes, medians, strict=True) if n != sw.startup_n]
    try:  # big_O sees the grid alone: it has no start-up to tell apart
        bo: Verdict | None = Verdict(big_o_verdict([n for n, _ in grid],
                                                   [m for _, m in grid]).split(" (")[0])
    except Exception:  # big_O's own failure is a result (no verdict), not a crash
        bo = None
    counted = sorted({r.size_n for r in analysis.measured("A")
                      if work_metric and r.value(work_metric) is not None})
    row = RealRow(prog.name, mode, prog.truth, _verdict(work), _k(work), _verdict(timed),
                  _k(timed), _verdict(lead), bo, analysis.verdict,
                  f"{sizes[0]}..{sizes[-1]} ({len(sizes)})" if sizes else "—",
                  f"{len(counted)} ({counted[0]}..{counted[-1]})" if counted else "none",
                  elapsed)
    log(f"accuracy real: {prog.name} [{mode}] truth {prog.expected}: work "
        f"{row.work.text() if row.work else '—'} ({row.work_k}), time "
        f"{row.time.text() if row.time else '—'} ({row.time_k}) [{elapsed:.0f} s, n {row.sizes},"
        f" counted {row.counted}]\n    {analysis.verdict}")
    return row


def suite_programs(names: tuple[str, ...] = SUITE) -> tuple[Program, ...]:
    """The C suite's workloads as programs swept the way `--real` sweeps them: through the
    session with the default meter, judged on the work, the time and the headline."""
    return tuple(Program(n, WORKLOADS[n].acceptable, WORKLOADS[n].argv(build(n)),
                         WORKLOADS[n].sizes) for n in names)


def measure_real(names: tuple[str, ...], repeat: int, budget_s: float,
                 modes: tuple[str, ...], suite: bool = False) -> list[RealRow]:
    every = suite_programs() if suite else programs()
    progs = [p for p in every if not names or p.name in names]
    rows = []
    with scratch_store() as store:
        for prog in progs:
            for mode in modes:
                try:
                    rows.append(sweep_real(prog, mode, store, repeat, budget_s))
                except QuadscopeError as e:  # a failed sweep is a row without a verdict
                    log(f"accuracy real: {prog.name} [{mode}]: {e}")
                    rows.append(RealRow(prog.name, mode, prog.truth, None, "—", None, "—", None,
                                        None, f"failed: {e}", "—", "none", 0.0))
    return rows


def markdown_real(rows: list[RealRow], repeat: int, budget_s: float, load: str,
                  what: str = "Real programs") -> str:
    def cell(r: RealRow, v: Verdict | None, empty: str = "—") -> str:
        return f"{v.text()} {MARK[judged(r.truth, v)]}" if v else empty

    summary_rows = []
    for mode in sorted({r.mode for r in rows}, reverse=True):
        of = [r for r in rows if r.mode == mode]
        for label, attr in (("work (instructions)", "work"), ("time", "time"),
                            ("headline (what gates judge)", "lead"),
                            ("big_O 0.11.0 (wall medians)", "big_o")):
            got = _summary_counts(of, mode, attr)
            summary_rows.append([load, mode, label, *(got[k] for k in KINDS)])
    summary = table(["load", "mode", "verdict", *(f"{k} {MARK[k]}" for k in KINDS)],
                    summary_rows)
    body = table(
        ["program", "mode", "truth", "n", "work", "k (work)", "time", "k (time)", "big_O",
         "counted sizes", "s"],
        [[r.name, r.mode, "/".join(sorted(r.truth)), r.sizes, cell(r, r.work, "not counted"),
          r.work_k, cell(r, r.time), r.time_k, cell(r, r.big_o), r.counted,
          f"{r.sweep_s:.0f}"] for r in rows])
    total = sum(r.sweep_s for r in rows)
    return (f"{what} ({load}), each swept as `quadscope run` sweeps it (the default "
            f"meter, `auto`) over its fixed grid with `--repeat {repeat}` and one warm-up, "
            f"and in adaptive mode from its smallest size with a {budget_s:.0f} s budget "
            f"({total:.0f} s in all). \"work\" counts only sweeps where the work was "
            "counted.\n\n" + summary + "\n\n" + body)


def _summary_counts(rows: list[RealRow], mode: str, attr: str) -> dict[str, int]:
    got = dict.fromkeys(KINDS, 0)
    for r in rows:
        v = getattr(r, attr)
        if r.mode == mode and not (attr == "work" and v is None and r.counted == "none"):
            got[judged(r.truth, v)] += 1
    return got


def save_rows(rows: list[RealRow], path: str) -> None:
    import json

    def plain(r: RealRow) -> dict[str, object]:
        d = {f: getattr(r, f) for f in RealRow.__slots__}  # type: ignore[attr-defined]
        d["truth"] = sorted(r.truth)
        for f in ("work", "time", "lead", "big_o"):
            v = getattr(r, f)
            d[f] = None if v is None else [v.cls, v.at_least, v.at_most]
        return d
    Path(path).write_text(json.dumps([plain(r) for r in rows], indent=1))


def load_rows(path: str) -> list[RealRow]:
    import json

    out = []
    for d in json.loads(Path(path).read_text()):
        d["truth"] = frozenset(d["truth"])
        for f in ("work", "time", "lead", "big_o"):
            d[f] = None if d[f] is None else Verdict(*d[f])
        out.append(RealRow(**d))
    return out


def real_section(quiet: list[RealRow], busy: list[RealRow], repeat: int,
                 budget_s: float) -> str:
    """The real programs' subsection: the two runs' summaries side by side, then each run's
    rows (BENCHMARKS.md §1)."""
    wrong = {load: sum(any(judged(r.truth, getattr(r, a)) == WRONG
                           for a in ("work", "time", "lead")) for r in rows)
             for load, rows in (("quiet", quiet), ("busy", busy))}
    return ("### Real programs: the work and the time (issue 25)\n\n"
            "Eleven programs nobody here wrote (bench/real_programs.py: CPython 3.11 through "
            "the real interpreter, coreutils, sqlite3, mawk, a C `strcat` builder and its "
            "`stpcpy` fix), each swept as `quadscope run` sweeps it, with the default meter "
            "(`auto`: the work is counted (under QEMU or Valgrind, no hardware counter "
            "here) when time alone leaves the class open, within the timed sweep's own "
            "cost), once on the machine as it was "
            "(\"quiet\": no load of its own; other jobs on the machine may run) and once under "
            "`../shared/tools/busy --cores 1 --memory 64` on top. Cells are quiet / busy. "
            f"Sweeps with a confidently wrong verdict (work, time or headline): "
            f"{wrong['quiet']} of {len(quiet)} quiet, {wrong['busy']} of {len(busy)} busy "
            "(goal: 0). Measured with `bench/accuracy.py --real --save "
            "quiet.json`, then `--real --busy --save busy.json`, and `--side-by-side "
            "quiet.json busy.json` (or as part of `bench/run_all.py --only 1`).\n\n"
            + side_by_side(quiet, busy) + "\n\n"
            + markdown_real(quiet, repeat, budget_s, "quiet") + "\n\n"
            + markdown_real(busy, repeat, budget_s, "busy --cores 1 --memory 64"))


def measure_real_both(repeat: int, budget_s: float) -> str:
    """The real programs quiet, then under busy: `real_section` of the two."""
    quiet = measure_real((), repeat, budget_s, ("sizes", "adaptive"))
    with busy_load(True):
        busy = measure_real((), repeat, budget_s, ("sizes", "adaptive"))
    return real_section(quiet, busy, repeat, budget_s)


def side_by_side(quiet: list[RealRow], busy: list[RealRow]) -> str:
    """The summary of a quiet and a busy run of the real programs, one row per verdict."""
    rows = []
    for mode in ("sizes", "adaptive"):
        for label, attr in (("work (instructions, where counted)", "work"), ("time", "time"),
                            ("headline (what gates judge)", "lead"),
                            ("big_O 0.11.0 (wall medians)", "big_o")):
            q, b = _summary_counts(quiet, mode, attr), _summary_counts(busy, mode, attr)
            rows.append([mode, label, *(f"{q[k]} / {b[k]}" for k in KINDS)])
    return table(["mode", "verdict", *(f"{k} {MARK[k]} (quiet / busy)" for k in KINDS)], rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true",
                   help=f"{len(QUICK)} workloads, a {QUICK_BUDGET_S:.0f} s adaptive budget")
    p.add_argument("--only", default="", help="comma-separated workload (or program) names")
    p.add_argument("--real", action="store_true",
                   help="the real programs (bench/real_programs.py) instead of the C suite")
    p.add_argument("--suite-as-run", action="store_true",
                   help="the C suite, each swept as --real sweeps (work, time, headline)")
    p.add_argument("--modes", default="sizes,adaptive", help="--real: sizes, adaptive or both")
    p.add_argument("--busy", action="store_true",
                   help="under ../shared/tools/busy --cores 1 --memory 64 throughout")
    p.add_argument("--save", default="", help="--real: also write the rows to this JSON file")
    p.add_argument("--side-by-side", nargs=2, metavar=("QUIET.json", "BUSY.json"),
                   help="print the real programs' section of two saved runs, and exit")
    args = p.parse_args(argv)
    if args.side_by_side:
        quiet, busy = (load_rows(f) for f in args.side_by_side)
        print(real_section(quiet, busy, args.repeat, REAL_BUDGET_S))
        return 0
    load = "busy --cores 1 --memory 64" if args.busy else "quiet"
    with busy_load(args.busy):
        if args.real or args.suite_as_run:
            names = tuple(x for x in args.only.split(",") if x)
            if args.suite_as_run and args.quick and not names:
                names = QUICK
            budget = BUDGET_S if args.suite_as_run else REAL_BUDGET_S
            rows_real = measure_real(names, args.repeat, budget,
                                     tuple(args.modes.split(",")), suite=args.suite_as_run)
            print(markdown_real(rows_real, args.repeat, budget, load,
                                "The C suite" if args.suite_as_run else "Real programs"))
            if args.save:
                save_rows(rows_real, args.save)
            return 0
        names = tuple(args.only.split(",")) if args.only else QUICK if args.quick else SUITE
        budget_s = QUICK_BUDGET_S if args.quick else BUDGET_S
        rows = measure(names, args.repeat, budget_s)
    print(markdown(rows, args.repeat, budget_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
