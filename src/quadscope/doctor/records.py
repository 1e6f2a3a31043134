"""The records the doctor produces: one probe's result, the whole report, what reports draw.

Contract: frozen records that import nothing but the standard library (and
`doctor.details`, the probes' typed details, which import nothing else, and
`classes`, which imports no numpy until a curve is drawn), so
`analyse.analysis` and the renderers hold them without importing the probes'
runner. A record's class cells (`ProbeResult.cls`, the details' `classes` and
`class`) hold what a person reads ("n²", "√i"); its dict writes every class by its
registry name ("n^2", "sqrt i"), as a sweep's JSON does, and reading one back
(either spelling: files of 0.1.0 and of the versions that wrote labels) gives the
labels again (`Registry.names_in`, `labels_in`).
`ProbeResult.to_dict()` is the blob stored under "doctor" beside each
probe sweep and `DoctorReport.to_dict()` the one beside the summary sweep
(`doctor_from_dict` reads either, as 0.1.0 wrote them); the report's dict is
also the file `--json`/`--save` write and `--vs` reads. `ProbeSeries` is one
line of a probe's small plot (median cost per size of one of its sweeps) and
`MachineComparison` the `--vs` sentences (one `ProbeComparison` per probe);
neither is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quadscope.classes import REGISTRY
from quadscope.doctor.details import (
    OtherDetails,
    ProbeDetails,
    ProbeSweeps,
    details_dict,
    details_from_dict,
)

REPORT_SCHEMA = 1  # 1 — first version: results, machine, quick, budget_s, elapsed_s
VERDICTS: tuple[str, ...] = ("ok", "slow", "pathological", "skipped")


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe's answer: one table row plus the sentence a user can act on.

    `details` is the probe's own typed record (`doctor.details`), whose
    `numbers` are its headline costs (units in the names, all "higher is
    worse") that `--vs` compares across machines; `ran` is what the runner
    added (each variant's sweep id), None for a result judged outside it.
    """

    probe: str
    measured: str
    cls: str
    cost: str
    verdict: str
    finding: str
    details: ProbeDetails = field(default_factory=OtherDetails)
    ran: ProbeSweeps | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")

    @property
    def numbers(self) -> dict[str, float]:
        return dict(self.details.numbers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "measured": self.measured,
            "class": REGISTRY.names_in(self.cls),
            "cost": self.cost,
            "verdict": self.verdict,
            "finding": self.finding,
            "details": _classes_by(REGISTRY.names_in, details_dict(self.details, self.ran)),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProbeResult:
        details, ran = details_from_dict(
            str(d["probe"]), _classes_by(REGISTRY.labels_in, dict(d.get("details") or {})))
        return cls(
            probe=str(d["probe"]),
            measured=str(d.get("measured", "")),
            cls=REGISTRY.labels_in(str(d.get("class", ""))),
            cost=str(d.get("cost", "")),
            verdict=str(d["verdict"]),
            finding=str(d.get("finding", "")),
            details=details,
            ran=ran,
        )

    @classmethod
    def skipped(cls, probe: str, measured: str, reason: str,
                details: ProbeDetails | None = None) -> ProbeResult:
        """A probe that could not run: no class, no cost, `reason` as its finding."""
        return cls(probe, measured, "—", "—", "skipped", reason,
                   OtherDetails() if details is None else details)


def _classes_by(spell: Callable[[str], str], details: dict[str, Any]) -> dict[str, Any]:
    """A details object with its class cells (`classes`: per variant; `class`) spelled by
    `spell`; every other key as it is."""
    out = dict(details)
    if isinstance(out.get("class"), str):
        out["class"] = spell(out["class"])
    if isinstance(out.get("classes"), Mapping):
        out["classes"] = {k: spell(v) if isinstance(v, str) else v
                          for k, v in out["classes"].items()}
    return out


@dataclass(frozen=True, slots=True)
class DoctorReport:
    results: tuple[ProbeResult, ...]
    machine: Mapping[str, Any]
    quick: bool
    budget_s: float
    elapsed_s: float
    created_at: float = 0.0
    summary_sweep_id: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "kind": "doctor",
            "machine": dict(self.machine),
            "quick": self.quick,
            "budget_s": self.budget_s,
            "elapsed_s": self.elapsed_s,
            "created_at": self.created_at,
            "summary_sweep_id": self.summary_sweep_id,
            "probes": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DoctorReport:
        return cls(
            results=tuple(ProbeResult.from_dict(p) for p in d.get("probes", [])),
            machine=dict(d.get("machine") or {}),
            quick=bool(d.get("quick", False)),
            budget_s=float(d.get("budget_s", 0.0)),
            elapsed_s=float(d.get("elapsed_s", 0.0)),
            created_at=float(d.get("created_at", 0.0)),
            summary_sweep_id=int(d.get("summary_sweep_id", 0)),
        )


def doctor_from_dict(d: Mapping[str, Any]) -> DoctorReport | ProbeResult:
    """A stored "doctor" blob: the summary sweep's report (it has `probes`) or one probe's result."""
    return DoctorReport.from_dict(d) if "probes" in d else ProbeResult.from_dict(d)


@dataclass(frozen=True, slots=True)
class ProbeSeries:
    """One labelled line of a probe's plot: (size, median of `metric`) for one of its sweeps.

    `size_word` is "n", or "i" for a sweep over launches.
    """

    label: str
    points: tuple[tuple[int, float], ...]
    metric: str
    size_word: str = "n"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "points": [[n, v] for n, v in self.points],
                "x_label": self.size_word, "y_label": f"median {self.metric} (s)",
                "name": f"median {self.metric}"}


@dataclass(frozen=True, slots=True)
class ProbeComparison:
    """One probe's sentence in `doctor --vs`."""

    probe: str
    sentence: str
    worst_ratio: float | None  # here / there of the number that moved most; None if none


@dataclass(frozen=True, slots=True)
class MachineComparison:
    """`doctor --vs`: this run's probes against a saved machine's, one sentence each."""

    label: str  # the saved machine, e.g. "6.1.0 on AMD EPYC"
    probes: tuple[ProbeComparison, ...]
