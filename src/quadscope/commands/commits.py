"""Sweeping commits in a temporary worktree: what `bisect` and `history --run` share.

Contract: `add_build_options(group)` adds `--build` and `--build-timeout`, which
`Measurer` reads. `options_before_command(args, positionals)` parses again the options
argparse left in the command (`GOOD BAD --sizes … -- PROG`). `like_spec(like,
name=, repeat=, timeout_s=, meter=)` is the sweep a stored sweep was (its
command, sizes, repeats, warm-ups, setup, meter), options given overriding it;
a sweep without fixed sizes is one sentence.
`exact_meter(command, no_perf)` is the first exact meter that can count
`command` here, else the registry's default. `absolute_store(args)` opens
`--db` by its absolute path (the sweeps run with the worktree as the working
directory). `Measurer(args, spec, store, tree, where)` checks one commit out
in the worktree (`run.worktree`), builds it with `args.build` (through /bin/sh
-c, bounded by `args.build_timeout`, else `run.worktree.DEFAULT_BUILD_TIMEOUT_S`:
a build that never ends once held `bisect` for good), sweeps it through `run.session.start`
(stored with the worktree's commit as its provenance, so `history` shows it)
and returns a `Measured`: its fits and sweep id, or why it was skipped (git,
the build's tail, a program or setup that failed, a fit refused).
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from quadscope import meters
from quadscope.errors import BisectError, UsageError
from quadscope.run.worktree import DEFAULT_BUILD_TIMEOUT_S

# Said after a build stopped at the default limit: the user never chose it.
_LONGER = (f" (--build-timeout's default, {DEFAULT_BUILD_TIMEOUT_S:.0f} s); give a longer "
           "build --build-timeout S")

if TYPE_CHECKING:
    from quadscope.model import Fit, Sweep
    from quadscope.run.spec import SweepSpec
    from quadscope.store import Store


def add_build_options(group: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--build CMD` and `--build-timeout S`: how `Measurer` builds each commit."""
    group.add_argument("--build", metavar="CMD", default=None,
                       help="build each commit with /bin/sh -c CMD in its worktree; a failed "
                       "build skips the commit")
    group.add_argument("--build-timeout", type=float, default=None, metavar="S",
                       help="a build longer than S seconds is stopped (every process it "
                       f"started killed) and is a failed build [{DEFAULT_BUILD_TIMEOUT_S:.0f}]")


def options_before_command(args: argparse.Namespace,
                           positionals: list[str]) -> argparse.Namespace:
    """`REFS --sizes ... -- PROG`: argparse hands everything after the last positional to the
    command, so when that starts with an option, what comes before `--` is parsed again as
    options with `positionals` (a `--` right after them is argparse's own, dropped)."""
    tail = list(args.command)
    if not tail or not tail[0].startswith("-") or tail[0] == "--":
        return args
    cut = tail.index("--") if "--" in tail else len(tail)
    args.options_parser.parse_args([*tail[:cut], *positionals], namespace=args)
    args.command = tail[cut:]
    return args


def like_spec(like: Sweep, *, ref: str, name: str | None = None, repeat: int | None = None,
              timeout_s: float | None = None, meter: str | None = None) -> SweepSpec:
    """The sweep `like` was (see the contract); `ref` names it in the sentence refusing it."""
    from quadscope.run.spec import SweepSpec

    if like.axes:  # once "no {n} in `prog {rows} {cols}`", naming no cause
        from quadscope.textsafe import visible

        names = visible(", ".join(name for name, _ in like.axes))
        raise UsageError(f"{ref} is over several sizes ({names}); bisect and history --run "
                         "sweep one size: give --sizes and the command with {n} instead")
    if like.mode != "sizes" or not like.sizes:
        raise UsageError(f"{ref}: that sweep has no fixed sizes to reuse; "
                         "give --sizes and the command instead")
    return SweepSpec(command=like.command, shell=like.shell, sizes=like.sizes,
                     name=name or like.name, repeat=like.repeat if repeat is None else repeat,
                     warmup=like.warmup,
                     timeout_s=like.timeout_s if timeout_s is None else timeout_s,
                     setup=like.setup, prepare=like.prepare, cpus=like.cpus,
                     meter=meter or like.meter, fork=like.fork,
                     startup_n=like.startup_n)  # run as it was, start-up runs or none


