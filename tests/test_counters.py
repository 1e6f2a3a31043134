"""Tests for quadscope.measure.counters and .detect: perf's CSV, the note, the backends."""

from __future__ import annotations

import errno

import pytest

from quadscope.measure.counters import (
    EVENT_CODES,
    EVENTS,
    NoCounters,
    PerfEventCounters,
    counts_by_metric,
    missing_events,
    parse_perf_csv,
)
from quadscope.measure.detect import counters_note, detect_counters


def counts(
    instructions: int | None = None,
    cycles: int | None = None,
    page_faults: int | None = None,
    context_switches: int | None = None,
) -> dict[str, int | None]:
    return {"instructions": instructions, "cycles": cycles, "page_faults": page_faults,
            "context_switches": context_switches}

# Recorded on this project's 2-core VM (perf 6.1): no hardware counters.
VM_CSV = """# started on Sun Nov 22 05:06:56 2026

<not supported>,,instructions,0,100.00,,
<not supported>,,cycles,0,100.00,,
35000,,page-faults,254352228,100.00,,
117,,context-switches,254352228,100.00,,
"""

# The shape of a bare-metal run with user-only events, one never scheduled.
BARE_CSV = """# started on Mon Jan  1 00:00:00 2024

1234567,,instructions:u,1000,100.00,1.20,insn per cycle
1028806,,cycles:u,1000,100.00,,
<not counted>,,page-faults:u,0,0.00,,
42,,context-switches:u,1000,100.00,0.042,K/sec
"""

# A hybrid CPU reports each core type on its own line.
HYBRID_CSV = """100,,cpu_core/instructions/,1000,100.00,,
20,,cpu_atom/instructions/,1000,100.00,,
7.00,,page-faults,1000,100.00,,
"""


def test_parse_vm_output() -> None:
    """<not supported> becomes None and counted software events keep their values."""
    assert parse_perf_csv(VM_CSV) == counts(None, None, 35000, 117)


def test_parse_not_counted_and_modifiers() -> None:
    """<not counted> becomes None and ':u' modifiers still map to the metric."""
    assert parse_perf_csv(BARE_CSV) == counts(1234567, 1028806, None, 42)


def test_parse_hybrid_sums_core_types() -> None:
    """Per-core-type lines add up; a '7.00' count parses as 7; absent events are None."""
    assert parse_perf_csv(HYBRID_CSV) == counts(120, None, 7, None)


def test_parse_empty_output() -> None:
    """perf output with no event lines counts nothing."""
    assert parse_perf_csv("# started on x\n\n") == counts()


def test_missing_events_in_event_order() -> None:
    """missing_events() names uncounted events with perf's names, in EVENTS order."""
    assert missing_events(counts(None, None, 3, 4)) == ("instructions", "cycles")
    assert missing_events(counts()) == EVENTS


def test_events_and_aliases_come_from_the_registry() -> None:
    """perf is asked for each perf metric's first event name; its aliases parse to that metric."""
    assert EVENTS == ("instructions", "cycles", "page-faults", "context-switches")
    aliased = "5,,cpu-cycles,1,100.00,,\n6,,faults,1,100.00,,\n7,,cs,1,100.00,,\n"
    assert parse_perf_csv(aliased) == counts(None, 5, 6, 7)


def test_backends_name_what_they_open() -> None:
    """NoCounters opens no event and records 'rusage'; PerfEventCounters opens EVENTS as 'perf'."""
    assert (NoCounters().name, NoCounters().events) == ("rusage", ())
    assert (PerfEventCounters().name, PerfEventCounters().events) == ("perf", EVENTS)


def test_every_perf_metric_has_an_event_code() -> None:
    """Each perf event of the registry has a perf_event_attr (type, config) for the launcher."""
    assert EVENT_CODES["page-faults"] == (1, 2)
    assert all(e in EVENT_CODES for e in EVENTS)


def test_counts_by_metric_fills_missing_events_with_none() -> None:
    """Counts keyed by event become metric values; an event not given is None, never 0."""
    assert counts_by_metric({"page-faults": 9, "instructions": None}) == counts(page_faults=9)


def test_note_empty_when_everything_counts() -> None:
    """No failed event: no note."""
    assert counters_note({}, "2") == ""


def test_note_for_a_vm_without_hardware_counters() -> None:
    """Instructions and cycles refused (ENOENT): the VM note, software events still counted."""
    note = counters_note({"instructions": errno.ENOENT, "cycles": errno.ENOENT}, "2")
    assert note == (
        "this machine does not expose hardware counters (perf_event_open refuses "
        "instructions, cycles — typical of a VM); page-faults and context-switches are still "
        "counted"
    )


def test_note_when_not_permitted_names_paranoid_and_the_fix() -> None:
    """EACCES on every event: the paranoid level, the sysctl fix, and counting is off."""
    note = counters_note({e: errno.EACCES for e in EVENTS}, "3")
    assert note == (
        "perf_event_open is not permitted (kernel.perf_event_paranoid is 3): run "
        "`sysctl kernel.perf_event_paranoid=1`; counting instructions, cycles, page-faults and "
        "context-switches is off"
    )


def test_note_for_another_failure_names_the_errno() -> None:
    """Any other refusal names the events and their errno, and what is still counted."""
    note = counters_note({"page-faults": errno.EINVAL}, None)
    assert note == ("perf_event_open cannot count page-faults (EINVAL) here; instructions, "
                    "cycles, context-switches are still counted")


@pytest.mark.integration
def test_detect_keeps_the_events_that_open() -> None:
    """detect_counters counts exactly the events /bin/true could be counted for, with a note."""
    backend, note = detect_counters()
    if isinstance(backend, NoCounters):
        assert "off" in note
    else:
        assert backend.events and set(backend.events) <= set(EVENTS)
        assert (note == "") == (backend.events == EVENTS)
