"""The HTML page's parts: the page around a body, one sweep's body, its plot data.

Contract: `page(title, body, scripts, tail) -> bytes` is a complete document
(UTF-8) with its CSS and script (render/assets/report.js) inlined under a
Content-Security-Policy that lets only the scripts whose SHA-256 it lists run;
`report_body(analysis, data, ids=, heading=, footer=)` is one sweep's body
(the verdict first, then its tables and plots), `data_script(data)` its plot
data and `verdict_tone` the colour of a verdict. `HtmlRenderer` (render/html.py)
makes one sweep's page of them and `html_several` one page for several sweeps;
both import this module, and it imports neither.

Escaping: every string from the user or the workload (command lines, names,
host facts, stderr tails, symbol names) is written with `html.escape`; the
plot data is embedded once as JSON in a `<script type="application/json">`
with `<`, `>`, `&`, U+2028 and U+2029 written as `\\u` escapes, so no value can
close the element; the script reads it with `JSON.parse` and puts text in the
page only through `textContent`. A profile's flame graph SVG is rebuilt from a
whitelist (`extras.sanitise_svg`) before it is inlined.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

from quadscope import __version__
from quadscope.analyse.headline import lead_fit
from quadscope.classes import REGISTRY
from quadscope.textsafe import visible
from quadscope.units import fmt_exit

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.render.plotdata import ReportData
    from quadscope.render.plotmodel import Plot


def asset(name: str) -> str:
    """A file of render/assets, as text."""
    return resources.files("quadscope.render").joinpath("assets", name).read_text("utf-8")


def json_for_script(obj: Any) -> str:
    """JSON that cannot end a `<script>` element nor break a JS string literal."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def data_script(data: ReportData, anchor: str = "") -> str:
    """The plot data of one report, where report.js finds it (`script.qs-data`)."""
    id_attr = f" id=\"{_e(anchor)}\"" if anchor else ""
    return (f"<script type=\"application/json\" class=\"qs-data\"{id_attr}>"
            f"{json_for_script(data.to_json_obj())}</script>")


def page(title: str, body: str, scripts: Sequence[str] = (), tail: str = "") -> bytes:
    """A whole document: `body`, report.js, and `tail` (which holds `scripts`, whose hashes
    the Content-Security-Policy allows beside report.js's)."""
    script = asset("report.js")
    hashes = " ".join(f"'sha256-{_digest(s)}'" for s in (script, *scripts))
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {hashes}; base-uri 'none'; form-action 'none'"
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_e(csp)}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"quadscope {_e(__version__)}\">\n"
        f"<title>{_e(title)}</title>\n<style>\n{asset('report.css')}</style>\n</head>\n"
        f"<body>\n{body}\n<div id=\"qs-tip\" hidden></div>\n"
        f"<script>{script}</script>\n{tail}</body>\n</html>\n"
    ).encode()


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()


def _figure(plot: Plot, cls: str = "figure") -> str:
    return (
        f"<div class=\"{cls}\"><h4>{_e(plot.title)}</h4>"
        f"<div class=\"plot-holder\" data-plot=\"{_e(plot.id)}\"></div></div>"
    )


