"""`quadscope history NAME --run A..B`: sweep a range of commits in a worktree, as asv does.

Contract: `parse_range(text)` splits `A..B` into its two refs (one sentence
otherwise). `sweep_range(args) -> RangeSweeps` resolves A and B in the
repository (`--repo`, else the working directory's; `run.worktree`), takes A
then every commit on the ancestry path up to B (A included: the history
starts from it), and in one temporary worktree (removed afterwards, however
it ends) checks out, builds (`--build CMD`) and sweeps each commit that has no
stored sweep called NAME as this range sweeps it yet (`stored_commits`: one
with runs at that commit, made in a clean tree, with the same meter and
sizes; a sweep under another meter or at other sizes does not count, so the
commit is swept again), through `commands.commits.Measurer`, the same code as
`bisect`. The sweep is the newest stored sweep called NAME's
(`commands.commits.like_spec`: its command, sizes, meter, repeats), `--sizes`,
`--meter`, `--repeat` and `--timeout` overriding it; with a command after
`--`, that command at `--sizes`. Each commit is one line on stderr: stored
already, swept (its sweep and class), or skipped with why (a failed build, a
program that failed); a skipped commit is left out, not an error. The
runs are in the working directory's place in the worktree, so a relative
command runs the commit's own program. Nothing is swept when an option is
wrong, the refs name no commits, or nothing is known of how to sweep.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from quadscope import meters
from quadscope.errors import UsageError
from quadscope.notice import notice
from quadscope.textsafe import visible

if TYPE_CHECKING:
    from quadscope.model import Fit, Sweep
    from quadscope.run.spec import SweepSpec
    from quadscope.store import Store


@dataclass(frozen=True, slots=True)
class RangeSweeps:
    """What `--run` did: the repository, the commits in the range, and how each went."""

    repo: Path
    commits: tuple[str, ...]
    swept: tuple[str, ...]  # commits swept now
    stored: tuple[str, ...]  # commits that already had a sweep called NAME, same meter and sizes
    skipped: tuple[str, ...]  # commits whose build or sweep failed


def parse_range(text: str) -> tuple[str, str]:
    """`A..B` as (A, B); UsageError for anything else (`A...B`, one ref, an empty side)."""
    first, sep, last = text.partition("..")
    if not sep or not first or not last or last.startswith("."):
        raise UsageError(f"--run {text!r} is not a commit range: give A..B, e.g. v1.0..HEAD")
    return first, last


def stored_commits(store: Store, name: str, spec: SweepSpec,
                   registry: meters.Registry = meters.REGISTRY) -> set[str]:
    """The commits at which a sweep called `name` with runs was made in a clean tree with
    `spec`'s meter and sizes (see the contract)."""
    return {s.git_commit for s, count in store.list_sweeps()
            if s.name == name and s.kind == "sweep" and count and s.git_commit
            and not s.git_dirty and sorted(s.sizes) == sorted(spec.sizes)
            and _same_meter(s.meter, spec.meter, registry)}


def _same_meter(stored: str, wanted: str, registry: meters.Registry) -> bool:
    """`stored` is how a sweep under `wanted` is stored: that meter, or for one that counts
    the work with an exact meter when time leaves the class open (`auto`), that meter too."""
    meter = registry.find(wanted)
    return stored == wanted or (meter is not None and stored == meter.counts_with)


def newest_named(store: Store, name: str) -> Sweep | None:
    """The newest stored sweep called `name` with runs, or None."""
    named = [s for s, count in store.list_sweeps() if s.name == name and s.kind == "sweep" and count]
    return max(named, key=lambda s: (s.created_at, s.id), default=None)


