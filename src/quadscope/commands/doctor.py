"""`quadscope doctor`: reproduce known Linux pathologies and check this machine for them.

Contract: options -> probes (`--only`) -> `doctor.runner.run_doctor` within the
budget (120 s, 30 s with --quick, or --budget) -> an `Analysis` of the
summary sweep holding the `DoctorReport` -> the terminal renderer prints a
table (probe, measured, class, cost, verdict) and one actionable sentence per
finding -> the output options write files through the renderer registry
(`--json FILE` and `--save FILE` are the report with this machine's kernel,
libc, CPU and boot parameters) -> `--vs FILE` compares with a saved report.
`--dir PATH` points the dirscan probe at an existing directory, scanned
read-only (prefixes of its listing) instead of files it creates in the temp
directory. Every probe's sweeps are stored (kind="doctor") so `quadscope show` lists
them. Exit 0 whatever the verdicts: a finding is not a failure; but a doctor
that checked nothing (every probe skipped: `--budget 0.001`, no C compiler) says
so in one sentence after its report and exits 6 (`FitRefusedError`: nothing to
fit), where it once exited 0 as if the machine had passed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadscope import render
from quadscope.commands.common import (
    add_output_options,
    add_store_option,
    check_output,
    check_outputs,
    open_store,
    print_analysis,
    probe_series,
    refuse_the_store,
    write_output,
    write_outputs,
)
from quadscope.doctor import (
    DEFAULT_BUDGET_S,
    NO_TIME_LEFT,
    QUICK_BUDGET_S,
    dirscan,
    probe_names,
    select,
)
from quadscope.errors import FitRefusedError, UsageError
from quadscope.fleet import add_fleet_options
from quadscope.jsonfile import read_json

if TYPE_CHECKING:  # the rest is imported where used: `quadscope --help` stays cheap
    from quadscope.doctor.base import Probe
    from quadscope.doctor.records import DoctorReport, ProbeResult
    from quadscope.doctor.runner import Tools

EPILOG = f"""\
{textwrap.fill("probes: " + ", ".join(probe_names()), 78, subsequent_indent="  ")}
examples:
  quadscope doctor --quick
  quadscope doctor --only clock,mmap --json doctor.json
  quadscope doctor --only dirscan --dir ~/src/big-tree   # scan it as it is
  quadscope doctor --save laptop.json        # keep this machine's results
  quadscope doctor --vs laptop.json          # then, elsewhere: compare
"""

SAVE_FORMAT = "json"  # the renderer whose file `--vs` reads back


def register(sub: Any) -> None:
    p = sub.add_parser(
        "doctor",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--quick", action="store_true", help=f"smaller sizes, within {QUICK_BUDGET_S:.0f} s in all"
    )
    p.add_argument(
        "--only", metavar="NAME,...", default="", help="run only these probes (comma list)"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"total time for all probes [{DEFAULT_BUDGET_S:.0f}; "
        f"{QUICK_BUDGET_S:.0f} with --quick]",
    )
    p.add_argument(
        "--no-perf",
        action="store_true",
        help="do not count with perf (the clock probe then cannot see emulated vsyscall faults)",
    )
    p.add_argument(
        "--dir",
        metavar="PATH",
        default=None,
        help="scan this directory as it is in the dirscan probe (read only; prefixes of "
        "its listing) [default: files created in a temp directory]",
    )
    p.add_argument(
        "--save",
        metavar="FILE",
        default=None,
        help="keep this machine's results (with kernel, libc, CPU, boot "
        "parameters) for a later --vs",
    )
    p.add_argument(
        "--vs",
        metavar="FILE",
        default=None,
        help="compare with results saved by --save (or --json) on another machine",
    )
    add_output_options(p)
    add_store_option(p)
    add_fleet_options(p)
    p.set_defaults(func=run)


def load_report(path: str) -> DoctorReport:
    from quadscope.doctor.records import DoctorReport

    data = read_json(path, f"--vs {path}")
    if not isinstance(data, dict) or data.get("kind") != "doctor" or "probes" not in data:
        raise UsageError(
            f"--vs {path} is not a doctor report: write one with `quadscope doctor --save FILE`"
        )
    try:
        return DoctorReport.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise UsageError(f"--vs {path} is a damaged doctor report ({type(e).__name__}: {e}); "
                         "write it again with `quadscope doctor --save FILE`") from None


def dirscan_on(path: str, probes: tuple[Probe, ...]) -> tuple[Probe, ...]:
    """`probes` with dirscan pointed at the user's directory `path` (counted here, never written)."""
    from quadscope.doctor.machine import fs_type_of

    if dirscan.PROBE.name not in {p.name for p in probes}:
        raise UsageError("--dir is for the dirscan probe; add dirscan to --only")
    if "{" in path:
        raise UsageError(f"--dir {path}: the path holds '{{', which the helpers' argument "
                         "templates would misread; pass a symlink to it instead")
    try:
        with os.scandir(path) as it:
            entries = sum(1 for _ in it)
    except NotADirectoryError:
        raise UsageError(f"--dir {path} is not a directory") from None
    except OSError as e:
        raise UsageError(f"cannot list --dir {path}: {e.strerror or e}") from None
    real = os.path.realpath(path)
    try:
        mounts = Path("/proc/self/mounts").read_text()
    except OSError:
        mounts = ""
    target = replace(
        dirscan.PROBE, target=real, target_entries=entries, target_fs=fs_type_of(real, mounts)
    )
    return tuple(target if p.name == dirscan.PROBE.name else p for p in probes)


