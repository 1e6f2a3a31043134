"""The records profiling produces: the culprits and the whole attribution of a sweep.

Contract: frozen records with `to_dict`/`from_dict`; `Attribution.to_dict()` is
the blob stored under "profile" beside the profiled sweep (written so since
0.1.0, which still loads). This module imports nothing but the standard
library, so `analyse.analysis` and the renderers hold these records without
importing the samplers (`driver.profile_sweep` makes them, `attribute.attribute`
ranks the culprits, `flametree.flame_tree` builds the `FlameTree` of `FlameNode`s
that the interactive flame graph and the speedscope and folded exports draw;
`faults.classify_faults` makes the `FaultReport`, a sampler's `overhead` the
`Overhead`; their derived numbers, `per_n` and `ratio`, are written, not read).
The tree is stored inside the blob's `extra` under "flame_tree" (0.1.0's blobs
have none); one that does not read as a tree is left there untouched.
The culprit sentence of Callgrind's exact counts (`exact_attach.attach_exact`)
is stored in `extra` under "culprit_sentence" (`Attribution.culprit_sentence`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_FLAME_TREE = "flame_tree"  # the key of the call tree in the stored `extra`
CULPRIT_SENTENCE = "culprit_sentence"  # the key of the user's function, named in one sentence


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
class FaultReport:
    size_n: int
    total: int
    by_kind: Mapping[str, int]
    callers: Mapping[str, str]  # kind -> the user function causing most of them
    sentences: tuple[str, ...]

    def per_n(self, kind: str) -> float:
        return self.by_kind.get(kind, 0) / self.size_n if self.size_n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "size_n": self.size_n,
            "total": self.total,
            "by_kind": dict(self.by_kind),
            "per_n": {k: self.per_n(k) for k in self.by_kind},
            "callers": dict(self.callers),
            "sentences": list(self.sentences),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FaultReport:
        """`per_n` is derived, so it is not read back."""
        return cls(int(d["size_n"]), int(d["total"]),
                   {str(k): int(v) for k, v in (d.get("by_kind") or {}).items()},
                   {str(k): str(v) for k, v in (d.get("callers") or {}).items()},
                   tuple(str(s) for s in d.get("sentences", ())))


@dataclass(frozen=True, slots=True)
class Overhead:
    """Wall time of the workload at `size_n` without and with the profiler attached.

    Both times span the workload alone; `startup_s` is the profiler's fixed cost
    per recording, measured on /bin/true (perf record spends about a second
    on kernel symbols before and after any workload) and not in either time.
    `ratio` is the slowdown of the workload itself.
    """

    size_n: int
    plain_wall_s: float
    profiled_wall_s: float
    startup_s: float

    @property
    def ratio(self) -> float:
        if self.plain_wall_s <= 0:
            return 0.0
        return self.profiled_wall_s / self.plain_wall_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "size_n": self.size_n,
            "plain_wall_s": self.plain_wall_s,
            "profiled_wall_s": self.profiled_wall_s,
            "startup_s": self.startup_s,
            "ratio": self.ratio,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Overhead:
        """`ratio` is derived, so it is not read back."""
        return cls(int(d["size_n"]), float(d["plain_wall_s"]), float(d["profiled_wall_s"]),
                   float(d["startup_s"]))


@dataclass(frozen=True, slots=True)
class FlameNode:
    """One frame of the differential call tree at the largest n (`flametree.flame_tree`).

    `value_s` is its inclusive time at the largest n (d3-flame-graph's "value"),
    `k` the two-point exponent of that time between the smallest and the largest
    n (None when it cannot be had), `excess` its share of the program's growth
    beyond linear (-1..1; 0 for `noise`, a frame sampled too rarely to judge),
    `cls` a culprit's fitted class. `collapsed` is how many frames a display
    node stands for once a tall chain is merged into it (`flametree.collapse`),
    0 for a frame of its own.
    """

    name: str
    dso: str
    value_s: float
    k: float | None
    samples: int
    excess: float
    noise: bool
    cls: str | None = None
    children: tuple[FlameNode, ...] = ()
    collapsed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """d3-flame-graph's node (`name`, `value`, `children`) with quadscope's own keys."""
        out: dict[str, Any] = {"name": self.name, "dso": self.dso, "value": self.value_s,
                               "k": self.k, "samples": self.samples, "excess": self.excess,
                               "noise": self.noise}
        if self.cls:
            out["cls"] = self.cls
        if self.children:
            out["children"] = [c.to_dict() for c in self.children]
        if self.collapsed:
            out["collapsed"] = self.collapsed
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FlameNode:
        k = d.get("k")
        return cls(
            name=str(d["name"]), dso=str(d.get("dso", "")), value_s=float(d["value"]),
            k=None if k is None else float(k), samples=int(d.get("samples", 0)),
            excess=float(d.get("excess", 0.0)), noise=bool(d.get("noise", False)),
            cls=d.get("cls") or None,
            children=tuple(FlameNode.from_dict(c) for c in d.get("children") or ()),
            collapsed=int(d.get("collapsed", 0)),
        )


@dataclass(frozen=True, slots=True)
class FlameTree:
    """The call tree at the largest n, measured against the smallest: `sizes` = (n0, n1)."""

    root: FlameNode
    sizes: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """The root's node with the two sizes, as the stored blob and the HTML page read it."""
        return {**self.root.to_dict(), "sizes": list(self.sizes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FlameTree:
        n0, n1 = d["sizes"]
        return cls(FlameNode.from_dict(d), (int(n0), int(n1)))


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
    faults: FaultReport | None = None  # page faults by kind at the largest n, when sampled
    overhead: Overhead | None = None  # the profiler's own cost, when measured
    total_s: tuple[float, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    flame_tree: FlameTree | None = None  # stored inside `extra`, as "flame_tree"

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
            "faults": None if self.faults is None else self.faults.to_dict(),
            "overhead": None if self.overhead is None else self.overhead.to_dict(),
            "extra": self._extra_dict(),
        }

    def _extra_dict(self) -> dict[str, Any]:
        extra = dict(self.extra)
        if self.flame_tree is not None:
            extra[_FLAME_TREE] = self.flame_tree.to_dict()
        return extra

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Attribution:
        extra = dict(d.get("extra", {}))
        tree = None
        with contextlib.suppress(KeyError, TypeError, ValueError):  # a malformed tree stays as is
            tree = FlameTree.from_dict(extra[_FLAME_TREE])
            del extra[_FLAME_TREE]
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
            faults=None if d.get("faults") is None else FaultReport.from_dict(d["faults"]),
            overhead=None if d.get("overhead") is None else Overhead.from_dict(d["overhead"]),
            total_s=tuple(float(v) for v in d.get("total_s", ())),
            extra=extra,
            flame_tree=tree,
        )

    @property
    def culprit_sentence(self) -> str | None:
        """"append_field (csvjoin.c:5) makes it grow: …", when Callgrind counted it."""
        said = self.extra.get(CULPRIT_SENTENCE)
        return said if isinstance(said, str) and said else None

    @property
    def fault_sentences(self) -> tuple[str, ...]:
        return self.faults.sentences if self.faults is not None else ()


