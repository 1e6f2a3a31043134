"""`doctor --fleet` in files: the machine × probe table and the findings as JSON, CSV, Markdown, HTML.

Contract: pure functions of a `fleet.outliers.FleetDoctor`: `fleet_dict`
returns the JSON-ready dict, `fleet_csv`, `fleet_markdown(fleet, md)` (`md`:
the Markdown renderer's escaper) and `fleet_html` return bytes; the renderers
that have a fleet form (`writes_fleet`: JSON, CSV, Markdown, HTML) call them
from their `render_fleet(fleet)` method, and `doctor --fleet` refuses an
output option whose renderer has none.

- `fleet_dict` (the JSON renderer dumps it): `{"schema": 2, "kind": "doctor-fleet", "address", "machines":
  [{"label", "sweep_id", "outliers": [probe, ...], "report": <the machine's
  doctor report, as `doctor --json` writes it>}], "findings": [{"probe",
  "machines", "of", "sentence"}]}`.
- `fleet_csv`: one row per machine × probe: machine, hostname, ray_node_id,
  kernel, sweep_id, probe, verdict, outlier (0/1), measured, cost.
- `fleet_markdown`: the table (outlying cells in bold) and one bullet per
  finding, every string escaped as in the Markdown report.
- `fleet_html`: the same as one self-contained page (no script), escaped.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from quadscope.render.safe import cell

if TYPE_CHECKING:
    from quadscope.fleet.outliers import FleetDoctor

SCHEMA = 2
CSV_COLUMNS = ("machine", "hostname", "ray_node_id", "kernel", "sweep_id", "probe", "verdict",
               "outlier", "measured", "cost")


def fleet_dict(fleet: FleetDoctor) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "kind": "doctor-fleet",
        "address": fleet.address,
        "machines": [{"label": m.label, "sweep_id": m.report.summary_sweep_id,
                      "outliers": [p for p in fleet.probes() if fleet.outlying(p, m.label)],
                      "report": m.report.to_dict()} for m in fleet.machines],
        "findings": [{"probe": f.probe, "machines": list(f.machines), "of": f.of,
                      "sentence": f.sentence} for f in fleet.findings],
    }


def fleet_csv(fleet: FleetDoctor) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for m in fleet.machines:
        facts = m.report.machine
        for r in m.report.results:
            writer.writerow([cell(v) for v in (
                m.label, facts.get("hostname", ""), facts.get("ray_node_id", ""),
                facts.get("kernel", ""), m.report.summary_sweep_id, r.probe, r.verdict,
                int(fleet.outlying(r.probe, m.label)), r.measured, r.cost)])
    return out.getvalue().encode("utf-8")


def _cells(fleet: FleetDoctor, label: str, results: dict[str, str], mark: str) -> list[str]:
    return [mark.format(results[p]) if fleet.outlying(p, label) else results.get(p, "—")
            for p in fleet.probes()]


def fleet_markdown(fleet: FleetDoctor, md: Callable[[object], str]) -> bytes:
    """The Markdown, every string escaped by `md` (the Markdown renderer's escaper)."""
    probes = fleet.probes()
    lines = [f"### quadscope doctor --fleet {md(fleet.address)}: {len(fleet.machines)} machines",
             "", "| machine | kernel | " + " | ".join(md(p) for p in probes) + " |",
             "|---|---|" + "---|" * len(probes)]
    for m in fleet.machines:
        verdicts = {r.probe: md(r.verdict) for r in m.report.results}
        lines.append(f"| {md(m.label)} | {md(m.report.machine.get('kernel') or '?')} | "
                     + " | ".join(_cells(fleet, m.label, verdicts, "**{}**")) + " |")
    lines.append("")
    lines += [f"- {md(f.sentence)}" for f in fleet.findings] or \
        [f"No outlier among {len(fleet.machines)} machines."]
    return ("\n".join(lines) + "\n").encode("utf-8")


def fleet_html(fleet: FleetDoctor) -> bytes:
    e = html.escape
    title = f"quadscope doctor --fleet {fleet.address}: {len(fleet.machines)} machines"
    head = "".join(f"<th>{e(p)}</th>" for p in ["machine", "kernel", *fleet.probes()])
    rows = []
    for m in fleet.machines:
        verdicts = {r.probe: e(r.verdict) for r in m.report.results}
        cells = [e(m.label), e(str(m.report.machine.get("kernel") or "?")),
                 *_cells(fleet, m.label, verdicts, '<b class="out">{}*</b>')]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    findings = "".join(f"<li>{e(f.sentence)}</li>" for f in fleet.findings) or \
        f"<li>No outlier among {len(fleet.machines)} machines.</li>"
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'\"><meta name=\"viewport\" "
            f"content=\"width=device-width, initial-scale=1\"><title>{e(title)}</title><style>"
            "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}.out{color:#b91c1c}"
            # A phone-wide window scrolls the table alone, not the whole page.
            ".wide{overflow-x:auto}h1{overflow-wrap:anywhere}"
            f"</style></head><body><h1>{e(title)}</h1><div class=\"wide\"><table><tr>{head}"
            f"</tr>{''.join(rows)}</table></div><h2>Findings</h2><ul>{findings}</ul>"
            "</body></html>\n")
    return page.encode("utf-8")


__all__ = ["CSV_COLUMNS", "fleet_csv", "fleet_dict", "fleet_html", "fleet_markdown"]
