"""Terminal report: the headline first, then one compact table of what grows or matters.

Contract: `TerminalRenderer(color=, width=, verbose=, quiet=).render(analysis)
-> bytes` returns UTF-8 text (with ANSI styles when `color`), built with rich;
only the CLI prints it. What it shows:

- `quiet`: the headline only (for an A/B sweep, the change: `analysis.change`).
- default: the A/B change (coloured: worse red, better green) then each
  side's verdict labelled "A:" and "B:" (`analyse.sides.side_verdict`), or
  the verdict alone (`analysis.verdict`, as the fitting decided it); a
  profiled sweep's culprit sentence (its user's function) right under it; one
  dim line naming the sweep; a profile's top culprits (the answer before the
  evidence); then one table of the metrics that grow or matter (as analyse
  decided them: `analysis.notable`, see `analyse.notable`; the "at max n"
  column is `analysis.at_max`), each with at most one short note beneath, then
  a probe's finding and counts of what `-v` would add (failures, hidden metrics).
- `verbose`: every metric of every variant with a, b, r² and predictions,
  the per-size table of the headline's metric (`render.sizes`: n, runs, min,
  median, max, MAD/median; at most `VERBOSE_SIZES` sizes unless `sizes`),
  every note and reason in full, the comparison per metric, the failed runs.
- `sizes` (`show --sizes`): the per-size table of every size under the
  default report; `metric` names its metric (else the headline's).

Layout: every table fits `width` without wrapping a name or a number: columns
are dropped, least useful first, until it fits (`fit_columns`), and what is
left is cut with an ellipsis rather than wrapped. Every user-supplied string
(name, command, stderr, symbols) goes through `textsafe.visible` and is put in
a `rich.text.Text`, so markup is never parsed and no control character reaches
the terminal raw. A doctor summary (`analysis.doctor` is a `DoctorReport`) is
shown as the doctor's own table (`render.doctor`).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from quadscope.analyse.change import BETTER, WORSE, class_label
from quadscope.analyse.headline import (
    bracket_text,
    bracketed,
    exponent_text,
    lead_fit,
    trivial,
    work_note,
)
from quadscope.analyse.launches import counted_text
from quadscope.analyse.text import by_note, counting_note, of_metrics, uncounted_note
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.doctor.records import DoctorReport, ProbeResult
from quadscope.meters import REGISTRY as METERS
from quadscope.model import METRICS, Fit
from quadscope.profile.records import Culprit
from quadscope.profile.stacks import UNKNOWN
from quadscope.render.base import Renderer
from quadscope.render.columns import Column, _line, fit_columns
from quadscope.render.doctor import doctor_text
from quadscope.render.extras import culprit_class
from quadscope.render.sizes import shown_metric, sizes_tables
from quadscope.textsafe import command_text, shorten, visible
from quadscope.units import fmt_count, fmt_exit, fmt_value

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text

    from quadscope.analyse.analysis import Analysis

# rich is imported inside the functions that draw: the renderer registry imports
# this module to build `quadscope --help`, which must start at once.

VERBOSE_SIZES = 12  # -v's per-size table shows at most this many sizes; --sizes every one
K_MAX = 4.0  # the free power law's search bound (analyse.classfit.K_GRID): k there means "≥ 4"
CHANGE_STYLE = {WORSE: "bold red", BETTER: "bold green"}


def _ratio(x: float) -> str:
    """A B/A ratio, "—" where it is undefined (A measured 0, B did not)."""
    return f"{x:.3g}" if math.isfinite(x) else "—"


def _bound(x: float) -> str:
    """An end of B/A's interval: "∞" where it is unbounded, "?" where it is not a number
    (a bootstrap of A's medians that reach 0 interpolates inf − inf). "—", the mark of an
    empty cell, made it read "0.949–—"."""
    return "∞" if x == math.inf else "?" if math.isnan(x) else _ratio(x)


def class_style(cls: str) -> str:
    """Slower than n green, superlinear bold red, in between cyan, inconclusive yellow."""
    growth = REGISTRY.get(cls)
    if growth is None:
        return "yellow" if cls == INCONCLUSIVE else ""
    if growth.superlinear:
        return "bold red"
    return "green" if growth.sublinear else "cyan"


def class_cell(fit: Fit, word: str) -> Text:
    """The class as a person reads it: "n²", a bracket "n or n log n?" or "n²?" when unsettled."""
    from rich.text import Text
    if trivial(fit):
        return Text("1", style=class_style("1"))
    if fit.confident:
        return Text(class_label(fit.cls, word), style=class_style(fit.cls))
    if bracketed(fit) and fit.at_least != fit.at_most:
        text = f"{bracket_text(fit, word)}?"  # the headline's and the HTML's words
    else:
        text = f"{class_label(fit.best, word)}?" if fit.best else "?"
    return Text(text, style="yellow")


def k_cell(fit: Fit, interval: bool = False, peak: float | None = None) -> str:
    """k with its half-width (or its interval), "—" for a flat metric (analyse.headline's rule:
    a count whose `peak`, its largest value, never passed 1 has no exponent worth showing)."""
    return exponent_text(fit, peak, symmetric=not interval) or "—"


def _peaks(analysis: Analysis, variant: str) -> dict[str, float]:
    from quadscope.analyse.analysis import peaks
    return peaks([r for r in analysis.runs if r.variant == variant])


def median_at_max(analysis: Analysis, variant: str, metric: str) -> float | None:
    """The median at the variant's largest size, as analyse computed it (`Analysis.at_max`)."""
    return analysis.at_max.get(variant, {}).get(metric)


def _label(analysis: Analysis, variant: str) -> str:
    sw = analysis.sweep
    if variant == "B" and sw.vs_command is not None:
        return f"B: {command_text(sw.vs_command, sw.vs_shell)}"
    cmd = command_text(sw.command, sw.shell)
    return f"A: {cmd}" if sw.vs_command is not None else cmd


def headline(analysis: Analysis, width: int = 10_000) -> list[Text]:
    """The change then "A: …" and "B: …" (each side's verdict) for A/B, else the verdict;
    each one styled paragraph that fits `width` (`fit_words`): one line when it can,
    else broken between clauses."""
    from rich.text import Text
    out = []
    change = analysis.change
    if change is not None:
        out.append(Text(fit_words(visible(change.text), width),
                        style=CHANGE_STYLE.get(change.direction, "bold"),
                        no_wrap=True, overflow="ellipsis"))
    if change is None:
        out.append(Text(fit_words(visible(analysis.verdict), width), style="bold",
                        no_wrap=True, overflow="ellipsis"))
        return out
    from quadscope.analyse.sides import side_verdict

    # Under the change, each side's own verdict, labelled: unlabelled, A's verdict of a
    # fixed quadratic read as a red line about the pull request that fixed it.
    for variant in ("A", "B"):
        out.append(Text(fit_words(visible(f"{variant}: {side_verdict(analysis, variant)}"),
                                  width), no_wrap=True, overflow="ellipsis"))
    return out


def _breaks(text: str) -> list[tuple[int, int]]:
    """(index of a space, how good a break it is: 0 between clauses, 1 between words, 2
    inside brackets). Clauses end after ";" or ":" or before "—" or "(" outside brackets,
    so "(k = 1.42 [0.00, 4.00])" and "(1 … n³ → 1 … n³)" stay whole when they can."""
    out, depth = [], 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        elif ch == " ":
            if depth:
                out.append((i, 2))
            else:
                clause = text[i - 1:i] in (";", ":") or text[i + 1:i + 2] in ("—", "(")
                out.append((i, 0 if clause else 1))
    return out


def fit_words(text: str, width: int, indent: str = "  ") -> str:
    """`text` in lines of at most `width` columns, continuations indented, broken only at
    spaces: between clauses where that leaves a line at least a third full, else between
    words outside brackets, else anywhere. A word longer than the line stays whole (and
    the caller cuts it with an ellipsis): a terminal that wraps it would break it anyway."""
    lines: list[str] = []
    rest, room = text, width
    while len(rest) > room:
        spaces = [(i, q) for i, q in _breaks(rest) if i <= room]
        pick = None
        for level in (0, 1, 2):
            fits = [i for i, q in spaces if q <= level and (level == 2 or i >= room // 3)]
            if fits:
                pick = max(fits)
                break
        if pick is None:  # no space before the edge: break at the first one after it
            pick = next((i for i, _ in _breaks(rest)), None)
            if pick is None:
                break
        lines.append(rest[:pick])
        rest, room = rest[pick + 1:], width - len(indent)
    lines.append(rest)
    return ("\n" + indent).join(lines)


def _sweep_line(analysis: Analysis, width: int) -> Text:
    sw = analysis.sweep
    sizes = sorted({r.size_n for r in analysis.runs if not r.warmup})
    if not sizes:
        span = "no sizes"
    elif sw.mode == "accumulate":  # launches 1..600 are 600 launches, not "600 sizes"
        span = f"launches {fmt_count(sizes[0])}..{fmt_count(sizes[-1])}"
    else:
        start = sw.startup_n if sw.startup_n in sizes and len(sizes) > 1 else None
        sizes = [n for n in sizes if n != start]
        span = (f"n {fmt_count(sizes[0])}..{fmt_count(sizes[-1])} ({len(sizes)} sizes)"
                if start is None else f"n {fmt_count(start)} (start-up), "
                f"{fmt_count(sizes[0])}..{fmt_count(sizes[-1])} ({len(sizes)} sizes)")
    extra = [f"{k} {visible(v)}" for k, v in (("setup", sw.setup), ("prepare", sw.prepare)) if v]
    if sw.mode == "adaptive" and sw.budget_s:  # as the several-size report says it
        extra.insert(0, f"sizes chosen within {sw.budget_s:g} s")
    if sw.cpus:
        extra.append(f"CPUs {','.join(map(str, sw.cpus))}")
    meter = [f"meter {sw.meter} ({sw.counters})", f"meter {sw.meter}"] \
        if sw.meter != METERS.default.name else [""]
    for said in meter:  # the counter's name (valgrind, perf) is the first to go for room
        tail = (f" · {span} · {len(analysis.runs)} runs"
                + "".join(f" · {e}" for e in [*extra, said] if e))
        room = width - len(f"sweep {sw.id} ") - len(tail)
        if room >= 20:
            break
    # The name yields to the facts: cut so the line fits, never below 12 characters.
    room = max(room, 12)
    name = f" {shorten(visible(sw.name), room)}" if sw.name else ""
    return _line(f"sweep {sw.id}{name}{tail}", "dim")


def compact_table(analysis: Analysis, shown: Sequence[str], width: int) -> Table | None:
    word = analysis.size_word
    two = "B" in analysis.fits and bool(analysis.fits["B"])
    fits_a = analysis.fits.get("A", {})
    if not shown:
        return None
    if two:
        ratios = {mc.metric: mc for mc in analysis.comparison.metrics} \
            if analysis.comparison else {}
        cols = [Column("metric", 9), Column("A", 8), Column("B", 8),
                Column(f"B/A at max {word}", 6, True), Column("95%", 2, True),
                Column("k A → B", 1, True)]
        rows: list[list[str | Text]] = []
        for m in shown:
            fa, fb = fits_a.get(m), analysis.fits["B"].get(m)
            mc = ratios.get(m)
            last = max(mc.ratios, key=lambda r: r.size_n) if mc and mc.ratios else None
            ks = f"{k_cell(fa).split(' ')[0]} → {k_cell(fb).split(' ')[0]}" if fa and fb else "—"
            rows.append([m, class_cell(fa, word) if fa else "—",
                         class_cell(fb, word) if fb else "—",
                         "—" if last is None else _ratio(last.ratio),
                         "—" if last is None or not math.isfinite(last.ratio)
                         else f"{_bound(last.lo)}–{_bound(last.hi)}", ks])
        return fit_columns(None, cols, rows, width)
    predict = analysis.sweep.predict_n
    cols = [Column("metric", 9), Column("class", 8), Column("k ± 95%", 5, True),
            Column(f"at max {word}", 4, True)]
    if predict is not None:
        cols.append(Column(f"at {word} = {fmt_count(predict)}", 3, True))
    rows = []
    top = _peaks(analysis, "A")
    for m in shown:
        fit = fits_a[m]
        row: list[str | Text] = [m, class_cell(fit, word), k_cell(fit, peak=top.get(m)),
                                 fmt_value(m, median_at_max(analysis, "A", m))]
        if predict is not None:
            p = fit.prediction
            row.append("—" if p is None else fmt_value(m, p.value) if fit.confident
                       else f"{fmt_value(m, p.lo)}–{fmt_value(m, p.hi)}")
        rows.append(row)
    return fit_columns(None, cols, rows, width)


def short_note(fit: Fit, word: str, compact: bool = False, counted: str | None = None) -> str:
    """One short note for an unsettled fit: what would settle it, else its reason. A time
    metric beside `counted`, a work count whose settled class the headline leads with,
    says only that (its reason, often many lines, is -v's): the time notes of such a
    sweep once repeated "the work was counted exactly" once per time metric."""
    if fit.confident:
        return ""
    if counted and fit.metric in _TIMES:
        return f"not settled by time alone; the {counted} counted decide the class (-v: why)"
    if fit.decide_n:
        to = "" if compact else "a sweep to "
        return f"not settled; {to}{word} = {fmt_count(fit.decide_n)} would decide"
    return f"not settled: {fit.reason}" if fit.reason else "not settled"


_TIMES = ("wall_s", "cpu_s", "user_s", "sys_s")  # the time metrics a work count decides for


def _counted_lead(fits: Mapping[str, Fit], work: str | None) -> str | None:
    """The work metric when the headline leads with its settled class, else None."""
    lead = lead_fit(fits, work)
    return work if lead is not None and lead.metric == work and lead.confident else None


def full_table(analysis: Analysis, variant: str, width: int) -> Table:
    word = analysis.size_word
    predict = analysis.sweep.predict_n
    cols = [Column("metric", 9), Column("class", 8), Column("k [95%]", 6, True),
            Column("a (offset)", 3, True), Column("b", 1, True), Column("r²", 2, True),
            Column(f"at max {word}", 5, True)]
    if predict is not None:
        cols.append(Column(f"at {word} = {fmt_count(predict)} [95%]", 4, True))
    rows: list[list[str | Text]] = []
    top = _peaks(analysis, variant)
    for metric, fit in sorted(analysis.fits.get(variant, {}).items(),
                              key=lambda kv: METRICS.index(kv[0]) if kv[0] in METRICS else 99):
        row: list[str | Text] = [
            metric, class_cell(fit, word), k_cell(fit, interval=True, peak=top.get(metric)),
            fmt_value(metric, fit.coefficients.get("a")),
            f"{fit.coefficients.get('b', 0.0):.3g}",
            "—" if fit.r2 is None else f"{fit.r2:.3f}",
            fmt_value(metric, median_at_max(analysis, variant, metric))]
        if predict is not None:
            p = fit.prediction
            row.append("—" if p is None else
                       f"{fmt_value(metric, p.value) if fit.confident else '?'} "
                       f"[{fmt_value(metric, p.lo)}–{fmt_value(metric, p.hi)}]")
        rows.append(row)
    return fit_columns(_label(analysis, variant), cols, rows, width, say_dropped=True)


def comparison_table(analysis: Analysis, width: int) -> Table | None:
    from rich.text import Text
    comp = analysis.comparison
    if comp is None:
        return None
    word = analysis.size_word
    cols = [Column("metric", 9), Column("change", 8), Column("A → B", 7),
            Column(f"B/A at max {word} [95%]", 6, True), Column(f"crossover {word}", 3, True)]
    rows: list[list[str | Text]] = []
    fits_a, fits_b = analysis.fits.get("A", {}), analysis.fits.get("B", {})
    for mc in comp.metrics:
        fa, fb = fits_a.get(mc.metric), fits_b.get(mc.metric)
        classes = (f"{class_cell(fa, word).plain} → {class_cell(fb, word).plain}" if fa and fb
                   else f"{mc.class_a} → {mc.class_b}")
        last = max(mc.ratios, key=lambda r: r.size_n) if mc.ratios else None
        ratio = ("—" if last is None or not math.isfinite(last.ratio)
                 else f"{last.ratio:.3g} [{_bound(last.lo)}, {_bound(last.hi)}]")
        cross = "—" if mc.crossover_n is None else fmt_count(mc.crossover_n)
        style = "bold red" if mc.change == "class" else ""
        rows.append([mc.metric, Text(mc.change, style=style), classes, ratio, cross])
    return fit_columns("B against A", cols, rows, width)


def failures_table(analysis: Analysis, width: int) -> Table | None:
    if not analysis.failures:
        return None
    cols = [Column("variant", 3), Column("n", 8, True), Column("exit", 7, True),
            Column("stderr (last line)", 6)]
    rows: list[list[str | Text]] = []
    for r in analysis.failures[:20]:
        m = r.measurement
        tail = m.stderr_tail.strip().splitlines()[-1:] or [""]
        rows.append([r.variant, str(r.size_n), "timeout" if m.timed_out else fmt_exit(m.exit_code),
                     visible(tail[0])[:200]])
    return fit_columns(f"{len(analysis.failures)} failed run(s), left out of the fit", cols,
                       rows, width)


def culprit_name(c: Culprit) -> str:
    """The culprit with the frame that called it: `list.insert → memmove`, `memset ← touch`.

    A function without a symbol is named by its object, as in the flame graph: `[libc.so.6]`.
    """
    symbol = c.call_path[-1] if c.symbol == UNKNOWN and c.call_path else c.symbol
    if c.user_caller:
        return f"{symbol} ← {c.user_caller}"
    if len(c.call_path) >= 2:
        return f"{c.call_path[-2]} → {symbol}"
    return symbol


def culprits_table(culprits: Iterable[Culprit], width: int, limit: int = 15,
                   growing_only: bool = False) -> Table | None:
    """The culprits; `growing_only` keeps those carrying ≥ 1% of the growth (start-up hides)."""
    chosen = [c for c in culprits
              if not growing_only or c.growth_share >= 0.01 or c.superlinear_share >= 0.01]
    if not chosen:
        return None
    cols = [Column("function", 9), Column("class", 7), Column("beyond linear", 6, True),
            Column("of growth", 5, True), Column("at max n", 4, True), Column("k", 3, True),
            Column("object", 2)]
    rows: list[list[str | Text]] = []
    cap = max(24, width - 44)  # room for the shares; a long name keeps its end, the function
    for c in chosen[:limit]:
        k = c.self_exponent
        name = visible(culprit_name(c))
        name = name if len(name) <= cap else "…" + name[-(cap - 1):]
        rows.append([name, culprit_class(c),
                     f"{100 * c.superlinear_share:.1f}%", f"{100 * c.growth_share:.1f}%",
                     f"{100 * c.share_at_max:.1f}%", "—" if k is None else f"{k:.2f}",
                     visible(c.dso)])
    return fit_columns("culprits: what makes it grow", cols, rows, width)


def renderables(analysis: Analysis, width: int = 80, verbose: bool = False,
                sizes: bool = False, metric: str | None = None) -> Iterable[RenderableType]:
    yield from headline(analysis, width)
    if analysis.profile is not None and (said := analysis.profile.culprit_sentence):
        yield _line(fit_words(visible(said), width), "bold")  # the user's function, first
    if analysis.comparison is None and (note := work_note(analysis.fits.get("A", {}),
                                                          analysis.work_metric)):
        yield _line(fit_words(visible(note), width))  # what the exact count's class rests on
    if analysis.sweep.mode == "accumulate" and (launches := counted_text(
            analysis.runs, analysis.work_metric)):
        yield _line(fit_words(launches, width), "dim")  # which launches were counted in place
    if counted := counting_note(analysis.sweep, analysis.runs, analysis.work_metric):
        yield _line(fit_words(visible(counted), width), "dim")  # why, where, what it cost
    elif tried := _tried(analysis):
        yield _line(fit_words(visible(tried), width), "dim")  # why the advice names the meter
    yield _sweep_line(analysis, width)
    word = analysis.size_word
    if verbose:
        yield from _verbose(analysis, width, sizes, metric)
        return
    if analysis.profile is not None and (table := culprits_table(
            analysis.profile.culprits, width, limit=5, growing_only=True)) is not None:
        yield table  # the answer to "which function?" before the metrics' evidence
    shown = analysis.notable
    table = compact_table(analysis, shown, width)
    if table is not None:
        yield table
    if sizes:
        yield from sizes_tables(analysis, shown_metric(analysis, metric), width)
    two = "B" in analysis.fits and len(analysis.fits) > 1
    # One line per (variant, note), its metrics joined.
    for (variant, note), names in by_note(_short_notes(analysis, shown)).items():
        line = f"{variant + ' ' if two else ''}{of_metrics(names, note)}"
        if len(line) > width:  # the same note in fewer words before any is cut
            fits = analysis.fits[variant]
            line = f"{variant + ' ' if two else ''}" + of_metrics(names, short_note(
                fits[names[0]], word, True, _counted_lead(fits, analysis.work_metric)))
        yield _line(fit_words(line, width), "yellow")  # still too long: two lines, not "dec…"
    extra = []
    hidden = sum(1 for fs in analysis.fits.values() for m in fs if m not in shown)
    if hidden:
        extra.append(f"{hidden} more fit(s)")
    if analysis.failures:
        extra.append(f"{len(analysis.failures)} failed run(s)")
    if analysis.notes:
        extra.append(f"{len(analysis.notes)} note(s)")
    probe = analysis.doctor
    if isinstance(probe, ProbeResult) and probe.finding:
        yield _line(f"doctor {probe.probe}: {probe.verdict} — {visible(probe.finding)}")
    if extra:
        yield _line(f"-v shows {', '.join(extra)}", "dim")


def _short_notes(analysis: Analysis, shown: Sequence[str]) -> Iterable[tuple[str, tuple[str, str]]]:
    """(metric, (variant, its fit's short note)) of each shown fit that has one."""
    for variant, fits in analysis.fits.items():
        decided_by = _counted_lead(fits, analysis.work_metric)
        for metric in shown:
            fit = fits.get(metric)
            if fit is not None and (note := short_note(fit, analysis.size_word,
                                                       counted=decided_by)):
                yield metric, (variant, note)


def _para(text: str, width: int, style: str = "") -> Text:
    """A paragraph broken between clauses to `width`, continuations indented (`fit_words`):
    rich's own wrapping left trailing spaces and no indent, one note running into the next."""
    return _line(fit_words(text, width), style)


def _tried(analysis: Analysis) -> str:
    """The note of a count `--meter auto` tried and could not class the work with."""
    meter = METERS.find(analysis.sweep.meter)
    exact = METERS.find(meter.counts_with) if meter is not None and meter.counts_with else None
    return uncounted_note(analysis.sweep, analysis.runs, analysis.work_metric,
                          None if exact is None else exact.agrees_on)


def _verbose(analysis: Analysis, width: int, sizes: bool = False, metric: str | None = None
             ) -> Iterable[RenderableType]:
    sw = analysis.sweep
    if sw.counters_note and not counting_note(sw, analysis.runs, analysis.work_metric) \
            and not _tried(analysis):
        yield _para(f"counters: {visible(sw.counters_note)}", width, "dim")  # not said twice
    if cleanup := sw.host.run_cleanup:  # measure/resident.py: what no-orphans used
        how = {"cgroup": "every process it started (a cgroup per launcher)",
               "subreaper": "every process it started (child subreaper)"}.get(
                   cleanup, "its process group")
        yield _para(f"after each run quadscope killed {how}", width, "dim")
    if analysis.profile is not None and (table := culprits_table(
            analysis.profile.culprits, width)) is not None:
        yield table
    for variant, fits in analysis.fits.items():
        if fits:
            yield full_table(analysis, variant, width)
    yield from sizes_tables(analysis, shown_metric(analysis, metric), width,
                            None if sizes else VERBOSE_SIZES)
    two = len(analysis.fits) > 1
    for variant, fits in analysis.fits.items():
        for fit in fits.values():
            if not fit.confident:
                who = f"{variant} " if two else ""
                yield _para(f"{who}{fit.metric} not settled: {visible(fit.reason)}", width,
                            "yellow")
    if (table := comparison_table(analysis, width)) is not None:
        yield table
        for mc in analysis.comparison.metrics if analysis.comparison else ():
            if mc.summary:
                yield _para(visible(mc.summary), width)
    if (table := failures_table(analysis, width)) is not None:
        yield table
    probe = analysis.doctor
    if isinstance(probe, ProbeResult) and probe.finding:
        yield _para(f"doctor {probe.probe}: {probe.verdict} — {visible(probe.finding)}", width)
    for note in analysis.notes:
        yield _para(f"note: {visible(note)}", width, "dim")


class TerminalRenderer(Renderer):
    name = "terminal"
    flag = ""  # printed by the CLI, never written to a file
    metavar = ""
    help = ""
    extension = ".txt"
    folder = False

    def __init__(self, color: bool = False, width: int = 120, verbose: bool = False,
                 quiet: bool = False, sizes: bool = False, metric: str | None = None) -> None:
        self.color = color
        self.width = width
        self.verbose = verbose
        self.quiet = quiet
        self.sizes = sizes
        self.metric = metric

    def render(self, analysis: Analysis) -> bytes:
        if isinstance(analysis.doctor, DoctorReport):
            text = doctor_text(analysis.doctor, analysis.doctor_vs, color=self.color,
                               width=self.width)
        else:
            text = self._report(analysis)
        return text.encode("utf-8")

    def _report(self, analysis: Analysis) -> str:
        from rich.console import Console
        from rich.text import Text
        buf = io.StringIO()
        console = Console(file=buf, force_terminal=self.color, width=self.width,
                          color_system="standard" if self.color else None, highlight=False,
                          markup=False, emoji=False)
        items = headline(analysis, self.width)[:1] if self.quiet else renderables(
            analysis, self.width, self.verbose, self.sizes, self.metric)
        for item in items:
            # console.print wraps a Text whatever its own no_wrap says: pass it on.
            if isinstance(item, Text) and item.no_wrap:
                console.print(item, no_wrap=True, overflow=item.overflow or "ellipsis")
            else:
                console.print(item)
        return buf.getvalue()
