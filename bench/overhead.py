"""Harness overhead: quadscope measuring /bin/true against `hyperfine -N`, same machine, same run.

Each round runs three tools back to back, in an order that rotates from round
to round so drift on this shared machine hits all alike; each runs
`/bin/true 1` R times after 5 warm-ups:

* hyperfine: `hyperfine -N --warmup 5 --runs R --export-json F /bin/true 1`;
  its per-run cost is the whole hyperfine process's wall time / R, its
  measured time the JSON's mean.
* quadscope with counters: `run_sweep` (sizes mode, one size, 5 warm-ups, R
  repeats) with the `ProcessExecutor` and counter backend `choose_measuring`
  picks on this machine, and a scratch store, every run written as it ends, as
  `quadscope run` does; its per-run cost is run_sweep's wall time / R (launcher
  start, store, warm-ups included, as hyperfine's start and warm-ups are), its
  measured time the mean of the stored runs' wall_s.
* quadscope without counters: the same with `NoCounters` (`--no-perf`).

Both quadscope rows run with the no-orphans protection on, as it always is: each
run joins the launcher's cgroup where cgroup v2 is writable (else the launcher
reads its children list after every run); the cleanup in force is printed under
the table. Each run is forked straight into that cgroup (clone3); without clone3
the child joins it by writing cgroup.procs, whose first move after an idle spell
costs ~10 ms per launcher (an RCU grace period), spread here over 300 runs per
round, a small sweep's worth.

Reported: for each quadscope variant the per-round ratio to hyperfine of the
per-run cost and of the measured time, medians over rounds (paired: each
round's ratio cancels the machine's drift between rounds). Goals: per-run
cost ≤ 1.1× with counters and ≤ 1.05× without; measured time within 5%.

The two measured times are the same window (launcher.c's header): each opens
just before its spawn call (hyperfine's Command::spawn, the launcher's clone3)
and closes when its wait returns. A second table (overhead_split.py) splits both
on a probe program at the exec: the part measured alike, from the exec taking
over to the reap, and each tool's spawn cost before it.

usage: .venv/bin/python bench/overhead.py [--rounds 11] [--runs 300] [--quick]
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import log, scratch_store, table
from overhead_split import Split, split_rounds

from quadscope.measure.clock import SystemClock
from quadscope.measure.detect import detect_counters
from quadscope.measure.launcher import Executor
from quadscope.meters import choose_measuring
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec

COMMAND = ("/bin/true", "{n}")
CLEANUP: set[str] = set()  # what each quadscope round killed after its runs
WARMUP = 5


@dataclass(frozen=True, slots=True)
class Round:
    tool: str
    mean_s: float  # the measured wall time of /bin/true, mean over the round's runs
    per_run_s: float  # the tool's whole wall time / runs


def hyperfine_round(runs: int) -> Round:
    exe = shutil.which("hyperfine")
    if exe is None:
        raise SystemExit("hyperfine is not installed: run scripts/setup "
                         "(apt-get install hyperfine)")
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-") as tmp:
        out = Path(tmp) / "hf.json"
        t0 = time.monotonic()
        subprocess.run([exe, "-N", "--style", "none", "--warmup", str(WARMUP), "--runs",
                        str(runs), "--export-json", str(out), "/bin/true 1"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.monotonic() - t0
        res = json.loads(out.read_text())["results"][0]
    return Round("hyperfine", float(res["mean"]), elapsed / runs)


def quadscope_round(tool: str, no_perf: bool) -> Callable[[int], Round]:
    def one(runs: int) -> Round:
        # Detection (one probe run) is outside the timing, as hyperfine's own checks are not.
        executor: Executor = choose_measuring(COMMAND, no_perf=no_perf).executor
        spec = SweepSpec(command=COMMAND, sizes=(1,), repeat=runs, warmup=WARMUP,
                         name=f"overhead {tool}")
        with scratch_store() as store:
            t0 = time.monotonic()
            sw = run_sweep(spec, executor=executor, clock=SystemClock(), store=store,
                           counters="perf" if not no_perf else "rusage")
            elapsed = time.monotonic() - t0
            walls = [r.measurement.wall_s for r in store.runs(sw.id) if not r.warmup]
        CLEANUP.add(getattr(executor, "cleanup", "none"))
        return Round(tool, statistics.mean(walls), elapsed / runs)
    return one


TOOLS: dict[str, Callable[[int], Round]] = {
    "hyperfine": hyperfine_round,
    "counters": quadscope_round("counters", no_perf=False),
    "no counters": quadscope_round("no counters", no_perf=True),
}


def measure(rounds: int, runs: int) -> list[Round]:
    names = list(TOOLS)
    out: list[Round] = []
    for k in range(rounds):
        order = names[k % len(names):] + names[:k % len(names)]
        for name in order:
            r = TOOLS[name](runs)
            log(f"overhead: round {k + 1}/{rounds} {r.tool}: mean {r.mean_s * 1e3:.3f} ms, "
                f"per run {r.per_run_s * 1e3:.3f} ms")
            out.append(r)
    return out


def ratios(rounds: list[Round], tool: str) -> tuple[float, float]:
    """Median over rounds of (per-run cost, measured mean) of `tool` / hyperfine's."""
    mine = [r for r in rounds if r.tool == tool]
    hf = [r for r in rounds if r.tool == "hyperfine"]
    cost = statistics.median(a.per_run_s / b.per_run_s for a, b in zip(mine, hf, strict=True))
    wall = statistics.median(a.mean_s / b.mean_s for a, b in zip(mine, hf, strict=True))
    return cost, wall


