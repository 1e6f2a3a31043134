"""Count a sweep's command under Callgrind at a few small sizes, within a time budget.

Contract: `count_sweep(sweep, runs, *, valgrind=, budget_s=, run=, clock=, strict=)`
runs the sweep's command (variant A) held still (`measure.exact.hold_still`)
under `valgrind --tool=callgrind --trace-children=yes`, one run per size
(exact counts repeat, so one is the whole data), starting at the smallest
size the sweep measured, and returns a `CallgrindRuns`: the sizes counted,
each size's merged `CallgrindCounts` (every process the command started),
the seconds spent and notes. The sizes are chosen by `plan_sizes` within the
budget, by default the timed sweep's own wall time (`sweep_seconds`), never
under `MIN_BUDGET_S` (a sweep of a millisecond program lasts less than
Valgrind's start-up times a fit's sizes). After the smallest size the
slowdown under Callgrind is bounded, so each further size's cost is predicted
from its timed wall time (`predicted_s`: Valgrind's start-up once per count,
the work at most `MAX_SLOWDOWN` times its timed wall). At least `MIN_SIZES` sizes are
counted whatever the budget (a fit needs them); a note says when that went
over it, and with `strict=True` (`--callgrind auto`) counts predicted to go
over it are not made: FitRefusedError says so after the first size.
`run(argv, timeout_s) -> bool` (did it succeed) is the side effect, faked in
tests; `clock` too.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quadscope.errors import FitRefusedError
from quadscope.measure.exact import find_valgrind, hold_still
from quadscope.model import Run, Sweep
from quadscope.profile.callgrind_format import CallgrindCounts, merge, parse_callgrind
from quadscope.profile.driver import choose_sizes
from quadscope.run.spec import substitute

MIN_SIZES = 4  # exact counts at 3 sizes a factor 2 apart cannot tell 1 from n² (fit_metric)
MAX_SIZES = 5
MAX_SLOWDOWN = 100.0  # Callgrind runs a program 20-100× slower (its work, not its start-up)
MIN_TIMEOUT_S = 60.0
# Valgrind alone starts in ~0.25 s: a sweep of a fast program lasts less than one count, so
# the budget never goes under this many seconds (perf's sampling costs ~1 s per size too).
MIN_BUDGET_S = 5.0

RunFn = Callable[[Sequence[str], "float | None"], bool]


@dataclass(frozen=True, slots=True)
class CallgrindRuns:
    sizes: tuple[int, ...]
    counts: tuple[CallgrindCounts, ...]
    spent_s: float
    budget_s: float
    notes: tuple[str, ...] = ()


def callgrind_prefix(valgrind: str, out_dir: str) -> list[str]:
    """Callgrind following every process and exec, one output file per process."""
    return [valgrind, "-q", "--tool=callgrind", "--trace-children=yes",
            f"--callgrind-out-file={out_dir}/callgrind.%p"]


def _subprocess_run(argv: Sequence[str], timeout_s: float | None) -> bool:
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=timeout_s, check=False)
    except (subprocess.TimeoutExpired, OSError):
        return False
    return done.returncode == 0


def _good(runs: Sequence[Run]) -> list[Run]:
    return [r for r in runs if r.variant == "A" and not r.warmup and r.measurement.ok]


def sweep_seconds(runs: Sequence[Run]) -> float:
    """The wall time the timed sweep spent, every run and warm-up included."""
    return sum(r.measurement.wall_s for r in runs)


def wall_by_size(runs: Sequence[Run]) -> dict[int, float]:
    """Median wall seconds of the good runs per size."""
    per: dict[int, list[float]] = {}
    for r in _good(runs):
        per.setdefault(r.size_n, []).append(r.measurement.wall_s)
    return {n: statistics.median(v) for n, v in per.items()}


def predicted_s(wall_s: Mapping[int, float], first_s: float, n: int) -> float:
    """Seconds to count size n: the first count plus the extra timed wall, slowed down.

    The slowdown is the first count's seconds over its timed wall, at most
    `MAX_SLOWDOWN`: the first count of a millisecond program is almost all
    Valgrind's start-up (1-3 s), and scaling that whole by the walls predicted 39 s for
    a count that took 2.7 s (csvjoin at n = 2000..16000). Never below `first_s`:
    the start-up is paid every run.
    """
    n0 = min(wall_s)
    slowdown = min(first_s / wall_s[n0], MAX_SLOWDOWN) if wall_s[n0] > 0 else 0.0
    return max(first_s, first_s + slowdown * (wall_s[n] - wall_s[n0]))


def plan_sizes(wall_s: Mapping[int, float], first_s: float, remaining_s: float,
               count: int = MAX_SIZES, min_count: int = MIN_SIZES) -> tuple[int, ...]:
    """Sizes to count, the smallest (already counted, in `first_s`) first.

    A size's predicted cost is `predicted_s`. The largest top size whose
    geometric pick of `count` sizes fits in `remaining_s` wins; when none
    does, the `min_count` smallest sizes.
    """
    sizes = sorted(wall_s)
    if not sizes:
        return ()
    n0 = sizes[0]
    for top in range(len(sizes), 0, -1):
        picks = choose_sizes(sizes[:top], count)
        if len(picks) < min(min_count, len(sizes)):
            break
        if sum(predicted_s(wall_s, first_s, n) for n in picks if n != n0) <= remaining_s:
            return picks
    return tuple(sizes[:min_count])


def count_once(argv: Sequence[str], *, valgrind: str, run: RunFn,
               timeout_s: float | None) -> CallgrindCounts | None:
    """The merged counts of one run of `argv` under Callgrind; None when it failed."""
    with tempfile.TemporaryDirectory(prefix="quadscope-callgrind-") as out:
        if not run(hold_still([*callgrind_prefix(valgrind, out), *argv]), timeout_s):
            return None
        parts = []
        for name in sorted(os.listdir(out)):
            with open(os.path.join(out, name), errors="replace") as f:
                parts.append(parse_callgrind(f.read()))
        return merge(parts) if parts else None


def count_sweep(sweep: Sweep, runs: Sequence[Run], *, valgrind: str | None = None,
                budget_s: float | None = None, run: RunFn = _subprocess_run,
                clock: Callable[[], float] = time.monotonic, strict: bool = False,
                progress: Callable[[str], None] | None = None) -> CallgrindRuns:
    """Counts at the sizes `plan_sizes` picks within `budget_s` (see the module docstring)."""
    say = progress or (lambda _msg: None)
    tool = valgrind or find_valgrind()
    walls = wall_by_size(runs) or {n: 0.0 for n in sweep.sizes}
    budget = max(MIN_BUDGET_S, sweep_seconds(runs)) if budget_s is None else budget_s
    timeout = max(MIN_TIMEOUT_S, 2 * budget)
    start = clock()
    counted: dict[int, CallgrindCounts] = {}

    def count(n: int) -> None:
        say(f"counting n={n} under callgrind")
        got = count_once(substitute(sweep.command, sweep.shell, n), valgrind=tool, run=run,
                         timeout_s=timeout)
        if got is None:
            raise FitRefusedError(f"the command failed under callgrind at n={n}: run it with "
                                  f"`valgrind --tool=callgrind` to see why")
        counted[n] = got

    n0 = min(walls)
    count(n0)
    first = clock() - start
    plan = plan_sizes(walls, first, budget - first)
    predicted = first + sum(predicted_s(walls, first, n) for n in plan if n != n0)
    if strict and predicted > budget:
        raise FitRefusedError(
            f"callgrind would take about {predicted:.0f} s at n = {plan[0]}..{plan[-1]}, over "
            f"its budget of {budget:.0f} s (the timed sweep's time): `--callgrind on` counts "
            "anyway")
    for n in plan:
        if n not in counted:
            count(n)
    spent = clock() - start
    notes = []
    if spent > budget:
        notes.append(f"callgrind took {spent:.1f} s, over its budget of {budget:.1f} s (the "
                     f"timed sweep's): {len(plan)} sizes is the fewest a fit can settle on")
    sizes = tuple(sorted(counted))
    return CallgrindRuns(sizes, tuple(counted[n] for n in sizes), spent, budget, tuple(notes))
