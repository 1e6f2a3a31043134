"""A sweep's answer in a few words, for one cell of `quadscope list`.

Contract: `brief(analysis, runs) -> Brief` is a pure function of an `Analysis`.
For an A/B sweep it is the change's direction and both classes of the metric
the change is about (`analysis.change`): "better: n² → n";
otherwise the class of the fit the
headline leads with (`headline.lead_fit`: the work when the meter counts it
exactly and it is settled, else the time) and what it is of, unless wall
time: "n²", "n (work)", "n or n log n (CPU time)" when only bracketed, "not
settled" when nothing is ruled out, "no runs" when nothing was fitted. A `Brief` is
kept in the store (blob `KEY`) with the quadscope version and the number of
runs it was made from, so `list` re-fits only a sweep that changed since
(`Brief.fresh`). Words come from `headline` and `change`; nothing is fitted here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quadscope import __version__
from quadscope.analyse.headline import class_text, lead_fit, metric_words

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.model import Fit

KEY = "brief"  # its blob's key in the store
# The quadscope that made a brief, and the brief's own wording (raise it when that changes).
MADE_BY = f"{__version__}/3"


@dataclass(frozen=True, slots=True)
class Brief:
    text: str
    direction: str = ""  # an A/B change's: "worse", "better", "same", "unclear"; else ""
    runs: int = 0  # how many stored runs it was made from
    version: str = MADE_BY  # who made it (fitting and wording change between them)

    def fresh(self, runs: int) -> bool:
        """Made by this quadscope from `runs` runs: still what a re-fit would say."""
        return self.version == MADE_BY and self.runs == runs

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "direction": self.direction, "runs": self.runs,
                "version": self.version}

    @classmethod
    def from_dict(cls, d: Any) -> Brief | None:
        """The stored brief, or None when the blob is not one (an older or damaged store)."""
        if not isinstance(d, dict):
            return None
        text, direction, runs, version = (d.get(k) for k in ("text", "direction", "runs",
                                                              "version"))
        if not (isinstance(text, str) and isinstance(direction, str) and isinstance(version, str)
                and isinstance(runs, int) and not isinstance(runs, bool)):
            return None
        return cls(text, direction, runs, version)


def brief(analysis: Analysis, runs: int) -> Brief:
    """The few words `list` shows for `analysis`, made from `runs` stored runs (see the
    module docstring)."""
    change = analysis.change
    fit = lead_fit(analysis.fits.get("A", {}), analysis.work_metric)
    if change is not None and change.metric in analysis.fits.get("B", {}):
        fit = analysis.fits["A"].get(change.metric)
        other = analysis.fits["B"][change.metric]
        if fit is not None:
            said = _DIRECTION.get(change.direction, "")
            return Brief(f"{said}{_class(analysis, fit, 'A')} → {_class(analysis, other, 'B')}"
                         f"{_what(analysis, fit)}", change.direction, runs)
    if fit is None:
        return Brief("no runs" if not analysis.measured("A") else "nothing fitted", runs=runs)
    return Brief(f"{_class(analysis, fit, 'A')}{_what(analysis, fit)}", runs=runs)


_DIRECTION = {"worse": "worse: ", "better": "better: ", "same": "same: ",
              "unclear": "undecided: "}


def _class(analysis: Analysis, fit: Fit, variant: str) -> str:
    from quadscope.analyse.analysis import peaks

    peak = peaks([r for r in analysis.runs if r.variant == variant]).get(fit.metric)
    cls = class_text(fit, analysis.size_word, peak)
    return "not settled" if cls == "?" else cls


def _what(analysis: Analysis, fit: Fit) -> str:
    """" (work)", " (CPU time)": what the class is of; nothing for wall time, the default."""
    if fit.metric == analysis.work_metric:
        return " (work)"
    return "" if fit.metric == "wall_s" else f" ({metric_words(fit.metric)})"


__all__ = ["KEY", "Brief", "brief"]
