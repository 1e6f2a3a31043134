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
                                                   [--startup-n 1]
       .venv/bin/python bench/time_noise.py report IN.json [IN.json ...] [--startup-n 1]

With `--startup-n N`, collect also runs each program at size N, interleaved with its
grid as `quadscope run` plans the start-up size, and report fits each program twice on
the same runs: the start-up runs ignored, and used as the fit uses them.
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


def collect(out: str, names: tuple[str, ...], repeat: int, startup_n: int | None) -> None:
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    rows = []
    with scratch_store() as store:
        for prog in programs():
            if names and prog.name not in names:
                continue
            spec = SweepSpec(command=prog.command, shell=prog.shell, setup=prog.setup,
                             repeat=repeat, warmup=1, timeout_s=120.0,
                             sizes=((startup_n,) if startup_n else ()) + prog.sizes,
                             meter="time", name=f"time-noise {prog.name}")
            sw = session.start(spec, store=store, clock=SystemClock(),
                               machine=session.Machine.real())
            runs = [r for r in store.runs(sw.id) if not r.warmup and r.variant == "A"]
            rows.append({"name": prog.name, "truth": sorted(prog.truth),
                         "runs": [{"seq": r.seq, "n": r.size_n, "repeat": r.repeat,
                                   **{m: r.value(m) for m in METRICS}} for r in runs]})
            log(f"time-noise: {prog.name}: {len(runs)} runs")
    Path(out).write_text(json.dumps(rows, indent=1))


def fits_of(runs: list[dict[str, float]], startup_n: int | None = None) -> dict[str, Fit]:
    """wall_s and cpu_s fitted as `quadscope run` fits them, the runs in the order they ran;
    `startup_n`: the size whose runs measured the start-up apart (`fit_metric`'s)."""
    from quadscope.analyse.fitting import fit_metric

    runs = sorted(runs, key=lambda r: r["seq"])
    return {m: fit_metric(m, [r["n"] for r in runs], [r[m] for r in runs], startup_n=startup_n)
            for m in ("wall_s", "cpu_s")}


def _verdict(fit: Fit | None) -> object:
    from accuracy import Verdict

    return None if fit is None else Verdict(fit.cls, fit.at_least, fit.at_most)


def report(paths: list[str], startup_n: int | None) -> None:
    """Each program's wall, CPU and headline time verdict (`headline.time_fit`), judged, and
    the counts of right class / right bracket / bare / wrong per file. With `startup_n`,
    each is fitted twice on the same runs: the start-up runs ignored (left out, as before
    they were planned) and used as `fit_metric` uses them."""
    from accuracy import _k, judged

    from quadscope.analyse.headline import time_fit

    ways = (("ignored", None), ("start-up", startup_n)) if startup_n else (("", None),)
    for path in paths:
        print(f"## {path}\n")
        head = "| program | truth | " + " | ".join(
            f"{w} wall | k | {w} CPU | k | {w} headline" for w, _ in ways) + " |"
        print(head)
        print("|---" * (2 + 5 * len(ways)) + "|")
        tally: dict[str, dict[str, int]] = {}
        widths: dict[str, list[float]] = {}
        for row in json.loads(Path(path).read_text()):
            cells = []
            for way, n0 in ways:
                runs = row["runs"] if n0 else [r for r in row["runs"]
                                               if not startup_n or r["n"] != startup_n]
                fits = fits_of(runs, n0)
                lead = time_fit(fits)
                for name, fit in (("wall", fits["wall_s"]), ("cpu", fits["cpu_s"]),
                                  ("lead", lead)):
                    kind = judged(set(row["truth"]), _verdict(fit))  # type: ignore[arg-type]
                    key = f"{way} {name}".strip()
                    tally.setdefault(key, {}).setdefault(kind, 0)
                    tally[key][kind] += 1
                    text = "—" if fit is None else _verdict(fit).text()  # type: ignore[attr-defined]
                    used = f" [{fit.startup}]" if fit is not None and fit.startup else ""
                    cells.append(f"{text} {kind}{used}")
                    if name != "lead":
                        cells.append(_k(fit))
                        if fit is not None and fit.exponent_ci is not None:
                            lo, hi = fit.exponent_ci
                            widths.setdefault(key, []).append(hi - lo)
            print(f"| {row['name']} | {'/'.join(row['truth'])} | {' | '.join(cells)} |")
        print()
        for name, counts in tally.items():
            med = sorted(widths.get(name, [0.0]))[len(widths.get(name, [0.0])) // 2]
            extra = f" (median k width {med:.2f})" if name in widths else ""
            print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + extra)
        print()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("out")
    c.add_argument("--busy", action="store_true")
    c.add_argument("--only", default="")
    c.add_argument("--repeat", type=int, default=3)
    c.add_argument("--startup-n", type=int, default=None,
                   help="also run each program at this size (its start-up), interleaved")
    r = sub.add_parser("report")
    r.add_argument("paths", nargs="+")
    r.add_argument("--startup-n", type=int, default=None,
                   help="fit with this size's runs used as the start-up and ignored")
    args = p.parse_args(argv)
    if args.cmd == "collect":
        names = tuple(n for n in args.only.split(",") if n)
        with busy_load(args.busy):
            collect(args.out, names, args.repeat, args.startup_n)
    else:
        report(args.paths, args.startup_n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
