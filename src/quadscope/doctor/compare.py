"""`doctor --vs`: this machine's probe results against a saved machine's, probe by probe.

Contract: `compare_reports(here, there)` is pure and returns one
`ProbeComparison` per probe (its sentence and worst ratio): for every probe both
reports ran, one sentence naming the verdict change (if any) and each headline number
(`ProbeResult.numbers`, all costs, so higher is worse) that differs by more
than `THRESHOLD` either way, as "4.1× slower here" / "2.0× faster here".
Probes only one side ran, or that either side skipped, get a sentence saying
so. Numbers carry their unit in the key, `_ns`, `_us` or `_ms` at its end or
followed by `_` (`relocation_ns`, `destroy_us_per_proc`, `max_stall_ms`), which
is how `fmt_number` prints them.
"""

from __future__ import annotations

import math

from quadscope.doctor.base import fmt_s
from quadscope.doctor.records import DoctorReport, ProbeComparison, ProbeResult

THRESHOLD = 1.25  # a ratio inside [1/1.25, 1.25] counts as the same on a noisy machine

_UNITS = (("_ns", 1e-9), ("_us", 1e-6), ("_ms", 1e-3))


def fmt_number(key: str, value: float) -> str:
    """A number in the unit its key names: `destroy_us_per_proc`=12 → `12 µs`."""
    for suffix, scale in _UNITS:
        if f"{suffix}_" in key or key.endswith(suffix):
            return fmt_s(value * scale)
    return f"{value:.3g}"


def machine_label(report: DoctorReport) -> str:
    m = report.machine
    parts = [str(m.get(k)) for k in ("kernel", "cpu") if m.get(k)]
    return " on ".join(parts) if parts else "the saved machine"


def compare_probe(here: ProbeResult, there: ProbeResult) -> ProbeComparison:
    name = here.probe
    if here.verdict == "skipped" or there.verdict == "skipped":
        side = "here" if here.verdict == "skipped" else "there"
        return ProbeComparison(name, f"{name}: not compared (skipped {side})", None)
    moved: list[tuple[float, str]] = []
    a, b = here.numbers, there.numbers
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if x <= 0 or y <= 0:
            continue
        r = x / y
        if r >= THRESHOLD:
            text = f"{key} {r:.1f}× slower here ({fmt_number(key, x)} vs {fmt_number(key, y)})"
        elif r <= 1 / THRESHOLD:
            text = f"{key} {1 / r:.1f}× faster here ({fmt_number(key, x)} vs {fmt_number(key, y)})"
        else:
            continue
        moved.append((r, text))
    moved.sort(key=lambda t: -abs(_log(t[0])))
    parts = []
    if here.verdict != there.verdict:
        parts.append(f"{there.verdict} there, {here.verdict} here")
    parts.extend(t for _, t in moved)
    if not parts:
        common = set(a) & set(b)
        sentence = (
            f"{name}: the same within {THRESHOLD:.2g}× on every number"
            if common
            else f"{name}: same verdict ({here.verdict}); no number to compare"
        )
        return ProbeComparison(name, sentence, None)
    worst = moved[0][0] if moved else None
    return ProbeComparison(name, f"{name}: " + "; ".join(parts), worst)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else 0.0


def compare_reports(here: DoctorReport, there: DoctorReport) -> tuple[ProbeComparison, ...]:
    """One comparison per probe in `here`'s order, then probes only `there` ran."""
    theirs = {r.probe: r for r in there.results}
    out: list[ProbeComparison] = []
    for r in here.results:
        if r.probe in theirs:
            out.append(compare_probe(r, theirs[r.probe]))
        else:
            out.append(ProbeComparison(r.probe, f"{r.probe}: not in the saved results", None))
    mine = {r.probe for r in here.results}
    for r in there.results:
        if r.probe not in mine:
            out.append(ProbeComparison(r.probe, f"{r.probe}: not run here (--only)", None))
    return tuple(out)
