"""`quadscope profile RUN`: sample a stored sweep at a few sizes and name the culprits.

Contract: options -> stored sweep -> sampler -> `profile_sweep` -> for a
native program, Callgrind's exact per-function growth (`--callgrind`, see
`profile.exact_attach`) -> blob "profile" in the store -> culprit sentence,
culprits table, file paths, fault diagnosis, notes.
`profile_stored(args, sweep, store)` is the same without the table, for
`quadscope run --profile`; it returns the `Attribution` the report shows.
`profile_axes(args, sweep, store)` profiles a sweep over several sizes along
each axis's line through its base point (`profile.axes`), printing each
axis's culprit sentence, culprits and notes, and storing each as blob
"profile-AXIS"; `quadscope profile` does the same for such a sweep. A
missing or unusable perf is one sentence (exit 7), unless Callgrind can count
the native program alone (then its profile has no time samples, a note
says); a sweep without one successful run another (exit 6); the sweep's
stored results are untouched either way.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope.commands.common import add_store_option, open_store
from quadscope.errors import FitRefusedError, ToolMissingError, UsageError
from quadscope.textsafe import visible
from quadscope.units import fmt_seconds

if TYPE_CHECKING:  # the rest is imported where used: `quadscope --help` stays cheap
    from rich.text import Text

    from quadscope.model import Run, Sweep
    from quadscope.profile.axes import AxisLine
    from quadscope.profile.callgrind import CallgrindRuns
    from quadscope.profile.exact_growth import ExactGrowth
    from quadscope.profile.records import Attribution
    from quadscope.store import Store

EPILOG = """\
examples:
  quadscope profile last
  quadscope profile 12 --sizes 1e3..1e5*10
  quadscope profile mysweep --out prof/ --no-overhead
