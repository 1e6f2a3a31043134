"""Which machines of a fleet stand out in the doctor's results, in one sentence per finding.

Contract: pure functions of each machine's `DoctorReport`. `judge(machines)`
returns the `Finding`s, worst first; `table(machines, findings, width)` the
machine × probe text table with every outlying cell marked `*`, made to fit
`width` columns (80 by default) by shortening, in turn, the verdicts
("path", "skip"), then the probe names (numbered, with a legend), then by
leaving out the kernel column; `FleetDoctor` is the whole result the
renderers write (`render.fleet`).

Two rules, applied per probe over the machines that ran it (skipped ones
do not vote):

1. Verdict: when a strict majority of machines share one verdict, every
   machine with another verdict is an outlier ("3 of 40 machines:
   pathological where 37 are ok"). No strict majority, no finding: a fleet
   split in two has no "normal" to stand out from.
2. Numbers: for each headline number (`ProbeResult.numbers`, costs, higher is
   worse) measured on at least `MIN_MACHINES` machines, the modified z-score
   of each machine's log value, 0.6745·(x − median)/MAD, is an outlier above
   `Z_LIMIT` = 3.5 (Iglewicz & Hoaglin, "How to Detect and Handle Outliers",
   ASQC 1993, §3.2; median and MAD, unlike mean and standard deviation, are
   not dragged by the outliers themselves). Logs, because costs differ by
   factors. A machine also has to differ from the median by `MIN_RATIO`
   (the `doctor --vs` threshold): identical machines have a MAD near zero,
   where noise alone would give huge z-scores. When the MAD is zero the
   ratio alone decides.

Each finding names what its outliers share that the other machines do not
(kernel, vsyscall mode, clock source, ...): the likely cause to check first.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.doctor.compare import THRESHOLD, fmt_number
from quadscope.doctor.records import DoctorReport, ProbeResult

Z_LIMIT = 3.5
MAD_SCALE = 0.6745  # the MAD of a normal distribution in standard deviations
MIN_RATIO = THRESHOLD
MIN_MACHINES = 3
# Machine facts a finding may name, in the order they are named.
FACTS: tuple[tuple[str, str], ...] = (
    ("kernel", "kernel {}"), ("vsyscall_mode", "vsyscall={}"), ("clocksource", "clocksource {}"),
    ("thp", "THP {}"), ("libc", "{}"), ("tmp_fs", "temp on {}"), ("cpu", "{}"),
)


@dataclass(frozen=True, slots=True)
class Machine:
    """One machine of the fleet: how reports name it and its doctor report."""

    label: str
    report: DoctorReport

    def result(self, probe: str) -> ProbeResult | None:
        return next((r for r in self.report.results if r.probe == probe), None)


@dataclass(frozen=True, slots=True)
class Finding:
    probe: str
    machines: tuple[str, ...]  # the outliers' labels
    of: int  # machines that ran the probe
    sentence: str
    severity: float  # for ordering: larger is worse


def shared_facts(outliers: Sequence[Machine], others: Sequence[Machine]) -> str:
    """What every outlier has in common and not every other machine has: "kernel 6.1 with ..."."""
    parts = []
    for key, fmt in FACTS:
        values = {str(m.report.machine.get(key) or "") for m in outliers}
        if len(values) != 1 or not (value := values.pop()):
            continue
        if others and all(str(m.report.machine.get(key) or "") == value for m in others):
            continue
        parts.append(fmt.format(value))
    return " with ".join(parts[:3])


def _sentence(head: str, outliers: Sequence[Machine], others: Sequence[Machine]) -> str:
    facts = shared_facts(outliers, others)
    names = ", ".join(m.label for m in outliers[:5]) + (" …" if len(outliers) > 5 else "")
    return f"{head} ({names})" + (f" — {facts}" if facts else "")


def _verdict_finding(probe: str, ran: Sequence[Machine]) -> Finding | None:
    verdicts = Counter(m.result(probe).verdict for m in ran)  # type: ignore[union-attr]
    common, count = verdicts.most_common(1)[0]
    if count * 2 <= len(ran) or count == len(ran):
        return None
    outliers = [m for m in ran if m.result(probe).verdict != common]  # type: ignore[union-attr]
    others = [m for m in ran if m not in outliers]
    theirs = sorted({m.result(probe).verdict for m in outliers})  # type: ignore[union-attr]
    head = (f"{len(outliers)} of {len(ran)} machines: {probe} {'/'.join(theirs)} where "
            f"{count} are {common}")
    first = outliers[0].result(probe)
    if first is not None and first.finding:
        head += f": {first.finding.rstrip('.')}"
    return Finding(probe, tuple(m.label for m in outliers), len(ran),
                   _sentence(head, outliers, others), severity=1e6 + len(ran) - len(outliers))


def _number_findings(probe: str, ran: Sequence[Machine]) -> list[Finding]:
    found = []
    keys = sorted({k for m in ran for k in m.result(probe).numbers})  # type: ignore[union-attr]
    for key in keys:
        have = [(m, v) for m in ran
                if (v := m.result(probe).numbers.get(key, 0.0)) > 0]  # type: ignore[union-attr]
        if len(have) < MIN_MACHINES:
            continue
        logs = [math.log(v) for _, v in have]
        mid = statistics.median(logs)
        mad = statistics.median(abs(x - mid) for x in logs)
        outliers = []
        for (m, v), x in zip(have, logs, strict=True):
            far = abs(x - mid) >= math.log(MIN_RATIO)
            z = MAD_SCALE * abs(x - mid) / mad if mad > 0 else math.inf
            if far and z > Z_LIMIT:
                outliers.append((m, v))
        if not outliers or len(outliers) * 2 >= len(have):
            continue
        median_v = math.exp(mid)
        _, worst_v = max(outliers, key=lambda mv: abs(math.log(mv[1]) - mid))
        ratio = worst_v / median_v
        word = f"{ratio:.3g}× the fleet median" if ratio >= 1 else \
            f"{1 / ratio:.3g}× below the fleet median"
        head = (f"{len(outliers)} of {len(have)} machines: {probe} {key} up to {word} "
                f"({fmt_number(key, worst_v)} vs {fmt_number(key, median_v)})")
        out_m = [m for m, _ in outliers]
        others = [m for m, _ in have if m not in out_m]
        found.append(Finding(probe, tuple(m.label for m in out_m), len(have),
                             _sentence(head, out_m, others),
                             severity=abs(math.log(ratio))))
    return found


def judge(machines: Sequence[Machine]) -> tuple[Finding, ...]:
    """Every outlier finding across the fleet, verdict changes first, then by size of effect."""
    probes: list[str] = []
    for m in machines:
        probes += [r.probe for r in m.report.results if r.probe not in probes]
    findings: list[Finding] = []
    for probe in probes:
        ran = [m for m in machines
               if (r := m.result(probe)) is not None and r.verdict != "skipped"]
        if len(ran) < 2:
            continue
        if (v := _verdict_finding(probe, ran)) is not None:
            findings.append(v)
        findings.extend(_number_findings(probe, ran))
    return tuple(sorted(findings, key=lambda f: -f.severity))


@dataclass(frozen=True, slots=True)
class FleetDoctor:
    """`doctor --fleet`'s result: the cluster address, each machine's report, the findings."""

    address: str
    machines: tuple[Machine, ...]
    findings: tuple[Finding, ...]

    def probes(self) -> list[str]:
        """Every probe any machine ran, in the order first met."""
        probes: list[str] = []
        for m in self.machines:
            probes += [r.probe for r in m.report.results if r.probe not in probes]
        return probes

    def outlying(self, probe: str, label: str) -> bool:
        return any(f.probe == probe and label in f.machines for f in self.findings)


SHORT_VERDICTS = {"pathological": "path", "skipped": "skip"}


def _layout(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def _rows(fleet: FleetDoctor, short: bool, numbered: bool, kernel: bool) -> list[list[str]]:
    probes = fleet.probes()
    heads = [f"p{i}" for i in range(1, len(probes) + 1)] if numbered else probes
    rows = [["machine", *(["kernel"] if kernel else []), *heads]]
    for m in fleet.machines:
        cells = [m.label, *([str(m.report.machine.get("kernel") or "?")] if kernel else [])]
        for p in probes:
            r = m.result(p)
            cell = "—" if r is None else SHORT_VERDICTS.get(r.verdict, r.verdict) if short \
                else r.verdict
            cells.append(cell + ("*" if fleet.outlying(p, m.label) else ""))
        rows.append(cells)
    return rows


def _legend(fleet: FleetDoctor, short: bool, numbered: bool, width: int) -> list[str]:
    import textwrap

    parts = [f"p{i} {p}" for i, p in enumerate(fleet.probes(), 1)] if numbered else []
    if short:
        parts += [f"{v} = {k}" for k, v in SHORT_VERDICTS.items()]
    return textwrap.wrap(", ".join(parts), width, break_on_hyphens=False) if parts else []


def table(machines: Sequence[Machine], findings: Sequence[Finding], width: int = 80) -> str:
    """Machines down, probes across, each cell the verdict; `*` marks an outlier; `width` wide."""
    fleet = FleetDoctor("", tuple(machines), tuple(findings))
    steps = ((False, False, True), (True, False, True), (True, True, True), (True, True, False))
    for short, numbered, kernel in steps:
        lines = _layout(_rows(fleet, short, numbered, kernel))
        if max(len(line) for line in lines) <= width:
            break
    return "\n".join(lines + _legend(fleet, short, numbered, width))
