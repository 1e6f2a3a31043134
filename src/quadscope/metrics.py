"""The metric registry: one `Metric` record per number a run can carry, in report order.

Contract: `REGISTRY` is the only list of metrics in quadscope. `Measurement`
(model), the store's `runs` columns, the CSV and JSON runs, the perf events
counted, the launcher's and the Python-function executor's readings, the fits
and every report's tables read it; nothing else names the set of metrics.
Lookups: `get(name)` (a `KeyError` naming the known metrics otherwise),
`find(name)` (None for an unknown name), `by_source(source)`, and the name
tuples `NAMES` (everything fitted), `RAW_NAMES` (measured and stored) and
`DERIVED_NAMES` (computed from raw ones, never stored). Pure data: nothing
here measures, prints or touches disk.

Sources: "clock" (the monotonic clock around the child: wall_s, never null),
"rusage" (wait4's struct rusage, or getrusage deltas for Python functions),
"perf" (the counter backend's events, `measure.counters`: null where the
machine cannot count the event; the instruction meter, `meters.instructions`,
fills `instructions` under Valgrind where the CPU cannot), and "derived"
(`derive(*inputs)`, null when any input is null).

How to add a metric: add one `Metric` to `REGISTRY`, at the place its row
should appear in reports. Units go in the name (`_s`, `_bytes`, or a plain
count). A perf metric lists perf's event name first, then any aliases perf may
print instead; a rusage metric names its `struct rusage` field (and `scale`
when the kernel's unit differs, as ru_maxrss's KiB do); a derived metric names
its `inputs` and a `derive` function of them. Nothing else changes: the store
adds the new raw metric as a nullable column the next time it opens a database,
and every renderer picks the metric up in registry order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

UNITS = ("s", "bytes", "count")
CLOCK, RUSAGE, PERF, DERIVED = "clock", "rusage", "perf", "derived"


def _total(*values: float) -> float:
    return sum(values, 0.0)


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric: its name (units included), where it comes from and how it reads.

    `events`: the names its source reads it by: perf's event name followed by
    the aliases perf may print for it (`page-faults`, `faults`), or the field of
    struct rusage (`ru_minflt`). `scale` turns the source's unit into the
    metric's (ru_maxrss is in KiB). `accumulates` is false for a high-water mark
    (peak RSS): a difference of two readings means nothing for it. `leads`:
    whether the metric may lead the verdict line; derived metrics restate their
    inputs, so they never do.
    """

    name: str
    unit: str  # one of UNITS; formatting follows it (units.fmt_value)
    source: str  # CLOCK, RUSAGE, PERF (the perf counter backend's events) or DERIVED
    description: str
    integral: bool
    events: tuple[str, ...] = ()
    scale: int = 1
    accumulates: bool = True
    inputs: tuple[str, ...] = ()
    derive: Callable[..., float] | None = None

    @property
    def derived(self) -> bool:
        return self.source == DERIVED

    @property
    def nullable(self) -> bool:
        """Whether a run may lack it: every metric but the clock's."""
        return self.source != CLOCK

    @property
    def leads(self) -> bool:
        return not self.derived

    def compute(self, values: Mapping[str, float | int | None]) -> float | None:
        """A derived metric's value from its inputs' values; None when one is missing."""
        assert self.derive is not None, f"{self.name} is not derived"
        args = [values.get(name) for name in self.inputs]
        if any(a is None for a in args):
            return None
        return float(self.derive(*args))


REGISTRY: tuple[Metric, ...] = (
    Metric("wall_s", "s", CLOCK, "elapsed wall-clock time of the child", False),
    Metric("user_s", "s", RUSAGE, "user CPU time", False, ("ru_utime",)),
    Metric("sys_s", "s", RUSAGE, "system CPU time", False, ("ru_stime",)),
    Metric("cpu_s", "s", DERIVED, "CPU time, user_s + sys_s: immune to other tenants", False,
           inputs=("user_s", "sys_s"), derive=_total),
    Metric("max_rss_bytes", "bytes", RUSAGE, "peak resident set size", True, ("ru_maxrss",),
           scale=1024, accumulates=False),
    Metric("minor_faults", "count", RUSAGE, "minor page faults", True, ("ru_minflt",)),
    Metric("major_faults", "count", RUSAGE, "major page faults", True, ("ru_majflt",)),
    Metric("voluntary_ctx_switches", "count", RUSAGE, "voluntary context switches", True,
           ("ru_nvcsw",)),
    Metric("involuntary_ctx_switches", "count", RUSAGE, "involuntary context switches", True,
           ("ru_nivcsw",)),
    # Hardware events count user space only (perf's instructions:u; see launcher.c).
    Metric("instructions", "count", PERF, "retired user-space instructions (instructions:u)",
           True, ("instructions",)),
    Metric("cycles", "count", PERF, "user-space CPU cycles (cycles:u)", True,
           ("cycles", "cpu-cycles")),
    Metric("page_faults", "count", PERF, "page faults", True, ("page-faults", "faults")),
    Metric("context_switches", "count", PERF, "context switches", True,
           ("context-switches", "cs")),
)

_BY_NAME: dict[str, Metric] = {m.name: m for m in REGISTRY}

NAMES: tuple[str, ...] = tuple(m.name for m in REGISTRY)
RAW_NAMES: tuple[str, ...] = tuple(m.name for m in REGISTRY if not m.derived)
DERIVED_NAMES: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.derived)


def find(name: str) -> Metric | None:
    """The metric called `name`, or None."""
    return _BY_NAME.get(name)


def get(name: str) -> Metric:
    """The metric called `name`; a KeyError listing the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(NAMES)}") from None


def by_source(source: str) -> tuple[Metric, ...]:
    """The metrics one source gives ("clock", "rusage", "perf", "derived"), in report order."""
    return tuple(m for m in REGISTRY if m.source == source)

