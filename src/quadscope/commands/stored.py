"""`quadscope list | show | export | compare`: work on stored sweeps without re-running them.

Contract: every command here reads the store and re-fits from stored runs
(fitting is a pure function of them), so yesterday's sweep reports the same way
today. Unknown ids are one sentence and exit 5. `list` shows a sweep stored as
"running" whose process is gone (killed with no chance to say so: SIGKILL, the
OOM killer, a reboot) as "died" (`shown_status`), and says how to continue every
died or interrupted sweep. `compare` of sweeps over several sizes goes to
`commands/multi_compare` (each size's growth, B/A at the shared points).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from quadscope.commands.common import (
    add_output_options,
    add_store_option,
    add_view_options,
    analyse_stored,
    asked_outputs,
    open_store,
    outputs_hint,
    print_analysis,
    write_outputs,
)
from quadscope.commands.gates import add_fail_on_option, add_gate_option, apply_fail_on
from quadscope.errors import StoreError, UnknownRunError, UsageError
from quadscope.interop import is_duration
from quadscope.jsonfile import read_json
from quadscope.measure.system import loads_apart
from quadscope.notice import error, notice, wrapped
from quadscope.textsafe import visible

if TYPE_CHECKING:  # the rest is imported where used: `quadscope --help` stays cheap
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.brief import Brief
    from quadscope.model import Owner, Run, Sweep
    from quadscope.store import Store


def register(sub: Any) -> None:
    p = sub.add_parser("list")
    add_store_option(p)
    p.set_defaults(func=run_list)

    p = sub.add_parser("show")
    p.add_argument("ref", metavar="RUN", help="sweep id, name, or 'last'")
    p.add_argument("--predict", default=None, metavar="N",
                   help="extrapolate every metric to this size")
    p.add_argument("--sizes", action="store_true", dest="per_size",
                   help="also print each size's runs: n, runs, min, median, max, MAD/median")
    p.add_argument("--metric", default=None, metavar="METRIC", dest="size_metric",
                   help="the metric of the per-size table (implies --sizes) [the headline's]")
    add_store_option(p)
    add_output_options(p)
    add_gate_option(p)
    add_view_options(p)
    p.set_defaults(func=run_show)

    p = sub.add_parser("export")
    p.add_argument("ref", metavar="RUN", help="sweep id, name, or 'last'")
    add_store_option(p)
    add_output_options(p)
    p.set_defaults(func=run_export)

    p = sub.add_parser("compare")
    p.add_argument("ref_a", metavar="RUN_A", help="id, name, 'last', or an exported .json")
    p.add_argument("ref_b", metavar="RUN_B",
                   help="id, name, 'last', or an exported .json (e.g. from another machine)")
    add_fail_on_option(p)
    add_store_option(p)
    add_output_options(p)
    add_view_options(p)
    p.set_defaults(func=run_compare)


def run_list(args: argparse.Namespace) -> int:
    from rich.console import Console  # here, not at the top: `quadscope --help` stays instant

    from quadscope.measure.host import is_alive
    from quadscope.render.listing import Listed, list_table
    from quadscope.units import fmt_count

    try:
        store = open_store(args, readonly=True)
    except UnknownRunError as exc:  # no database yet: nothing stored, which is no error
        print(f"no sweeps stored: {visible(str(exc))}")
        return 0
    rows = store.list_sweeps()
    if not rows:
        print(f"no sweeps stored in {visible(store.location)} yet; start one with `quadscope run`")
        return 0
    statuses = [shown_status(sweep, store.owner(sweep.id) if sweep.status == "running"
                             else None, is_alive) for sweep, _ in rows]
    briefs = known_briefs(args, store, [(s, c) for (s, c), st in zip(rows, statuses, strict=True)
                                        if st != "running"])
    items = []
    for (sweep, count), status in zip(rows, statuses, strict=True):
        b = briefs.get(sweep.id)
        sizes = (f"{fmt_count(min(sweep.sizes))}..{fmt_count(max(sweep.sizes))} "
                 f"({len(sweep.sizes)})" if sweep.sizes else "")
        items.append(Listed(sweep.id, sweep.name, b.text if b else "",
                            b.direction if b else "", status, count, sizes, sweep.meter,
                            sweep.kind, sweep.mode, sweep.created_at))
    console = Console(highlight=False)
    console.print(list_table(f"sweeps in {store.location}", items, console.width))
    stopped = sorted(i.id for i in items if i.status in ("died", "interrupted"))
    if stopped:
        print(wrapped(resume_advice(stopped), console.width, prefix=""))
    return 0


FIT_PER_LIST = 10  # sweeps a `list` fits for their verdicts (about 2 s each), newest first


def known_briefs(args: argparse.Namespace, store: Store,
                 rows: list[tuple[Sweep, int]]) -> dict[int, Brief]:
    """Each sweep's verdict in a few words (`analyse.brief`): the stored one while it is
    fresh, else fitted now and stored (when the store can be written) for the next `list`."""
    from quadscope.analyse.brief import KEY, Brief

    out: dict[int, Brief] = {}
    stale: list[tuple[Sweep, int]] = []
    for sweep, count in rows:
        kept = Brief.from_dict(store.get_blob(sweep.id, KEY))
        if kept is not None and kept.fresh(count):
            out[sweep.id] = kept
        elif count:
            stale.append((sweep, count))
        elif sweep.kind == "doctor":
            out[sweep.id] = doctor_brief(store, sweep.id)
    if stale:  # newest first: a store of old sweeps is fitted a few at a time, not all at once
        out.update(fitted_briefs(args, store, stale[:FIT_PER_LIST]))
    if len(stale) > FIT_PER_LIST:
        notice(f"the verdicts of {len(stale) - FIT_PER_LIST} older sweeps are not known yet "
               f"(shown as —): each `quadscope list` fits {FIT_PER_LIST} more and keeps them")
    return out


def doctor_brief(store: Store, sweep_id: int) -> Brief:
    """A doctor summary's answer ("fork is slow; 5 of 6 probes ok"), from its stored report."""
    from quadscope.analyse.brief import Brief
    from quadscope.doctor.records import DoctorReport, doctor_from_dict
    from quadscope.render.doctor import doctor_headline

    try:
        report = doctor_from_dict(store.get_blob(sweep_id, "doctor") or {})
    except (KeyError, TypeError, ValueError, AttributeError):
        report = None  # `show` says what is wrong with it
    if not isinstance(report, DoctorReport):
        return Brief("doctor's report cannot be read")
    text, tone = doctor_headline(report)
    return Brief(text, "worse" if tone == "bad" else "")


