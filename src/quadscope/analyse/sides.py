"""Each side's own verdict of an A/B sweep, and the evidence lines a gate's report carries.

Contract: pure functions of an `Analysis`, no I/O. `side_verdict(analysis, "B")`
is B's verdict line as `analysis.verdict` is A's (`headline.verdict_line` over
B's fits, its peaks and its largest size); for "A" it is `analysis.verdict`
itself. `gate_evidence(analysis, metric)` is what every gate's message holds
after its sentence, one fact a line: the verdict (on an A/B sweep, the change
first, then "A: …" and "B: …"), the exponent with its 95% interval for the
gated metric (None: the headline time) on each side, and the sizes measured.
`assert_scales`, the JUnit testcases and the pytest plugin all read it, so
they say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quadscope.analyse.headline import lead_fit, verdict_line

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.model import Fit


def side_verdict(analysis: Analysis, variant: str) -> str:
    """`variant`'s own verdict line ("A" is `analysis.verdict`)."""
    if variant == "A":
        return analysis.verdict
    from quadscope.analyse.analysis import peaks

    measured = analysis.measured(variant)
    n_max = max((r.size_n for r in measured), default=None)
    return verdict_line(analysis.fits.get(variant, {}), analysis.size_word,
                        None if n_max is None else float(n_max), peaks(measured),
                        work=analysis.work_metric)


def _exponent(fit: Fit | None) -> str | None:
    if fit is None or fit.exponent is None or fit.exponent_ci is None:
        return None
    lo, hi = fit.exponent_ci
    return f"{fit.exponent:.2f} [{lo:.2f}, {hi:.2f}] (95%, {fit.metric})"


def gate_evidence(analysis: Analysis, metric: str | None = None) -> tuple[str, ...]:
    """The verdict(s), exponent(s) with interval, and sizes behind a gate on `metric`."""
    variants = [v for v in ("A", "B") if v in analysis.fits]
    ab = len(variants) > 1
    lines: list[str] = []
    if ab and (change := analysis.change) is not None:
        lines.append(f"change: {change.text}")
    for v in variants:
        fits = analysis.fits[v]
        tag = f"{v}: " if ab else ""
        lines.append(f"{tag}verdict: {side_verdict(analysis, v)}")
        exponent = _exponent(lead_fit(fits, analysis.work_metric) if metric is None
                             else fits.get(metric))
        if exponent is not None:
            lines.append(f"{tag}exponent: {exponent}")
    lines.append(f"sizes: {', '.join(str(n) for n in analysis.sweep.sizes)}")
    return tuple(lines)


__all__ = ["gate_evidence", "side_verdict"]
