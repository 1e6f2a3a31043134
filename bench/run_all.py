"""Run every benchmark and rewrite BENCHMARKS.md with what was measured.

`make bench` runs this (about 30–40 minutes on a 2-core VM): accuracy.py,
overhead.py, time_to_verdict.py, culprits.py, calibration.py, exact_meter.py,
pyfunc.py, reliability.py, store_writes.py, startup.py, bisect_commits.py,
history_steps.py, decide_n.py, gate_stability.py, multi_calibration.py and analysis_cost.py, in that
order (`--only 2,9` re-runs some and keeps the other sections as BENCHMARKS.md has them). Each benchmark's
section is written to BENCHMARKS.md as soon as it finishes, so a failure in a
later one loses nothing already measured (hyperfine's reason for exporting
after each benchmark). Benchmarks are not part of `make test`.

usage: .venv/bin/python bench/run_all.py [--quick] [--only N,N...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy
import analysis_cost
import bisect_commits
import calibration
import culprits
import decide_n
import exact_meter
import gate_stability
import history_steps
import multi_calibration
import overhead
import pyfunc
import reliability
import startup
import store_writes
import time_to_verdict
from common import REPO, log, machine

OUT = REPO / "BENCHMARKS.md"

INTRO = """\
# Benchmarks

Measured by `bench/run_all.py`; do not edit by hand. This machine is shared and
noisy, so only medians and ratios measured side by side in the same run are
reported: compare the ratios, not the absolute times, with another machine's.
"""


def render(head: dict[str, str], command: str, sections: dict[str, str]) -> str:
    lines = [INTRO,
             f"- date: {head['date']}",
             f"- machine: {head['nproc']} CPUs (`nproc`), kernel {head['kernel']}, "
             f"{head['cpu']}, Python {head['python']}",
             f"- command: `{command}`",
             ""]
    for title, body in sections.items():
        lines += [f"## {title}", "", body, ""]
    return "\n".join(lines)


def printed(fn: Callable[[list[str]], int], argv: list[str]) -> str:
    """The Markdown a benchmark's main() prints, less its own `## ` title (ours is used)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(argv)
    lines = buf.getvalue().strip().splitlines()
    if lines and lines[0].startswith("## "):
        lines = lines[1:]
    return "\n".join(lines).strip()


def _sections(text: str) -> dict[str, str]:
    """BENCHMARKS.md's sections by title: what `--only` keeps."""
    out: dict[str, str] = {}
    for chunk in text.split("\n## ")[1:]:
        title, _, body = chunk.partition("\n")
        out[title.strip()] = body.strip()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats and rounds: a smoke run, not numbers to publish")
    p.add_argument("--only", default="",
                   help="comma-separated section numbers to re-run; the rest are kept as written")
    args = p.parse_args(argv)
    command = " ".join([".venv/bin/python", "bench/run_all.py", *map(shlex.quote, argv or
                                                                     sys.argv[1:])])
    head = machine()
    repeat, rounds, budget = (3, 2, 15.0) if args.quick else (5, 5, 30.0)
    acc_names = accuracy.QUICK if args.quick else accuracy.SUITE
    acc_budget = accuracy.QUICK_BUDGET_S if args.quick else accuracy.BUDGET_S
    sections: dict[str, str] = {}
    plan: list[tuple[str, Callable[[], str]]] = [
        ("1. Accuracy: quadscope vs big_O on the same sweeps",
         lambda: accuracy.markdown(
             accuracy.measure(acc_names, repeat, acc_budget), repeat, acc_budget)
         + "\n\n" + accuracy.measure_real_both(3, accuracy.REAL_BUDGET_S)),
        ("2. Harness overhead: quadscope vs hyperfine -N on /bin/true",
         lambda: overhead.section(3 * rounds, 300)),
        ("3. Time to verdict: adaptive vs a fixed doubling grid",
         lambda: printed(time_to_verdict.main,
                         ["--quick", "--budget", str(budget)] if args.quick
                         else ["--budget", str(budget)])),
        ("4. Culprits: does `quadscope profile` name the function that grows?",
         lambda: printed(culprits.main, ["--quick"] if args.quick else [])),
        ("5. Calibration: simulated sweeps of known truth",
         lambda: printed(calibration.main, ["--quick"] if args.quick else
                         ["--per-class", "1000", "--adaptive-per-class", "1000",
                          "--adaptive-per-mixed", "200"])),
        ("6. The exact meter: instructions against wall time",
         lambda: printed(exact_meter.main, ["--quick"] if args.quick else [])),
        ("7. Python functions: in-process timing against pyperf",
         lambda: printed(pyfunc.main, ["--quick"] if args.quick else [])),
        ("8. Reliability: bad inputs and faults",
         lambda: printed(reliability.main, ["--quick"] if args.quick else [])),
        ("9. The store's write rate: SQLite vs PostgreSQL",
         lambda: printed(store_writes.main, ["--quick"] if args.quick else [])),
        ("10. CLI start-up: quadscope --help against Python itself",
         lambda: printed(startup.main, ["--quick"] if args.quick else [])),
        ("11. Bisect: the commit that changed the growth, against sweeping every commit",
         lambda: printed(bisect_commits.main, ["--quick"] if args.quick else [])),
        ("12. History: steps judged from each sweep's own intervals",
         lambda: printed(history_steps.main, ["--quick"] if args.quick else [])),
        ("13. Following the deciding size: does it decide?",
         lambda: printed(decide_n.main, ["--per-law", "12"] if args.quick else
                         ["--per-law", "72"])),
        ("14. Gate stability: a blatant quadratic fails, its fix passes, every run",
         lambda: "\n\n".join(printed(gate_stability.main,
                                      ["--runs", "5" if args.quick else "20", *busy])
                              for busy in ([], ["--busy"]))),
        ("15. Several sizes: do the exponents' intervals cover the truth?",
         lambda: printed(multi_calibration.main, ["--trials", "3" if args.quick else "10"])),
        ("16. Analysis cost: `quadscope show` against an earlier commit",
         lambda: "\n\n".join(printed(analysis_cost.main,
                                      [*(["--quick"] if args.quick else []), *busy])
                              for busy in ([], ["--busy"]))),
    ]
    t0 = time.monotonic()
    only = {int(x) for x in args.only.split(",") if x.strip()}
    kept = _sections(OUT.read_text()) if only and OUT.exists() else {}
    for title, _ in plan:
        sections[title] = kept.get(title, "(not measured yet)")
    for title, fn in plan:
        if only and int(title.split(".", 1)[0]) not in only:
            continue
        log(f"bench: {title}")
        sections[title] = fn()
        OUT.write_text(render(head, command, sections))
        log(f"bench: wrote {OUT.name} ({time.monotonic() - t0:.0f} s so far)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