class _StderrProgress:
    def probe_started(self, name: str, slice_s: float) -> None:
        # The budget may already be spent (the probe then runs its smallest check only).
        room = f"up to {slice_s:.0f} s" if slice_s >= 0.5 else "budget spent: smallest check"
        print(f"doctor: {name} ({room}) …", file=sys.stderr, flush=True)

    def probe_done(self, result: ProbeResult, elapsed_s: float) -> None:
        print(
            f"doctor: {result.probe}: {result.verdict} in {elapsed_s:.1f} s",
            file=sys.stderr,
            flush=True,
        )


def _tools(no_perf: bool) -> Tools:
    """The real executors (`doctor.runner.default_tools`); a module attribute a test replaces."""
    from quadscope.doctor.runner import default_tools

    return default_tools(no_perf)


def run(args: argparse.Namespace) -> int:
    from quadscope.analyse.analysis import analyse
    from quadscope.doctor.compare import compare_reports, machine_label
    from quadscope.doctor.machine import machine_info
    from quadscope.doctor.records import MachineComparison
    from quadscope.doctor.runner import run_doctor
    from quadscope.measure.clock import SystemClock
    from quadscope.run.spec import check_seconds

    probes = select(args.only.split(",") if args.only else ())
    if args.dir is not None:
        probes = dirscan_on(args.dir, probes)
    budget_s = (
        args.budget
        if args.budget is not None
        else (QUICK_BUDGET_S if args.quick else DEFAULT_BUDGET_S)
    )
    check_seconds("--budget", budget_s)
    if args.fleet:
        from quadscope.commands.fleet import doctor_fleet

        return doctor_fleet(args, probes, budget_s)
    there = load_report(args.vs) if args.vs else None  # fail before measuring for minutes
    check_outputs(args)
    if args.save:
        check_output("--save", args.save)
        refuse_the_store(args, "--save", args.save)
    machine = machine_info().to_dict()
    with open_store(args) as store:
        report = run_doctor(
            probes,
            quick=args.quick,
            budget_s=budget_s,
            store=store,
            clock=SystemClock(),
            tools=_tools(args.no_perf),
            machine=machine,
            progress=_StderrProgress(),
        )
        summary = store.get_sweep(report.summary_sweep_id)
        analysis = analyse(summary, store.runs(summary.id), doctor=report,
                           probe_series=probe_series(store, report))
    if there is not None:
        vs = MachineComparison(machine_label(there), compare_reports(report, there))
        analysis = dataclasses.replace(analysis, doctor_vs=vs)
    print_analysis(analysis)
    write_outputs(args, analysis)
    if args.save:
        write_output(render.renderer_class(SAVE_FORMAT), args.save, analysis)
    if (nothing := checked_nothing(report)) is not None:
        raise FitRefusedError(nothing)
    return 0


def checked_nothing(report: DoctorReport) -> str | None:
    """The sentence for a doctor run whose every probe was skipped, else None."""
    skipped = [r for r in report.results if r.verdict == "skipped"]
    if not skipped or len(skipped) < len(report.results):
        return None
    count = f"{len(skipped)} probe{'s' if len(skipped) > 1 else ''}"
    if all(r.finding.startswith(NO_TIME_LEFT) for r in skipped):
        return (f"doctor checked nothing: --budget {report.budget_s:g} s left no time for any "
                f"of its {count}; give it more, e.g. --budget {QUICK_BUDGET_S:.0f} (--quick's)")
    first = next(r for r in skipped if not r.finding.startswith(NO_TIME_LEFT))
    return (f"doctor checked nothing: its {count} {'were' if len(skipped) > 1 else 'was'} "
            f"skipped ({first.probe}: {first.finding.rstrip('.')})")
