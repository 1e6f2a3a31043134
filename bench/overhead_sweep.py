"""Harness overhead in the sweep users run: four sizes interleaved, counters on, vs hyperfine -N.

Issue 29's shape, beside overhead.py's single-size one (same method). Each
round runs both tools, in an order that rotates from round to round, with R
repeats per size over sizes 1, 2, 4, 8 of `/bin/true {n}` (4R runs):

* hyperfine: `hyperfine -N --warmup 1 --runs R --parameter-list n 1,2,4,8
  --export-json F '/bin/true {n}'` (hyperfine runs each size as a block: it
  cannot interleave); its per-run cost is the whole process's wall time / 4R.
* quadscope: `run_sweep` (sizes mode, the four sizes interleaved in the
  shuffled order every fixed sweep gets, one warm-up per size, R repeats)
  with the executor and counters `choose_measuring` picks on this machine
  (counters on: no `--no-perf`) and a scratch store, every run stored as it
  ends, as `quadscope run` does; its per-run cost is run_sweep's wall time / 4R
  (launcher start, planning, store and warm-ups included, as hyperfine's start
  and warm-ups are). The fixed plan hands the launcher the whole plan in one
  batch (`FixedPlan.next_batch`).

A first try timed the whole `quadscope run` command line at two repeat counts
and took the difference: its start-up, fit and report (about 6 s here, varying
by a second on this shared VM) swamped the difference, so the in-process sweep,
as overhead.py measures, is what is reported. Reported: the median over rounds
of each round's ratio (paired: the machine's drift between rounds cancels);
goal ≤ 1.1.

usage: .venv/bin/python bench/overhead_sweep.py [--rounds 7] [--repeat 150]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import log, scratch_store, table

from quadscope.measure.clock import SystemClock
from quadscope.measure.launcher import Executor
from quadscope.meters import choose_measuring
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec

COMMAND = ("/bin/true", "{n}")
SIZES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True)
class Round:
    tool: str
    per_run_s: float  # the tool's whole wall time / runs


def hyperfine(repeat: int, sizes: tuple[int, ...] = SIZES) -> Round:
    exe = shutil.which("hyperfine")
    if exe is None:
        raise SystemExit("hyperfine is not installed (apt-get install hyperfine)")
    with tempfile.TemporaryDirectory(prefix="qs-overhead-sweep-") as tmp:
        t0 = time.monotonic()
        subprocess.run([exe, "-N", "--style", "none", "--warmup", "1", "--runs", str(repeat),
                        "--parameter-list", "n", ",".join(map(str, sizes)), "--export-json",
                        str(Path(tmp) / "hf.json"), "/bin/true {n}"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.monotonic() - t0
    return Round(f"hyperfine {len(sizes)}", elapsed / (len(sizes) * repeat))


def quadscope(repeat: int, sizes: tuple[int, ...] = SIZES) -> Round:
    # Detection (one probe run) is outside the timing, as hyperfine's own checks are not.
    executor: Executor = choose_measuring(COMMAND, no_perf=False).executor
    spec = SweepSpec(command=COMMAND, sizes=sizes, repeat=repeat, warmup=1,
                     name="overhead sweep")
    with scratch_store() as store:
        t0 = time.monotonic()
        run_sweep(spec, executor=executor, clock=SystemClock(), store=store, counters="perf")
        elapsed = time.monotonic() - t0
    return Round(f"quadscope {len(sizes)}", elapsed / (len(sizes) * repeat))


ONE = (1,)  # the single-size shape, at the same number of runs, for comparison
TOOLS = {"hyperfine 4": hyperfine, "quadscope 4": quadscope,
         "hyperfine 1": lambda r: hyperfine(len(SIZES) * r, ONE),
         "quadscope 1": lambda r: quadscope(len(SIZES) * r, ONE)}


def measure(rounds: int, repeat: int) -> list[Round]:
    out: list[Round] = []
    names = list(TOOLS)
    for k in range(rounds):
        for name in names[k % len(names):] + names[:k % len(names)]:
            r = TOOLS[name](repeat)
            log(f"overhead sweep: round {k + 1}/{rounds} {name}: "
                f"{r.per_run_s * 1e3:.3f} ms a run")
            out.append(r)
    return out


def section(rounds: int, repeat: int) -> str:
    rs = measure(rounds, repeat)
    rows = []
    for shape, label in (("4", f"{len(SIZES)} sizes interleaved"), ("1", "1 size")):
        qs = [r.per_run_s for r in rs if r.tool == f"quadscope {shape}"]
        hf = [r.per_run_s for r in rs if r.tool == f"hyperfine {shape}"]
        each = [q / h for q, h in zip(qs, hf, strict=True)]
        rows.append([f"quadscope, counters, {label}", f"{statistics.median(qs) * 1e3:.3f} ms",
                     f"{statistics.median(hf) * 1e3:.3f} ms",
                     f"**{statistics.median(each):.3f}** (goal ≤ 1.10)",
                     f"{min(each):.2f}–{max(each):.2f}"])
    return (f"Sizes {', '.join(map(str, SIZES))} of `/bin/true {{n}}` with {repeat} repeats per "
            f"size ({len(SIZES) * repeat} runs, +1 warm-up per size), beside one size at "
            f"{len(SIZES) * repeat} runs; {rounds} rounds, the four tools' order rotating; "
            "per-run cost is each tool's whole wall time / runs; the ratio is the median of "
            "each round's.\n\n"
            + table(["", "quadscope per run", "hyperfine -N per run", "cost / hyperfine",
                     "range over rounds"], rows))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--repeat", type=int, default=150)
    args = p.parse_args(argv)
    print(section(args.rounds, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