def range_spec(args: argparse.Namespace, store: Store) -> SweepSpec:
    """How every commit is swept (see the contract); UsageError when nothing says how."""
    from quadscope.commands.commits import exact_meter, like_spec
    from quadscope.commands.common import split_command
    from quadscope.run.sizes import parse_sizes
    from quadscope.run.spec import SweepSpec, check_seconds, check_spec

    check_seconds("--build-timeout", args.build_timeout)
    command, vs = split_command(args.command)
    if vs is not None:
        raise UsageError("history --run sweeps one command: drop --vs and what follows it")
    sizes = parse_sizes(args.sizes) if args.sizes is not None else None
    if command:
        if sizes is None:
            raise UsageError("give --sizes with the command: every commit is swept at the "
                             "same sizes, so their classes compare")
        spec = SweepSpec(command=command, sizes=sizes, name=args.name,
                         repeat=3 if args.repeat is None else args.repeat,
                         timeout_s=args.timeout, meter=args.meter or exact_meter(command, False))
    else:
        like = newest_named(store, args.name)
        if like is None:
            raise UsageError(f"no stored sweep is named {args.name!r} to sweep the commits as: "
                             "give the command after -- and --sizes, e.g. quadscope history "
                             f"{args.name} --run A..B --sizes 1e3..1e5 -- ./prog {{n}}")
        spec = like_spec(like, ref=f"sweep {like.id} ({visible(like.name)})", name=args.name,
                         repeat=args.repeat, timeout_s=args.timeout, meter=args.meter)
        if sizes is not None:
            spec = dataclasses.replace(spec, sizes=sizes)
    check_spec(spec)
    return spec


def sweep_range(args: argparse.Namespace) -> RangeSweeps:
    """Sweep every commit of `args.run` not yet stored under `args.name` (see the contract)."""
    from quadscope.commands.commits import absolute_store
    from quadscope.run.worktree import commits_between, repo_root, resolve

    first, last = parse_range(args.run)
    cwd = Path.cwd().resolve()
    repo = repo_root(Path(args.repo).resolve() if args.repo else cwd)
    a, b = resolve(repo, first), resolve(repo, last)
    commits = commits_between(repo, a, b, names=("A", "B"))
    with absolute_store(args) as store:
        return _sweep_commits(args, store, repo, commits, cwd)


def _sweep_commits(args: argparse.Namespace, store: Store, repo: Path, commits: list[str],
                   cwd: Path) -> RangeSweeps:
    from quadscope.commands.commits import Measurer
    from quadscope.measure.provenance import commit_subjects
    from quadscope.run.worktree import temporary_worktree

    spec = range_spec(args, store)
    done = stored_commits(store, args.name, spec)
    todo = [c for c in commits if c not in done]
    subjects = commit_subjects(repo, commits)
    notice(f"history --run: {len(commits)} commits from {commits[0][:10]} to {commits[-1][:10]}, "
           f"{len(commits) - len(todo)} stored already, {len(todo)} to sweep "
           f"with --meter {spec.meter}")
    swept, skipped = [], []
    for c in commits:
        if c in done:
            notice(f"stored  {c[:10]} {visible(subjects.get(c, ''))}".rstrip())
    if todo:
        place = cwd.relative_to(repo.resolve()) if cwd.is_relative_to(repo.resolve()) else Path()
        with temporary_worktree(repo, todo[0]) as tree:
            measure = Measurer(args, spec, store, tree, tree / place)
            for c in todo:
                got = measure(c)
                line = f"{c[:10]} {visible(subjects.get(c, ''))}".rstrip()
                if got.failed:
                    skipped.append(c)
                    notice(f"skip    {line}: {visible(got.failed)}")
                else:
                    swept.append(c)
                    notice(f"swept   {line} (sweep {got.sweep_id}): "
                           f"{growth_text(got.fits, spec.meter)}")
    return RangeSweeps(repo, tuple(commits), tuple(swept), tuple(c for c in commits if c in done),
                       tuple(skipped))


def growth_text(fits: Mapping[str, Fit], meter: str) -> str:
    """The class of the metric the meter counts exactly (if any), then the time's; a class
    not settled is its bracket ("1 … n³"), as the tables write it."""
    from quadscope.analyse.change import class_label
    from quadscope.analyse.headline import bracket_text, bracketed, time_fit
    from quadscope.meters import exact_metric

    def label(f: Fit) -> str:
        if f.confident:
            return class_label(f.cls)
        return bracket_text(f) if bracketed(f) else "unsettled"

    exact = exact_metric(meter)
    shown = [f for f in (fits.get(exact) if exact else None, time_fit(fits)) if f is not None]
    return "; ".join(f"{f.metric} {label(f)}" for f in shown) or "nothing fitted"
