"""The records that flow through quadscope: immutable, serialisable, versioned.

Contract: every record here is a frozen, slotted dataclass with `to_dict()` and
`from_dict()`; `from_dict(x.to_dict()) == x`. Nothing here runs, prints or
touches disk. The JSON written by the renderers is built from these `to_dict()`s
and documented in docs/schema.md.

Schema history (bump SCHEMA_VERSION when a stored or exported field changes):
  1 — first version: Sweep, Run, Fit, Prediction, Candidate, Comparison.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 1

# Every metric a run can carry, in the order reports show them. The first eight
# come from the clock and wait4 and are always present; the last four come from
# perf and are None where perf cannot count them.
RUSAGE_METRICS: tuple[str, ...] = (
    "wall_s",
    "user_s",
    "sys_s",
    "max_rss_bytes",
    "minor_faults",
    "major_faults",
    "voluntary_ctx_switches",
    "involuntary_ctx_switches",
)
PERF_METRICS: tuple[str, ...] = ("instructions", "cycles", "page_faults", "context_switches")
METRICS: tuple[str, ...] = RUSAGE_METRICS + PERF_METRICS

# Growth classes, simplest first: order matters, selection prefers earlier ones.
CLASSES: tuple[str, ...] = ("1", "log n", "sqrt n", "n", "n log n", "n^2", "n^3", "2^n")
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True, slots=True)
class Measurement:
    """What one execution of a process yields. Units are in the names."""

    wall_s: float
    user_s: float
    sys_s: float
    max_rss_bytes: int
    minor_faults: int
    major_faults: int
    voluntary_ctx_switches: int
    involuntary_ctx_switches: int
    exit_code: int  # the exit status, or -SIGNUM when killed by a signal
    timed_out: bool = False
    stderr_tail: str = ""
    instructions: int | None = None
    cycles: int | None = None
    page_faults: int | None = None
    context_switches: int | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Measurement:
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


@dataclass(frozen=True, slots=True)
class Run:
    """One measured execution inside a sweep.

    `seq` is the execution order within the sweep (0, 1, ...); `variant` is "A"
    for the main command and "B" for `--vs`; `size_n` is the value substituted
    for `{n}` (or the launch index `{i}` in accumulate mode).
    """

    sweep_id: int
    seq: int
    variant: str
    size_n: int
    repeat: int
    warmup: bool
    started_at: float  # unix time, for the record only: never used for durations
    measurement: Measurement

    def value(self, metric: str) -> float | None:
        v = getattr(self.measurement, metric)
        return None if v is None else float(v)

    def to_dict(self) -> dict[str, Any]:
        d = {
            "sweep_id": self.sweep_id,
            "seq": self.seq,
            "variant": self.variant,
            "size_n": self.size_n,
            "repeat": self.repeat,
            "warmup": self.warmup,
            "started_at": self.started_at,
        }
        d.update(self.measurement.to_dict())
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Run:
        return cls(
            sweep_id=int(d["sweep_id"]),
            seq=int(d["seq"]),
            variant=str(d["variant"]),
            size_n=int(d["size_n"]),
            repeat=int(d["repeat"]),
            warmup=bool(d["warmup"]),
            started_at=float(d["started_at"]),
            measurement=Measurement.from_dict(d),
        )


@dataclass(frozen=True, slots=True)
class Sweep:
    """A sweep's identity and settings: everything needed to re-fit or resume it.

    `command` and `vs_command` are argv lists as given (still holding `{n}`);
    with `shell` they are one-element lists run by /bin/sh -c. `sizes` is the
    planned list (empty in adaptive mode until sizes are chosen). `id` is 0
    until the store assigns one.
    """

    id: int
    name: str
    mode: str
    command: tuple[str, ...]
    shell: bool = False
    vs_command: tuple[str, ...] | None = None
    vs_shell: bool = False
    sizes: tuple[int, ...] = ()
    repeat: int = 3
    warmup: int = 1
    timeout_s: float | None = None
    budget_s: float | None = None
    seed: int = 0
    predict_n: int | None = None
    counters: str = "rusage"  # "perf" or "rusage": what could be counted
    counters_note: str = ""  # why perf was not used, with the fix
    host: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    status: str = "running"  # running | complete | interrupted | failed
    kind: str = "sweep"  # sweep | doctor | profile: what `show` and reports render

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["command"] = list(self.command)
        d["vs_command"] = None if self.vs_command is None else list(self.vs_command)
        d["sizes"] = list(self.sizes)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sweep:
        kw = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        kw["command"] = tuple(kw["command"])
        if kw.get("vs_command") is not None:
            kw["vs_command"] = tuple(kw["vs_command"])
        kw["sizes"] = tuple(int(s) for s in kw.get("sizes", ()))
        kw["host"] = dict(kw.get("host") or {})
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One model's fit: cost = a + b·f(n), with its information-criterion score."""

    cls: str
    a: float
    b: float
    score: float  # AICc (lower is better); inf when the model could not be fitted
    weight: float  # Akaike weight among all candidates, 0..1
    rss: float  # weighted residual sum of squares

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.cls,
            "a": self.a,
            "b": self.b,
            "score": self.score,
            "weight": self.weight,
            "rss": self.rss,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Candidate:
        return cls(d["class"], d["a"], d["b"], d["score"], d["weight"], d["rss"])