def fitted_briefs(args: argparse.Namespace, store: Store,
                  rows: list[tuple[Sweep, int]]) -> dict[int, Brief]:
    """`rows`' briefs fitted from their runs, stored when the store lets `list` write."""
    from quadscope.analyse.analysis import analyse
    from quadscope.analyse.brief import Brief, brief
    from quadscope.commands.common import fit_progress
    from quadscope.errors import QuadscopeError

    out, unread = {}, {}
    with fit_progress() as progress:
        for sweep, count in rows:
            try:
                runs = store.runs(sweep.id)
            except QuadscopeError:  # `show` says what is wrong; `list` lists the rest
                unread[sweep.id] = Brief("its runs cannot be read")
                continue
            if sweep.axes and sweep.vs_command is not None:  # A against B (--vs)
                from quadscope.commands.multi_compare import brief as vs_brief

                out[sweep.id] = vs_brief(sweep, runs)
                continue
            if sweep.axes:  # several sizes: their own fit (analyse/multi_sweep.py)
                from quadscope.analyse.multi_sweep import analyse_multi, brief_text

                out[sweep.id] = Brief(brief_text(analyse_multi(sweep, runs)), runs=count)
                continue
            out[sweep.id] = brief(analyse(sweep, runs, progress=progress), count)
    remember_briefs(args, out)
    return out | unread


def remember_briefs(args: argparse.Namespace, briefs: dict[int, Brief]) -> None:
    """Store `briefs` (a cache: a store `list` may not write, read-only or busy, keeps none)."""
    from quadscope.analyse.brief import KEY
    from quadscope.errors import QuadscopeError

    try:
        with open_store(args) as writable:
            for sweep_id, b in briefs.items():
                writable.put_blob(sweep_id, KEY, b.to_dict())
    except (QuadscopeError, OSError):
        pass  # fitted again next time: slower, never wrong