def _table(head: Iterable[str], rows: Iterable[Iterable[str]], num: set[int] | None = None,
           row_cls: Iterable[str] | None = None, *, nowrap: set[int] | None = None,
           stack: bool = False) -> str:
    """A table in a horizontal scroll box, so a narrow screen scrolls it instead of
    squeezing its columns to a word a line. `stack`: a table with a prose column, which
    report.css lays out as one card per row on a narrow screen, each cell led by its
    column's name (`data-label`)."""
    head = list(head)
    num, nowrap = num or set(), nowrap or set()
    table = "<table class=\"stack\">" if stack else "<table>"
    out = [f"<div class=\"wide\">{table}<thead><tr>",
           *(f"<th class=\"nw\">{_e(h)}</th>" if j in nowrap else f"<th>{_e(h)}</th>"
             for j, h in enumerate(head)), "</tr></thead><tbody>"]
    classes = list(row_cls) if row_cls is not None else None
    for i, row in enumerate(rows):
        rc = f" class=\"{_e(classes[i])}\"" if classes and classes[i] else ""
        out.append(f"<tr{rc}>")
        for j, cell in enumerate(row):
            cls = "num" if j in num else "nw" if j in nowrap else ""
            attrs = (f" class=\"{cls}\"" if cls else "") + (
                f" data-label=\"{_e(head[j])}\"" if stack and j < len(head) else "")
            out.append(f"<td{attrs}>{_e(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _summary(metric: str, text: str) -> str:
    """The comparison's summary without its leading "metric: ", which its row already names."""
    return text.removeprefix(f"{metric}: ")


def verdict_tone(analysis: Analysis, variant: str) -> str:
    """The verdict box's class: " calm" (green), "" (red) or " open" (grey, not settled)."""
    fits = analysis.fits.get(variant, {})
    calm = all((growth := REGISTRY.get(f.cls)) is not None and growth.linear_or_slower
               for f in fits.values() if f.confident)
    # The verdict leads with the time: while its class is not settled the box is neither
    # green nor red (green used to say "all clear" for a sweep that had settled nothing).
    lead = lead_fit(fits, analysis.work_metric)
    return " open" if lead is None or not lead.confident else " calm" if calm else ""


def _doctor_only(analysis: Analysis) -> bool:
    """A doctor summary (`quadscope doctor --html`): a report of probes, no runs of its own."""
    from quadscope.doctor.records import DoctorReport

    return isinstance(analysis.doctor, DoctorReport) and not analysis.runs


# What a doctor summary's facts keep: it has no command, sizes or runs of its own.
_DOCTOR_FACTS = ("sweep", "status", "host")


WRAPPED = ("symbol", "call path")  # the culprit columns allowed to wrap


def _growth(data: ReportData, ids: str) -> Iterable[str]:
    """The profile: its culprits table, then its flame graph; nothing without a profile."""
    if data.culprits or data.flame_svg or data.flame_tree:
        yield f"<section id=\"{ids}growth\"><h2>Where the growth comes from</h2>"
        if data.culprits:
            cols = list(dict.fromkeys(k for row in data.culprits for k in row))
            # Names and call paths wrap anywhere; the short columns never: no column is
            # clipped behind a scroll bar at 1400 px, and "inconclusive" stays one word.
            yield _table(cols, ([row.get(h, "") for h in cols] for row in data.culprits),
                         nowrap={j for j, h in enumerate(cols) if h not in WRAPPED})
        if data.flame_tree is not None:
            yield ("<h3>Differential flame graph</h3><p class=\"hint\">Width: share of the time "
                   "at the largest n. Colour: share of the growth beyond linear (red carries it, "
                   "grey is linear, blue grows slower; pale: too few samples to tell). Click a "
                   "frame to zoom; hover for its class and shares.</p>"
                   "<div class=\"flame-tools\"><input type=\"search\" id=\"qs-flame-search\" "
                   "placeholder=\"search frames\"> <button type=\"button\" id=\"qs-flame-reset\">"
                   "reset zoom</button> <span id=\"qs-flame-info\" class=\"hint\"></span></div>"
                   "<div id=\"qs-flame\" class=\"flame-live\"></div>")
        elif data.flame_svg:
            yield "<h3>Differential flame graph</h3><div class=\"flame\">"
            yield data.flame_svg  # rebuilt from a whitelist by plotdata.sanitise_svg
            yield "</div>"
        yield "</section>"


def report_body(analysis: Analysis, data: ReportData, *, ids: str = "",
          heading: str = "h1", footer: bool = True) -> Iterable[str]:
    """One report's HTML: its header (`heading` the title's element), verdict first, then its
    tables and plots, then (`footer`) how the page was made; every id starts with `ids`,
    so several reports share a page."""
    yield f"<header><{heading}>{_e(data.title)}</{heading}>"
    doctor_only = _doctor_only(analysis)
    if doctor_only:
        from quadscope.doctor.records import DoctorReport
        from quadscope.render.doctor import doctor_headline

        assert isinstance(analysis.doctor, DoctorReport)
        text, tone = doctor_headline(analysis.doctor)
        yield (f"<p class=\"verdict{'' if tone == 'bad' else ' ' + tone}\" id=\"{ids}verdict\">"
               f"{_e(text)}</p>")
    elif data.change is not None:
        # The A/B result leads: it is what `--vs` and `compare` are for.
        yield (f"<p class=\"change change-{_e(data.change['direction'])}\" id=\"{ids}change\">"
               f"{_e(data.change['text'])}</p>")
    if doctor_only:
        pass
    elif data.change is None:
        yield (f"<p class=\"verdict{verdict_tone(analysis, 'A')}\" id=\"{ids}verdict\">"
               f"{_e(data.verdict)}</p>")
    else:
        from quadscope.analyse.sides import side_verdict

        # Under the change, each side's own verdict, labelled: an unlabelled red box of A's
        # verdict under B's green change read as bad news about the fix.
        for variant, anchor in (("A", "verdict"), ("B", "verdict-b")):
            text = visible(f"{variant}: {side_verdict(analysis, variant)}")
            tone = verdict_tone(analysis, variant)
            yield f"<p class=\"verdict{tone}\" id=\"{ids}{anchor}\">{_e(text)}</p>"
    if data.culprit_sentence:  # the user's function, right under the verdict
        yield f"<p class=\"culprit\" id=\"{ids}culprit\">{_e(data.culprit_sentence)}</p>"
    yield "<dl class=\"facts\">"
    for k, v in data.facts:
        if doctor_only and k not in _DOCTOR_FACTS:
            continue
        cls = " class=\"mono\"" if k in ("command", "vs (B)") else ""
        yield f"<dt>{_e(k)}</dt><dd{cls}>{_e(v)}</dd>"
    yield "</dl></header>"
    # A profiled sweep answers "which function?" first: its culprits come before the metrics.
    yield from _growth(data, ids)
    if data.comparison:
        yield "<h2>B against A</h2>"
        yield ("<p class=\"hint\">A and B are overlaid in every plot below, and each metric "
               "ends with B/A against " + _e(data.size_word) + ".</p>")
        yield _table(["metric", "change", "class A", "class B", "crossover", "summary"],
                     ([c["metric"], c["change"], c["class_a"], c["class_b"], c["crossover"],
                       _summary(c["metric"], c["summary"])] for c in data.comparison),
                     nowrap={0, 1, 2, 3, 4}, stack=True)
    if data.notes:
        yield "<ul class=\"notes\">" + "".join(f"<li>{_e(n)}</li>" for n in data.notes) + "</ul>"

    if data.table:
        yield "<h2>How each metric grows</h2>"
        two = len({r["variant"] for r in data.table}) > 1
        predicted = any(r["prediction"] != "—" for r in data.table)  # only with --predict
        head = (["variant"] if two else []) + [
            "metric", "class", "exponent k [95%]", "a (offset)", "b", "r²",
            *(["prediction"] if predicted else []), "runs fitted"]
        rows, classes = [], []
        for r in data.table:
            cells = ([r["variant"]] if two else []) + [
                r["metric"], r["class"], r["k"], r["a"], r["b"], r["r2"],
                *([r["prediction"]] if predicted else []), r["points"]]
            rows.append(cells)
            classes.append("" if r["confident"] else "inconclusive")
        off = 1 if two else 0
        yield _table(head, rows, num={off + 3, off + 4, off + 5, off + 6 + predicted},
                     row_cls=classes, nowrap={off + 1, off + 2})
        reasons = [r for r in data.table if r["reason"]]
        if reasons:
            yield "<ul class=\"notes\">" + "".join(
                f"<li>{_e(r['variant']) + ' ' if two else ''}{_e(r['metric'])}: "
                f"{_e(r['reason'])}</li>"
                for r in reasons) + "</ul>"

    if data.sections:
        yield "<h2>Cost against " + _e(data.size_word) + "</h2>"
        yield ("<p class=\"hint\">Hover a point for its run. Drag a box to zoom, shift+wheel "
               "to zoom about the pointer, double-click or “reset zoom” to go back.</p>")
        profiled = bool(data.culprits or data.flame_svg or data.flame_tree)
        for s in data.sections:
            # Under a profile the metrics are the evidence, not the answer: all folded.
            open_attr = " open" if s.open and not profiled else ""
            yield (f"<details class=\"metric\" id=\"{ids}m-{_e(s.metric)}\"{open_attr}>"
                   f"<summary>{_e(s.metric)} <span class=\"mv\">— {_e(s.verdict)}"
                   "</span></summary><div class=\"grid\">")
            for plot in s.plots:
                yield _figure(plot)
            yield "</div></details>"

    if data.doctor:
        yield f"<section id=\"{ids}doctor\"><h2>Doctor</h2>"
        heads = list(dict.fromkeys(h for p in data.doctor for h in p.cells))
        # Stacked on a narrow screen, as the comparison is: its findings are prose.
        yield "<div class=\"wide\"><table class=\"stack\"><thead><tr><th>probe</th>"
        yield "".join(f"<th>{_e(h)}</th>" for h in heads) + "<th>plot</th></tr></thead><tbody>"
        for p in data.doctor:
            figure = _figure(p.plot, "probe-plot") if p.plot is not None else ""
            row_html = "".join(f"<td data-label=\"{_e(h)}\">{_e(p.cells.get(h, ''))}</td>"
                               for h in heads)
            yield (f"<tr class=\"verdict-{_e(p.verdict)}\"><td>{_e(p.name)}</td>"
                   f"{row_html}<td>{figure}</td></tr>")
        yield "</tbody></table></div></section>"

    if data.failures:
        yield f"<h2>Failed runs ({len(data.failures)})</h2>"
        if data.failures_drawn:  # the hint once spoke of crosses no plot drew
            yield "<p class=\"hint\">Drawn as grey crosses in the cost plots; never fitted.</p>"
        else:
            yield "<p class=\"hint\">Never fitted.</p>"
        yield "<div class=\"wide\"><table><thead><tr><th>run #</th><th>variant</th><th>" + _e(data.size_word)
        yield "</th><th>repeat</th><th>exit</th><th>stderr (tail)</th></tr></thead><tbody>"
        for f in data.failures[:200]:
            code = fmt_exit(f["exit_code"]) + (" (timed out)" if f["timed_out"] else "")
            yield (f"<tr><td class=\"num\">{_e(f['seq'])}</td><td>{_e(f['variant'])}</td>"
                   f"<td class=\"num\">{_e(f['size_n'])}</td><td class=\"num\">{_e(f['repeat'])}"
                   f"</td><td class=\"num\">{_e(code)}</td>"
                   f"<td><pre class=\"stderr\">{_e(f['stderr_tail'])}</pre></td></tr>")
        yield "</tbody></table></div>"
        if len(data.failures) > 200:
            yield (f"<p class=\"hint\">{len(data.failures) - 200} more failures: "
                   "`quadscope show` lists them all.</p>")

    if not footer:  # a section of a page of several: the page has one footer
        return
    if doctor_only:
        yield (f"<footer>quadscope {_e(__version__)} · report built from the stored doctor "
               "report; nothing was re-run.</footer>")
        return
    yield (f"<footer>quadscope {_e(__version__)} · report built from the stored sweep; "
           "nothing was re-run. The band around each fitted curve is where 95% of single runs "
           "are expected to fall, given the class (a weighted least-squares prediction band, "
           "relative errors); the log-log panel shows the growing part y − a, with a reference "
           "slope at the fitted exponent k.</footer>")


__all__ = ["asset", "data_script", "json_for_script", "page", "report_body", "verdict_tone"]