def markdown(rounds: list[Round], runs: int) -> str:
    def med(tool: str, field: str) -> float:
        return statistics.median(getattr(r, field) for r in rounds if r.tool == tool)

    rows = []
    for tool, goal in (("counters", 1.10), ("no counters", 1.05)):
        cost, wall = ratios(rounds, tool)
        rows.append([f"quadscope, {tool}", f"{med(tool, 'per_run_s') * 1e3:.3f} ms",
                     f"**{cost:.3f}** (goal ≤ {goal:.2f})",
                     f"{med(tool, 'mean_s') * 1e3:.3f} ms", f"**{wall:.3f}** (goal 0.95–1.05)"])
    rows.append(["hyperfine -N", f"{med('hyperfine', 'per_run_s') * 1e3:.3f} ms", "1",
                 f"{med('hyperfine', 'mean_s') * 1e3:.3f} ms", "1"])
    n_rounds = len(rounds) // len(TOOLS)
    return (f"{n_rounds} interleaved rounds × {runs} runs of `/bin/true 1` per tool (+{WARMUP} "
            "warm-ups); figures are medians over rounds, ratios are medians of each round's "
            "ratio to hyperfine.\n\n"
            + table(["", "per-run cost", "cost / hyperfine", "measured wall time",
                     "wall / hyperfine"], rows))


def split_markdown(splits: list[Split], runs: int) -> str:
    def med(tool: str, field: str) -> float:
        return statistics.median(getattr(s, field) for s in splits if s.tool == tool)

    rows = [[name, f"{med(tool, 'wall_us'):.0f}", f"{med(tool, 'exec_to_reap_us'):.0f}",
             f"{med(tool, 'before_us'):.0f}", f"{med(tool, 'main_us'):.1f}"]
            for tool, name in (("counters", "quadscope, counters"),
                               ("no counters", "quadscope, no counters"),
                               ("hyperfine", "hyperfine -N"))]
    hf = [s for s in splits if s.tool == "hyperfine"]
    mine = [s for s in splits if s.tool == "no counters"]
    alike = statistics.median(m.exec_to_reap_us / h.exec_to_reap_us
                              for h, m in zip(hf, mine, strict=True))
    spawn = statistics.median(m.before_us / h.before_us for h, m in zip(hf, mine, strict=True))
    wall = statistics.median(m.wall_us / h.wall_us for h, m in zip(hf, mine, strict=True))
    n_rounds = len(hf)
    return (f"Where the measured wall times differ: {n_rounds} interleaved rounds × {runs} runs "
            "of a probe program as small as /bin/true; medians in µs.\n\n"
            + table(["", "reported wall", "exec took → reap", "spawn (before exec took)",
                     "main()"], rows)
            + f"\n\nBoth windows open before the spawn call, so each counts its own spawn "
            f"cost. quadscope without counters / hyperfine, paired by round: {wall:.3f} whole, "
            f"**{spawn:.3f}** on the spawn (hyperfine: Command::spawn's set-up and glibc's "
            f"posix_spawn; quadscope: clone3 into its cgroup and the child's set-up), "
            f"**{alike:.3f}** from the exec taking over to the reap.")


def section(rounds: int, runs: int) -> str:
    """BENCHMARKS.md's section: the overhead table, the cleanup in force, and the split."""
    table_md = markdown(measure(rounds, runs), runs)
    events = detect_counters()[0].events  # what choose_measuring counts with
    return (f"{table_md}\n\nNo-orphans cleanup in force after each run: "
            f"{', '.join(sorted(CLEANUP))}.\n\n"
            + split_markdown(split_rounds(rounds, runs, events), runs))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--quick", action="store_true", help="3 rounds of 50 runs: checks it works")
    args = p.parse_args(argv)
    rounds, runs = (3, 50) if args.quick else (args.rounds, args.runs)
    print(section(rounds, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
