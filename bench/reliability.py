"""Reliability: how quadscope answers bad input, as a Markdown table for BENCHMARKS.md.

Runs the bad-input table of tests/bad_inputs.py (every row: argv, the exit
code and phrase expected) and the seeded argv fuzz of tests/fuzz_argv.py
(5,000 argv; 500 with --quick), both in this process through `cli.main`, with
every way to start measuring replaced (see those modules: nothing is run).
A row counts as a clear error when it gives the expected exit code and phrase
with no traceback; a fuzzed argv when it does not reach the crash handler
(exit 70) or print a traceback. The faults row runs tests/faults.py's cycles
(SIGKILL, SIGTERM, SIGHUP, SIGINT at seeded points of a real 41-run sweep, each
then resumed; two seeds per signal, one with --quick): faults injected, runs
lost or duplicated, marked processes left. The group row runs its
`group_kill_cycle`: SIGKILL of quadscope's whole process group (the launcher and
the run in flight with it) at 20 seeded points (2 with --quick), then resumed:
finished runs lost or stored twice, marked processes left. Prints the tables on
stdout.

usage: .venv/bin/python bench/reliability.py [--quick] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests")]

from bad_inputs import ROWS, expand, guard_measuring, make_sandbox, run_argv  # noqa: E402
from faults import fault_cycle, group_kill_cycle  # noqa: E402
from fuzz_argv import fuzz  # noqa: E402
from quadscope.cli import CRASH_EXIT  # noqa: E402

FULL_FUZZ = 5000
QUICK_FUZZ = 500
SEED = 20260412  # tests/test_fuzz_cli.py's seed: the same 5,000 argv CI runs

FAULT_SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def faults_row(seeds: int, workdir: Path) -> tuple[str, list[str]]:
    """The faults table's row over `seeds` cycles per signal, and what went wrong."""
    injected = lost = left = 0
    wrong: list[str] = []
    t0 = time.monotonic()
    for seed in range(1, seeds + 1):
        for signum in FAULT_SIGNALS:
            out = fault_cycle(signum, seed, workdir)
            injected += 1
            lost += out.runs_lost + out.duplicates
            left += out.left_after_signal + out.left_after_resume
            if out.runs_lost or out.duplicates or out.left_after_signal or out.left_after_resume:
                wrong.append(f"fault {signal.Signals(signum).name} seed {seed}: {out}")
    took = time.monotonic() - t0
    return f"| {injected} | {lost} | {left} | {took:.0f} s |", wrong


def group_row(seeds: int, workdir: Path) -> tuple[str, list[str]]:
    """The group-kill row over `seeds` seeded points, and what went wrong."""
    lost = left = 0
    wrong: list[str] = []
    t0 = time.monotonic()
    for seed in range(1, seeds + 1):
        out = group_kill_cycle(seed, workdir)
        lost += out.runs_lost + out.duplicates
        left += out.left_after_signal + out.left_after_resume
        if out.runs_lost or out.duplicates or out.left_after_signal or out.left_after_resume \
                or out.runs_after != 41:
            wrong.append(f"group SIGKILL seed {seed}: {out}")
    took = time.monotonic() - t0
    return f"| SIGKILL of the whole process group | {seeds} | {lost} | {left} | {took:.0f} s |", \
        wrong


def table_rows(sandbox: dict[str, str]) -> tuple[int, int, int, list[str]]:
    """(tried, clear errors, tracebacks, what went wrong) over the bad-input table."""
    clear = tracebacks = 0
    wrong: list[str] = []
    with guard_measuring():
        for argv, code, phrase in ROWS:
            got, _, err = run_argv(expand(argv, sandbox))
            if got == CRASH_EXIT or "Traceback" in err:
                tracebacks += 1
                wrong.append(f"traceback: {' '.join(argv)[:80]}")
            elif got == code and phrase in err:
                clear += 1
            else:
                wrong.append(f"exit {got}, not {code} / {phrase!r}: {' '.join(argv)[:80]}")
    return len(ROWS), clear, tracebacks, wrong


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help=f"fuzz {QUICK_FUZZ} argv, not {FULL_FUZZ}; one fault per signal, not two")
    p.add_argument("--seed", type=int, default=SEED, help=f"the fuzz's seed [{SEED}]")
    args = p.parse_args(argv)
    count = QUICK_FUZZ if args.quick else FULL_FUZZ
    with tempfile.TemporaryDirectory(prefix="qs-reliability-") as tmp:
        old = Path.cwd()
        os.chdir(tmp)
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # crash files stay in tmp
        try:
            t0 = time.monotonic()
            tried, clear, tracebacks, wrong = table_rows(make_sandbox(Path(tmp) / "table"))
            table_s = time.monotonic() - t0
            fuzzed = fuzz(count, args.seed, make_sandbox(Path(tmp) / "fuzz"))
            faults, fault_wrong = faults_row(1 if args.quick else 2, Path(tmp))
            wrong += fault_wrong
            group, group_wrong = group_row(2 if args.quick else 20, Path(tmp))
            wrong += group_wrong
        finally:
            os.chdir(old)
    print("## Reliability\n")
    print("Bad input, tried as a careless or hostile user would (`bench/reliability.py`; "
          "nothing is measured: every executor is replaced).\n")
    print("| input | tried | clear errors | tracebacks | time |")
    print("|---|---:|---:|---:|---:|")
    print(f"| bad-input table (`tests/bad_inputs.py`) | {tried} | {clear} | {tracebacks} | "
          f"{table_s:.1f} s |")
    print(f"| fuzzed argv from the real options (seed {args.seed}) | {fuzzed.tried} | "
          f"{fuzzed.clear} | {len(fuzzed.crashes)} | {fuzzed.seconds:.1f} s |")
    print()
    print("Faults: a signal at a seeded point of a real sweep of 41 runs, then `--resume` "
          "(`tests/faults.py`; runs lost counts duplicates too).\n")
    print("| faults injected | runs lost | processes left | time |")
    print("|---:|---:|---:|---:|")
    print(faults)
    print()
    print("The whole process group SIGKILLed (quadscope, its launcher, the run in flight: a "
          "CI job cancelled, `timeout -s KILL`) at seeded points, then `--resume`; a run "
          "counts as finished once its process was reaped (`tests/faults.py`).\n")
    print("| fault | points | finished runs lost or doubled | processes left | time |")
    print("|---|---:|---:|---:|---:|")
    print(group)
    exits = ", ".join(f"{code}: {n}" for code, n in sorted(fuzzed.exits.items()))
    print(f"\nFuzzed argv by exit code: {exits} (99: stopped where measuring would start).")
    for line in wrong + [f"crash: {a[:6]}" for a, _ in fuzzed.crashes[:5]]:
        print(f"- {line}", file=sys.stderr)
    return 0 if not wrong and not fuzzed.crashes else 1


if __name__ == "__main__":
    sys.exit(main())
