"""What this machine can count: the perf events perf_event_open opens here, and why not more.

Contract: the meters (`quadscope.meters`) ask here which counter backend a
program's runs get; choosing the executor is the meter's (`meters.choose_measuring`).

`detect_counters()` runs /bin/true once through the launcher with every perf
event of the registry and keeps the events that opened: `PerfEventCounters`
over those, or `NoCounters` when none did (perf_event_open not permitted by
kernel.perf_event_paranoid, or no C compiler for the launcher).
`counters_note(errnos, paranoid)` is the note, pure: which events failed, why
(from each errno and the paranoid level), and the fix; "" when all count.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from pathlib import Path

from quadscope.errors import ToolMissingError
from quadscope.measure.counters import EVENTS, CounterBackend, NoCounters, PerfEventCounters
from quadscope.measure.resident import Request, ResidentLauncher, build_launcher

_HARDWARE = ("instructions", "cycles")
_DENIED = (errno.EACCES, errno.EPERM)
PARANOID_PATH = "/proc/sys/kernel/perf_event_paranoid"


def counters_note(errnos: Mapping[str, int], paranoid: str | None) -> str:
    """Why the events in `errnos` (event -> errno of perf_event_open) are not counted, and the fix."""
    if not errnos:
        return ""
    failed = [e for e in EVENTS if e in errnos]
    counted = [e for e in EVENTS if e not in errnos]
    still = (f"; {', '.join(counted)} are still counted" if counted
             else "; counting instructions, cycles, page-faults and context-switches is off")
    if any(errnos[e] in _DENIED for e in failed):
        level = f" (kernel.perf_event_paranoid is {paranoid})" if paranoid else ""
        return (f"perf_event_open is not permitted{level}: run "
                f"`sysctl kernel.perf_event_paranoid=1`{still}")
    if set(failed) == set(_HARDWARE):
        return ("this machine does not expose hardware counters (perf_event_open refuses "
                "instructions, cycles — typical of a VM); page-faults and context-switches "
                "are still counted")
    why = ", ".join(f"{e} ({errno.errorcode.get(errnos[e], errnos[e])})" for e in failed)
    return f"perf_event_open cannot count {why} here{still}"


def _read_paranoid() -> str | None:
    try:
        return Path(PARANOID_PATH).read_text().strip()
    except OSError:
        return None


def detect_counters() -> tuple[CounterBackend, str]:
    """The best backend for this machine and a note saying what is missing and the fix."""
    try:
        launcher = ResidentLauncher(build_launcher(), events=EVENTS)
    except ToolMissingError as e:
        return NoCounters(), f"{str(e).rstrip('.')}; counting with perf_event_open is off"
    try:
        reply = launcher.run(Request("/bin/true", ("/bin/true",), (), 10.0))
    finally:
        launcher.close()
    counted = tuple(e for e in EVENTS if e not in reply.open_errnos)
    note = counters_note(reply.open_errnos, _read_paranoid())
    return (PerfEventCounters(counted) if counted else NoCounters()), note
