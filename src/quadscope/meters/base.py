"""What a meter is: the record each meter declares, and what its executor factory is given.

Contract: a `Meter` is pure data plus two functions. `name` is what `--meter`
takes and `Sweep.meter` records; `metrics` the registry metrics it is the
evidence for, the one it is named after first (`metrics.py` names them and
their units; a run carries the clock's and rusage's whatever the meter); `exact`
whether a run counted twice gives the same count (then a fixed plan stops
repeating a size whose first two counts agree: `run.plan.AgreeingPlan` on
`metrics[0]`); `measuring(target)` builds the `Measuring` (executor, the
counters name `Sweep.counters` records, and a note saying what could not be
counted and the fix), raising a `QuadscopeError` (e.g. `ToolMissingError`)
when it cannot measure here; `unavailable(target)` says in one sentence why
it cannot measure `target` here, "" when it can (it may start a process, as
detecting perf's counters does, but measures nothing); `cost` what a measured
run costs against a plain timed one, for planners and for choosing a meter
automatically. `Target` is everything a factory may read: the command, the
CPUs to pin, `--fork`, `--no-perf`, and for the Python API the function
object (and its setup) itself, which a `python:` name need not reach.

A `Registry` holds the meters in `--meter`'s order, the first the default;
`meters.REGISTRY` is quadscope's, and every reader takes a registry as a
parameter so a test can sweep with one holding an extra meter. Nothing here
measures or prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quadscope import metrics

if TYPE_CHECKING:  # annotations only: the registry is read by the CLI's parser
    from quadscope.measure.launcher import Executor


@dataclass(frozen=True, slots=True)
class Measuring:
    """An executor, the counters name a sweep records (`Sweep.counters`), and why not more."""

    executor: Executor
    counters: str
    note: str

    def counted(self) -> str:
        """`counters` as the runs measured so far bear it out: the tool that took over
        from the first one included (`measure.exact.counted_by`)."""
        from quadscope.measure.exact import counted_by

        return counted_by(self.executor, self.counters)


@dataclass(frozen=True, slots=True)
class Target:
    """What a meter's executor is for (see the module docstring)."""

    command: tuple[str, ...] = ()
    cpus: tuple[int, ...] = ()
    fork: bool = False
    no_perf: bool = False
    function: Callable[[Any], Any] | None = None  # the API's function object, called as command[0]
    setup: Callable[[int], Any] | None = None  # and its setup(n)
    no_qemu: bool = False  # count under Valgrind even where QEMU could (a sweep it counted)

    @property
    def python(self) -> bool:
        """Whether the target is a Python function (`python:MODULE:FUNC`), not a program."""
        from quadscope.measure.pyfunc import PREFIX

        return self.function is not None or bool(self.command and
                                                 self.command[0].startswith(PREFIX))


@dataclass(frozen=True, slots=True)
class BatchCost:
    """What counting several calls under one start costs (a Python function's sizes under
    one Valgrind start, `measure.exact.InstructionMeter.counts_many`): `startup_s` once (the
    tool and the interpreter), then for each call `per_call_s` (its fork and setup, run
    uncounted but under the tool) plus `slowdown` × the plain call's seconds."""

    startup_s: float
    per_call_s: float
    slowdown: float

    def run_s(self, plain_s: Sequence[float]) -> float:
        """The seconds one start counting calls whose plain runs take `plain_s` costs."""
        return self.startup_s + sum(self.call_s(p) for p in plain_s)

    def call_s(self, plain_s: float) -> float:
        """What one more call in the start adds when its plain run takes `plain_s`."""
        return self.per_call_s + self.slowdown * plain_s


@dataclass(frozen=True, slots=True)
class Cost:
    """What one measured run costs: `startup_s` + `slowdown` × the plain run's seconds;
    `batch`, where the meter counts several calls under one start, what such a start costs."""

    slowdown: float = 1.0
    startup_s: float = 0.0
    batch: BatchCost | None = None

    def run_s(self, plain_s: float) -> float:
        """The seconds one measured run takes when the plain run takes `plain_s`."""
        return self.startup_s + self.slowdown * plain_s

    def under(self, executor: Executor) -> Cost:
        """This cost where `executor` counts with the tool the meter priced, else the price
        of the tool it counts with (QEMU's, `measure.exact.count_price`)."""
        from dataclasses import replace

        from quadscope.measure.exact import count_price

        price = count_price(executor)
        return self if price is None else replace(self, slowdown=price[0], startup_s=price[1])


def _always(target: Target) -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Meter:
    """One meter (see the module docstring); `describe` is its `--meter` help clause."""

    name: str
    metrics: tuple[str, ...]
    exact: bool
    measuring: Callable[[Target], Measuring]
    unavailable: Callable[[Target], str] = _always
    cost: Cost = Cost()
    describe: str = ""
    # An exact meter this one falls back on when time alone leaves the class open
    # (`run.counting`): "instructions" for `auto`, None for a meter that never counts.
    counts_with: str | None = None

    def __post_init__(self) -> None:
        for name in self.metrics:
            metrics.get(name)  # a KeyError naming the known metrics
        if self.exact and not self.metrics:
            raise ValueError(f"meter {self.name!r} is exact but names no metric it counts")

    @property
    def units(self) -> dict[str, str]:
        """Each metric it counts, with its unit (from the metric registry)."""
        return {name: metrics.get(name).unit for name in self.metrics}

    @property
    def agrees_on(self) -> str | None:
        """The metric whose two agreeing counts end a size's repeats; None when not exact."""
        return self.metrics[0] if self.exact else None


@dataclass(frozen=True, slots=True)
class Registry:
    """The meters `--meter` chooses among, the first the default."""

    meters: tuple[Meter, ...]

    def __post_init__(self) -> None:
        names = [m.name for m in self.meters]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"a registry holds distinct meters, at least one: {names}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.meters)

    @property
    def default(self) -> Meter:
        return self.meters[0]

    def __iter__(self) -> Iterator[Meter]:
        return iter(self.meters)

    def find(self, name: str) -> Meter | None:
        """The meter called `name`, or None."""
        return next((m for m in self.meters if m.name == name), None)

    def get(self, name: str) -> Meter:
        """The meter called `name`; a KeyError naming the known ones otherwise."""
        found = self.find(name)
        if found is None:
            raise KeyError(f"unknown meter {name!r}; known: {', '.join(self.names)}")
        return found

    def with_meter(self, extra: Meter) -> Registry:
        """This registry plus `extra`, last."""
        return Registry((*self.meters, extra))