def shown_status(sweep: Sweep, owner: Owner | None, alive: Callable[[Owner], bool]) -> str:
    """The status `list` shows: a "running" sweep whose process is gone "died".

    `owner` is the sweep's claim (None: none left); `alive` says whether it runs
    (`host.is_alive`: on another machine it cannot tell, and says it does).
    """
    if sweep.status != "running" or (owner is not None and alive(owner)):
        return sweep.status
    return "died"


def resume_advice(ids: list[int]) -> str:
    """One sentence on continuing the died or interrupted sweeps `ids` (at least one)."""
    if len(ids) == 1:
        return (f"sweep {ids[0]} stopped before its end; its finished runs are kept: "
                f"continue it with `quadscope run --resume {ids[0]}`")
    shown = ", ".join(str(i) for i in ids[:10]) + (", ..." if len(ids) > 10 else "")
    return (f"sweeps {shown} stopped before their end; their finished runs are kept: "
            f"continue one with `quadscope run --resume ID`")


def stored_analysis(store: Store, ref: str, predict_n: int | None = None) -> Analysis:
    sweep = store.get_sweep(ref)
    if predict_n is not None:
        sweep = dataclasses.replace(sweep, predict_n=predict_n)
    return analyse_stored(store, sweep)


def run_show(args: argparse.Namespace) -> int:
    from quadscope.analyse.gate import parse_gates
    from quadscope.commands.gates import check_gates
    from quadscope.run.sizes import parse_size

    predict_n = None if args.predict is None else parse_size(args.predict, "--predict")
    store = open_store(args, readonly=True)
    multi = _several_sizes(store, args.ref)
    if multi is not None:  # a sweep over several sizes has its own report (commands/multi.py)
        from quadscope.commands.multi import finish_multi

        return finish_multi(args, store, multi)
    if args.size_metric is not None:  # refused before the fit, which takes seconds
        check_metric(args.size_metric, store.runs(store.get_sweep(args.ref).id))
        args.per_size = True
    parse_gates(args.fail_above or [])  # a bad gate is refused before the report is printed
    analysis = stored_analysis(store, args.ref, predict_n)
    print_analysis(analysis, args)
    write_outputs(args, analysis)
    return check_gates(args, analysis)


def _several_sizes(store: Store, ref: str) -> Sweep | None:
    """The stored sweep `ref` names when it is over several sizes; None otherwise (a file, or
    no such sweep: the one-size path then says why in its own words)."""
    from quadscope.errors import QuadscopeError

    try:
        if ref.endswith(".json"):  # an exported file, as `load_sweep` reads one; a stored
            return None            # sweep may share its name with a file (its program)
        sweep = store.get_sweep(ref)
    except (OSError, ValueError, QuadscopeError):
        return None
    return sweep if sweep.axes else None


def check_metric(metric: str, runs: list[Run]) -> None:
    """UsageError unless some measured run of `runs` counted `metric`."""
    from quadscope.metrics import NAMES
    from quadscope.render.sizes import known_metrics

    known = known_metrics(runs)
    if metric in known:
        return
    what = "is not a metric" if metric not in NAMES else "was not measured in this sweep"
    raise UsageError(f"--metric {visible(metric)} {what}; give one of: {', '.join(known)}"
                     if known else f"--metric {visible(metric)}: this sweep has no measured "
                     "runs to show per size")


def run_export(args: argparse.Namespace) -> int:
    if not asked_outputs(args):
        raise UsageError(f"export needs somewhere to write: {outputs_hint()}")
    store = open_store(args, readonly=True)
    multi = _several_sizes(store, args.ref)
    if multi is not None:  # its own document, as `show --json` writes it (commands/multi.py)
        from quadscope.commands.multi import export_multi

        return export_multi(args, store, multi)
    write_outputs(args, stored_analysis(store, args.ref))
    return 0


