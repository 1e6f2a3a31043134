"""The records that flow through quadscope: immutable, serialisable, versioned.

Contract: every record here is a frozen, slotted dataclass; every one but
`Owner` (a sweep's claim, kept in the store's `owners` table) has `to_dict()`
and `from_dict()`, with `from_dict(x.to_dict()) == x`. A sweep's machine is the
`Host` record of `quadscope.host`, which keeps the same contract. Nothing here runs, prints or
touches disk. The JSON written by the renderers is built from these `to_dict()`s
and documented in docs/schema.md.

Schema history (bump SCHEMA_VERSION when a stored or exported field changes):
  1 — first version: Sweep, Run, Fit, Prediction, Candidate, Comparison.
  2 — metric columns derived from the registry and nullable (a meter that
      cannot give a metric stores NULL, never a made-up 0); derived metrics
      such as cpu_s are fitted and exported in fits. A Sweep also records its
      untimed `setup` and `prepare` commands and the `cpus` its runs were
      pinned to; `host` gains the facts that skew timings (measure/system.py).
      A sweep records where it ran: `git_commit`, `git_branch`, `git_dirty`
      (empty when not run inside a git repository) and `machine`; sweeps
      stored before load with empty values. Sweep.meter names a meter of the
      registry (`quadscope.meters`: "time" or "instructions"), with `counters`
      naming the instructions' source ("perf" or "valgrind") or the tool a
      sweep was imported from; sweeps without it read as "time". A Fit
      carries its bracket (`at_least`, `at_most`) and, for an exponential,
      its fitted base `c` among its coefficients.
      A Fit lists its `doubts` (one record per check that kept it from being
      settled); older exports read as none. The JSON export carries each
      notable metric's per-size table (`size_stats`, `vs_size_stats`: n, runs,
      min, median, max, MAD/median). Not a bump: fits and tables are exported,
      never stored, and the field is only added. Nor is `Sweep.host` read
      as a typed `Host` record: its stored and exported form is the same
      object of strings.
  Several sizes (issue 28): a Sweep may carry `axes` (each size parameter's
  name and sizes) and `points` (the combinations measured), a Run the other
  axes' sizes (`axes`, in the store's `axes` column: store schema 3, see
  store/migrations.py). Both are written only when present, so a sweep over
  one size exports exactly schema 2's shape and SCHEMA_VERSION, the exported
  format's number, stays 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from quadscope import metrics
from quadscope.classes import INCONCLUSIVE
from quadscope.host import Host

SCHEMA_VERSION = 2

# Every metric a run can carry, in the order reports show them: the registry's
# names (quadscope.metrics), never a list of their own.
METRICS: tuple[str, ...] = metrics.NAMES
RUSAGE_METRICS: tuple[str, ...] = tuple(
    m.name for m in metrics.REGISTRY if m.source in (metrics.CLOCK, metrics.RUSAGE)
)
PERF_METRICS: tuple[str, ...] = tuple(m.name for m in metrics.by_source(metrics.PERF))


# A run's flat layout (Run.to_dict, the CSV columns, the runs table): its place, the metrics
# every executor gives, then the outcome, then the meters' metrics. Schema 1
# laid runs out this way, so CSV columns keep their places.
_OUTCOME: tuple[str, ...] = ("exit_code", "timed_out", "stderr_tail")
MEASUREMENT_KEYS: tuple[str, ...] = (
    *RUSAGE_METRICS,
    *_OUTCOME,
    *(name for name in metrics.RAW_NAMES if name not in RUSAGE_METRICS),
)

RUN_KEYS: tuple[str, ...] = (
    "sweep_id", "seq", "variant", "size_n", "repeat", "warmup", "started_at", *MEASUREMENT_KEYS,
)

_RAW_NAME_SET = frozenset(metrics.RAW_NAMES)  # built once: every measurement is checked against it

Number = float | int


@dataclass(frozen=True, slots=True, init=False)
class Measurement:
    """What one execution of a process yields: its outcome and one value per raw metric.

    `values` maps every raw metric of the registry to its number, or None where
    it was not measured; read one as an attribute (`m.wall_s`, `m.cpu_s` for a
    derived one) or with `value(name)`. Construct with keywords:
    `Measurement(wall_s=..., user_s=..., exit_code=0)`; metrics left out are
    None, except wall_s, which every run has.
    """

    exit_code: int  # the exit status, or -SIGNUM when killed by a signal
    timed_out: bool
    stderr_tail: str
    values: Mapping[str, Number | None] = field(hash=False)

    def __init__(
        self,
        values: Mapping[str, Number | None] | None = None,
        *,
        exit_code: int,
        timed_out: bool = False,
        stderr_tail: str = "",
        **by_name: Number | None,
    ) -> None:
        given = {**(values or {}), **by_name}
        unknown = sorted(given.keys() - _RAW_NAME_SET)
        if unknown:
            raise TypeError(f"Measurement has no raw metric {', '.join(unknown)}")
        if given.get("wall_s") is None:
            raise TypeError("Measurement needs wall_s: every run has a wall-clock time")
        object.__setattr__(self, "exit_code", exit_code)
        object.__setattr__(self, "timed_out", timed_out)
        object.__setattr__(self, "stderr_tail", stderr_tail)
        object.__setattr__(self, "values", {n: given.get(n) for n in metrics.RAW_NAMES})

    @classmethod
    def trusted(cls, values: dict[str, Number | None], *, exit_code: int, timed_out: bool,
                stderr_tail: str) -> Measurement:
        """A measurement of `values`, which holds every raw metric (`wall_s` set) and no
        other, taken as it is: no check, no copy. For the launcher's replies (every run's
        path); everyone else constructs one."""
        m = object.__new__(cls)
        object.__setattr__(m, "exit_code", exit_code)
        object.__setattr__(m, "timed_out", timed_out)
        object.__setattr__(m, "stderr_tail", stderr_tail)
        object.__setattr__(m, "values", values)
        return m

    def __getattr__(self, name: str) -> Any:
        # Only called when ordinary lookup fails: metric names read as attributes.
        # Any, not float | None, so `m.wall_s * 2` type-checks as it did as a field.
        if name.startswith("_") or name == "values" or metrics.find(name) is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.value(name)

    def value(self, name: str) -> Number | None:
        """A metric's value, computing a derived one from its inputs; None when not measured."""
        metric = metrics.get(name)
        if metric.derived:
            return metric.compute(self.values)
        return self.values[name]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def to_dict(self) -> dict[str, Any]:
        """Raw metrics and the outcome in MEASUREMENT_KEYS order; derived metrics are recomputed."""
        outcome = {"exit_code": self.exit_code, "timed_out": self.timed_out,
                   "stderr_tail": self.stderr_tail}
        return {k: outcome[k] if k in outcome else self.values[k] for k in MEASUREMENT_KEYS}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Measurement:
        """Reads any schema's run: unknown keys (a derived metric, a newer field) are ignored."""
        return cls(
            {n: d[n] for n in metrics.RAW_NAMES if n in d},
            exit_code=int(d["exit_code"]),
            timed_out=bool(d.get("timed_out", False)),
            stderr_tail=str(d.get("stderr_tail", "")),
        )


