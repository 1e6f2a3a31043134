"""Markdown summary: the verdict and the fits table, for a pull request or a CI job summary.

Contract: `MarkdownRenderer().render(analysis) -> bytes` is GitHub-flavoured
Markdown (UTF-8): a heading with the sweep, the verdict (for an A/B sweep the
change, then A's and B's own verdicts labelled "A:" and "B:"), where it ran (commit,
machine, meter), one table row per fitted metric (class, exponent with its
95% interval, the bracket of classes the data support, r²), a B-against-A
table when the sweep compares two commands, and the notes. It declares
`step_summary`: when `$GITHUB_STEP_SUMMARY` is set, the CLI appends the same
bytes there (GitHub's job summary, which expects appends). It declares
`renders_several`: `render_several(analyses)` is one document for several
sweeps (`quadscope import` of a file holding several): a summary table of
every sweep's answer (the change, else the verdict) first, then each sweep's
section as above, one heading level down. Every string from
the user or the workload is escaped so it cannot open a link, an image or an
HTML tag, nor break a table cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from quadscope.render.base import Renderer
from quadscope.render.safe import md
from quadscope.textsafe import visible
from quadscope.units import fmt_value

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.fleet.outliers import FleetDoctor
    from quadscope.model import Fit


def _k(fit: Fit, peak: float | None = None) -> str:
    """As the terminal and the page write it: "—" where flat, "≥ 4" at the search's edge
    (the raw "4.00 [0.00, 4.00]" of an unsettled time once read as a measured k of 4)."""
    from quadscope.analyse.headline import exponent_text

    return md(exponent_text(fit, peak) or "—")


def _class(fit: Fit, word: str) -> str:
    """The class cell as the terminal writes it ("1 … n³?", not "inconclusive")."""
    from quadscope.render.terminal import class_cell

    return md(class_cell(fit, word).plain)


def _bracket(fit: Fit, word: str) -> str:
    from quadscope.analyse.headline import label

    if not fit.at_least or fit.at_least == fit.at_most:
        return md(label(fit.at_least, word) if fit.at_least else "—")
    return f"{md(label(fit.at_least, word))} … {md(label(fit.at_most, word))}"


def _headline(analysis: Analysis) -> Iterable[str]:
    """The answer first: for A/B the change in bold, then each side's verdict, labelled."""
    change = analysis.change
    if change is None:
        yield f"**{md(analysis.verdict)}**"
        return
    from quadscope.analyse.sides import side_verdict

    yield f"**{md(change.text)}**"
    yield ""
    # Two list items, so GitHub shows them as two lines, not one run-on paragraph.
    yield f"- A: {md(side_verdict(analysis, 'A'))}"
    yield f"- B: {md(side_verdict(analysis, 'B'))}"


def _answer(analysis: Analysis) -> str:
    return analysis.change.text if analysis.change is not None else analysis.verdict


def _several(analyses: Sequence[Analysis]) -> Iterable[str]:
    """The summary of several sweeps, then each one's section."""
    yield f"### quadscope: {len(analyses)} sweeps"
    yield ""
    yield "| sweep | name | answer |"
    yield "|---|---|---|"
    for a in analyses:
        sw = a.sweep
        yield f"| {sw.id} | {md(sw.name or ' '.join(sw.command))} | {md(_answer(a))} |"
    yield ""
    for a in analyses:
        yield from _lines(a, level="####")


def _lines(analysis: Analysis, level: str = "###") -> Iterable[str]:
    sw = analysis.sweep
    yield f"{level} quadscope: {md(sw.name or ' '.join(sw.command))} (sweep {sw.id})"
    yield ""
    yield from _headline(analysis)
    yield ""
    where = [f"command `{visible(' '.join(sw.command)).replace('`', '')}`"]
    if sw.git_commit:
        where.append(f"commit {md(sw.git_commit[:10])}{' (dirty)' if sw.git_dirty else ''}"
                     + (f" on {md(sw.git_branch)}" if sw.git_branch else ""))
    if sw.machine:
        where.append(f"machine {md(sw.machine)}")
    if sw.meter:
        where.append(f"meter {md(sw.meter)}")
    yield " · ".join(where)
    word = analysis.size_word
    for variant, fits in analysis.fits.items():
        if not fits:
            continue
        yield ""
        if len(analysis.fits) > 1:
            yield f"{level}# {'A' if variant == 'A' else 'B (--vs)'}"
            yield ""
        yield f"| metric | class | exponent k [95%] | supported classes | r² | largest {word} |"
        yield "|---|---|---|---|---|---|"
        from quadscope.analyse.analysis import peaks

        runs = analysis.measured(variant)
        top = max((r.size_n for r in runs), default=0)
        highest = peaks(runs)
        for metric, fit in fits.items():
            r2 = "—" if fit.r2 is None else f"{fit.r2:.3f}"
            peak = highest.get(metric)
            yield (f"| {md(metric)} | {_class(fit, word)} | {_k(fit, peak)} | "
                   f"{_bracket(fit, word)} | {r2} | {top} |")
    if analysis.comparison is not None:
        yield ""
        yield "| metric | change | class A | class B |"
        yield "|---|---|---|---|"
        fits_a, fits_b = analysis.fits.get("A", {}), analysis.fits.get("B", {})
        for mc in analysis.comparison.metrics:
            fa, fb = fits_a.get(mc.metric), fits_b.get(mc.metric)
            class_a = _class(fa, word) if fa else md(mc.class_a)
            class_b = _class(fb, word) if fb else md(mc.class_b)
            yield f"| {md(mc.metric)} | {md(mc.change)} | {class_a} | {class_b} |"
    for fit in analysis.fits.get("A", {}).values():
        if fit.prediction is not None:
            p = fit.prediction
            yield ""
            yield (f"{md(fit.metric)} at {word}={p.size_n}: {md(fmt_value(fit.metric, p.value))} "
                   f"[{md(fmt_value(fit.metric, p.lo))}, {md(fmt_value(fit.metric, p.hi))}]")
    if analysis.notes:
        yield ""
        yield from (f"- {md(note)}" for note in analysis.notes)
    yield ""


class MarkdownRenderer(Renderer):
    name = "markdown"
    flag = "--markdown"
    metavar = "FILE"
    help = "write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)"
    extension = ".md"
    folder = False
    writes_fleet = True  # render_fleet: doctor --fleet's table and findings
    step_summary = True  # the CLI appends this output to $GITHUB_STEP_SUMMARY too
    renders_several = True  # render_several: one document for several sweeps
    renders_multi = True  # render_multi: a sweep over several sizes

    def render_several(self, analyses: Sequence[Analysis]) -> bytes:
        return "\n".join(_several(analyses)).encode("utf-8")

    def render(self, analysis: Analysis) -> bytes:
        return "\n".join(_lines(analysis)).encode("utf-8")

    def render_fleet(self, fleet: FleetDoctor) -> bytes:
        """`doctor --fleet`: the machine × probe table and the findings (`render.fleet`)."""
        from quadscope.render.fleet import fleet_markdown

        return fleet_markdown(fleet, md)

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> bytes:
        """A sweep over several sizes: verdict, then the per-axis table (`multi_markdown`)."""
        from quadscope.render.multi_markdown import markdown

        return markdown(report)
