"""Count a sweep's command under Callgrind at a few small sizes, within a time budget.

Contract: `count_sweep(sweep, runs, *, valgrind=, budget_s=, run=, clock=, strict=)`
runs the sweep's command (variant A) held still (`measure.exact.hold_still`)
under `valgrind --tool=callgrind --trace-children=yes`, one run per size
(exact counts repeat, so one is the whole data), and returns a
`CallgrindRuns`: the sizes counted, each size's merged `CallgrindCounts`
(every process the command started), the seconds spent and notes.

The sizes (`plan_sizes`) are the fewest that settle a class on exact counts
and the cheapest: `MIN_SIZES` of the smallest sizes the sweep measured, the
top one raised until they span `MIN_SPAN` (exact a + b·f(n) counts at 4
sizes a factor 4 apart settle 1, n, n log n and n² with `fit_metric`; at 3
sizes the verdict's span check leaves every class open, so 3 are never
enough). Their cost is predicted before anything runs (`planned_s`):
Valgrind's start-up (`STARTUP_S`, stretched by the `run.counting.contention`
the timed runs met) once per count, plus the work at most `MAX_SLOWDOWN`
times its timed wall; after the first count, from what it took
(`predicted_s`). The budget is `budget_s`, by default the timed sweep's own
wall time (`sweep_seconds`); `commands.profile` passes everything the user
already waited for, the timed runs and the sampling. With `strict=True`
(`--callgrind auto`) a plan predicted over the budget is not counted:
`CallgrindSkipped` (a `FitRefusedError` carrying the prediction) says so,
before the first count or right after it. Otherwise (`--callgrind on`) every
planned size is counted and a note says when that went over the budget.
`run(argv, timeout_s) -> bool` (did it succeed) is the side effect, faked in
tests; `clock` too.

Where the time goes (BENCHMARKS.md §4): Valgrind's core starting, not
Callgrind's instrumentation: `valgrind --tool=none /bin/true` costs as much as
`--tool=callgrind /bin/true` (1.0 s and 0.85 s at load 9; 0.3 s quiet), and
counting csvjoin at n = 2000 only 0.97 s. Callgrind's defaults are already
the cheapest (`--read-inline-info=yes` +38%, `--cache-sim=yes` +25%,
`--dump-instr=yes` ±0), and `callgrind_prefix` states them. So the levers
are the number of counts and the budget.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quadscope.errors import FitRefusedError
from quadscope.measure.exact import FASTER, find_valgrind, hold_still
from quadscope.model import Run, Sweep
from quadscope.profile.callgrind_format import CallgrindCounts, merge, parse_callgrind
from quadscope.profile.child import run_bounded
from quadscope.profile.driver import choose_sizes
from quadscope.run.counting import contention
from quadscope.run.spec import run_command, substitute
from quadscope.scratch import scratch_dir

MIN_SIZES = 4  # exact counts at 3 sizes leave every class open (the verdict's span check)
MIN_SPAN = 4.0  # the counted sizes span at least this factor where the sweep's sizes allow
MAX_SLOWDOWN = 100.0  # Callgrind runs a program 20-100× slower (its work, not its start-up)
STARTUP_S = 0.3  # `valgrind --tool=callgrind /bin/true` on an idle core here: 0.25-0.35 s
MIN_TIMEOUT_S = 60.0

RunFn = Callable[[Sequence[str], "float | None"], bool]


class CallgrindSkipped(FitRefusedError):
    """`--callgrind auto` did not count: the plan was predicted over its budget."""

    def __init__(self, message: str, *, predicted_s: float, budget_s: float,
                 spent_s: float) -> None:
        super().__init__(message)
        self.predicted_s = predicted_s
        self.budget_s = budget_s
        self.spent_s = spent_s


@dataclass(frozen=True, slots=True)
class CallgrindRuns:
    sizes: tuple[int, ...]
    counts: tuple[CallgrindCounts, ...]
    spent_s: float
    budget_s: float
    notes: tuple[str, ...] = ()


def callgrind_prefix(valgrind: str, out_dir: str) -> list[str]:
    """Callgrind following every process and exec, one output file per process."""
    # The cheapest counting, said outright (a ~/.valgrindrc or VALGRIND_OPTS could turn them
    # on): inline info cost +38% and cache simulation +25% on csvjoin n = 2000 (§4).
    return [valgrind, "-q", "--tool=callgrind", "--trace-children=yes",
            "--read-inline-info=no", "--cache-sim=no", "--dump-instr=no", *FASTER,
            f"--callgrind-out-file={out_dir}/callgrind.%p"]


def _subprocess_run(argv: Sequence[str], timeout_s: float | None) -> bool:
    try:
        return run_bounded(argv, timeout_s).returncode == 0
    except OSError:
        return False


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


def plan_sizes(sizes: Sequence[int], count: int = MIN_SIZES,
               span: float = MIN_SPAN) -> tuple[int, ...]:
    """The `count` smallest sizes, the top one raised to the first at least `span` × the
    smallest (where there is one), the ones between spread geometrically."""
    ordered = sorted(set(sizes))
    if len(ordered) <= count:
        return tuple(ordered)
    top = next((i for i, n in enumerate(ordered)
                if i >= count - 1 and n >= span * ordered[0]), len(ordered) - 1)
    return choose_sizes(ordered[:top + 1], count)


def planned_s(wall_s: Mapping[int, float], plan: Sequence[int], runs: Sequence[Run]) -> float:
    """Seconds to count `plan` before any count: Valgrind's start-up, stretched by the
    contention the timed runs met, plus at most `MAX_SLOWDOWN` × the timed wall, per size."""
    start = STARTUP_S * contention(runs)
    return sum(start + MAX_SLOWDOWN * wall_s[n] for n in plan)


def count_once(argv: Sequence[str], *, valgrind: str, run: RunFn,
               timeout_s: float | None) -> CallgrindCounts | None:
    """The merged counts of one run of `argv` under Callgrind; None when it failed."""
    with scratch_dir("callgrind") as out:
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
                budget_what: str = "the timed sweep",
                progress: Callable[[str], None] | None = None) -> CallgrindRuns:
    """Counts at the sizes `plan_sizes` picks within `budget_s` (see the module docstring)."""
    say = progress or (lambda _msg: None)
    tool = valgrind or find_valgrind()
    walls = wall_by_size(runs) or {n: 0.0 for n in sweep.sizes}
    budget = sweep_seconds(runs) if budget_s is None else budget_s
    plan = plan_sizes(list(walls))
    timeout = max(MIN_TIMEOUT_S, 2 * budget)

    def over(predicted: float, spent: float) -> CallgrindSkipped:
        after = f" (after {spent:.1f} s on n = {plan[0]})" if spent else ""
        return CallgrindSkipped(
            f"Callgrind skipped{after}: its {len(plan)} counts at n = {plan[0]}..{plan[-1]} "
            f"would take about {predicted:.1f} s, more than the {budget:.1f} s {budget_what} "
            f"took; `--callgrind on` counts them anyway", predicted_s=predicted,
            budget_s=budget, spent_s=spent)

    if strict and (before := planned_s(walls, plan, runs)) > budget:
        raise over(before, 0.0)
    start = clock()
    counted: dict[int, CallgrindCounts] = {}

    def count(n: int) -> None:
        say(f"counting n={n} under callgrind")
        got = count_once(substitute(run_command(sweep), sweep.shell, n), valgrind=tool, run=run,
                         timeout_s=timeout)
        if got is None:
            raise FitRefusedError(f"the command failed under callgrind at n={n}: run it with "
                                  f"`valgrind --tool=callgrind` to see why")
        counted[n] = got

    n0 = plan[0]
    count(n0)
    first = clock() - start
    predicted = first + sum(predicted_s(walls, first, n) for n in plan[1:])
    if strict and predicted > budget:
        raise over(predicted, first)
    for n in plan[1:]:
        count(n)
    spent = clock() - start
    notes = []
    if spent > budget:
        notes.append(f"callgrind took {spent:.1f} s, over its budget of {budget:.1f} s "
                     f"({budget_what}): {len(plan)} sizes is the fewest a fit can settle on")
    sizes = tuple(sorted(counted))
    return CallgrindRuns(sizes, tuple(counted[n] for n in sizes), spent, budget, tuple(notes))
