"""`quadscope bisect GOOD BAD`: the first commit whose growth exceeds GOOD's.

Contract: options -> the commits from GOOD to BAD (`run.worktree`) -> a
temporary `git worktree` (the user's tree untouched; removed afterwards, even
on Ctrl-C or an error) -> for each commit the search (`run.bisect`) asks
about: check it out, build it with `--build` (through /bin/sh -c; a failed
build is a skip), sweep it through `run.session.start` with the same sizes and
meter (stored, with the worktree's commit as its provenance, so `quadscope
history NAME` shows it) and judge it with the gate (`run.bisect.probe_of`:
undecided is a skip, never blamed). The limit is `--fail-above` or, without
it, the slowest class GOOD's own sweep supports. `--like RUN` takes the
command, sizes, meter, repeats and name from a stored sweep. Without
`--meter` (or `--like`), the first exact meter that can count the command
here is used (`exact_meter`), so the answer is the same on every run.

It prints the first bad commit, its subject (from git, through
`textsafe.visible`) and the class and exponent before and after; exit 0.
GOOD not good, BAD not bad, or only skipped commits left is one sentence
and exit 13 (`errors.BisectError`); bad input (not a repository, an unknown
commit, GOOD not an ancestor of BAD) one sentence and exit 2.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope import meters
from quadscope.commands.commits import (
    Measurer,
    absolute_store,
    add_build_options,
    exact_meter,
    like_spec,
    options_before_command,
)
from quadscope.commands.common import add_store_option, split_command
from quadscope.errors import BisectError, UsageError
from quadscope.textsafe import visible

if TYPE_CHECKING:
    from quadscope.model import Fit
    from quadscope.run.bisect import Bisection, Growth, Probe
    from quadscope.run.spec import SweepSpec
    from quadscope.store import Store

EPILOG = """\
examples:
  quadscope bisect v1.0 HEAD --build 'make prog' --sizes 1e3..64e3 -- ./prog {n}
  quadscope bisect v1.0 main --meter instructions --sizes 100..3200 \\
      -- python3 algo.py {n}
  quadscope bisect v1.0 HEAD --fail-above 'n log n' --sizes 1e3..1e5 -- ./p {n}
  # the command, sizes and meter of stored sweep 12:
  quadscope bisect v1.0 HEAD --like 12 --build make
