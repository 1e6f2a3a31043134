"""Harness overhead: quadscope measuring /bin/true against `hyperfine -N`, same machine, same run.

Each round runs five tools back to back, in an order that rotates from round
to round so drift on this shared machine hits all alike; each runs R runs of
`/bin/true {n}` in one of two shapes:

* one size: `/bin/true 1` R times after 5 warm-ups;
* four sizes, the sweep users run (issue 29): n = 1, 2, 4, 8 with R/4 repeats
  each after one warm-up per size; quadscope interleaves them in the shuffled
  order every fixed sweep gets, hyperfine (`--parameter-list`) runs each size
  as a block: it cannot interleave.

The tools:

* hyperfine: `hyperfine -N --warmup W --runs R --export-json F /bin/true 1`
  (four sizes: `--parameter-list n 1,2,4,8 --runs R/4 '/bin/true {n}'`); its
  per-run cost is the whole hyperfine process's wall time / R, its measured
  time the JSON's mean (over the sizes).
* quadscope with counters: `run_sweep` (sizes mode) with the `ProcessExecutor`
  and counter backend `choose_measuring` picks on this machine, and a scratch
  store, every run stored as `quadscope run` does (the fixed plan is one batch;
  the launcher runs it back to back and quadscope stores what each look
  brings in one transaction); its per-run cost is run_sweep's wall time / R
  (launcher start, planning, store, warm-ups included, as hyperfine's start and
  warm-ups are), its measured time the mean of the stored runs' wall_s, its
  own CPU its process's user + sys time / R (the launcher and the runs are
  other processes). In both shapes.
* quadscope without counters: the same with `NoCounters` (`--no-perf`), one size.

Both quadscope rows run with the no-orphans protection on, as it always is: each
run joins the launcher's cgroup where cgroup v2 is writable (else the launcher
reads its children list after every run); the cleanup in force is printed under
the table. Each run is forked straight into that cgroup (clone3); without clone3
the child joins it by writing cgroup.procs, whose first move after an idle spell
costs ~10 ms per launcher (an RCU grace period), spread here over 300 runs per
round, a small sweep's worth.

Reported: for each quadscope row the per-round ratio to the hyperfine run of
the same shape of the per-run cost (with its interquartile range over rounds)
and of the measured time, medians over rounds (paired: each round's ratio
cancels the machine's drift between rounds). Goals: per-run cost ≤ 1.1× with
counters (both shapes) and ≤ 1.05× without; measured time within 5%.

The two measured times are the same window (launcher.c's header): each opens
just before its spawn call (hyperfine's Command::spawn, the launcher's clone3)
and closes when its wait returns. A second table (overhead_split.py) splits both
on a probe program at the exec: the part measured alike, from the exec taking
over to the reap, and each tool's spawn cost before it.

usage: .venv/bin/python bench/overhead.py [--rounds 11] [--runs 300] [--quick] [--no-split]
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
SIZES = (1, 2, 4, 8)  # the interleaved shape (issue 29): R / 4 repeats per size


@dataclass(frozen=True, slots=True)
class Round:
    tool: str
    mean_s: float  # the measured wall time of /bin/true, mean over the round's runs
    per_run_s: float  # the tool's whole wall time / runs
    own_cpu_s: float = 0.0  # quadscope's own CPU time (user + sys, its process alone) / runs


def hyperfine_round(runs: int, sizes: tuple[int, ...] = (1,), warmup: int = WARMUP) -> Round:
    exe = shutil.which("hyperfine")
    if exe is None:
        raise SystemExit("hyperfine is not installed: run scripts/setup "
                         "(apt-get install hyperfine)")
    each = runs // len(sizes)
    shape = (["--parameter-list", "n", ",".join(map(str, sizes)), "/bin/true {n}"]
             if len(sizes) > 1 else ["/bin/true 1"])
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-") as tmp:
        out = Path(tmp) / "hf.json"
        t0 = time.monotonic()
        subprocess.run([exe, "-N", "--style", "none", "--warmup", str(warmup), "--runs",
                        str(each), "--export-json", str(out), *shape], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.monotonic() - t0
        results = json.loads(out.read_text())["results"]
    mean = statistics.mean(float(r["mean"]) for r in results)  # the same runs at each size
    return Round(f"hyperfine{_shape(sizes)}", mean, elapsed / (each * len(sizes)))


def _shape(sizes: tuple[int, ...]) -> str:
    return "" if len(sizes) == 1 else f", {len(sizes)} sizes"


def quadscope_round(tool: str, no_perf: bool, sizes: tuple[int, ...] = (1,),
                    warmup: int = WARMUP) -> Callable[[int], Round]:
    def one(runs: int) -> Round:
        # Detection (one probe run) is outside the timing, as hyperfine's own checks are not.
        executor: Executor = choose_measuring(COMMAND, no_perf=no_perf).executor
        each = runs // len(sizes)
        spec = SweepSpec(command=COMMAND, sizes=sizes, repeat=each, warmup=warmup,
                         name=f"overhead {tool}")
        with scratch_store() as store:
            c0, t0 = time.process_time(), time.monotonic()
            sw = run_sweep(spec, executor=executor, clock=SystemClock(), store=store,
                           counters="perf" if not no_perf else "rusage")
            elapsed, own = time.monotonic() - t0, time.process_time() - c0
            walls = [r.measurement.wall_s for r in store.runs(sw.id) if not r.warmup]
        CLEANUP.add(getattr(executor, "cleanup", "none"))
        n = each * len(sizes)
        return Round(tool, statistics.mean(walls), elapsed / n, own / n)
    return one


# The interleaved sweep has one warm-up per size, as hyperfine --parameter-list warms up
# each size.
TOOLS: dict[str, Callable[[int], Round]] = {
    "hyperfine": hyperfine_round,
    "counters": quadscope_round("counters", no_perf=False),
    "no counters": quadscope_round("no counters", no_perf=True),
    "hyperfine, 4 sizes": lambda r: hyperfine_round(r, SIZES, warmup=1),
    "counters, 4 sizes": quadscope_round("counters, 4 sizes", no_perf=False, sizes=SIZES,
                                         warmup=1),
}
PEER = {"counters": "hyperfine", "no counters": "hyperfine",
        "counters, 4 sizes": "hyperfine, 4 sizes"}
GOALS = {"counters": 1.10, "no counters": 1.05, "counters, 4 sizes": 1.10}


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


def paired(rounds: list[Round], tool: str, field: str) -> list[float]:
    """Each round's `field` of `tool` / its hyperfine peer's, in round order."""
    mine = [r for r in rounds if r.tool == tool]
    hf = [r for r in rounds if r.tool == PEER[tool]]
    return [getattr(a, field) / getattr(b, field) for a, b in zip(mine, hf, strict=True)]


def ratios(rounds: list[Round], tool: str) -> tuple[float, float]:
    """Median over rounds of (per-run cost, measured mean) of `tool` / hyperfine's."""
    return (statistics.median(paired(rounds, tool, "per_run_s")),
            statistics.median(paired(rounds, tool, "mean_s")))


