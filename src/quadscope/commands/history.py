"""`quadscope history NAME`: how a named sweep's growth moved from commit to commit.

Contract: reads every stored sweep called NAME (nothing is re-run), orders
them by git's commit order in --repo (the working directory by default; by
time when it is not a repository), fits each at the reference n
(`analyse.history.reference_n`: the largest size they all measured), and
prints one row per sweep (`render.history_table`, fitted to the terminal):
commit and its subject (read from git in --repo when shown,
`measure.provenance.commit_subjects`, so older sweeps have theirs too; none
when the repository does not know the commit), class, exponent, the fitted
cost at the reference n (with their 95% intervals where the width allows),
and a mark where the growth changed or the cost stepped (`analyse.history`:
judged from each sweep's own intervals), then
one sentence per change ("the work grew 3,500× at abc1234567: n log n → n²").
Without --metric it follows the metric `run` led with
(`analyse.history.history_metric`: the work where every sweep's meter counted
it exactly, else the time). `--html FILE` (`-`: standard output, then alone) writes
the same as a self-contained page (`render.history_html`). A name no sweep has is one sentence and exit 5.
`--run A..B [--build CMD]` first sweeps each commit of the range not yet stored
under NAME with the same meter and sizes in a temporary worktree, as NAME was
swept (`commands.history_run`, sharing `bisect`'s worktree and sweeping code),
then shows the history in that repository; the options that say how to sweep are refused without `--run`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope import meters
from quadscope.commands.commits import add_build_options
from quadscope.commands.common import (
    STDOUT,
    add_store_option,
    check_output,
    open_store,
    refuse_the_store,
)
from quadscope.errors import UnknownRunError, UsageError
from quadscope.metrics import NAMES as METRICS
from quadscope.notice import notice
from quadscope.textsafe import visible

if TYPE_CHECKING:
    from collections.abc import Sequence

    from quadscope.analyse.history import History
    from quadscope.model import Sweep


def register(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        description="Lines up every stored sweep called NAME in git's commit order and marks "
        "where the growth changed or the cost stepped, judged from each sweep's own 95% "
        "intervals.")
    p.add_argument("name", metavar="NAME", help="the --name the sweeps were stored under")
    p.add_argument("--metric", default=None, choices=METRICS, metavar="METRIC",
                   help="the metric to follow [the one the verdict led with: the work where "
                   "the meter counts it exactly, else the time]")
    p.add_argument("--repo", metavar="DIR", default=None,
                   help="the git repository whose commit order to use [the working directory]")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="also write the history as HTML (-: to standard output, instead)")
    run_group = p.add_argument_group(
        "sweeping commits (--run)", "sweep the commits of a range not yet stored under NAME "
        "with this meter and these sizes in a temporary git worktree, as NAME's newest sweep "
        "was swept (or as given here), then show the history")
    run_group.add_argument("--run", metavar="A..B", default=None,
                           help="sweep A and every commit after it up to B first")
    add_build_options(run_group)
    run_group.add_argument("--sizes", metavar="SPEC", default=None,
                           help="the sizes to sweep at [NAME's newest sweep's]")
    run_group.add_argument("--meter", choices=meters.NAMES, default=None,
                           help="how each commit is measured [NAME's newest sweep's]")
    run_group.add_argument("--repeat", type=int, default=None, metavar="K",
                           help="runs per size [NAME's newest sweep's]")
    run_group.add_argument("--timeout", type=float, default=None, metavar="S",
                           help="kill a run's whole process group after S seconds")
    add_store_option(p)
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="with --run: -- PROG ARG... to sweep instead of NAME's command "
                   "({n} is the size; give --sizes)")
    p.set_defaults(func=run, options_parser=p)


_RUN_ONLY = ("build", "build_timeout", "sizes", "meter", "repeat", "timeout")


def _check_run_options(args: argparse.Namespace) -> None:
    """The options that say how to sweep, refused without `--run` (they would do nothing)."""
    if args.run is not None:
        return
    given = [f"--{k.replace('_', '-')}" for k in _RUN_ONLY if getattr(args, k) is not None]
    if args.command:
        given.append("a command")
    if given:
        raise UsageError(f"{', '.join(given)} only say(s) how --run A..B sweeps commits: "
                         "add --run, or drop them")


def _none_to_follow(name: str, named: Sequence[Sweep]) -> str:
    """Why no sweep called `name` has a history: none is named so, or those that are hold
    no runs or are the doctor's or a profile's (`history doctor` said "no stored sweep is
    named 'doctor'" beside `list` showing one)."""
    if not named:
        return f"no stored sweep is named {name!r}; `quadscope list` shows them"
    one = len(named) == 1
    kinds = " and ".join(sorted({s.kind for s in named if s.kind != "sweep"}))
    what = f"{kinds} sweep" if kinds else "sweep with no run stored"
    subject = f"sweep {named[0].id}" if one else f"the {len(named)} sweeps"
    return (f"{subject} named {name!r} {'is a' if one else 'are'} {what}{'' if one else 's'}, "
            "with no history to follow: `history` follows the sweeps `quadscope run --name` "
            "stores")


def load_history(store: Any, name: str, metric: str | None, repo: Path) -> History:
    """The History of every sweep named `name` in `store`, in `repo`'s commit order, of
    `metric` (None: the one `run` led with, `history_metric`)."""
    from quadscope.analyse.analysis import analyse, metric_series
    from quadscope.analyse.history import (
        build_history,
        history_metric,
        order_sweeps,
        own_cost,
        reference_n,
        with_subjects,
    )
    from quadscope.measure.provenance import commit_order, commit_subjects

    listed = [(s, count) for s, count in store.list_sweeps() if s.name == name]
    sweeps = [s for s, count in listed if s.kind == "sweep" and count]
    if not sweeps:
        raise UnknownRunError(_none_to_follow(name, [s for s, _ in listed]))
    runs = {s.id: store.runs(s.id) for s in sweeps}
    sizes = [sorted({r.size_n for r in runs[s.id]
                     if r.variant == "A" and not r.warmup and r.measurement.ok}) for s in sweeps]
    ref_n = reference_n(sizes)
    commits = commit_order(repo)
    analyses = [analyse(dataclasses.replace(sweep, predict_n=ref_n), runs[sweep.id])
                for sweep in order_sweeps(sweeps, commits)]
    if metric is None:
        metric = history_metric([(a.fits.get("A", {}), a.work_metric) for a in analyses])
    entries = [(a.sweep, a.fits.get("A", {}).get(metric)) for a in analyses]
    measured = [own_cost(*metric_series(a.measured("A"), metric), ref_n) for a in analyses]
    history = build_history(entries, name=name, metric=metric, ref_n=ref_n,
                            order="git" if commits is not None else "time", measured=measured)
    if commits is None:
        return history
    # Read from git when shown, not stored: old sweeps get theirs, and a reworded commit is new.
    return with_subjects(history, commit_subjects(repo, [p.commit for p in history.points]))


def run(args: argparse.Namespace) -> int:
    from rich.console import Console  # here, not at the top: `quadscope --help` stays instant
    from rich.text import Text

    from quadscope.commands.commits import options_before_command
    from quadscope.render.history_table import history_table

    args = options_before_command(args, [args.name])
    _check_run_options(args)
    if args.html and args.html != STDOUT:  # before `--run` sweeps for minutes
        check_output("--html", args.html)
        refuse_the_store(args, "--html", args.html)
    repo = Path(args.repo) if args.repo else Path.cwd()
    if args.repo and not repo.is_dir():
        raise UsageError(f"--repo {args.repo}: no such directory")
    if args.run is not None:
        from quadscope.commands.history_run import sweep_range

        repo = sweep_range(args).repo
    history = load_history(open_store(args, readonly=True), args.name, args.metric, repo)
    if args.html == STDOUT:  # `--html -` wrote a file named "-"; the page is stdout's alone
        from quadscope.render.history_html import history_html

        sys.stdout.buffer.write(history_html(history))
        sys.stdout.flush()
        return 0
    console = Console(highlight=False)
    console.print(history_table(history, console.width))
    from quadscope.analyse.history import change_sentences

    for sentence in change_sentences(history):
        console.print(Text(visible(sentence)))
    if history.order == "time":
        from quadscope.notice import wrapped  # a hanging indent, as every note and warning

        console.print(Text(wrapped(f"{visible(str(repo))} is not a git repository with "
                                   "commits: sweeps are in time order (give --repo to order "
                                   "them by commit)", console.width, prefix="note: "),
                           style="dim"))
    if args.html:
        from quadscope.render.history_html import history_html

        try:
            Path(args.html).write_bytes(history_html(history))
        except OSError as exc:
            raise UsageError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        notice(f"wrote {visible(args.html)}")
    return 0
