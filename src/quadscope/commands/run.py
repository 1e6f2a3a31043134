"""`quadscope run`: sweep a command over n (or over launches), store every run, fit, report.

Contract: options -> spec -> session (`run.session`: host facts and skew
warnings, the meter's executor, each run stored as it ends) -> analysis ->
renderers, in that order. Ctrl-C stops the sweep, keeps what was measured and
names the `--resume` command; bad input is one sentence and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from quadscope import meters
from quadscope.analyse.ab_gate import parse_fail_on
from quadscope.commands.common import (
    add_output_options,
    add_store_option,
    add_view_options,
    check_outputs,
    fit_progress,
    open_store,
    print_analysis,
    split_command,
    write_outputs,
)
from quadscope.commands.gates import add_fail_on_option, add_gate_option, apply_fail_on
from quadscope.errors import GATE_FAILED_EXIT, Stopped, StoreError, UsageError
from quadscope.fleet import add_fleet_options
from quadscope.notice import error, notice

if TYPE_CHECKING:  # the rest is imported where used: `quadscope --help` stays cheap
    from quadscope.analyse.analysis import Analysis
    from quadscope.model import Run, Sweep
    from quadscope.profile.records import Attribution
    from quadscope.run.spec import SweepSpec
    from quadscope.store import Store


EPILOG = """\
examples:
  quadscope run --sizes 1e3..1e6 -- ./prog {n}
  quadscope run --sizes 100,200,400,800 --vs './fixed {n}' -- ./prog {n}
  quadscope run --accumulate --runs 200 -- ./launcher
  quadscope run --budget 60 --predict 30000 -- python3 script.py {n}
  # a Python function, then one whose argument make_input(n) builds, untimed:
  quadscope run --sizes 1e3..64e3 -- python:mymodule:myfunc {n}
  quadscope run --sizes 1e3..64e3 -- python:mymodule:myfunc:make_input {n}
  # the work's instructions counted exactly, whatever it costs:
  quadscope run --meter instructions --sizes 1e3..1e4 -- ./prog {n}
  # two sizes at once, over a grid, then adaptively from a start:
  quadscope run --sizes rows=50..400 --sizes cols=4..32 -- ./prog {rows} {cols}
  quadscope run --budget 30 --start rows=100 --start cols=4 -- ./p {rows} {cols}
The command after -- is run directly, never through a shell, unless --shell.
A second command after a standalone --vs inside the tail is swept as B:
  quadscope run --sizes 1e3..1e5 -- ./slow {n} --vs ./fast {n}
