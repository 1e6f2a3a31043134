"""A sweep over several sizes as Markdown: the verdict sentence first, then the per-axis table.

Contract: `markdown(report) -> bytes` is GitHub-flavoured Markdown (UTF-8) for
a pull request or a CI job summary: a heading with the sweep, the verdict
sentence (or the one sentence why nothing was fitted), one table row per axis
(exponent, its 95% interval, the class or the bracket the interval allows, the
sizes), both models with their AICc and which fits better, then the runs and
where they ran. It draws `MultiReport` and computes nothing; every string from
the user or the workload goes through `render.markdown.md`, so it cannot open a
link, an image or an HTML tag, nor break a table cell.
"""

from __future__ import annotations

from collections.abc import Iterator

from quadscope.analyse.multi_sweep import MultiReport
from quadscope.render.multi import axis_class_text, model_rows, sizes_text
from quadscope.render.safe import md
from quadscope.textsafe import command_text


def markdown(report: MultiReport) -> bytes:
    return ("\n".join(_lines(report)) + "\n").encode("utf-8")


def _lines(report: MultiReport) -> Iterator[str]:
    sw = report.sweep
    yield f"## quadscope: sweep {sw.id} — {md(sw.name or command_text(sw.command, sw.shell))}"
    yield ""
    v = report.verdict
    if v is None:
        yield f"**Nothing fitted:** {md(report.refusal)}"
        yield ""
        yield from _where(report)
        return
    yield f"**{md(report.metric)}: {md(v.sentence)}**"
    yield ""
    yield "| size | exponent | 95% interval | class | sizes |"
    yield "|---|---|---|---|---|"
    for a in v.axes:
        lo, hi = a.interval
        yield (f"| {md(a.axis)} | {a.exponent:.2f} | {lo:.2f} – {hi:.2f} | "
               f"{md(axis_class_text(a))} | {md(sizes_text(a.sizes))} |")
    names = sw.axis_names
    yield ""
    yield "| model | fit | AICc |"
    yield "|---|---|---|"
    for label, fit, formula in model_rows(v, names):
        yield f"| {md(label)} | {md(formula)} | {fit.aicc:.1f} |"
    yield ""
    yield from _where(report)


def _where(report: MultiReport) -> Iterator[str]:
    sw = report.sweep
    facts = [f"{report.n_runs} runs at {len(sw.points)} points"
             + (f", {report.n_failed} failed" if report.n_failed else "")]
    facts += [f"{k} {v}" for k, v in (("commit", sw.git_commit), ("machine", sw.machine),
                                      ("meter", sw.meter)) if v]
    yield md("; ".join(facts))
    yield ""
