"""Does `quadscope profile` name the known culprit first, and how fast is its perf parser?

Three parts, all printed as Markdown (the `## Culprits` section of BENCHMARKS.md):

0. Users' programs (`--cases`, `culprit_cases.CASES`, run by `culprit_runs`):
   C with and without frame pointers, an inlined helper, C++ with inlining,
   Rust, a Python script, a `python:` function target, a shell pipeline, two
   accuracy-suite workloads and the doctor's kernel cases, each through
   `quadscope run --profile` as a user types it; for each, "culprit named
   first" (the sentence under the headline names the user's function),
   "user's function named" (there or in the top rows), and the Callgrind
   pass's seconds against the timed sweep's.

1. Accuracy: every workload of the accuracy suite with a `culprit` (the
   noinline C function doing the growing work) is profiled with perf at 4 of
   its sizes; we report the culprit's rank among quadscope's culprits, and
   the share of the profile's wall time spent turning perf data into samples
   (`perf script` streamed into our parser; goal ≤ 10%).
2. Speed: one perf.data file (the quadratic workload, sampled at a high rate)
   is processed by quadscope (`perf script` with the fixed field list,
   --no-inline and --kallsyms /dev/null streamed into our parser, which names
   kernel frames from the table the sampler reads once per profile, then folding and
   per-function series; "parse only" times the same on perf script's text
   already read) and by the named peer
   `perf report --stdio` (with its default call-graph processing), in the same
   run, 3 times each; we report samples per second and the ratio of medians.

Usage: .venv/bin/python bench/culprits.py [--quick] [--cases | --no-cases]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import log, machine, table

from quadscope.model import Sweep
from quadscope.profile.attribute import series
from quadscope.profile.driver import choose_sizes, profile_sweep
from quadscope.profile.kallsyms import read_kernel_symbols
from quadscope.profile.perf import PerfSampler, PerfSetup, detect_perf, script_argv
from quadscope.profile.perfscript import SCRIPT_FIELDS, PerfData, parse, stacks
from quadscope.profile.stacks import StackProfile, fold
from quadscope.workloads import WORKLOADS, build


class TimedSampler(PerfSampler):
    """The real sampler, adding up the seconds spent in `script` (perf script + parse)."""

    processing_s = 0.0

    def script(self, data_path: Path, extra_fields: str = "") -> PerfData:
        t0 = time.monotonic()
        try:
            return super().script(data_path, extra_fields)
        finally:
            self.processing_s += time.monotonic() - t0


def accuracy(sampler: TimedSampler, quick: bool) -> tuple[list[list[object]], int, int]:
    rows: list[list[object]] = []
    first = total = 0
    names = [w for w in WORKLOADS.values() if w.suite and w.culprit and w.mode == "sizes"]
    if quick:
        names = names[:4]
    for w in names:
        exe = build(w.name)
        sizes = choose_sizes(w.sizes, 4)
        sweep = Sweep(id=0, name=w.name, mode="sizes", command=w.argv(exe))
        t0 = time.monotonic()
        before = sampler.processing_s
        with tempfile.TemporaryDirectory(prefix="quadscope-bench-prof-") as tmp:
            a = profile_sweep(sweep, sizes, sampler=sampler, out_dir=Path(tmp),
                              measure_overhead=False)
        elapsed = time.monotonic() - t0
        share = (sampler.processing_s - before) / elapsed
        # GCC clones keep the name before the dot (count_subsets.constprop.0). A kernel
        # function names the user code that asked for the work (exc_page_fault ← touch_pages).
        symbols = [(c.user_caller or c.symbol).split(".")[0] for c in a.culprits]
        rank = symbols.index(w.culprit) + 1 if w.culprit in symbols else None
        top = a.culprits[0] if a.culprits else None
        on_path = top is not None and w.culprit in [p.split(".")[0] for p in top.call_path]
        # Where nothing grows there is no culprit of growth to name: not scored.
        scored = w.expected != "1"
        total += scored
        first += scored and rank == 1
        verdict = ("n/a: nothing grows" if not scored
                   else "yes" if rank == 1 else f"no (rank {rank})")
        rows.append([
            w.name, w.expected, w.culprit, verdict,
            "yes" if on_path else "no",
            f"{top.symbol}{' ← ' + top.user_caller if top.user_caller else ''} "
            f"({top.self_class}, k={top.self_exponent:.2f})"
            if top and top.self_exponent is not None else (top.symbol if top else "—"),
            a.samples[-1], f"{elapsed:.1f}", f"{share:.0%}",
        ])
        log(f"{w.name}: culprit rank {rank}")
    return rows, first, total


def to_series(data: PerfData, event: str) -> int:
    """Stacks, folding and per-function series of parsed perf data; the samples counted."""
    st, n_samples = stacks(data)
    fold(st)
    series([StackProfile(1, st, n_samples, event, 1.0)])
    return n_samples


def speed(setup: PerfSetup, runs: int = 3) -> tuple[list[list[object]], str]:
    setup_perf, event = setup.perf, setup.event
    # As the sampler does: the kernel's symbols read once per profile (in a thread
    # overlapping the first recording), perf script told not to load them.
    t_k = time.monotonic()
    kernel = read_kernel_symbols() if setup.kernel else None
    kernel_s = time.monotonic() - t_k
    script = functools.partial(script_argv, own_kernel_symbols=kernel is not None)
    w = WORKLOADS["linear_quadratic"]
    exe = build(w.name)
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-speed-") as tmp:
        data = Path(tmp) / "perf.data"
        argv = [str(exe), *[a.replace("{n}", str(w.sizes[-1])) for a in w.template]]
        subprocess.run([setup_perf, "record", "-q", "-B", "-N", "-e", event, "-F", "20000",
                        "--call-graph", "fp", "-o", str(data), "--", "/bin/sh", "-c",
                        'for i in 1 2 3 4 5 6 7 8; do "$@" >/dev/null; done', "sh", *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        ours, parse_only, peer = [], [], []
        n_samples = 0
        for _ in range(runs):
            t0 = time.monotonic()
            # As the sampler does: perf script streamed into the parser (the two overlap).
            with subprocess.Popen(script(setup_perf, data, SCRIPT_FIELDS),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  errors="replace") as proc:
                assert proc.stdout is not None
                n_samples = to_series(parse(proc.stdout, kernel), event)
            ours.append(time.monotonic() - t0)
            text = subprocess.run(script(setup_perf, data, SCRIPT_FIELDS),
                                  capture_output=True, text=True, check=True).stdout
            t1 = time.monotonic()
            to_series(parse(text.splitlines(keepends=True), kernel), event)
            t2 = time.monotonic()
            subprocess.run([setup_perf, "report", "--stdio", "-i", str(data)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            parse_only.append(t2 - t1)
            peer.append(time.monotonic() - t2)
    o, p, r = (statistics.median(x) for x in (ours, parse_only, peer))
    rows = [
        ["quadscope: perf script streamed into parse, + fold + series", f"{o:.3f}", f"{n_samples / o:,.0f}",
         f"{r / o:.2f}×"],
        ["quadscope: parse + fold + series only", f"{p:.3f}", f"{n_samples / p:,.0f}",
         f"{r / p:.2f}×"],
        ["perf report --stdio (peer)", f"{r:.3f}", f"{n_samples / r:,.0f}", "1.00×"],
        ["quadscope: kernel symbol table, read once per profile (not in the rows above)",
         f"{kernel_s:.3f}", "—", "—"],
    ]
    return rows, f"{n_samples} samples with call chains, median of {runs} runs"


def callgrind_cost(s: Any) -> str:
    """Callgrind's seconds over its budget (the timed runs + the sampling), as a ratio; or
    what `auto` predicted when it skipped; or — when it never applied."""
    if s.callgrind_s is not None and s.budget_s:
        return f"{s.callgrind_s:.1f} s / {s.budget_s:.1f} s ({s.callgrind_s / s.budget_s:.2f}×)"
    if s.skipped_s is not None and s.budget_s:
        return (f"skipped: ~{s.skipped_s:.1f} s / {s.budget_s:.1f} s "
                f"({s.skipped_s / s.budget_s:.1f}×)")
    return "—"


def cases() -> tuple[list[list[object]], int, int, int, int]:
    """(rows, named first, user's function named, cases run, cases Callgrind counted)."""
    from culprit_cases import CASES
    from culprit_runs import run_case

    rows: list[list[object]] = []
    first = named = ran = counted = 0
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="quadscope-bench-case-") as tmp:
            s = run_case(case, Path(tmp))
        log(f"{case.name}: first {s.first}, named {s.named} {s.why}")
        if s.first is None:
            rows.append([case.name, case.kind, "/".join(case.user), "not run", "not run",
                         s.why, "", "", "", ""])
            continue
        ran += 1
        first += bool(s.first)
        named += bool(s.named)
        cost = callgrind_cost(s)
        counted += s.callgrind_s is not None
        said = s.sentence if len(s.sentence) <= 160 else s.sentence[:157] + "…"
        rows.append([case.name, case.kind, "/".join(case.user), "yes" if s.first else "no",
                     "yes" if s.named else "no", s.why or said.replace("|", "\\|"),
                     s.top.replace("|", "\\|"), cost,
                     "—" if s.timed_s is None else f"{s.timed_s:.2f}", f"{s.total_s:.0f}"])
    return rows, first, named, ran, counted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="4 workloads only")
    ap.add_argument("--cases", action="store_true", help="the users' programs only")
    ap.add_argument("--no-cases", action="store_true", help="skip the users' programs")
    args = ap.parse_args(argv)
    m = machine()
    print("## Culprits\n")
    if not args.no_cases:
        rows, first, named, ran, counted = cases()
        print("### Users' programs, through `run --profile`\n")
        print(f"`bench/culprits.py --cases` on {m['date']}: {m['nproc']} cores, kernel "
              f"{m['kernel']}, {m['cpu']}, Python {m['python']}; each program through "
              "`quadscope run --sizes S --profile` (default meter, `--callgrind auto`).\n")
        print(f"Culprit named first: **{first} of {ran}**; the user's function named: "
              f"**{named} of {ran}**; counted by Callgrind under `--callgrind auto`: "
              f"{counted} (the others predicted over its budget, or not native).\n")
        print(table(["program", "kind", "user's function", "culprit named first",
                     "user's function named", "the sentence under the headline",
                     "top culprit row", "Callgrind / (timed runs + sampling)", "timed runs s",
                     "run --profile s"], rows))
        if args.cases:
            return 0
        print()
    setup = detect_perf(probe_faults=False)
    sampler = TimedSampler(setup, target_samples=1000, max_repeats=20)
    rows, first, total = accuracy(sampler, args.quick)
    speed_rows, what = speed(setup)
    print("### The accuracy suite: the known culprit ranked first\n")
    print(f"`bench/culprits.py` on {m['date']}: {m['nproc']} cores, kernel {m['kernel']}, "
          f"{m['cpu']}, Python {m['python']}; perf event `{setup.event}`, frame-pointer stacks.\n")
    print(f"Known culprit ranked first: **{first} of {total}** workloads.\n")
    print(table(["workload", "true class", "culprit", "ranked first",
                 "culprit on #1's call path", "quadscope's #1",
                 "samples at max n", "profile s", "perf data processing"], rows))
    print("\n### perf data processing\n")
    print(f"One perf.data file ({what}); higher samples/s is faster; the ratio is "
          "perf report's time over ours.\n")
    print(table(["processor", "seconds", "samples/s", "speed vs perf report"], speed_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
