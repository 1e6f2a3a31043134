"""The records profiling produces: the culprits and the whole attribution of a sweep.

Contract: frozen records with `to_dict`/`from_dict`; `Attribution.to_dict()` is
the blob stored under "profile" beside the profiled sweep (written so since
0.1.0, which still loads). This module imports nothing but the standard
library, so `analyse.analysis` and the renderers hold these records without
importing the samplers (`driver.profile_sweep` makes them, `attribute.attribute`
ranks the culprits).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Culprit:
    symbol: str
    dso: str
    self_class: str
    self_exponent: float | None
    self_exponent_ci: tuple[float, float] | None
    share_at_max: float
    growth_share: float
    superlinear_share: float
    inclusive_share_at_max: float
    self_s: tuple[float, ...]  # per profiled size, in seconds
    call_path: tuple[str, ...]  # hottest path at the largest size, root first, ending here
    # For a kernel function: the innermost user-space function on that path, the
    # code that asked the kernel for the work (touch_pages for exc_page_fault).
    user_caller: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol,
            "dso": self.dso,
            "self_class": self.self_class,
            "self_exponent": self.self_exponent,
            "self_exponent_ci": None if self.self_exponent_ci is None else list(self.self_exponent_ci),
            "share_at_max": self.share_at_max,
            "growth_share": self.growth_share,
            "superlinear_share": self.superlinear_share,
            "inclusive_share_at_max": self.inclusive_share_at_max,
            "self_s": list(self.self_s),
            "call_path": list(self.call_path),
            "user_caller": self.user_caller,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Culprit:
        ci = d.get("self_exponent_ci")
        return cls(
            d["symbol"], d["dso"], d["self_class"], d.get("self_exponent"),
            None if ci is None else (float(ci[0]), float(ci[1])),
            float(d["share_at_max"]), float(d["growth_share"]),
            float(d.get("superlinear_share", 0.0)), float(d.get("inclusive_share_at_max", 0.0)),
            tuple(float(v) for v in d.get("self_s", ())), tuple(d.get("call_path", ())),
            d.get("user_caller"),
        )


@dataclass(frozen=True, slots=True)
class Attribution:
    """What `quadscope profile` found; `to_dict()` is the stored "profile" blob."""

    sweep_id: int
    sizes: tuple[int, ...]
    sampler: str
    event: str
    samples: tuple[int, ...]
    culprits: tuple[Culprit, ...]
    folded: tuple[str, ...]  # paths, one per size
    flame_svg_path: str
    flame_svg: str
    superlinear: bool
    notes: tuple[str, ...] = ()
    faults: dict[str, Any] | None = None
    overhead: dict[str, Any] | None = None
    total_s: tuple[float, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweep_id": self.sweep_id,
            "sizes": list(self.sizes),
            "sampler": self.sampler,
            "event": self.event,
            "samples": list(self.samples),
            "total_s": list(self.total_s),
            "culprits": [c.to_dict() for c in self.culprits],
            "superlinear": self.superlinear,
            "folded": list(self.folded),
            "flame_svg_path": self.flame_svg_path,
            "flame_svg": self.flame_svg,
            "notes": list(self.notes),
            "faults": self.faults,
            "overhead": self.overhead,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Attribution:
        return cls(
            sweep_id=int(d["sweep_id"]),
            sizes=tuple(int(s) for s in d["sizes"]),
            sampler=d["sampler"],
            event=d["event"],
            samples=tuple(int(s) for s in d["samples"]),
            culprits=tuple(Culprit.from_dict(c) for c in d["culprits"]),
            folded=tuple(d["folded"]),
            flame_svg_path=d["flame_svg_path"],
            flame_svg=d["flame_svg"],
            superlinear=bool(d["superlinear"]),
            notes=tuple(d.get("notes", ())),
            faults=d.get("faults"),
            overhead=d.get("overhead"),
            total_s=tuple(float(v) for v in d.get("total_s", ())),
            extra=dict(d.get("extra", {})),
        )

    @property
    def fault_sentences(self) -> tuple[str, ...]:
        return tuple(self.faults.get("sentences", ())) if self.faults else ()


