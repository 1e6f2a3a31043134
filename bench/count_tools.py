"""One exact count, QEMU against Valgrind's Cachegrind (the named peer), side by side.

For every accuracy-suite workload (quadscope.workloads) at its smallest and
fourth-smallest suggested size, and for CPython programs (`list.insert(0)`,
`sorted`, `python3 -c pass`), each tool counts the same held-still argv
(`measure.exact.hold_still`, as `--meter instructions` does) three times,
alternating; the table gives each tool's median seconds per count, their
ratio (Cachegrind / QEMU: how many times faster QEMU counts), whether QEMU's
three counts were the same, and the growth each tool reads between the two
sizes (count at the larger size / at the smaller): the class a sweep would
fit comes from these ratios, so they must agree, not the counts themselves
(each tool counts its own runtime's start differently: the last two columns
split the count into the work added between the sizes, which both tools must
count alike, and what each counts at the smaller size).

usage: .venv/bin/python bench/count_tools.py [--quick] [--busy]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import busy_load, log, machine, table

from quadscope.measure import qemu
from quadscope.measure.exact import Cachegrind, CountingTool, InstructionMeter, find_valgrind
from quadscope.measure.launcher import ProcessExecutor
from quadscope.workloads import SUITE, WORKLOADS, build

REPEATS = 3
PY = sys.executable
PYTHON_CASES = (
    ("python -c pass", (PY, "-c", "import sys; sys.argv[1]"), (1, 4)),
    ("list.insert(0)", (PY, "-c", "l = []\nfor i in range(int(__import__('sys').argv[1])): "
                        "l.insert(0, i)"), (4000, 16000)),
    ("sorted", (PY, "-c", "import random, sys; random.seed(1); "
                "sorted(random.random() for _ in range(int(sys.argv[1])))"), (20000, 80000)),
)


def cases(quick: bool) -> list[tuple[str, tuple[str, ...], tuple[int, int]]]:
    """(name, argv before n, (small n, large n)) for every case measured."""
    names = ("constant", "sort", "insertion_sort") if quick else SUITE
    out = []
    for name in names:
        w = WORKLOADS[name]
        if w.needs_dir or w.mode != "sizes":
            continue
        sizes = w.sizes
        out.append((name, (str(build(name)),), (sizes[0], sizes[min(3, len(sizes) - 1)])))
    return out + [(n, a, s) for n, a, s in PYTHON_CASES]


def one(meter: InstructionMeter, argv: Sequence[str]) -> tuple[float, int | None]:
    t0 = time.monotonic()
    count = meter.count(argv, 600.0)
    return time.monotonic() - t0, count


def measure(quick: bool) -> list[list[object]]:
    emulator = qemu.find()
    if emulator is None:
        raise SystemExit("count_tools: QEMU cannot count here (scripts/setup installs qemu-user)")
    runner = ProcessExecutor()
    tools: dict[str, CountingTool] = {"qemu": emulator, "cachegrind": Cachegrind(find_valgrind())}
    rows = []
    for name, argv, (small, large) in cases(quick):
        seconds: dict[str, list[float]] = {t: [] for t in tools}
        counts: dict[tuple[str, int], list[int | None]] = {}
        for n in (small, large):
            for _ in range(REPEATS):
                for label, tool in tools.items():  # alternating: the same load on both
                    s, c = one(InstructionMeter(runner, runner, tool), [*argv, str(n)])
                    counts.setdefault((label, n), []).append(c)
                    if n == large:
                        seconds[label].append(s)
        med = {t: statistics.median(v) for t, v in seconds.items()}
        growth = {t: _growth(counts[(t, small)], counts[(t, large)]) for t in tools}
        same = all(len(set(counts[("qemu", n)])) == 1 for n in (small, large))
        rows.append([name, f"{small}→{large}", f"{med['qemu']:.3f} s", f"{med['cachegrind']:.3f} s",
                     f"{med['cachegrind'] / med['qemu']:.1f}×", "yes" if same else "no",
                     growth["qemu"], growth["cachegrind"], _added(counts),
                     _start(counts, small)])
        log(f"{name}: {rows[-1][2:]}")
    return rows


def _added(counts: dict[tuple[str, int], list[int | None]]) -> str:
    """QEMU's count of the work added between the two sizes over Cachegrind's: 1 when both
    count the same instructions of the program's own loop."""
    (q_s, q_l), (c_s, c_l) = ([counts[k][0] for k in counts if k[0] == t] for t in
                              ("qemu", "cachegrind"))
    if None in (q_s, q_l, c_s, c_l) or c_l == c_s:
        return "—"
    return f"{(q_l - q_s) / (c_l - c_s):.4f}"  # type: ignore[operator]


def _start(counts: dict[tuple[str, int], list[int | None]], small: int) -> str:
    q, c = counts[("qemu", small)][0], counts[("cachegrind", small)][0]
    return "—" if q is None or c is None else f"{q - c:+,}"


def _growth(small: list[int | None], large: list[int | None]) -> str:
    if not small or not large or small[0] is None or large[0] is None:
        return "—"
    return f"×{large[0] / small[0]:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="three workloads and the Python cases")
    ap.add_argument("--busy", action="store_true", help="under ../shared/tools/busy --cores 1 "
                    "--memory 64")
    args = ap.parse_args(argv)
    facts = machine()
    with busy_load(args.busy):
        rows = measure(args.quick)
    ratios = [float(str(r[4]).rstrip("×")) for r in rows]
    print(f"# One count: QEMU against Cachegrind ({'busy' if args.busy else 'quiet'})\n")
    print(", ".join(f"{k} {v}" for k, v in facts.items()) + "\n")
    print(table(["case", "n", "QEMU s/count (large n)", "Cachegrind s/count",
                 "Cachegrind / QEMU", "QEMU repeats exactly", "QEMU growth",
                 "Cachegrind growth", "work added, QEMU / Cachegrind",
                 "count at small n, QEMU − Cachegrind"], rows))
    print(f"\nmedian Cachegrind / QEMU: {statistics.median(ratios):.1f}× over {len(rows)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
