"""The doctor's terminal report: its header, one table row per probe, the findings.

Contract: `doctor_text(report, vs, color=, width=) -> str` is what `quadscope
doctor` prints and `quadscope show` of a doctor summary sweep shows: the
machine line, the probe table (probe, measured, class, cost, verdict), one
finding per probe, the `--vs` sentences when there are any, and the summary
sweep's id. The terminal renderer calls it for an `Analysis` whose `doctor`
is a `DoctorReport`; only the CLI prints it.
"""

from __future__ import annotations

import io

from quadscope.doctor.records import DoctorReport, MachineComparison

_VERDICT_STYLE = {"ok": "green", "slow": "yellow", "pathological": "bold red", "skipped": "dim"}


def doctor_text(
    report: DoctorReport, vs: MachineComparison | None = None, *, color: bool = False,
    width: int = 120,
) -> str:
    # rich is imported here so that building the command line (which imports the
    # renderers for their flags) stays instant.
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, no_color=not color, width=width,
                  highlight=False, soft_wrap=False)
    m = report.machine
    con.print(
        f"quadscope doctor — {m.get('kernel', '?')}, {m.get('libc', '?')}, "
        f"{m.get('cpu', '?')} ×{m.get('cpus', '?')}"
        f"{' (quick)' if report.quick else ''}: {report.elapsed_s:.0f} s of "
        f"{report.budget_s:.0f} s"
    )
    table = Table(show_edge=False, pad_edge=False, expand=False)
    for col in ("probe", "measured", "class", "cost", "verdict"):
        table.add_column(col, overflow="fold")
    for r in report.results:
        style = _VERDICT_STYLE.get(r.verdict, "")
        table.add_row(r.probe, r.measured, r.cls, r.cost, f"[{style}]{r.verdict}[/]")
    con.print(table)
    con.print()
    con.print("findings:")
    for r in report.results:
        con.print(f"  {r.probe}: {r.finding}", highlight=False, markup=False)
    if vs is not None and vs.probes:
        con.print()
        con.print(f"vs {vs.label}:", markup=False)
        for c in vs.probes:
            con.print(f"  {c.sentence}", markup=False)
    if report.summary_sweep_id:
        con.print()
        con.print(
            f"stored as sweep {report.summary_sweep_id} (`quadscope list` shows each "
            "probe's sweeps)",
            markup=False,
        )
    return buf.getvalue()


__all__ = ["doctor_text"]
