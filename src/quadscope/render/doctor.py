"""The doctor's terminal report: its header, one table row per probe, the findings.

Contract: `doctor_text(report, vs, color=, width=) -> str` is what `quadscope
doctor` prints and `quadscope show` of a doctor summary sweep shows: the
budget line, the machine line, the probe table (probe, measured, class,
cost, verdict; `measured` only from `WIDE` columns), one finding per probe
(wrapped at `width` with a hanging indent), the `--vs` sentences when there
are any, and the summary sweep's id. The terminal renderer calls it for an `Analysis` whose `doctor`
is a `DoctorReport`; only the CLI prints it.
"""

from __future__ import annotations

import io

from quadscope.doctor.records import DoctorReport, MachineComparison

WIDE = 120  # columns from which the table also shows what each probe measured

_VERDICT_STYLE = {"ok": "green", "slow": "yellow", "pathological": "bold red", "skipped": "dim"}


def doctor_text(
    report: DoctorReport, vs: MachineComparison | None = None, *, color: bool = False,
    width: int = 120,
) -> str:
    # rich is imported here so that building the command line (which imports the
    # renderers for their flags) stays instant.
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from quadscope.notice import wrapped

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, no_color=not color, width=width,
                  highlight=False, soft_wrap=False)
    m = report.machine
    con.print(Text(f"quadscope doctor{' (quick)' if report.quick else ''}: "
                   f"{report.elapsed_s:.0f} s of {report.budget_s:.0f} s"))
    con.print(Text(f"{m.get('kernel', '?')} · {m.get('libc', '?')} · "
                   f"{m.get('cpu', '?')} ×{m.get('cpus', '?')}", overflow="ellipsis"),
              no_wrap=True)
    # The description of what each probe measured needs a wide terminal; the findings
    # below say it again in words, so narrower terminals drop it rather than fold words.
    cols = ("probe", "measured", "class", "cost", "verdict") if width >= WIDE else (
        "probe", "class", "cost", "verdict")
    table = Table(show_edge=False, pad_edge=False, expand=False)
    for col in cols:
        fixed = col in ("probe", "verdict")
        table.add_column(col, no_wrap=fixed, overflow="ellipsis" if fixed else "fold",
                         min_width=len(col) if not fixed else None)
    for r in report.results:
        cells = {"probe": Text(r.probe), "measured": Text(r.measured), "class": Text(r.cls),
                 "cost": Text(r.cost),
                 "verdict": Text(r.verdict, style=_VERDICT_STYLE.get(r.verdict, ""))}
        table.add_row(*(cells[c] for c in cols))
    con.print(table)
    con.print()
    con.print("findings:")
    # Each finding wrapped at the width with a hanging indent, as every note and warning.
    for r in report.results:
        con.print(Text(wrapped(f"{r.probe}: {r.finding}", width, prefix="  ", hang="    ")))
    if vs is not None and vs.probes:
        con.print()
        con.print(f"vs {vs.label}:", markup=False)
        for c in vs.probes:
            con.print(Text(wrapped(c.sentence, width, prefix="  ", hang="    ")))
    if report.summary_sweep_id:
        con.print()
        con.print(
            f"stored as sweep {report.summary_sweep_id} (`quadscope list` shows each "
            "probe's sweeps)",
            markup=False,
        )
    return buf.getvalue()


_ATTENTION = ("slow", "pathological")


def doctor_headline(report: DoctorReport) -> tuple[str, str]:
    """The doctor's answer in one sentence and its tone ("calm", "bad" or "open"):
    "fork is slow; 1 of 2 probes ok" or "all 6 probes ok"."""
    bad = [r for r in report.results if r.verdict in _ATTENTION]
    ok = sum(1 for r in report.results if r.verdict == "ok")
    total = len(report.results)
    if not bad:
        if ok == total:
            return f"all {total} probes ok on this machine", "calm"
        return f"{ok} of {total} probes ok, the others skipped", "open"
    named = "; ".join(f"{r.probe} is {r.verdict}" for r in bad)
    return f"{named}; {ok} of {total} probes ok", "bad"


__all__ = ["doctor_headline", "doctor_text"]