def load_sweep(store: Store | Callable[[], Store], ref: str,
               several: bool = False) -> tuple[Sweep, list[Run]]:
    """A stored sweep by id or name, or one exported with `--json` (another machine's).

    `store` may be a function that opens it, so two exported files need no database.
    A sweep over several sizes is refused unless `several` (compare's own path takes it).
    """
    if ref.endswith(".json"):
        sweep, runs = _load_export(ref)
    else:
        try:
            sweep = _store(store).get_sweep(ref)
        except UnknownRunError as exc:
            if os.path.isfile(ref):  # `compare 1 their-export` was read as a sweep's name
                raise UnknownRunError(f"{exc}; {visible(ref)} is a file, but an exported sweep "
                                      "is read only from a name ending in .json") from None
            raise
        runs = _store(store).runs(sweep.id)
    if sweep.axes and not several:  # the one-size analysis would read its first axis alone
        from quadscope.commands.multi import refuse_compare

        raise refuse_compare(ref, sweep.axis_names)
    return sweep, runs


def _store(store: Store | Callable[[], Store]) -> Store:
    return store() if callable(store) else store


def _load_export(ref: str) -> tuple[Sweep, list[Run]]:
    """A sweep exported with `--json`, every field checked for its type."""
    from quadscope.model import SCHEMA_VERSION, Run, Sweep

    data = read_json(ref, ref)
    if isinstance(data, dict) and data.get("format") == "quadscope.multi/1":
        raise UsageError(f"{visible(ref)} is a sweep over several sizes exported as its "
                         "verdict, without its runs: compare the stored sweeps by id or name")
    if isinstance(data, dict) and "sweep" not in data:  # once "(KeyError: 'sweep')"
        other = _other_tool(data)
        if other:
            raise UsageError(f"{visible(ref)} is {other}, not a sweep `quadscope export --json` "
                             "wrote")
    where = ""  # the record being read: a failure inside `from_dict` names it, not Python's words
    try:
        if not isinstance(data, dict):
            raise TypeError(f"the top level is {_kind(data)}, not an object")
        schema = data.get("schema", 0)
        if not isinstance(schema, int):
            raise TypeError(f"schema is {schema!r}, not an integer")
        if schema > SCHEMA_VERSION:
            raise StoreError(f"{ref} was written by a newer quadscope (schema {schema}; "
                             f"this one reads up to {SCHEMA_VERSION}): upgrade quadscope")
        for key, want in (("sweep", dict), ("runs", list)):
            if key not in data:
                raise KeyError(key)
            if not isinstance(data[key], want):
                raise TypeError(f"its {key!r} is {_kind(data[key])}, not "
                                f"{'an object' if want is dict else 'a list of runs'}")
        if not all(isinstance(r, dict) for r in data["runs"]):
            i, r = next((i, r) for i, r in enumerate(data["runs"]) if not isinstance(r, dict))
            raise TypeError(f"run {i} is {_kind(r)}, not an object")
        where = "its sweep"
        sweep = Sweep.from_dict(data["sweep"])
        runs = []
        for i, r in enumerate(data["runs"]):
            where = f"run {i}"
            runs.append(Run.from_dict(r))
        where = ""
        check_types(sweep, runs)
    except KeyError as exc:  # once "(KeyError: 'size_n')"
        whose = f"{where} has" if where else "it has"
        raise UsageError(f"{visible(ref)} is not a quadscope JSON export: {whose} no "
                         f"{visible(str(exc.args[0]))!r} field") from None
    except (ValueError, TypeError, AttributeError) as exc:  # once "(TypeError: 'NoneType' …)"
        said = visible(str(exc))
        why = f"{where} has a field of the wrong type or value ({said})" if where else said
        raise UsageError(f"{visible(ref)} is not a quadscope JSON export: {why}") from None
    return sweep, runs


def _kind(value: Any) -> str:
    """What a JSON value is, in words: "a list", "a string", "null"."""
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _other_tool(data: dict[str, Any]) -> str:
    """What a JSON object compare cannot read is, with what reads it, or ""."""
    if data.get("kind") == "doctor":
        return "a doctor report (`quadscope doctor --vs FILE` compares those)"
    if isinstance(data.get("results"), list):
        return "hyperfine output (`quadscope import FILE` stores it as a sweep to compare)"
    if isinstance(data.get("benchmarks"), list):
        return "pytest-benchmark output (`quadscope import FILE` stores it as sweeps to compare)"
    return ""