def _quartiles(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0], xs[0], xs[0]]
    return f"{q[0]:.2f}–{q[2]:.2f}"


def markdown(rounds: list[Round], runs: int) -> str:
    def med(tool: str, field: str) -> float:
        return statistics.median(getattr(r, field) for r in rounds if r.tool == tool)

    rows = []
    for tool, goal in GOALS.items():
        cost, wall = ratios(rounds, tool)
        rows.append([f"quadscope, {tool}", f"{med(tool, 'per_run_s') * 1e3:.3f} ms",
                     f"**{cost:.3f}** (goal ≤ {goal:.2f})",
                     _quartiles(paired(rounds, tool, "per_run_s")),
                     f"{_gap(rounds, tool) * 1e6:.0f} µs ({_gap_over(rounds, tool) * 1e6:+.0f})",
                     f"{med(tool, 'own_cpu_s') * 1e6:.0f} µs",
                     f"{med(tool, 'mean_s') * 1e3:.3f} ms", f"**{wall:.3f}** (goal 0.95–1.05)"])
    for tool in ("hyperfine", "hyperfine, 4 sizes"):
        rows.append([tool.replace("hyperfine", "hyperfine -N"),
                     f"{med(tool, 'per_run_s') * 1e3:.3f} ms", "1", "",
                     f"{_gap(rounds, tool) * 1e6:.0f} µs", "",
                     f"{med(tool, 'mean_s') * 1e3:.3f} ms", "1"])
    n_rounds = len(rounds) // len(TOOLS)
    return (f"{n_rounds} interleaved rounds × {runs} runs of `/bin/true {{n}}` per tool: one "
            f"size (n = 1, +{WARMUP} warm-ups), or sizes {', '.join(map(str, SIZES))} at "
            f"{runs // len(SIZES)} repeats each (+1 warm-up per size; quadscope interleaves "
            "them in its shuffled order, hyperfine runs each size as a block). Figures are "
            "medians over rounds; ratios are medians of each round's ratio to the hyperfine "
            "run of the same shape, with their interquartile range over rounds; own CPU is "
            "quadscope's process alone (user + sys, not the launcher or the runs) / runs. "
            "Beyond the run is each run's cost past its measured window (per-run cost − "
            "measured wall time: the harness's own share, less touched by the noise in the "
            "window), in brackets its excess over hyperfine's, paired by round.\n\n"
            + table(["", "per-run cost", "cost / hyperfine", "IQR over rounds", "beyond the run",
                     "own CPU a run", "measured wall time", "wall / hyperfine"], rows))


def _gap(rounds: list[Round], tool: str) -> float:
    """Median over rounds of `tool`'s per-run cost past its measured window."""
    return statistics.median(r.per_run_s - r.mean_s for r in rounds if r.tool == tool)


def _gap_over(rounds: list[Round], tool: str) -> float:
    """Median over rounds of `tool`'s gap (`_gap`) less its hyperfine peer's in that round."""
    mine = [r for r in rounds if r.tool == tool]
    hf = [r for r in rounds if r.tool == PEER[tool]]
    return statistics.median((a.per_run_s - a.mean_s) - (b.per_run_s - b.mean_s)
                             for a, b in zip(mine, hf, strict=True))


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


def section(rounds: int, runs: int, split: bool = True) -> str:
    """BENCHMARKS.md's section: the overhead table, the cleanup in force, and the split."""
    table_md = markdown(measure(rounds, runs), runs)
    events = detect_counters()[0].events  # what choose_measuring counts with
    return (f"{table_md}\n\nNo-orphans cleanup in force after each run: "
            f"{', '.join(sorted(CLEANUP))}."
            + (f"\n\n{split_markdown(split_rounds(rounds, runs, events), runs)}" if split else ""))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--quick", action="store_true", help="3 rounds of 52 runs: checks it works")
    p.add_argument("--no-split", action="store_true", help="leave out the second table")
    args = p.parse_args(argv)
    rounds, runs = (3, 52) if args.quick else (args.rounds, args.runs)
    print(section(rounds, runs, split=not args.no_split))
    return 0


if __name__ == "__main__":
    sys.exit(main())
