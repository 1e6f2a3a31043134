"""Harness overhead: quadscope measuring /bin/true against `hyperfine -N`, same machine, same run.

Rounds alternate the two tools (quadscope first in even rounds, hyperfine
first in odd ones) so drift on this shared machine hits both alike. In each
round each tool runs /bin/true `--runs` times after a few warm-ups:

* hyperfine: `hyperfine -N --warmup 5 --runs R --export-json F /bin/true`;
  its measured time is the JSON's median (and mean) of `times`; its harness
  time per run is the whole hyperfine process's wall time / R.
* quadscope: `run_sweep` in accumulate mode (`--accumulate --runs R` on
  /bin/true) with the real `ProcessExecutor` (rusage counters, no perf) and a
  scratch store, every run written as it ends, as `quadscope run` does; its
  measured time is the median (and mean) of the stored runs' wall_s; its
  harness time per run is run_sweep's wall time / R.

* executor (for the record): `ProcessExecutor.execute` called R times in a
  loop, no sweep and no store, to show where quadscope's harness time goes.

Reported: medians over rounds, and the ratios quadscope / hyperfine.
Goal: (a) the measured-time ratio ≤ 1.05.

usage: .venv/bin/python bench/overhead.py [--rounds 15] [--runs 100]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import log, scratch_store, sweep, table

from quadscope.measure.launcher import ProcessExecutor
from quadscope.measure.meters import NoCounters
from quadscope.run.spec import SweepSpec

TRUE = "/bin/true"


@dataclass(frozen=True, slots=True)
class Round:
    tool: str
    median_s: float
    mean_s: float
    harness_per_run_s: float


def hyperfine_round(runs: int) -> Round:
    exe = shutil.which("hyperfine")
    if exe is None:
        raise SystemExit("hyperfine is not installed: run scripts/setup "
                         "(apt-get install hyperfine)")
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-") as tmp:
        out = Path(tmp) / "hf.json"
        t0 = time.monotonic()
        subprocess.run([exe, "-N", "--style", "none", "--warmup", "5", "--runs", str(runs),
                        "--export-json", str(out), TRUE], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.monotonic() - t0
        res = json.loads(out.read_text())["results"][0]
    return Round("hyperfine", float(res["median"]), float(res["mean"]), elapsed / runs)


def quadscope_round(runs: int) -> Round:
    with scratch_store() as store:
        # warm-up launches, as hyperfine's --warmup 5 (accumulate mode has none of its own)
        sweep(SweepSpec(command=(TRUE,), mode="accumulate", runs=5, name="overhead warm-up"),
              store)
        swept = sweep(SweepSpec(command=(TRUE,), mode="accumulate", runs=runs,
                                name="overhead /bin/true"), store)
    walls = [r.measurement.wall_s for r in swept.analysis.measured()]
    return Round("quadscope", statistics.median(walls), statistics.mean(walls),
                 swept.elapsed_s / runs)


def executor_round(runs: int) -> Round:
    """ProcessExecutor.execute alone, no sweep and no store: where quadscope's harness time goes."""
    executor = ProcessExecutor(NoCounters())
    for _ in range(5):
        executor.execute([TRUE], None)
    t0 = time.monotonic()
    walls = [executor.execute([TRUE], None).wall_s for _ in range(runs)]
    elapsed = time.monotonic() - t0
    return Round("executor", statistics.median(walls), statistics.mean(walls), elapsed / runs)


def measure(rounds: int, runs: int) -> list[Round]:
    out: list[Round] = []
    for k in range(rounds):
        order = ((quadscope_round, hyperfine_round, executor_round) if k % 2 == 0
                 else (hyperfine_round, executor_round, quadscope_round))
        for fn in order:
            r = fn(runs)
            log(f"overhead: round {k + 1}/{rounds} {r.tool}: median {r.median_s * 1e3:.3f} ms, "
                f"harness {r.harness_per_run_s * 1e3:.3f} ms/run")
            out.append(r)
    return out


def summary(rounds: list[Round]) -> dict[str, dict[str, float]]:
    by: dict[str, dict[str, float]] = {}
    for tool in ("quadscope", "hyperfine", "executor"):
        rs = [r for r in rounds if r.tool == tool]
        by[tool] = {
            "median_s": statistics.median(r.median_s for r in rs),
            "mean_s": statistics.median(r.mean_s for r in rs),
            "harness_per_run_s": statistics.median(r.harness_per_run_s for r in rs),
        }
    return by


def markdown(rounds: list[Round], runs: int) -> str:
    s = summary(rounds)
    q, h, e = s["quadscope"], s["hyperfine"], s["executor"]
    n_rounds = len(rounds) // 3
    # Each round's quadscope and hyperfine ran back to back: their ratio cancels the
    # machine's drift between rounds, which on this shared host is ±20%.
    qs = [r for r in rounds if r.tool == "quadscope"]
    hs = [r for r in rounds if r.tool == "hyperfine"]
    paired = statistics.median(a.median_s / b.median_s for a, b in zip(qs, hs, strict=True))
    rows = [
        ["(a) measured wall time of /bin/true, median of per-round ratios", "", "",
         f"**{paired:.3f}**"],
        ["(a) measured wall time of /bin/true, median", f"{q['median_s'] * 1e3:.3f} ms",
         f"{h['median_s'] * 1e3:.3f} ms", f"**{q['median_s'] / h['median_s']:.3f}**"],
        ["(a) measured wall time of /bin/true, mean", f"{q['mean_s'] * 1e3:.3f} ms",
         f"{h['mean_s'] * 1e3:.3f} ms", f"{q['mean_s'] / h['mean_s']:.3f}"],
        ["(b) total harness wall time per run", f"{q['harness_per_run_s'] * 1e3:.3f} ms",
         f"{h['harness_per_run_s'] * 1e3:.3f} ms",
         f"**{q['harness_per_run_s'] / h['harness_per_run_s']:.3f}**"],
        ["(b′) harness per run, ProcessExecutor alone (no sweep, no store)",
         f"{e['harness_per_run_s'] * 1e3:.3f} ms", f"{h['harness_per_run_s'] * 1e3:.3f} ms",
         f"{e['harness_per_run_s'] / h['harness_per_run_s']:.3f}"],
    ]
    return (f"{n_rounds} interleaved rounds × {runs} runs of /bin/true per tool; each figure is "
            "the median over rounds of that round's statistic; the first row pairs the two "
            "tools round by round. Goal for (a): ratio ≤ 1.05.\n\n"
            + table(["", "quadscope", "hyperfine -N", "quadscope / hyperfine"], rows))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--runs", type=int, default=100)
    args = p.parse_args(argv)
    rounds = measure(args.rounds, args.runs)
    print(markdown(rounds, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
