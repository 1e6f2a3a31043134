"""Per-run times of the real programs on a loaded machine, kept for refitting (issue 25).

Contract: `collect` sweeps each real program (bench/real_programs.py) over its
fixed grid with the time meter alone (no counting), as `quadscope run` does,
and writes every run (size, repeat, wall, user, sys, cpu) to a JSON file;
`--busy` runs it under ../shared/tools/busy --cores 1 --memory 64. `report`
refits the saved runs with quadscope's fit (`fit_metric`) and prints, per
program and metric, the class and k's interval; nothing is measured then. The
point is to judge a change of the estimator on the same measured runs,
before and after.

usage: .venv/bin/python bench/time_noise.py collect OUT.json [--busy] [--only a,b] [--repeat 3]
       .venv/bin/python bench/time_noise.py report IN.json [IN.json ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import busy_load, log, scratch_store
from real_programs import programs

from quadscope.model import Fit
from quadscope.run.spec import SweepSpec

METRICS = ("wall_s", "cpu_s", "user_s", "sys_s")


def collect(out: str, names: tuple[str, ...], repeat: int) -> None:
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    rows = []
    with scratch_store() as store:
        for prog in programs():
            if names and prog.name not in names:
                continue
            spec = SweepSpec(command=prog.command, shell=prog.shell, setup=prog.setup,
                             repeat=repeat, warmup=1, timeout_s=120.0, sizes=prog.sizes,
                             meter="time", name=f"time-noise {prog.name}")
            sw = session.start(spec, store=store, clock=SystemClock(),
                               machine=session.Machine.real())
            runs = [r for r in store.runs(sw.id) if not r.warmup and r.variant == "A"]
            rows.append({"name": prog.name, "truth": sorted(prog.truth),
                         "runs": [{"seq": r.seq, "n": r.size_n, "repeat": r.repeat,
                                   **{m: r.value(m) for m in METRICS}} for r in runs]})
            log(f"time-noise: {prog.name}: {len(runs)} runs")
    Path(out).write_text(json.dumps(rows, indent=1))


def fits_of(runs: list[dict[str, float]]) -> dict[str, Fit]:
    """wall_s and cpu_s fitted as `quadscope run` fits them, the runs in the order they ran."""
    from quadscope.analyse.fitting import fit_metric

    runs = sorted(runs, key=lambda r: r["seq"])
    return {m: fit_metric(m, [r["n"] for r in runs], [r[m] for r in runs])
            for m in ("wall_s", "cpu_s")}


def report(paths: list[str]) -> None:
    """Each program's wall, CPU and headline time verdict (`headline.time_fit`), judged, and
    the counts of right class / right bracket / bare / wrong per file."""
    from accuracy import Verdict, _k, judged

    from quadscope.analyse.headline import time_fit

    for path in paths:
        print(f"## {path}\n")
        print("| program | truth | wall time | k | CPU time | k | headline time |")
        print("|---|---|---|---|---|---|---|")
        tally: dict[str, dict[str, int]] = {}
        for row in json.loads(Path(path).read_text()):
            fits = fits_of(row["runs"])
            lead = time_fit(fits)
            cells = []
            for name, fit in (("wall", fits["wall_s"]), ("cpu", fits["cpu_s"]), ("lead", lead)):
                v = None if fit is None else Verdict(fit.cls, fit.at_least, fit.at_most)
                kind = judged(set(row["truth"]), v)
                tally.setdefault(name, {}).setdefault(kind, 0)
                tally[name][kind] += 1
                cells.append(f"{v.text() if v else '—'} {kind}")
                if name != "lead":
                    cells.append(_k(fit))
            lead_metric = "—" if lead is None else lead.metric
            print(f"| {row['name']} | {'/'.join(row['truth'])} | {' | '.join(cells)} "
                  f"({lead_metric}) |")
        print()
        for name, counts in tally.items():
            print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        print()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("out")
    c.add_argument("--busy", action="store_true")
    c.add_argument("--only", default="")
    c.add_argument("--repeat", type=int, default=3)
    r = sub.add_parser("report")
    r.add_argument("paths", nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "collect":
        names = tuple(n for n in args.only.split(",") if n)
        with busy_load(args.busy):
            collect(args.out, names, args.repeat)
    else:
        report(args.paths)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
