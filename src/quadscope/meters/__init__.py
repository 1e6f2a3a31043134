"""The meter registry: one `Meter` per way of measuring a run, in `--meter`'s order.

Contract: `REGISTRY` is the only list of meters in quadscope: `--meter`'s
choices and help, `SweepSpec`'s check, the plan a fixed sweep gets (an exact
meter's repeats stop where two counts agree), the executor every entry point
measures with (`choose_measuring`) and the analysis of an exact meter's sweep
read it, and nothing else names a meter. Each meter is one module of this
package declaring its `METER` (`base.Meter` lists the fields: the metrics it
is the evidence for, whether they are exact, its executor factory, why it
cannot run here, its cost, the exact meter it falls back on); `auto` (`auto`:
time, and count the work when time cannot decide) is the default.

`choose_measuring(command, meter=, no_perf=, fork=, cpus=, function=, setup=,
registry=)` is the one place an executor is picked: the meter's factory for
that target. `named(name)` is the meter called so, or a `UsageError` listing
the choices. `exact_metric(name)` is the metric a stored sweep's meter counts
exactly (None when none), which the analysis reads. A `python:` command puts
the working directory on `sys.path`, as `python -m` does.

How to add a meter (e.g. cache misses via perf, Cachegrind's D1/LL misses,
Callgrind per function): write its module here with a `METER` whose factory
returns the `Measuring`, and add it to `REGISTRY` below: two files. A metric
the registry of metrics lacks is added there first (`metrics.py`, the
"new metric" change). `tests/test_meters_registry.py` sweeps with a meter
registered in a test registry alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from quadscope.errors import UsageError
from quadscope.meters import auto, instructions, timing
from quadscope.meters.base import BatchCost, Cost, Measuring, Meter, Registry, Target

__all__ = ["NAMES", "REGISTRY", "BatchCost", "Cost", "Measuring", "Meter", "Registry", "Target",
           "choose_measuring", "exact_metric", "named"]

REGISTRY = Registry((auto.METER, timing.METER, instructions.METER))
NAMES = REGISTRY.names


def choose_measuring(command: Sequence[str] = (), *, meter: str = "time", no_perf: bool = False,
                     fork: bool = False, cpus: Sequence[int] = (),
                     function: Callable[[Any], Any] | None = None,
                     setup: Callable[[int], Any] | None = None,
                     registry: Registry = REGISTRY, no_qemu: bool = False) -> Measuring:
    """How `meter` measures `command` on this machine (see the module docstring)."""
    target = Target(tuple(command), tuple(cpus), fork, no_perf, function, setup, no_qemu)
    return named(meter, registry).measuring(target)


def named(meter: str, registry: Registry = REGISTRY) -> Meter:
    """The meter called `meter`; a UsageError naming the choices otherwise."""
    found = registry.find(meter)
    if found is None:
        raise UsageError(f"--meter is one of {', '.join(registry.names)}, not {meter!r}")
    return found


def exact_metric(meter: str, registry: Registry = REGISTRY) -> str | None:
    """The metric a stored sweep's meter counts exactly; None when it is not exact (or unknown)."""
    found = registry.find(meter)
    return None if found is None else found.agrees_on