Each commit is built and swept in a temporary worktree; a commit whose build
fails or whose class cannot be decided is skipped, never blamed.
"""


def register(sub: Any) -> None:
    p = sub.add_parser("bisect", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Find the first commit between GOOD and BAD whose growth "
                       "class exceeds GOOD's\n(or --fail-above's), by binary search.")
    p.add_argument("good", metavar="GOOD", help="a commit whose growth is as it should be")
    p.add_argument("bad", metavar="BAD", help="a later commit whose growth is worse")
    add_build_options(p)
    p.add_argument("--sizes", metavar="SPEC", default=None,
                   help="the sizes every commit is swept at: 100,200,400 | 1e3..1e6")
    p.add_argument("--like", metavar="RUN", default=None,
                   help="sweep as stored sweep RUN was swept: its command, sizes, meter, "
                        "repeats and name")
    p.add_argument("--meter", choices=meters.NAMES, default=None,
                   help="how each commit is measured [an exact meter where one counts here, "
                        f"else {meters.REGISTRY.default.name}]: exact counts give the same "
                        "answer on every run")
    p.add_argument("--repeat", type=int, default=None, metavar="K", help="runs per size [3]")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="kill a run's whole process group after S seconds")
    p.add_argument("--shell", action="store_true", help="run the command with /bin/sh -c")
    p.add_argument("--no-perf", action="store_true", help="do not count with perf")
    p.add_argument("--fail-above", metavar="CLASS", default=None,
                   help="a commit is bad when it grows faster than CLASS (or METRIC=CLASS) "
                        "[faster than GOOD grows]")
    p.add_argument("--name", default=None,
                   help="the name the sweeps are stored under [the command]")
    add_store_option(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- PROG ARG... ({n} is the size)")
    p.set_defaults(func=run, options_parser=p)


def options_after_refs(args: argparse.Namespace) -> argparse.Namespace:
    """`GOOD BAD --sizes ... -- PROG`: the options argparse left in the command, parsed again."""
    return options_before_command(args, [args.good, args.bad])


def _spec(args: argparse.Namespace, store: Store | None) -> SweepSpec:
    """The sweep every commit gets: from the options, or from `--like RUN`'s stored sweep
    (`store`, opened only for `--like`)."""
    from quadscope.run.sizes import parse_sizes
    from quadscope.run.spec import SweepSpec, check_seconds, check_spec

    check_seconds("--build-timeout", args.build_timeout)  # -inf would fail every build
    command, vs = split_command(args.command)
    if vs is not None:
        raise UsageError("bisect sweeps one command: drop --vs and what follows it")
    if args.like is not None:
        if command or args.sizes:
            raise UsageError(f"--like {args.like} takes the command and sizes from the stored "
                             "sweep: drop the command after -- and --sizes, or drop --like")
        assert store is not None  # opened by `run` whenever --like is given
        spec = like_spec(store.get_sweep(args.like), ref=f"--like {args.like}", name=args.name,
                         repeat=args.repeat, timeout_s=args.timeout, meter=args.meter)
    else:
        if not command or not command[0].strip():
            raise UsageError("no command to sweep: put it after `--`, e.g. "
                             "quadscope bisect GOOD BAD --sizes 1e3..1e5 -- ./prog {n}")
        if args.sizes is None:
            raise UsageError("give --sizes (or --like RUN): every commit is swept at the "
                             "same sizes, so their classes compare")
        if args.shell and len(command) > 1:
            command = (" ".join(command),)
        spec = SweepSpec(command=command, shell=args.shell, sizes=parse_sizes(args.sizes),
                         name=args.name or "", repeat=3 if args.repeat is None else args.repeat,
                         timeout_s=args.timeout,
                         meter=args.meter or exact_meter(command, args.no_perf))
    check_spec(spec)
    return spec


def _gate(args: argparse.Namespace, spec: SweepSpec) -> tuple[str | None, str | None]:
    """The metric judged (None: the headline time) and the limit (None: GOOD's own class)."""
    from quadscope.analyse.gate import parse_gates

    if args.fail_above is None:
        return meters.exact_metric(spec.meter), None
    (gate,) = parse_gates([args.fail_above])
    return gate.metric if gate.metric else meters.exact_metric(spec.meter), gate.limit


def run(args: argparse.Namespace) -> int:
    from quadscope.measure.provenance import commit_subjects
    from quadscope.run.bisect import SKIP, Probe, bisect, limit_of, probe_of
    from quadscope.run.worktree import commits_between, repo_root, resolve, temporary_worktree

    args = options_after_refs(args)
    # The options are checked before git is asked anything, and nothing is stored (no
    # database is created) before git has named both commits; --like reads the store first.
    store = absolute_store(args) if args.like is not None else None
    spec = _spec(args, store)
    metric, limit = _gate(args, spec)
    cwd = Path.cwd()
    repo = repo_root(cwd)
    good, bad = resolve(repo, args.good), resolve(repo, args.bad)
    commits = commits_between(repo, good, bad)
    store = store or absolute_store(args)
    subjects = commit_subjects(repo, commits)
    print(f"quadscope: bisecting {len(commits) - 1} commits after {good[:10]} up to {bad[:10]} "
          f"with --meter {spec.meter}", file=sys.stderr)
    with temporary_worktree(repo, good) as tree:
        measure = Measurer(args, spec, store, tree, tree / cwd.resolve().relative_to(repo.resolve()))

        def judge(commit: str, allowed: str) -> Probe:
            got = measure(commit)
            if got.failed:
                p = Probe(commit, SKIP, f"skipped: {got.failed}")
            else:
                p = probe_of(commit, got.fits, metric=metric, limit=allowed,
                             sweep_id=got.sweep_id)
            _report_probe(p, subjects)
            return p

        first = measure(good)
        good_fits, good_id, failed = first.fits, first.sweep_id, first.failed
        gated = good_fits.get(metric) if metric else _time(good_fits)
        allowed = limit or limit_of(gated)
        if failed or allowed is None:
            why = failed or "its growth did not settle; give --fail-above CLASS or more --sizes"
            raise BisectError(f"GOOD {good[:10]} is not good: {visible(why)}")
        known = {good: probe_of(good, good_fits, metric=metric, limit=allowed, sweep_id=good_id)}
        _report_probe(known[good], subjects)
        result = bisect(commits, lambda c: judge(c, allowed), known=known)
    return _report(result, subjects, spec.name or _stored_name(store, result))


def _time(fits: dict[str, Fit]) -> Fit | None:
    from quadscope.analyse.headline import time_fit

    return time_fit(fits)


def _stored_name(store: Store, result: Bisection) -> str:
    ids = [p.sweep_id for p in result.probes if p.sweep_id is not None]
    return store.get_sweep(str(ids[0])).name if ids else ""


def _growth_text(growth: tuple[Growth, ...]) -> str:
    from quadscope.analyse.change import class_label

    parts = []
    for g in growth:
        k = "" if g.exponent is None else f" (k = {g.exponent:.2f})"
        parts.append(f"{g.metric} {class_label(g.cls) if g.cls else 'unsettled'}{k}")
    return "; ".join(parts) or "nothing measured"


def _line(p: Probe, subjects: dict[str, str]) -> str:
    return f"{p.commit[:10]} {visible(subjects.get(p.commit, ''))}".rstrip()


def _report_probe(p: Probe, subjects: dict[str, str]) -> None:
    """One line on stderr as each commit is judged; a skip says why (a build's tail, the gate)."""
    from quadscope.run.bisect import SKIP

    sweep = f" (sweep {p.sweep_id})" if p.sweep_id is not None else ""
    what = visible(p.why) if p.verdict == SKIP else _growth_text(p.growth)
    print(f"quadscope: {p.verdict:4} {_line(p, subjects)}{sweep}: {what}", file=sys.stderr)


def _report(result: Bisection, subjects: dict[str, str], name: str) -> int:
    from quadscope.run.bisect import BAD_NOT_BAD, FOUND, GOOD_NOT_GOOD, SKIP

    last = result.probes[-1]
    if result.outcome == GOOD_NOT_GOOD:
        raise BisectError(f"GOOD {last.commit[:10]} is not good: {visible(last.why)}")
    if result.outcome == BAD_NOT_BAD:
        raise BisectError(f"BAD {last.commit[:10]} is not bad: {visible(last.why)}; give "
                          "a lower --fail-above, more --sizes, or --meter instructions")
    if result.outcome != FOUND or result.first_bad is None or result.last_good is None:
        shown = ", ".join(c[:10] for c in result.candidates)
        raise BisectError(f"only skipped commits are left: the first bad commit is one of "
                          f"{shown}; fix their builds or give more --sizes")
    bad, good = result.first_bad, result.last_good
    skipped = sum(p.verdict == SKIP for p in result.probes)
    print(f"first bad commit: {_line(bad, subjects)}")
    print(f"  before ({good.commit[:10]}): {_growth_text(good.growth)}")
    print(f"  after  ({bad.commit[:10]}): {_growth_text(bad.growth)}")
    print(f"  {len(result.probes)} commits swept, {skipped} skipped; "
          f"`quadscope history {visible(shlex.quote(name))}` lines them up")
    return 0
