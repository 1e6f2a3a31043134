"""HTML report: one self-contained page a person would rather look at than read.

Contract: `HtmlRenderer().render(analysis) -> bytes` returns a complete HTML
document (UTF-8) with its CSS, its script (render/assets/report.js, hand-written SVG
plotting, no library) and its data inlined: it needs no network and loads
nothing (a Content-Security-Policy forbids it, and only the scripts whose
SHA-256 is in that policy may run). It never re-fits: everything drawn comes
from `plotdata.report_data(analysis)`, as the PNG renderer's plots do. A
profiled sweep whose profile carries its call tree gets an interactive flame
graph: d3-flame-graph 5.0.0 and the d3 modules it needs, vendored from npm by
`scripts/vendor-flamegraph` into render/assets/vendor/ (licences in
LICENSES.txt there) and inlined, driven by render/assets/flame.js. The A/B
change (`analysis.change`) leads the page, then each side's verdict labelled
"A:" and "B:" (one verdict without a B), then "B against A".

Escaping is the page's (render/html_page.py, which builds it and says how).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from quadscope.render.base import Renderer
from quadscope.render.html_page import asset, data_script, json_for_script, page, report_body

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.fleet.outliers import FleetDoctor


class HtmlRenderer(Renderer):
    """`render(analysis) -> bytes`: the whole page, UTF-8."""

    name = "html"
    flag = "--html"
    metavar = "FILE"
    help = "write a self-contained HTML report"
    extension = ".html"
    folder = False
    writes_fleet = True  # render_fleet: doctor --fleet's table and findings
    renders_several = True  # render_several: one page for several sweeps (html_several)
    renders_multi = True  # render_multi: a sweep over several sizes

    def __init__(self, *, title: str | None = None) -> None:
        self.title = title

    def render_fleet(self, fleet: FleetDoctor) -> bytes:
        """`doctor --fleet`: the machine × probe table and the findings (`render.fleet`)."""
        from quadscope.render.fleet import fleet_html

        return fleet_html(fleet)

    def render(self, analysis: Analysis) -> bytes:
        # Imported here: plot data needs numpy, and the CLI imports every renderer
        # to build its options (`quadscope --help` must not load numpy).
        from quadscope.render.plotdata import report_data

        data = report_data(analysis)
        flame = ""
        scripts = []
        if data.flame_tree is not None:
            vendor, drive = asset("vendor/flamegraph.js"), asset("flame.js")
            scripts += [vendor, drive]
            flame = (f"<script type=\"application/json\" id=\"qs-flame-data\">"
                     f"{json_for_script(data.flame_tree)}</script>\n"
                     f"<script>{vendor}</script>\n<script>{drive}</script>\n")
        body = "\n".join(report_body(analysis, data)) + "\n" + data_script(data, "qs-data")
        return page(self.title or data.title, body, scripts, flame)

    def render_several(self, analyses: Sequence[Analysis]) -> bytes:
        """One page for several sweeps (`quadscope import` of a file holding several): a
        summary of every verdict first, then one section per sweep (`html_several`)."""
        from quadscope.render.html_several import several_page

        return several_page(analyses, title=self.title)

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> bytes:
        """A sweep over several sizes: its heat map and a plot per axis (`multi_html`)."""
        from quadscope.render.multi_html import html

        return html(report)


__all__ = ["HtmlRenderer", "json_for_script"]