def read_axes(value: Any) -> tuple[tuple[str, int], ...]:
    """A run's other axes from its stored or exported form: a JSON object, its text, or None."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        import json

        value = json.loads(value)
    return tuple((str(k), int(v)) for k, v in dict(value).items())


@dataclass(frozen=True, slots=True)
class Run:
    """One measured execution inside a sweep.

    `seq` is the execution order within the sweep (0, 1, ...); `variant` is "A"
    for the main command and "B" for `--vs`; `size_n` is the value substituted
    for `{n}` (or the launch index `{i}` in accumulate mode), or for the first
    axis of a sweep over several sizes, whose other axes' sizes are `axes`
    ((name, size) pairs in the sweep's axis order; empty for one size).
    """

    sweep_id: int
    seq: int
    variant: str
    size_n: int
    repeat: int
    warmup: bool
    started_at: float  # unix time, for the record only: never used for durations
    measurement: Measurement
    axes: tuple[tuple[str, int], ...] = ()

    def value(self, metric: str) -> float | None:
        """One metric of this run as a float, derived ones included; None when not measured."""
        v = self.measurement.value(metric)
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
        if self.axes:  # only a sweep over several sizes: one size's layout is schema 2's
            d["axes"] = dict(self.axes)
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
            axes=read_axes(d.get("axes")),
        )


@dataclass(frozen=True, slots=True)
class Sweep:
    """A sweep's identity and settings: everything needed to re-fit or resume it.

    `command` and `vs_command` are argv lists as given (still holding `{n}`);
    with `shell` they are one-element lists run by /bin/sh -c. `sizes` is the
    planned list (empty in adaptive mode until sizes are chosen). `id` is 0
    until the store assigns one. `setup` (once per size, before its runs) and
    `prepare` (before every run) are shell commands holding `{n}`, run untimed;
    `cpus` the CPUs every run was pinned to (empty: not pinned); `fork` that a
    python: target ran as one forked call per run (`--fork`), and `until` the
    metrics an adaptive sweep waits for: both are reused by `--resume`.
    `host` is the machine it ran on (`quadscope.host.Host`); `vs_host` names
    B's machine when a comparison joins sweeps from two machines ("" otherwise).
    It is written inside the host object, where `compare` has always put it,
    so the exported shape is schema 2's.
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
    meter: str = "time"  # "auto", "time" or "instructions" (--meter): counted by `counters`;
    # an auto sweep that counted the work (run.counting) is stored as "instructions"
    host: Host = field(default_factory=Host)
    created_at: float = 0.0
    status: str = "running"  # running | complete | interrupted | failed
    kind: str = "sweep"  # sweep | doctor | profile: what `show` and reports render
    setup: str | None = None
    prepare: str | None = None
    cpus: tuple[int, ...] = ()
    fork: bool = False
    until: tuple[str, ...] = ()
    # Provenance, for `quadscope history` (see measure/provenance.py); "" when unknown.
    git_commit: str = ""  # full hash of HEAD in the working directory's repository
    git_branch: str = ""  # "" on a detached HEAD
    git_dirty: bool = False  # tracked files differed from HEAD when the sweep started
    machine: str = ""  # "hostname (CPU model)"
    vs_host: str = ""  # B's hostname when B ran on another machine (a comparison only)
    # Several sizes (run/design.py): each axis's name and sizes, the first axis being
    # the runs' size_n; `points` the combinations measured. Both empty for one size.
    axes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    points: tuple[tuple[int, ...], ...] = ()
    # The size run apart to measure the start-up (`--startup-n`, `run.spec.startup_size`),
    # planned beside `sizes`; None when not measured apart (stored and exported only if set).
    startup_n: int | None = None

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.axes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["vs_host"]
        if self.axes:
            d["axes"] = [{"name": n, "sizes": list(s)} for n, s in self.axes]
            d["points"] = [list(p) for p in self.points]
        else:  # one size: the stored and exported shape stays schema 2's
            del d["axes"], d["points"]
        if self.startup_n is None:  # likewise without start-up runs
            del d["startup_n"]
        d["host"] = self.host.to_dict()
        if self.vs_host:
            d["host"]["vs_host"] = self.vs_host
        d["command"] = list(self.command)
        d["vs_command"] = None if self.vs_command is None else list(self.vs_command)
        d["sizes"] = list(self.sizes)
        d["cpus"] = list(self.cpus)
        d["until"] = list(self.until)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sweep:
        kw = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        kw["command"] = tuple(kw["command"])
        if kw.get("vs_command") is not None:
            kw["vs_command"] = tuple(kw["vs_command"])
        kw["sizes"] = tuple(int(s) for s in kw.get("sizes", ()))
        host = kw.get("host") or {}
        if isinstance(host, Mapping) and "vs_host" in host:
            host = dict(host)
            kw["vs_host"] = str(host.pop("vs_host") or "")
        kw["host"] = Host.from_dict(host)
        kw["cpus"] = tuple(int(c) for c in kw.get("cpus", ()))
        kw["until"] = tuple(str(m) for m in kw.get("until", ()))
        kw["axes"] = tuple((str(a["name"]), tuple(int(x) for x in a["sizes"]))
                           for a in kw.get("axes", ()))
        kw["points"] = tuple(tuple(int(x) for x in p) for p in kw.get("points", ()))
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class Owner:
    """The process running a sweep: enough to tell, from /proc, whether it still lives.

    `start_ticks` is the process's start time (clock ticks since boot, field 22
    of /proc/PID/stat) and `boot_id` the kernel's boot id: together with `pid`
    they name one process even after its pid is reused or the machine reboots.
    """

    pid: int
    host: str
    boot_id: str = ""
    start_ticks: int = 0
    since: float = 0.0  # unix time it took the sweep, for the message only


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


# What a doubt's numbers may be: a size, a share, an exponent, a class's name, or none.
DoubtValue = float | int | str | None


@dataclass(frozen=True, slots=True)
class Doubt:
    """One check's reason not to settle a class (see `quadscope.analyse.verdict`).

    `check` names the check that raised it; `at_least` and `at_most` are the
    bracket ends it allows ("" where it names none); `decide_n` the size that
    would decide it and `meter` a meter that would ("" for none); `numbers`
    the statistics behind it, by name. Its sentence is written by
    `quadscope.analyse.text`, never stored here.
    """

    check: str
    at_least: str = ""
    at_most: str = ""
    decide_n: int | None = None
    meter: str = ""
    numbers: dict[str, DoubtValue] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "at_least": self.at_least, "at_most": self.at_most,
                "decide_n": self.decide_n, "meter": self.meter, "numbers": dict(self.numbers)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Doubt:
        return cls(d["check"], d.get("at_least", ""), d.get("at_most", ""), d.get("decide_n"),
                   d.get("meter", ""), dict(d.get("numbers", {})))


@dataclass(frozen=True, slots=True)
class Fit:
    """How one metric grows with n.

    `cls` is a growth class's name (see `quadscope.classes`) or INCONCLUSIVE.
    `exponent` is k of the free power law a + b·n^k with its 95% bootstrap
    interval `exponent_ci`. `coefficients` are a and b of the chosen class (of
    the best candidate when inconclusive).
    `reason` says why a verdict is inconclusive, and `decide_n` the size that
    would decide it, when one can be named. `at_least` and `at_most` bracket
    the classes the data support at 95% (both equal `cls` when it is settled):
    an inconclusive fit bracketed "n" … "n log n" still says "not quadratic".
    When the growth changes regime inside the sizes, `regime_n` says where,
    `regime_below` and `regime_k` what it was below, and every other field
    describes the upper regime alone (the verdict for large n).
    `doubts` are the checks' reasons not to settle the class, in the order of
    the checks (`quadscope.analyse.verdict`): renderers read them rather than
    re-deciding; `reason` is their sentence.
    An exactly counted metric's fit (`quadscope.analyse.exactfit`) reads
    `exponent` as the local exponent of its fitted terms at the largest size, and
    a settled one may carry a "work_terms" doubt that is a note, not a doubt: its
    fastest term, the class, is still a small share of the work there.
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
    at_least: str = ""  # the slowest class the data support ("" when not bracketed)
    at_most: str = ""  # the fastest class the data support
    regime_n: int | None = None  # where the growth changes regime, when it does in the sizes
    regime_below: str = ""  # the class below that change ("" when not settled)
    regime_k: tuple[float, float] | None = None  # the exponents below and above it
    doubts: tuple[Doubt, ...] = ()
    # The start-up runs (`Sweep.startup_n`): "used" in the fit, "ignored" (they disagree
    # with the other sizes, `fitting.fit_metric`), or "" (none measured apart).
    startup: str = ""

    @property
    def confident(self) -> bool:
        return self.cls != INCONCLUSIVE

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "class": self.cls,
            "best": self.best,
            "at_least": self.at_least,
            "at_most": self.at_most,
            "exponent": self.exponent,
            "exponent_ci": None if self.exponent_ci is None else list(self.exponent_ci),
            "coefficients": dict(self.coefficients),
            "r2": self.r2,
            "candidates": [c.to_dict() for c in self.candidates],
            "n_points": self.n_points,
            "reason": self.reason,
            "decide_n": self.decide_n,
            "prediction": None if self.prediction is None else self.prediction.to_dict(),
            "regime": None if self.regime_n is None else {
                "n": self.regime_n, "below": self.regime_below,
                "k": None if self.regime_k is None else list(self.regime_k)},
            "doubts": [d.to_dict() for d in self.doubts],
            **({"startup": self.startup} if self.startup else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fit:
        ci = d.get("exponent_ci")
        pred = d.get("prediction")
        regime = d.get("regime") or {}
        ks = regime.get("k")
        return cls(
            metric=d["metric"],
            cls=d["class"],
            best=d.get("best", ""),
            # Schema 1 had no brackets: a settled class is its own bracket.
            at_least=d.get("at_least", "" if d["class"] == INCONCLUSIVE else d["class"]),
            at_most=d.get("at_most", "" if d["class"] == INCONCLUSIVE else d["class"]),
            exponent=d.get("exponent"),
            exponent_ci=None if ci is None else (float(ci[0]), float(ci[1])),
            coefficients=dict(d.get("coefficients", {})),
            r2=d.get("r2"),
            candidates=tuple(Candidate.from_dict(c) for c in d.get("candidates", [])),
            n_points=int(d.get("n_points", 0)),
            reason=d.get("reason", ""),
            decide_n=d.get("decide_n"),
            prediction=None if pred is None else Prediction.from_dict(pred),
            regime_n=regime.get("n"),
            regime_below=regime.get("below", ""),
            regime_k=None if ks is None else (float(ks[0]), float(ks[1])),
            doubts=tuple(Doubt.from_dict(x) for x in d.get("doubts", [])),
            startup=str(d.get("startup", "")),
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
