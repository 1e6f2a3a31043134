"""Tests for quadscope.measure.meters and .detect: perf's CSV, the note, the backends."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from quadscope.measure.detect import detect_counters
from quadscope.measure.meters import (
    EVENTS,
    NoCounters,
    PerfCounters,
    missing_events,
    parse_perf_csv,
)


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


def test_no_counters_counts_nothing_and_does_not_gate() -> None:
    """NoCounters is ungated, named 'rusage', and yields all-None counts."""
    backend = NoCounters()
    assert (backend.name, backend.gated) == ("rusage", False)
    assert backend.attach(12345).stop() == counts()


def test_perf_counters_gate_the_child() -> None:
    """PerfCounters is named 'perf' and needs the child held before exec."""
    assert (PerfCounters().name, PerfCounters().gated) == ("perf", True)


def test_detect_without_perf() -> None:
    """No perf binary: NoCounters and a note with the install command."""
    backend, note = detect_counters(perf="quadscope-no-such-perf")
    assert isinstance(backend, NoCounters)
    assert note == (
        "perf is not installed: install it with `apt-get install linux-perf`; "
        "counting instructions, cycles, page-faults and context-switches is off"
    )


@pytest.mark.integration
def test_detect_perf_not_permitted(tmp_path: Path) -> None:
    """A perf that refuses for lack of permission gives NoCounters and the sysctl fix."""
    fake = tmp_path / "perf"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "sys.stderr.write('Error:\\nAccess to performance monitoring and observability "
        "operations is limited.\\n')\nsys.exit(255)\n"
    )
    fake.chmod(0o755)
    backend, note = detect_counters(perf=str(fake))
    assert isinstance(backend, NoCounters)
    assert note == (
        "perf is not permitted: run `sysctl kernel.perf_event_paranoid=1`; "
        "counting instructions, cycles, page-faults and context-switches is off"
    )
