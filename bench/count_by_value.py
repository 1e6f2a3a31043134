"""What sending a function by value costs one count: a lambda against an importable function.

One count is one Valgrind start of a child Python that loads the function and
counts its call (`measure.pycount`, `exact.InstructionMeter.count`). This
counts `dedup_set` (bench/gate_targets.py) at one size three ways, R times
each (`--runs`, default 5), interleaved, alone and as four sizes (n/8..n)
counted under one start as counting after a timed sweep does: by name (imported), as a lambda
calling it (pickled; the child imports gate_targets to unpickle it), and as a
closure defined here, in `__main__` (pickled whole, nothing to import). It
reports the median seconds of one count, the instructions counted (the same
work, a call frame apart) and what `check_loads` (the one plain child start
before the first count) costs.

usage: .venv/bin/python bench/count_by_value.py [--runs 5] [--n 16000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import log, machine, table
from bench.gate_targets import dedup_set, make_items

from quadscope.measure.clock import SystemClock
from quadscope.measure.counters import NoCounters
from quadscope.measure.exact import Callgrind, InstructionMeter, find_valgrind
from quadscope.measure.launcher import FakeExecutor, ProcessExecutor
from quadscope.measure.pycount import Sent, check_loads, count_command, count_many_command, send
from quadscope.model import Measurement


def closure() -> Callable[[list[int]], list[int]]:
    """dedup_set's loop as a closure over its set (by value, with nothing to import)."""
    seen: set[int] = set()

    def dedup(items: list[int]) -> list[int]:
        seen.clear()
        out = []
        for x in items:
            if x not in seen:
                seen.add(x)
                out.append(x)
        return out
    return dedup


def _meter(func: Sent, setup: Sent) -> InstructionMeter:
    untimed = FakeExecutor(lambda argv: Measurement({}, exit_code=0), SystemClock())
    return InstructionMeter(untimed, ProcessExecutor(NoCounters()), Callgrind(find_valgrind()),
                            command=count_command(func, setup),
                            many=count_many_command(func, setup))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=16000)
    args = ap.parse_args(argv)
    setup = send(make_items)
    ways = {"importable (by name)": send(dedup_set),
            "lambda (by value)": send(lambda items: dedup_set(items)),
            "closure in __main__ (by value)": send(closure())}
    secs: dict[str, list[float]] = {w: [] for w in ways}
    counts: dict[str, set[int | None]] = {w: set() for w in ways}
    checks: dict[str, list[float]] = {w: [] for w in ways}
    batches: dict[str, list[float]] = {w: [] for w in ways}
    sizes = [args.n // 8, args.n // 4, args.n // 2, args.n]
    for k in range(args.runs):
        for way, func in ways.items():
            t0 = time.monotonic()
            check_loads(func, setup)
            checks[way].append(time.monotonic() - t0)
            t0 = time.monotonic()
            counts[way].add(_meter(func, setup).count(["python:bench:f", str(args.n)], 300))
            secs[way].append(time.monotonic() - t0)
            t0 = time.monotonic()
            _meter(func, setup).count_many([["python:bench:f", str(n)] for n in sizes], 300)
            batches[way].append(time.monotonic() - t0)
            log(f"{way}: run {k + 1}/{args.runs} {secs[way][-1]:.2f} s, "
                f"4 sizes in one start {batches[way][-1]:.2f} s")
    m = machine()
    print(f"One count of dedup_set at n = {args.n} ({m['date']}, {m['nproc']} CPUs, "
          f"{m['cpu']}), median of {args.runs}:\n")
    print(table(["sent", "one count (s)", "4 sizes, one start (s)", "check_loads (s)",
                 "instructions"],
                [(w, f"{statistics.median(secs[w]):.2f}", f"{statistics.median(batches[w]):.2f}",
                  f"{statistics.median(checks[w]):.2f}" if ways[w].by_value else "-",
                  ", ".join(str(c) for c in sorted(counts[w], key=str))) for w in ways]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