def check_types(sweep: Sweep, runs: list[Run]) -> None:
    """TypeError naming the first field of an export that has the wrong type."""
    if not isinstance(sweep.name, str) or not isinstance(sweep.mode, str):
        raise TypeError("sweep name and mode must be strings")
    if not all(isinstance(a, str) for a in (*sweep.command, *(sweep.vs_command or ()))):
        raise TypeError("sweep command must be a list of strings")
    if not isinstance(sweep.seed, int):  # a host that is not an object failed in from_dict
        raise TypeError("sweep seed must be an integer")
    for r in runs:
        if r.measurement.values.get("wall_s") is None:
            raise TypeError(f"run {r.seq} has no wall_s")
        for name, value in r.measurement.values.items():
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, int | float)):
                raise TypeError(f"run {r.seq}: {name} is {value!r}, not a number")
            # A time that is NaN, infinite or negative would be fitted and gated as if real.
            if name.endswith("_s") and value is not None and not is_duration(value):
                raise ValueError(f"run {r.seq}: {name} is {value!r}, not a duration")


def combined(store: Store | Callable[[], Store], ref_a: str, ref_b: str) -> Analysis:
    """Two sweeps as one A/B sweep: A's runs as variant A, B's main runs as variant B."""
    return combine((ref_a, *load_sweep(store, ref_a)), (ref_b, *load_sweep(store, ref_b)))


def combine(side_a: tuple[str, Sweep, list[Run]], side_b: tuple[str, Sweep, list[Run]]
            ) -> Analysis:
    """`combined` of two loaded sweeps (each: its ref, the sweep, its runs)."""
    from quadscope.analyse.analysis import analyse

    ref_a, a, all_a = side_a
    ref_b, b, all_b = side_b
    if (a.mode == "accumulate") != (b.mode == "accumulate"):
        raise UsageError(f"sweep {ref_a} is over {'launches' if a.mode == 'accumulate' else 'n'} "
                         f"and {ref_b} over {'launches' if b.mode == 'accumulate' else 'n'}: "
                         "compare sweeps of the same kind")
    runs_a = [r for r in all_a if r.variant == "A"]
    offset = max((r.seq for r in runs_a), default=-1) + 1
    runs_b = [dataclasses.replace(r, variant="B", sweep_id=a.id, seq=offset + r.seq)
              for r in all_b if r.variant == "A"]
    sweep = dataclasses.replace(
        a, name=f"{a.name} vs {b.name}", vs_command=b.command, vs_shell=b.shell,
        mode="accumulate" if a.mode == b.mode == "accumulate" else a.mode,
    )
    if b.host.hostname and b.host != a.host:  # a display fact of the pair, not of A's machine
        sweep = dataclasses.replace(sweep, vs_host=b.host.hostname)
    analysis = analyse(sweep, runs_a + runs_b)
    # An A/B sweep's --vs side was left out with nothing said.
    left = [f"sweep {visible(ref)} is an A/B sweep: its main command is compared, its --vs "
            "command left out" for ref, s in ((ref_a, a), (ref_b, b)) if s.vs_command is not None]
    if (apart := loads_apart(a.host, b.host)) is not None:
        left.append(apart)
    return dataclasses.replace(analysis, notes=(*left, *analysis.notes)) if left else analysis


def run_compare(args: argparse.Namespace) -> int:
    from quadscope.analyse.ab_gate import parse_fail_on

    rules = parse_fail_on(args.fail_on)
    # Two exported files need no database: it is opened only if a ref names a stored sweep.
    opener = functools.cache(lambda: open_store(args, readonly=True))
    a = load_sweep(opener, args.ref_a, several=True)
    b = load_sweep(opener, args.ref_b, several=True)
    if a[0].axes or b[0].axes:  # several sizes: compared size by size (commands/multi_compare)
        from quadscope.commands.multi_compare import compare_sweeps

        return compare_sweeps(args, a, b)
    analysis = combine((args.ref_a, *a), (args.ref_b, *b))
    if analysis.comparison is None:
        error("nothing to compare: one of the sweeps has no successful runs")
        return 6
    print_analysis(analysis, args)
    write_outputs(args, analysis)
    return apply_fail_on(rules, analysis)


__all__ = ["combined", "load_sweep", "stored_analysis"]