"""


def register(sub: Any) -> None:
    p = sub.add_parser("run", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("sizes")
    g.add_argument("--sizes", metavar="SPEC", action="append",
                   help="100,200,400 | 1e3..1e6 (doubling) | 1e3..1e6*4 | 0..1000+100; "
                        "several sizes: --sizes n=1e3..1e5 --sizes m=10..1000 with {n}, {m}")
    g.add_argument("--max-points", type=int, default=None, metavar="N",
                   help="several sizes: measure at most N points (the grid if it fits, else "
                        "lines through the middle and corners) [36]")
    g.add_argument("--startup-n", default="1", metavar="N|off",
                   help="with --sizes: also run the program at size N to measure its "
                        "start-up apart, used in the fit where it agrees [1]")
    g.add_argument("--budget", type=float, default=30.0, metavar="SECONDS",
                   help="adaptive mode (the default without --sizes): at most this long [30]")
    g.add_argument("--start", action="append", default=None, metavar="N",
                   help="adaptive mode: the first size, e.g. 1e4 [1]; over several sizes one "
                        "NAME=N each: --start rows=100 --start cols=4 with {rows}, {cols}")
    g.add_argument("--until", metavar="METRICS", default="",
                   help="adaptive mode: stop when these metrics (comma list) are confident "
                        "[every metric]")
    g.add_argument("--accumulate", action="store_true",
                   help="run the same command --runs times in a row and fit each launch's "
                        "cost against its index {i}")
    g.add_argument("--runs", type=int, default=100, metavar="K",
                   help="launches in --accumulate mode [100]")
    r = p.add_argument_group("runs")
    r.add_argument("--repeat", type=int, default=3, metavar="K", help="runs per size, at least [3]")
    r.add_argument("--warmup", type=int, default=1, metavar="W", help="warm-up runs [1]")
    r.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="kill a run's whole process group after S seconds")
    r.add_argument("--seed", type=int, default=0, help="seed of the randomised run order [0]")
    r.add_argument("--shell", action="store_true", help="run the command with /bin/sh -c")
    r.add_argument("--vs", metavar="'PROG2 ARG...'", default=None,
                   help="a second command to sweep over the same sizes (A B A B)")
    r.add_argument("--vs-shell", metavar="'STRING'", default=None,
                   help="a second command, run with /bin/sh -c")
    r.add_argument("--setup", metavar="'CMD {n}'", default=None,
                   help="a shell command run once per size before its runs, untimed "
                        "(e.g. build the input file)")
    r.add_argument("--prepare", metavar="'CMD {n}'", default=None,
                   help="a shell command run before every run, untimed (e.g. drop caches)")
    r.add_argument("--cpu", metavar="LIST", default=None,
                   help="pin every run to these CPUs, e.g. 1 or 0,2-3")
    r.add_argument("--meter", choices=meters.NAMES, default=meters.REGISTRY.default.name,
                   help="; ".join(m.describe for m in meters.REGISTRY if m.describe)
                        + f" [{meters.REGISTRY.default.name}]")
    r.add_argument("--fork", action="store_true",
                   help="python:MODULE:FUNC targets: one forked call per run instead of "
                        "calibrated in-process batches")
    r.add_argument("--no-perf", action="store_true",
                   help="do not count with perf (rusage and the clock only)")
    r.add_argument("--profile", action="store_true",
                   help="after the sweep, sample call stacks at several sizes and name the "
                        "functions that make it grow")
    r.add_argument("--callgrind", choices=("auto", "on", "off"), default="auto",
                   help="with --profile: count a native program's functions exactly under "
                        "valgrind's callgrind at its smallest sizes [auto: when installed and "
                        "predicted to cost no more than the timed runs and the sampling]")
    r.add_argument("--resume", metavar="RUN", default=None,
                   help="continue an interrupted sweep; its settings are reused")
    o = p.add_argument_group("results")
    o.add_argument("--predict", default=None, metavar="N",
                   help="extrapolate every metric to this size")
    o.add_argument("--name", default="", help="a name to find this sweep by")
    add_store_option(o)
    add_output_options(o)
    add_gate_option(o)
    add_fail_on_option(o)
    add_view_options(o)
    add_fleet_options(p.add_argument_group("fleet"))
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- PROG ARG... ({n} is the size)")
    p.set_defaults(func=run)


def parse_cpus(text: str | None) -> tuple[int, ...]:
    """`--cpu LIST` as CPU numbers this process may use; UsageError otherwise."""
    from quadscope.measure.system import parse_cpu_list

    if text is None:
        return ()
    try:
        cpus = parse_cpu_list(text)
    except ValueError as exc:
        raise UsageError(f"--cpu {text!r} is not a CPU list such as 1 or 0,2-3: {exc}") from None
    allowed = os.sched_getaffinity(0)
    if not cpus or not set(cpus) <= allowed:
        raise UsageError(f"--cpu {text!r}: the runs may use only CPUs "
                         f"{','.join(map(str, sorted(allowed)))} here")
    return cpus


def read_starts(args: argparse.Namespace) -> tuple[tuple[str, int], ...]:
    """The `--start` values: `args.start` becomes the one N (a string), and the named starts
    of adaptive mode over several sizes are returned (and kept in `args.starts`)."""
    if args.start is not None and not isinstance(args.start, list):
        return tuple(getattr(args, "starts", ()))
    from quadscope.run.axes import parse_starts

    items = args.start or []
    args.starts = parse_starts(items)
    if args.starts:
        args.start = str(args.starts[0][1])
    else:
        args.start = items[0].split("=", 1)[-1].strip() if items else "1"
    return tuple(args.starts)


def refuse_adaptive_vs(args: argparse.Namespace) -> None:
    """Adaptive mode over several sizes sweeps one command: its steps follow one verdict."""
    if (args.vs is not None or args.vs_shell is not None
            or split_command(args.command)[1] is not None):
        raise UsageError("adaptive mode over several sizes (--start NAME=N) sweeps one command; "
                         "compare two with fixed sizes: --sizes NAME=SPEC for each size and --vs")


def build_spec(args: argparse.Namespace, *, resolve: bool = True) -> SweepSpec:
    """The sweep the options ask for; `resolve=False` leaves finding the program to each
    --fleet node, which may have it where this machine does not."""
    from quadscope.measure.launcher import resolve_program
    from quadscope.measure.pyfunc import PREFIX, resolve_function
    from quadscope.run.sizes import parse_size, parse_sizes
    from quadscope.run.spec import SweepSpec, check_spec

    command, vs_tail = split_command(args.command)
    if not command or not command[0].strip():
        raise UsageError("no command to sweep: put it after `--`, e.g. quadscope run -- prog {n}")
    if args.shell and len(command) > 1:
        command = (" ".join(command),)
    vs: tuple[str, ...] | None = vs_tail
    vs_shell = False
    for option, value in (("--vs", args.vs), ("--vs-shell", args.vs_shell)):
        if value is not None and not value.strip():
            raise UsageError(f"{option} is empty: give the second command, e.g. {option} "
                             "'./fast {n}', or leave the option out")
    given = [x for x in (vs_tail, args.vs, args.vs_shell) if x is not None]
    if len(given) > 1:
        raise UsageError("give the second command once: --vs, --vs-shell or `-- A --vs B`")
    if args.vs:
        try:
            vs = tuple(shlex.split(args.vs))
        except ValueError as exc:
            raise UsageError(f"--vs {args.vs!r} does not parse as a command line: {exc}") from None
    if args.vs_shell:
        vs, vs_shell = (args.vs_shell,), True
    from quadscope.commands.multi import read_sizes

    if isinstance(args.sizes, list) or not hasattr(args, "axes"):
        read_sizes(args)
    axes = args.axes
    starts = read_starts(args)
    if args.accumulate and (args.sizes is not None or axes or starts):
        raise UsageError("--accumulate counts launches with --runs; it takes no --sizes or "
                         "named --start")
    if starts and (args.sizes is not None or axes):
        raise UsageError("--start NAME=N is adaptive mode over several sizes, which chooses "
                         "the sizes itself: give --sizes NAME=SPEC or --start NAME=N, not both")
    mode = ("accumulate" if args.accumulate else
            ("sizes" if args.sizes is not None or axes else "adaptive"))
    sizes = parse_sizes(args.sizes) if args.sizes is not None else ()
    if mode == "sizes" and not axes:
        from quadscope.commands.multi import refuse_other_placeholders

        refuse_other_placeholders([(command, args.shell), (vs, vs_shell)])
    multi: dict[str, Any] = {}
    if starts:  # adaptive mode over several sizes (run/multiadaptive.py)
        from quadscope.commands.multi import refuse_unsupported

        refuse_unsupported(args)
        refuse_adaptive_vs(args)
        multi = {"axes": tuple((name, (size,)) for name, size in starts), "points": ()}
    if axes:
        from quadscope.commands.multi import design_points, refuse_unsupported

        refuse_unsupported(args)
        sizes = axes[0].sizes
        multi = {"axes": tuple((a.name, a.sizes) for a in axes),
                 "points": design_points(args, axes)}
    for cmd, shell in ((command, args.shell), (vs, vs_shell)) if resolve else ():
        if cmd and cmd[0].startswith(PREFIX):
            if "" not in sys.path:
                sys.path.insert(0, "")  # like `python -m`: modules in the working directory
            resolve_function(cmd[0])
        elif cmd and not shell:
            resolve_program(cmd[0])
    spec = SweepSpec(
        command=command, name=args.name, shell=args.shell, vs_command=vs, vs_shell=vs_shell,
        mode=mode, sizes=sizes, repeat=args.repeat, warmup=args.warmup, timeout_s=args.timeout,
        budget_s=args.budget, start_n=parse_size(args.start, "--start"), runs=args.runs,
        seed=args.seed,
        predict_n=None if args.predict is None else parse_size(args.predict, "--predict"),
        until=tuple(m.strip() for m in args.until.split(",") if m.strip()),
        setup=args.setup, prepare=args.prepare, cpus=parse_cpus(args.cpu),
        meter=args.meter, fork=args.fork, startup_n=read_startup(args), **multi,
    )
    check_spec(spec)
    return spec


def read_startup(args: argparse.Namespace) -> int | None:
    """`--startup-n N|off`: the start-up size asked for, None when off."""
    text = str(getattr(args, "startup_n", "1")).strip()
    from quadscope.run.sizes import parse_size

    return None if text.lower() in ("off", "none", "no") else parse_size(text, "--startup-n")


def refuse_new_settings(args: argparse.Namespace) -> None:
    """`--resume` reuses the stored command and sizes: a new one given with it would be ignored."""
    command, _ = split_command(args.command)
    given = [flag for flag, value in (("a command after --", command),
                                      ("--sizes", args.sizes or getattr(args, "axes", ())),
                                      ("--vs", args.vs), ("--vs-shell", args.vs_shell),
                                      ("--accumulate", args.accumulate)) if value]
    if given:
        raise UsageError(f"--resume {args.resume} continues the stored sweep with its own "
                         f"command and sizes; drop {' and '.join(given)}, or start a new sweep "
                         "without --resume")


class RichProgress:
    """A progress bar with ETA on stderr (a budget bar in adaptive mode).

    The bar is updated at most every `every_s` of the sweep (and at its first
    run): an update costs tens of microseconds, as much as a short run's whole
    harness, and the eye cannot follow more than a few a second anyway.
    """

    every_s = 0.1

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            console=Console(file=sys.stderr), transient=True,
        )
        self._task: Any = None
        self._budget: float | None = None
        self._next_s = 0.0
        self.sweep_id: int | None = None

    def started(self, sweep: Sweep, total_runs: int | None) -> None:
        self.sweep_id = sweep.id
        self._budget = sweep.budget_s if total_runs is None else None
        total = total_runs if total_runs is not None else sweep.budget_s
        label = f"sweep {sweep.id}" + (" (budget, s)" if total_runs is None else "")
        if self._task is None:
            self._bar.start()
        self._task = self._bar.add_task(label, total=total)
        self._next_s = 0.0

    def ran(self, run: Run, done: int, elapsed_s: float) -> None:
        if elapsed_s < self._next_s:
            return
        self._next_s = elapsed_s + self.every_s
        where = f"n={run.size_n}" if not run.warmup else "warm-up"
        if self._budget is not None:
            self._bar.update(self._task, completed=min(elapsed_s, self._budget),
                             description=f"sweep {run.sweep_id} {where}")
        else:
            self._bar.update(self._task, completed=done,
                             description=f"sweep {run.sweep_id} {where}")

    def stop(self) -> None:
        if self._task is not None:
            self._bar.stop()


def run(args: argparse.Namespace) -> int:
    from quadscope.analyse.gate import parse_gates
    from quadscope.commands.multi import read_sizes, refuse_unsupported

    read_sizes(args)
    starts = read_starts(args)
    if args.axes or starts:  # before a store is opened or anything measured
        from quadscope.analyse.multi_sweep import parse_axis_gates

        refuse_unsupported(args)
        if starts:
            refuse_adaptive_vs(args)
        parse_axis_gates(args.fail_above or [],
                         [a.name for a in args.axes] or [name for name, _ in starts])
    if args.fleet:
        from quadscope.commands.fleet import run_fleet

        return run_fleet(args, build_spec(args, resolve=False))
    if not (args.axes or starts):  # several sizes gate AXIS=CLASS (commands/multi.py)
        parse_gates(args.fail_above)  # refuse bad gates and paths before spending time
    check_fail_on(args)
    check_outputs(args)
    # Closing commits and removes the run journal: a clean exit leaves no file behind.
    with open_store(args) as store:
        return _measure_and_finish(args, store)


def _measure_and_finish(args: argparse.Namespace, store: Store) -> int:
    """`run`'s sweep (new or resumed) into the open `store`, then its outputs and gates."""
    from quadscope.analyse.analysis import analyse
    from quadscope.fleet import check_resume_here
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session
    from quadscope.run.runner import check_resumable

    progress = RichProgress()
    try:
        if args.resume:
            refuse_new_settings(args)
            sweep = store.get_sweep(args.resume)
            check_resumable(sweep)  # before choosing (and perhaps compiling) an executor
            check_resume_here(sweep, platform.node())
            measuring = session.measuring_to_resume(sweep)
            try:
                sweep = session.resume(sweep, store=store, clock=SystemClock(),
                                       measuring=measuring, progress=progress,
                                       counting=session.counting_to_resume(sweep))
            finally:
                progress.stop()
        else:
            spec = build_spec(args)
            measuring = session.choose(spec, no_perf=args.no_perf)
            machine = session.Machine.real()
            facts = session.read_host(machine, spec=spec)
            warn_skews(facts.advice)
            # Counting after the timed plan (run/counting.py; several sizes: run/multicount.py).
            counting = session.choose_counting(spec, no_perf=args.no_perf)
            try:
                sweep = session.start(spec, store=store, clock=SystemClock(), machine=machine,
                                      measuring=measuring, facts=facts, progress=progress,
                                      counting=counting)
            finally:
                progress.stop()
    except KeyboardInterrupt as exc:
        sid = progress.sweep_id
        if isinstance(exc, Stopped):
            if sid is None:
                raise
            error(f"stopped by {signal.Signals(exc.signum).name}; every finished run of sweep "
                  f"{sid} is stored; continue with `quadscope run --resume {sid}`")
            return exc.exit_code
        if sid is not None:
            count = len(store.runs(sid))
            stored = {0: "no run had finished", 1: "its 1 finished run is stored"}.get(
                count, f"its {count} finished runs are stored")
            error(f"interrupted sweep {sid}: {stored}; continue with "
                  f"`quadscope run --resume {sid}`")
        return 130
    except StoreError as exc:
        if progress.sweep_id is None:
            raise
        raise StoreError(f"{exc}; then continue with `quadscope run --resume "
                         f"{progress.sweep_id}`") from None
    if sweep.axes:
        from quadscope.commands.multi import finish_multi

        code = finish_multi(args, store, sweep, remember=True)
        if getattr(args, "profile", False):  # each axis's culprit, after the verdict
            from quadscope.commands.profile import profile_axes

            profile_axes(args, sweep, store)
        return code
    profile = profile_after_sweep(args, sweep, store) if getattr(args, "profile", False) else None
    runs = store.runs(sweep.id)
    with fit_progress() as fitting:
        analysis = analyse(sweep, runs, profile=profile, progress=fitting)
    from quadscope.analyse.brief import KEY, brief

    store.put_blob(sweep.id, KEY, brief(analysis, len(runs)).to_dict())  # `list`'s verdict
    return finish(args, analysis)