Folded stacks (flamegraph.pl / speedscope) and a differential flame graph are
written to --out, by default beside the results database.
"""


def register(sub: Any) -> None:
    p = sub.add_parser("profile", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_ref", metavar="RUN", help="a sweep id, name, or `last`")
    p.add_argument("--sizes", dest="profile_sizes", metavar="SPEC", default=None,
                   help="sizes to profile [4–5 of the sweep's sizes, spread geometrically]")
    p.add_argument("--out", dest="profile_out", metavar="DIR", default=None,
                   help="where folded stacks and the flame graph go "
                        "[<db dir>/profile/<db name>-sweep-<id>]")
    p.add_argument("--callgrind", choices=("auto", "on", "off"), default="auto",
                   help="count a native program's functions exactly under valgrind's callgrind "
                        "at its smallest sizes [auto: when valgrind is installed and the counts "
                        "are predicted to cost no more than the timed runs and the sampling]")
    p.add_argument("--no-overhead", action="store_true",
                   help="skip measuring perf's overhead (saves a few seconds)")
    add_store_option(p)
    p.set_defaults(func=run)


# A run under the profiler is slower than a timed run (py-spy --native 3-4.5x): the sweep's
# --timeout, stretched by this much, bounds each recording of one run.
PROFILER_SLOWING = 5.0
# Without --timeout a recording is bounded by what the sweep measured: this many times its
# slowest run (twice the profiler's slowing), never less than the floor (a Python child's
# start under py-spy --native, about 1 s, with room). 600 s each was the bound before.
MEASURED_TIMES = 10.0
MEASURED_FLOOR_S = 10.0


def recording_limit(timeout_s: float | None, costs_s: Sequence[float],
                    beyond_measured: bool = False) -> tuple[float | None, str]:
    """How long one run may take under the profiler, and why, in words for the note of a
    recording it stops: the sweep's --timeout (`timeout_s`) stretched by PROFILER_SLOWING;
    else MEASURED_TIMES the slowest of `costs_s` (what one profiled run cost when timed),
    at least MEASURED_FLOOR_S; None (the samplers' own limit) when nothing was measured or
    a profiled size lies `beyond_measured`."""
    if timeout_s is not None:
        return timeout_s * PROFILER_SLOWING, f"the sweep's --timeout × {PROFILER_SLOWING:g}"
    if not costs_s or beyond_measured:
        return None, ""
    slowest = max(costs_s)
    return (max(MEASURED_FLOOR_S, MEASURED_TIMES * slowest),
            f"no --timeout was given: {MEASURED_TIMES:g}× the sweep's slowest timed run, "
            f"{fmt_seconds(slowest)}, at least {fmt_seconds(MEASURED_FLOOR_S)}")


def _run_costs(runs: Sequence[Run], calls: dict[int, int] | None) -> list[float]:
    """What one profiled run costs, from the timed runs: a run's wall time, or for a
    function target its median call times the calls its profiled child makes."""
    by_size: dict[int, list[float]] = {}
    for r in runs:
        if r.measurement.ok and not r.warmup:
            by_size.setdefault(r.size_n, []).append(r.measurement.wall_s)
    if calls is None:
        return [t for ts in by_size.values() for t in ts]
    return [statistics.median(ts) * calls.get(n, 1) for n, ts in by_size.items()]


def _out_dir(args: argparse.Namespace, sweep: Sweep) -> Path:
    from quadscope.store import as_location, default_db_path

    given = getattr(args, "profile_out", None)
    if given:
        if given == "-":  # once a folder named "-": every other output's `-` is stdout
            raise UsageError("--out writes a folder of files (folded stacks, the flame graph): "
                             "give a directory, not -")
        if Path(given).exists() and not Path(given).is_dir():  # refused before any sampling
            raise UsageError(f"--out {visible(given)} is a file; name a directory for the "
                             "folded stacks and the flame graph")
        return Path(given)
    db = as_location(getattr(args, "db", None))
    # A store on a server has no folder of its own: the stacks go beside the default one.
    folder = db.parent if isinstance(db, Path) else default_db_path(env={}).parent
    return folder / "profile" / profile_dir_name(db, sweep.id)


def profile_dir_name(db: Path | str, sweep_id: int) -> str:
    """A sweep's profile folder, unique among the stores whose folders it shares: sweep ids
    count from 1 in every store, so two stores side by side (`--db a.db`, `--db b.db`, or a
    server's databases, whose stacks all go beside the default store) each had a
    `profile/sweep-1`, the second overwriting the first. Named by the store: "a-sweep-1",
    "results-sweep-1", a server's "<database>-sweep-1"."""
    if isinstance(db, Path):
        tag = db.stem
    else:
        from urllib.parse import urlsplit

        tag = urlsplit(db).path.strip("/") or urlsplit(db).hostname or "server"
    tag = re.sub(r"[^A-Za-z0-9._-]+", "_", tag).strip("._") or "store"
    return f"{tag}-sweep-{sweep_id}"


def _profile(args: argparse.Namespace, stored: Sweep, store: Store,
             line: AxisLine | None = None) -> Attribution:
    """Profile `stored`, or with `line` one axis of a sweep over several sizes (its line
    through the base point: `profile.axes`), stored as blob "profile-AXIS"."""
    # The samplers and the fitting they use (scipy) load only when a profile is taken.
    from dataclasses import replace

    from quadscope.analyse.fitting import fit_metric
    from quadscope.profile.driver import choose_sampler, choose_sizes, profile_sweep
    from quadscope.profile.pytarget import NOTE as PYTARGET_NOTE
    from quadscope.profile.pytarget import (
        CallsSampler,
        calls_per_run,
        function_name,
        profiled_sweep,
        with_call_growth,
    )
    from quadscope.run.sizes import parse_sizes

    spec = getattr(args, "profile_sizes", None)
    sizes = parse_sizes(spec) if spec is not None else None
    sweep = stored if line is None else line.sweep
    runs = store.runs(sweep.id) if line is None else list(line.runs)
    if not any(r.measurement.ok and not r.warmup for r in runs):
        raise FitRefusedError(
            f"sweep {sweep.id} has no successful run to profile"
            + (f" (all {len(runs)} failed)" if runs else " (it has no runs)")
            + f": fix the command and run the sweep again; `quadscope show {sweep.id}` "
            "shows why they failed")
    # The start-up runs measured the program starting, not growing: no size to profile at.
    runs = [r for r in runs if r.size_n != sweep.startup_n] or runs
    out_dir = _out_dir(args, stored) / ("" if line is None else f"axis-{line.axis}")
    mode = getattr(args, "callgrind", "auto")
    # A python:MODULE:FUNC target runs in quadscope's own process: a child Python making
    # the call is what the sampler watches (profile/pytarget.py says why).
    watched = profiled_sweep(sweep)
    measured = sorted({r.size_n for r in runs if r.measurement.ok and not r.warmup})
    limit_s, limit_why = recording_limit(
        sweep.timeout_s, _run_costs(runs, None if watched is sweep else calls_per_run(runs)),
        beyond_measured=bool(sizes) and max(sizes or (0,)) > measured[-1])
    try:
        sampler = choose_sampler(watched.command if not watched.shell else ("/bin/sh",),
                                 light=watched is not sweep, timeout_s=limit_s,
                                 timeout_why=limit_why)
    except ToolMissingError as missing:  # no perf: Callgrind alone still names the functions
        attribution = _exact_only(mode, sweep, runs, missing)
    else:
        # The function's runs time the call alone; the child also starts and builds the
        # argument: it repeats the call, and its samples are scaled to their own time.
        own = watched is sweep
        if not own:
            sampler = CallsSampler(sampler, calls_per_run(runs), function_name(sweep.command))
        sampling_from = time.monotonic()
        attribution = profile_sweep(
            watched, sizes or (None if own else choose_sizes(measured)), sampler=sampler,
            out_dir=out_dir, runs=runs if own else (),
            measure_overhead=not getattr(args, "no_overhead", False),
            progress=_say,
        )
        if not own:
            attribution = with_call_growth(
                replace(attribution, notes=(*attribution.notes, PYTARGET_NOTE)),
                sweep.command, runs, fit=fit_metric, seed=sweep.seed)
        # Callgrind may cost what the user already waited for: the runs and the sampling.
        attribution = _with_exact(mode, sweep, runs, attribution,
                                  sampled_s=time.monotonic() - sampling_from)
    # Stored as soon as it exists, so a failing print cannot lose it.
    store.put_blob(stored.id, "profile" if line is None else f"profile-{line.axis}",
                   attribution.to_dict())
    return attribution


def _say(msg: str) -> None:
    print(f"quadscope: {msg}", file=sys.stderr)


def _count_exact(mode: str, sweep: Sweep, runs: Sequence[Run],
                 sampled_s: float = 0.0) -> tuple[CallgrindRuns, ExactGrowth]:
    from quadscope.measure.exact import find_valgrind
    from quadscope.profile.callgrind import count_sweep, sweep_seconds
    from quadscope.profile.exact_growth import exact_growth

    what = "the timed runs and the sampling" if sampled_s > 0 else "the timed runs"
    counted = count_sweep(sweep, runs, valgrind=find_valgrind(), strict=mode == "auto",
                          budget_s=sweep_seconds(runs) + sampled_s, budget_what=what,
                          progress=_say)
    return counted, exact_growth(counted.sizes, counted.counts, seed=sweep.seed)


def _exact_only(mode: str, sweep: Sweep, runs: Sequence[Run],
                missing: ToolMissingError) -> Attribution:
    """Callgrind's profile where no sampler works; without it, the sampler's own error.

    Here Callgrind is the whole profile, not a second opinion beside the samples, so
    `auto` counts whatever it costs (as `on`), and the note on its budget says what it took.
    """
    from quadscope.profile.exact_attach import exact_attribution, wants_exact

    if mode == "off" or (mode == "auto" and not wants_exact(sweep.command)):
        raise missing
    try:
        counted, growth = _count_exact("on", sweep, runs)
    except (ToolMissingError, FitRefusedError):
        raise missing from None
    return exact_attribution(sweep.id, growth, counted, str(missing))


def _with_exact(mode: str, sweep: Sweep, runs: Sequence[Run], a: Attribution, *,
                sampled_s: float = 0.0) -> Attribution:
    """`a` with Callgrind's exact per-function growth, for a native program (`--callgrind`).

    In "auto" a missing valgrind or a failed count is a note, never a failed profile; a
    count predicted over its budget is skipped, and `extra["callgrind"]` says what it
    would have cost.
    """
    from dataclasses import replace

    from quadscope.profile.callgrind import CallgrindSkipped
    from quadscope.profile.exact_attach import attach_exact, wants_exact

    if mode == "off" or (mode == "auto" and not wants_exact(sweep.command)):
        return a
    try:
        counted, growth = _count_exact(mode, sweep, runs, sampled_s)
    except (ToolMissingError, FitRefusedError) as e:
        if mode == "on":
            raise
        if isinstance(e, CallgrindSkipped):
            extra = {**a.extra, "callgrind": {"skipped": True, "predicted_s": e.predicted_s,
                                              "budget_s": e.budget_s, "spent_s": e.spent_s}}
            return replace(a, notes=(*a.notes, str(e)), extra=extra)
        return replace(a, notes=(*a.notes, f"no exact per-function counts: {e}"))
    return attach_exact(a, growth, counted)


def profile_stored(args: argparse.Namespace, sweep: Sweep, store: Store) -> Attribution:
    from rich.console import Console  # here, not at the top: `quadscope --help` stays instant

    attribution = _profile(args, sweep, store)
    console = Console(file=sys.stderr, highlight=False)
    for item in footer(attribution, console.width):
        console.print(item, no_wrap=True)
    return attribution


def profile_axes(args: argparse.Namespace, sweep: Sweep, store: Store) -> list[Attribution]:
    """`run --profile` over several sizes: each axis profiled along its line through the
    base point (`profile.axes`), its culprit sentence, culprits and notes on stderr."""
    from rich.console import Console
    from rich.text import Text

    from quadscope.profile.axes import axis_lines, axis_sentence
    from quadscope.render.terminal import culprits_table

    console = Console(file=sys.stderr, highlight=False)
    lines = axis_lines(sweep, store.runs(sweep.id))
    if not lines:
        console.print(Text("no axis has 3 measured sizes through one point: nothing to profile",
                           style="yellow"))
    out = []
    for line in lines:
        _say(f"profiling along {visible(line.axis)} ({visible(line.where())})")
        a = _profile(args, sweep, store, line)
        out.append(a)
        console.print(Text(f"along {visible(line.axis)} ({visible(line.where())}):",
                           style="bold"))
        said = axis_sentence(a.culprit_sentence, line.axis) if a.culprit_sentence else \
            "no function named from the samples"
        console.print(Text(visible(said), style="bold"))
        table = culprits_table(a.culprits, console.width, limit=5)
        if table is not None:
            console.print(table)
        for item in footer(a, console.width):
            console.print(item, no_wrap=True)
    return out


def footer(a: Attribution, width: int = 80) -> list[Text]:
    """Where the profile went, then its page faults, overhead and notes: each a paragraph
    broken between clauses to `width` with its continuations indented (`fit_words`), as
    the report's own notes, not cut mid-word by the console with trailing spaces."""
    from rich.text import Text

    from quadscope.render.terminal import fit_words

    said: list[tuple[str, str]] = []
    if a.flame_svg_path:
        said.append((f"flame graph: {visible(a.flame_svg_path)}", ""))
    if a.folded:
        where = Path(a.folded[0]).parent
        said.append((f"folded stacks: {visible(str(where))}/folded-n<N>.txt, one per size",
                     "dim"))
    said += [(f"page faults: {visible(s)}", "bold") for s in a.fault_sentences]
    if a.overhead:
        o = a.overhead
        said.append((f"profiler overhead at n = {o.size_n}: {fmt_seconds(o.plain_wall_s)} → "
                     f"{fmt_seconds(o.profiled_wall_s)} under {a.sampler} ({o.ratio:.2f}×), "
                     f"plus {fmt_seconds(o.startup_s)} per recording to start it", "dim"))
    said += [(f"note: {visible(note)}", "yellow") for note in a.notes]
    return [Text(fit_words(text, width), style=style, no_wrap=True, overflow="ellipsis")
            for text, style in said]


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.text import Text

    from quadscope.render.terminal import culprits_table, fit_words

    with open_store(args) as store:
        sweep = store.get_sweep(args.run_ref)
        if sweep.axes:  # several sizes: one profile per axis, printed as it is taken
            profile_axes(args, sweep, store)
            return 0
        attribution = _profile(args, sweep, store)
    console = Console(highlight=False)
    n0, n1 = attribution.sizes[0], attribution.sizes[-1]
    console.print(Text(f"sampled at n = {n0}..{n1} with {attribution.sampler}", style="dim"))
    if attribution.culprit_sentence:
        console.print(Text(fit_words(visible(attribution.culprit_sentence), console.width),
                           style="bold"), no_wrap=True)
    table = culprits_table(attribution.culprits, console.width, limit=10)
    if table is not None:
        console.print(table)
    else:
        console.print("no function holds a visible share of the time at the largest n")
    for item in footer(attribution, console.width):
        console.print(item, no_wrap=True)
    return 0
