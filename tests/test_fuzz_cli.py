"""5,000 random argv from the real parser's options and hostile values never reach the crash handler."""

from __future__ import annotations

from pathlib import Path

import pytest

from bad_inputs import make_sandbox
from fuzz_argv import fuzz

FUZZ_COUNT = 5000
FUZZ_SEED = 20260412


@pytest.mark.slow
def test_fuzzed_argv_never_reach_the_crash_handler(tmp_path: Path) -> None:
    """Every one of 5,000 seeded random argv ends in a sentence or a clean exit, none in exit 70."""
    result = fuzz(FUZZ_COUNT, FUZZ_SEED, make_sandbox(tmp_path))
    assert result.tried == FUZZ_COUNT
    assert [(argv, err.strip()[:300]) for argv, err in result.crashes[:5]] == []


@pytest.mark.slow
def test_the_fuzz_explores_more_than_refusals(tmp_path: Path) -> None:
    """The fuzz reaches successes and the measuring stop too, not only usage errors."""
    result = fuzz(400, FUZZ_SEED, make_sandbox(tmp_path))
    assert {0, 2, 5, 99} <= set(result.exits)