def warn_skews(advice: Sequence[str]) -> None:
    """Before a sweep: what on this machine will likely skew its timings, and the fix."""
    for line in advice:
        notice(f"warning: {line}")


def profile_after_sweep(args: argparse.Namespace, sweep: Sweep, store: Any) -> Attribution:
    """`run --profile`: sample the sweep at several sizes and attach the culprits."""
    from quadscope.commands.profile import profile_stored

    return profile_stored(args, sweep, store)


def check_fail_on(args: argparse.Namespace) -> None:
    """`--fail-on` judges B against A: refuse it before the sweep when there is no B."""
    if not parse_fail_on(args.fail_on) or args.resume:
        return
    if args.vs is None and args.vs_shell is None and split_command(args.command)[1] is None:
        raise UsageError("--fail-on judges the change from A to B: give the second command "
                         "with --vs, or use --fail-above to gate one command's class")


def finish(args: argparse.Namespace, analysis: Analysis) -> int:
    """Print, write the requested files, refuse an empty fit, apply the CI gates."""
    from quadscope.analyse.analysis import refuse_if_nothing
    from quadscope.commands.gates import check_gates

    print_analysis(analysis, args)
    write_outputs(args, analysis)
    refuse_if_nothing(analysis)
    code = check_gates(args, analysis)
    rules = parse_fail_on(getattr(args, "fail_on", []) or [])
    ab = apply_fail_on(rules, analysis) if rules else 0
    # A failed gate outranks an undecided one, whichever option judged it.
    return max(code, ab, key=lambda c: (c == GATE_FAILED_EXIT, c))
