"""Terminal report: the verdict first, then per-metric fits, comparison and failures.

Contract: `TerminalRenderer(color=, width=).render(analysis) -> bytes` returns
UTF-8 text (with ANSI styles when `color`), built with rich; only the CLI
prints it. A doctor summary (`analysis.doctor` is a `DoctorReport`) is shown
as the doctor's own table (`render.doctor`); a probe's sweep ends with the
probe's finding, a profiled sweep with its culprits.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from quadscope.analyse.analysis import Analysis, class_text, exponent_text, peaks
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.doctor.records import DoctorReport, ProbeResult
from quadscope.model import METRICS, Fit
from quadscope.profile.records import Culprit
from quadscope.render.doctor import doctor_text
from quadscope.units import fmt_value


def class_style(cls: str) -> str:
    """Slower than n green, superlinear bold red, in between cyan, inconclusive yellow."""
    growth = REGISTRY.get(cls)
    if growth is None:
        return "yellow" if cls == INCONCLUSIVE else ""
    if growth.superlinear:
        return "bold red"
    return "green" if growth.sublinear else "cyan"


def _peak(analysis: Analysis, variant: str, metric: str) -> float | None:
    return peaks(analysis.measured(variant)).get(metric)


def _median_at_max(analysis: Analysis, variant: str, metric: str) -> float | None:
    runs = analysis.measured(variant)
    if not runs:
        return None
    top = max(r.size_n for r in runs)
    vals = sorted(v for r in runs if r.size_n == top and (v := r.value(metric)) is not None)
    return vals[len(vals) // 2] if vals else None


def _k(fit: Fit, peak: float | None) -> str:
    return exponent_text(fit, peak) or "—"


def prediction_text(fit: Fit, size_word: str = "n") -> str:
    p = fit.prediction
    if p is None:
        return ""
    m = fit.metric
    if not fit.confident:
        return (f"at {size_word} = {p.size_n}: somewhere in {fmt_value(m, p.lo)}–"
                f"{fmt_value(m, p.hi)} (95%; the class is not settled, so neither is this)")
    return (f"at {size_word} = {p.size_n}: {fmt_value(m, p.value)}, "
            f"95% {fmt_value(m, p.lo)}–{fmt_value(m, p.hi)}")


def fits_table(analysis: Analysis, variant: str) -> Table:
    fits = analysis.fits.get(variant, {})
    n_word = "i" if analysis.sweep.mode == "accumulate" else "n"
    predict = analysis.sweep.predict_n is not None
    table = Table(title=f"{_label(analysis, variant)}: how each metric grows with {n_word}",
                  title_justify="left", expand=False)
    for col in ("metric", "class", "k [95%]", "a (offset)", "b", "r²", f"at max {n_word}"):
        table.add_column(col, justify="left" if col in ("metric", "class") else "right")
    if predict:
        table.add_column(f"predicted at {n_word} = {analysis.sweep.predict_n}", justify="right")
    for metric in METRICS:
        fit = fits.get(metric)
        if fit is None:
            continue
        peak = _peak(analysis, variant, metric)
        row: list[str | Text] = [
            metric,
            Text(class_text(fit, n_word, peak), style=class_style(fit.cls)),
            _k(fit, peak),
            fmt_value(metric, fit.coefficients.get("a")),
            f"{fit.coefficients.get('b', 0.0):.3g}",
            "—" if fit.r2 is None else f"{fit.r2:.3f}",
            fmt_value(metric, _median_at_max(analysis, variant, metric)),
        ]
        if predict:
            p = fit.prediction
            if p is None:
                row.append("—")
            elif not fit.confident:
                row.append(f"? ({fmt_value(metric, p.lo)}–{fmt_value(metric, p.hi)})")
            else:
                row.append(f"{fmt_value(metric, p.value)} ({fmt_value(metric, p.lo)}–"
                           f"{fmt_value(metric, p.hi)})")
        table.add_row(*row)
    return table


def _label(analysis: Analysis, variant: str) -> str:
    sw = analysis.sweep
    cmd = sw.vs_command if variant == "B" else sw.command
    text = " ".join(cmd or ())
    return f"{variant} `{text}`" if sw.vs_command is not None else f"`{text}`"


def comparison_table(analysis: Analysis) -> Table | None:
    comp = analysis.comparison
    if comp is None:
        return None
    table = Table(title="B against A", title_justify="left")
    for col in ("metric", "change", "A", "B", "B/A at max n [95%]", "crossover n"):
        table.add_column(col)
    for mc in comp.metrics:
        last = mc.ratios[-1] if mc.ratios else None
        ratio = "—" if last is None else f"{last.ratio:.3g} [{last.lo:.3g}, {last.hi:.3g}]"
        cross = "—" if mc.crossover_n is None else f"{mc.crossover_n:.4g}"
        style = "bold red" if mc.change == "class" else ""
        table.add_row(mc.metric, Text(mc.change, style=style), mc.class_a, mc.class_b, ratio,
                      cross)
    return table


def failures_table(analysis: Analysis) -> Table | None:
    if not analysis.failures:
        return None
    table = Table(title=f"{len(analysis.failures)} failed run(s), left out of the fit",
                  title_justify="left")
    for col in ("variant", "n", "exit", "stderr (tail)"):
        table.add_column(col)
    for r in analysis.failures[:20]:
        m = r.measurement
        code = "timeout" if m.timed_out else str(m.exit_code)
        tail = m.stderr_tail.strip().splitlines()[-1:] or [""]
        table.add_row(r.variant, str(r.size_n), code, Text(tail[0][:100]))
    return table


def culprits_table(culprits: Iterable[Culprit]) -> Table:
    table = Table(title="culprits: what makes it grow", title_justify="left")
    for col in ("#", "symbol", "dso", "class", "k", "share at max n", "share of growth"):
        table.add_column(col)
    for i, c in enumerate(list(culprits)[:15], 1):
        k = c.self_exponent
        caller = f" ← {c.user_caller}" if c.user_caller else ""
        table.add_row(str(i), Text(f"{c.symbol}{caller}"), Text(c.dso), c.self_class,
                      "—" if k is None else f"{k:.2f}", f"{100 * c.share_at_max:.1f}%",
                      f"{100 * c.growth_share:.1f}%")
    return table


def renderables(analysis: Analysis) -> Iterable[RenderableType]:
    sw = analysis.sweep
    yield Text(analysis.verdict, style="bold")
    sizes = sorted({r.size_n for r in analysis.runs if not r.warmup})
    span = f"{sizes[0]}..{sizes[-1]} ({len(sizes)} sizes)" if sizes else "no sizes"
    word = "launches" if sw.mode == "accumulate" else "n"
    yield Text(f"sweep {sw.id} · {escape(sw.name)} · {sw.mode} · {word} {span} · "
               f"{len(analysis.runs)} runs · {sw.status}", style="dim")
    if sw.counters_note:
        yield Text(f"counters: {sw.counters_note}", style="dim")
    for variant in analysis.fits:
        if analysis.fits[variant]:
            yield fits_table(analysis, variant)
    two = len(analysis.fits) > 1
    undecided = [(v, f) for v, fs in analysis.fits.items() for f in fs.values() if not f.confident]
    for variant, fit in undecided[:8]:
        who = f"{variant} " if two else ""
        yield Text(f"{who}{fit.metric} inconclusive: {fit.reason}", style="yellow")
    if sw.predict_n is not None:
        for fit in analysis.fits.get("A", {}).values():
            if fit.metric in ("wall_s", "max_rss_bytes") and fit.prediction:
                yield Text(f"{fit.metric} {prediction_text(fit)}")
    if (table := comparison_table(analysis)) is not None:
        yield table
        for mc in analysis.comparison.metrics if analysis.comparison else ():
            if mc.change in ("class", "constant") and mc.summary:
                yield Text(mc.summary)
    if (table := failures_table(analysis)) is not None:
        yield table
    if analysis.profile is not None and analysis.profile.culprits:
        yield culprits_table(analysis.profile.culprits)
    probe = analysis.doctor
    if isinstance(probe, ProbeResult) and probe.finding:
        yield Text(f"doctor {probe.probe}: {probe.verdict} — {probe.finding}")
    for note in analysis.notes:
        yield Text(f"note: {note}", style="dim")


class TerminalRenderer:
    name = "terminal"
    flag = ""  # printed by the CLI, never written to a file
    metavar = ""
    help = ""
    extension = ".txt"
    folder = False

    def __init__(self, color: bool = False, width: int = 120) -> None:
        self.color = color
        self.width = width

    def render(self, analysis: Analysis) -> bytes:
        if isinstance(analysis.doctor, DoctorReport):
            text = doctor_text(analysis.doctor, analysis.doctor_vs, color=self.color,
                               width=self.width)
        else:
            text = self._report(analysis)
        return text.encode("utf-8")

    def _report(self, analysis: Analysis) -> str:
        buf = io.StringIO()
        console = Console(file=buf, force_terminal=self.color, width=self.width,
                          color_system="standard" if self.color else None, highlight=False)
        for item in renderables(analysis):
            console.print(item)
        return buf.getvalue()
