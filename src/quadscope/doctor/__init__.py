"""`quadscope doctor`: reproduce known Linux pathologies and check this machine for them.

Contract: `PROBES` lists every probe in the order the doctor runs them (cheap
and most telling first); `probe_names()` their names; `select(names)` the
probes a `--only` list names, raising `UsageError` for an unknown one;
`DEFAULT_BUDGET_S` and `QUICK_BUDGET_S` the time all probes share (here, not
in `runner`, so the CLI's help reads them without loading the runner);
`NO_TIME_LEFT` how the finding of a probe the budget left no time for begins. Each
probe lives in its own module with its contract in the docstring; `runner`
executes them through the ordinary sweep, counter and fitting machinery.
"""

from __future__ import annotations

from collections.abc import Sequence

from quadscope.doctor import (
    clock,
    dirscan,
    exit_parallel,
    mmaps,
    notify_buffer,
    spawn_drift,
    spawn_size,
)
from quadscope.doctor.base import Probe, ProbeResult
from quadscope.errors import UsageError

DEFAULT_BUDGET_S = 120.0
QUICK_BUDGET_S = 30.0
# How a probe (or variant) the budget left no time for starts its finding (`runner`).
NO_TIME_LEFT = "no time was left"

PROBES: tuple[Probe, ...] = (
    clock.PROBE,
    spawn_size.PROBE,
    spawn_drift.PROBE,
    exit_parallel.PROBE,
    mmaps.PROBE,
    notify_buffer.PROBE,
    dirscan.PROBE,
)


def probe_names() -> tuple[str, ...]:
    return tuple(p.name for p in PROBES)


def select(names: Sequence[str]) -> tuple[Probe, ...]:
    """The probes named in `names` (in the doctor's order); all of them when empty.

    Names that are all blank (`--only ,`) are refused, not read as "all".
    """
    wanted = [n.strip() for n in names if n.strip()]
    if not names:
        return PROBES
    if not wanted:
        raise UsageError(f"--only names no probe; choose from {', '.join(probe_names())}")
    unknown = [n for n in wanted if n not in probe_names()]
    if unknown:
        raise UsageError(
            f"no doctor probe named {', '.join(repr(u) for u in unknown)}; "
            f"choose from {', '.join(probe_names())}"
        )
    return tuple(p for p in PROBES if p.name in wanted)


__all__ = ["DEFAULT_BUDGET_S", "NO_TIME_LEFT", "PROBES", "QUICK_BUDGET_S", "Probe", "ProbeResult",
           "probe_names", "select"]
