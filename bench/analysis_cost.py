"""What a user waits for after the runs: `quadscope show` (re-fit and print a stored sweep)
at this checkout against the same command at an earlier commit (the named peer), side by
side on the same stored sweeps.

The sweeps are made once, by `quadscope run` as a user runs it, into a scratch database:
accuracy-suite workloads in adaptive mode from their smallest suggested size, with the
default meter (time, then counting where time left the class open) and with
`--meter instructions`. Each sweep is then shown ROUNDS times by each tree in turn
(A B A B ...: the ratio is taken pair by pair, so a drift in the machine's speed moves
both), each as a whole process (`python -m quadscope show`, its imports included). The
table gives each tree's median seconds, the median of the pairwise ratios
(baseline / this checkout: how many times faster this checkout shows), and whether both
trees printed the same report, every line of it.

usage: .venv/bin/python bench/analysis_cost.py [--baseline REV] [--rounds N] [--quick] [--busy]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import busy_load, log, machine, table

from quadscope.workloads import WORKLOADS, build

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
WORKLOAD_NAMES = ("cubic", "first_fit", "sort", "heap_sort", "hash_insert", "linear_offset")
QUICK = ("cubic", "sort", "linear_offset")
INTRO = ("`bench/analysis_cost.py`: each sweep made once by `quadscope run --budget 30` "
         "(adaptive, from the workload's smallest suggested size, the default meter and "
         "`--meter instructions`), then shown by this checkout and by the baseline in turn, "
         "each `python -m quadscope show` a whole process, imports included (about 1.2 s "
         "of the shortest). The ratio is taken pair by pair; \"same report\" compares "
         "every line both printed.")
METERS = ("auto", "instructions")


def _quadscope(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "80"}
    return subprocess.run([PY, "-m", "quadscope", *args], env=env, capture_output=True,
                          text=True, timeout=900, check=False)


def record(db: Path, names: Sequence[str]) -> list[tuple[str, int]]:
    """(label, sweep id) of each sweep made, by this checkout's `quadscope run`."""
    made = []
    for name in names:
        w = WORKLOADS[name]
        argv = [str(a) for a in w.argv(build(name))]
        for meter in METERS:
            label = f"{name} ({meter})"
            done = _quadscope(ROOT / "src", "run", "--db", str(db), "--budget", "30",
                              "--start", str(w.sizes[0]), "--meter", meter, "--name", label,
                              "--json", str(db.with_suffix(".json")), "--", *argv)
            if done.returncode not in (0, 8, 9):
                raise SystemExit(f"analysis-cost: {label}: quadscope run exited "
                                 f"{done.returncode}: {done.stderr.strip()[-400:]}")
            made.append((label, int(json.loads(db.with_suffix(".json").read_text())["sweep"]["id"])))
            log(f"analysis-cost: recorded {label} as sweep {made[-1][1]}")
    return made


def _show(src: Path, db: Path, sweep_id: int) -> tuple[float, str]:
    t0 = time.monotonic()
    done = _quadscope(src, "show", "--db", str(db), str(sweep_id))
    elapsed = time.monotonic() - t0
    if done.returncode not in (0, 8, 9):
        raise SystemExit(f"analysis-cost: quadscope show {sweep_id} at {src} exited "
                         f"{done.returncode}: {done.stderr.strip()[-400:]}")
    return elapsed, done.stdout


def compare(db: Path, made: Sequence[tuple[str, int]], base_src: Path,
            rounds: int) -> list[list[object]]:
    rows: list[list[object]] = []
    for label, sweep_id in made:
        mine, theirs, ratios = [], [], []
        same = True
        for _ in range(rounds):
            t_new, v_new = _show(ROOT / "src", db, sweep_id)
            t_old, v_old = _show(base_src, db, sweep_id)
            mine.append(t_new)
            theirs.append(t_old)
            ratios.append(t_old / t_new)
            same = same and v_new == v_old
        rows.append([label, f"{statistics.median(theirs):.2f}", f"{statistics.median(mine):.2f}",
                     f"{statistics.median(ratios):.2f}×", "yes" if same else "no"])
        log(f"analysis-cost: {label}: {rows[-1][1]} s -> {rows[-1][2]} s ({rows[-1][3]}), "
            f"same report: {rows[-1][4]}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="672fa3f",
                        help="the commit to compare with (default 672fa3f, before the "
                             "faster fits)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--busy", action="store_true",
                        help="under ../shared/tools/busy --cores 1 --memory 64")
    args = parser.parse_args(argv)
    names = QUICK if args.quick else WORKLOAD_NAMES
    with tempfile.TemporaryDirectory(prefix="quadscope-analysis-cost-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base),
                        args.baseline], check=True)
        try:
            db = Path(tmp) / "sweeps.db"
            made = record(db, names)
            with busy_load(args.busy):
                rows = compare(db, made, base / "src", args.rounds)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                           check=False)
    ratios = [float(str(r[3]).rstrip("×")) for r in rows]
    m = machine()
    if not args.busy:
        print(INTRO + "\n")
    load = "Under `busy --cores 1 --memory 64`" if args.busy else "Quiet"
    print(f"**{load}** ({m['date']}, "
          f"{m['nproc']} CPUs, {m['cpu']}; baseline {args.baseline}; {args.rounds} rounds "
          f"each): median speed-up **{statistics.median(ratios):.2f}×** over {len(rows)} "
          f"sweeps, the same report on {sum(r[4] == 'yes' for r in rows)} of {len(rows)}.\n")
    print(table(["sweep", f"show at {args.baseline} (s)", "show here (s)",
                 "speed-up (median of pairs)", "same report"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