def exact_meter(command: tuple[str, ...], no_perf: bool,
                registry: meters.Registry = meters.REGISTRY) -> str:
    """The first exact meter that can count `command` here (the same answer on every run),
    else the registry's default."""
    target = meters.Target(command, no_perf=no_perf)
    found = next((m for m in registry if m.exact and not m.unavailable(target)), registry.default)
    return found.name


def absolute_store(args: argparse.Namespace) -> Store:
    """The store, opened by an absolute path: the sweeps run with the worktree as working directory."""
    from quadscope.commands.common import open_store
    from quadscope.store import as_location

    where = as_location(getattr(args, "db", None))
    if isinstance(where, Path):
        args.db = str(where.resolve())
    return open_store(args)


@dataclass(frozen=True, slots=True)
class Measured:
    """One commit's sweep: its fits and stored id, or (`failed`) why it was skipped."""

    fits: dict[str, Fit] = field(default_factory=dict)
    sweep_id: int | None = None
    failed: str = ""


@dataclass(frozen=True, slots=True)
class Measurer:
    """Checks out, builds and sweeps one commit in the worktree; returns its fits or why not.

    `where` is the user's working directory's place in the worktree: builds and runs go there.
    """

    args: argparse.Namespace
    spec: SweepSpec
    store: Store
    tree: Path
    where: Path

    def __call__(self, commit: str) -> Measured:
        from quadscope.errors import FitRefusedError, ProgramError, SetupError
        from quadscope.run.worktree import build, checkout, timed_out

        if not checkout(self.tree, commit):
            return Measured(failed="git could not check it out")
        if getattr(self.args, "build", None):
            given = getattr(self.args, "build_timeout", None)
            limit_s = DEFAULT_BUILD_TIMEOUT_S if given is None else given
            built = build(self.where, self.args.build, timeout_s=limit_s)
            if not built.ok:
                return Measured(failed=built.tail + (_LONGER if given is None and
                                                     built.tail == timed_out(limit_s) else ""))
        try:
            with contextlib.chdir(self.where):  # the runs, and their relative paths, are the commit's
                return self._sweep(commit)
        except (ProgramError, SetupError, FitRefusedError) as exc:
            return Measured(failed=str(exc))

    def _sweep(self, commit: str) -> Measured:
        from quadscope.analyse.analysis import analyse
        from quadscope.measure.clock import SystemClock
        from quadscope.measure.launcher import resolve_program
        from quadscope.measure.provenance import collect_provenance
        from quadscope.measure.pyfunc import PREFIX
        from quadscope.measure.system import FileReader
        from quadscope.run import session

        if not self.spec.shell and not self.spec.command[0].startswith(PREFIX):
            resolve_program(self.spec.command[0])
        tree = self.where
        machine = session.Machine(FileReader(),
                                  provenance=lambda host: collect_provenance(host=host, cwd=tree))
        measuring = session.choose(self.spec, no_perf=bool(getattr(self.args, "no_perf", False)))
        sweep = session.start(self.spec, store=self.store, clock=SystemClock(), machine=machine,
                              measuring=measuring)
        if sweep.git_commit != commit:  # the provenance must name the commit swept, not HEAD
            raise BisectError(f"sweep {sweep.id} recorded commit {sweep.git_commit[:10] or 'none'} "
                              f"while {commit[:10]} was checked out")
        fits = analyse(sweep, self.store.runs(sweep.id)).fits.get("A", {})
        return Measured(dict(fits), sweep.id)


__all__ = ["Measured", "Measurer", "absolute_store", "exact_meter", "like_spec",
           "options_before_command"]