@dataclass(frozen=True, slots=True)
class Prediction:
    size_n: int
    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        return cls(int(d["size_n"]), d["value"], d["lo"], d["hi"])


@dataclass(frozen=True, slots=True)
class Fit:
    """How one metric grows with n.

    `cls` is one of CLASSES or INCONCLUSIVE. `exponent` is k of the free power
    law a + b·n^k with its 95% bootstrap interval `exponent_ci`. `coefficients`
    are a and b of the chosen class (of the best candidate when inconclusive).
    `reason` says why a verdict is inconclusive, and `decide_n` the size that
    would decide it, when one can be named.
    """

    metric: str
    cls: str
    exponent: float | None
    exponent_ci: tuple[float, float] | None
    coefficients: dict[str, float]
    r2: float | None
    candidates: tuple[Candidate, ...]
    n_points: int
    reason: str = ""
    decide_n: int | None = None
    prediction: Prediction | None = None
    best: str = ""  # the best-scoring class, even when the verdict is inconclusive

    @property
    def confident(self) -> bool:
        return self.cls != INCONCLUSIVE

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "class": self.cls,
            "best": self.best,
            "exponent": self.exponent,
            "exponent_ci": None if self.exponent_ci is None else list(self.exponent_ci),
            "coefficients": dict(self.coefficients),
            "r2": self.r2,
            "candidates": [c.to_dict() for c in self.candidates],
            "n_points": self.n_points,
            "reason": self.reason,
            "decide_n": self.decide_n,
            "prediction": None if self.prediction is None else self.prediction.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fit:
        ci = d.get("exponent_ci")
        pred = d.get("prediction")
        return cls(
            metric=d["metric"],
            cls=d["class"],
            best=d.get("best", ""),
            exponent=d.get("exponent"),
            exponent_ci=None if ci is None else (float(ci[0]), float(ci[1])),
            coefficients=dict(d.get("coefficients", {})),
            r2=d.get("r2"),
            candidates=tuple(Candidate.from_dict(c) for c in d.get("candidates", [])),
            n_points=int(d.get("n_points", 0)),
            reason=d.get("reason", ""),
            decide_n=d.get("decide_n"),
            prediction=None if pred is None else Prediction.from_dict(pred),
        )


@dataclass(frozen=True, slots=True)
class SizeRatio:
    """B/A at one size: ratio of medians with a 95% bootstrap interval."""

    size_n: int
    ratio: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SizeRatio:
        return cls(int(d["size_n"]), d["ratio"], d["lo"], d["hi"])


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """How B differs from A for one metric.

    `change` is one of: "none", "offset" (only a changed), "constant" (same
    class, b changed), "class" (growth class changed), "inconclusive".
    """

    metric: str
    change: str
    class_a: str
    class_b: str
    ratios: tuple[SizeRatio, ...]
    crossover_n: float | None
    summary: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "change": self.change,
            "class_a": self.class_a,
            "class_b": self.class_b,
            "ratios": [r.to_dict() for r in self.ratios],
            "crossover_n": self.crossover_n,
            "summary": self.summary,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MetricComparison:
        return cls(
            d["metric"],
            d["change"],
            d["class_a"],
            d["class_b"],
            tuple(SizeRatio.from_dict(r) for r in d["ratios"]),
            d.get("crossover_n"),
            d.get("summary", ""),
        )


@dataclass(frozen=True, slots=True)
class Comparison:
    label_a: str
    label_b: str
    metrics: tuple[MetricComparison, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.label_a,
            "b": self.label_b,
            "metrics": {m.metric: m.to_dict() for m in self.metrics},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        return cls(
            d["a"], d["b"], tuple(MetricComparison.from_dict(m) for m in d["metrics"].values())
        )
