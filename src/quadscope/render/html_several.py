"""One HTML page for several sweeps: `quadscope import` of a file that holds several.

Contract: `several_page(analyses, title=None) -> bytes` is one self-contained
page with the single sweep's CSS, script and Content-Security-Policy
(`html_page.page`). It opens with a summary: a heading naming how many sweeps, then
one row per sweep (its id, its name, its answer: the A/B change when it has a B,
else its verdict) coloured as that sweep's own page colours its verdict, the
first row's answer carrying the page's `#verdict`, each name a link to its
section. Then one section per sweep, in the order given, each the single
sweep's page body (`html_page.report_body`: the verdict first, then its tables and
plots) with every id prefixed `s<id>-` and its own plot data, which
report.js draws into that section alone. Interactive flame graphs are left
out (their script expects one per page); a profile's static graph stays.
Every string from the user or the workload is escaped as on one sweep's page.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from quadscope import __version__
from quadscope.render.html_page import data_script, page, report_body, verdict_tone
from quadscope.textsafe import html_text as _e

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis


def answer(analysis: Analysis) -> tuple[str, str]:
    """What a sweep's page leads with, and the CSS class that colours it there."""
    change = analysis.change
    if change is not None:
        return change.text, f"change change-{change.direction}"
    return analysis.verdict, "verdict" + verdict_tone(analysis, "A")


def _summary(analyses: Sequence[Analysis]) -> Iterable[str]:
    yield "<div class=\"wide\"><table class=\"stack\"><thead><tr><th>sweep</th><th>name</th>"
    yield "<th>answer</th></tr></thead><tbody>"
    for i, a in enumerate(analyses):
        text, cls = answer(a)
        sw = a.sweep
        anchor = " id=\"verdict\"" if i == 0 else ""
        yield (f"<tr><td class=\"nw\">#{sw.id}</td><td data-label=\"name\">"
               f"<a href=\"#s{sw.id}\">{_e(sw.name or ' '.join(sw.command))}</a></td>"
               f"<td data-label=\"answer\"><p class=\"{cls} in-table\"{anchor}>{_e(text)}</p>"
               "</td></tr>")
    yield "</tbody></table></div>"


def several_page(analyses: Sequence[Analysis], *, title: str | None = None) -> bytes:
    """The page (UTF-8) of every sweep in `analyses`, summary first (see the contract)."""
    from quadscope.render.plotdata import report_data  # numpy: imported when a page is made

    if not analyses:
        raise ValueError("several_page needs at least one sweep")
    heading = title or f"quadscope: {len(analyses)} sweeps"
    parts = [f"<header><h1>{_e(heading)}</h1>", *_summary(analyses), "</header>"]
    for a in analyses:
        data = dataclasses.replace(report_data(a), flame_tree=None)
        sid = f"s{a.sweep.id}"
        parts.append(f"<section class=\"sweep\" id=\"{sid}\" data-report>")
        parts.extend(report_body(a, data, ids=f"{sid}-", heading="h2", footer=False))
        parts.append(data_script(data))
        parts.append("</section>")
    parts.append(f"<footer>quadscope {_e(__version__)} · report built from the stored sweeps; "
                 "nothing was re-run. The band around each fitted curve is where 95% of single "
                 "runs are expected to fall, given the class; the log-log panel shows the "
                 "growing part y − a, with a reference slope at the fitted exponent k.</footer>")
    return page(heading, "\n".join(parts))


__all__ = ["answer", "several_page"]
