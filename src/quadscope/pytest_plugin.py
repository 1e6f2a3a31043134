"""The pytest plugin (entry point `pytest11`): a `scaling` fixture that gates a test on growth.

Contract: `scaling.check(target, at_most="n log n", **options)` is
`quadscope.assert_scales` with test-suite defaults: the HTML report goes in
the test's `tmp_path` (never the user's tree), and an undecided gate skips
the test with the sentence naming the n that would decide, unless
`--quadscope-strict` is given (then it fails, as `ScalingUndecided`). A
failed gate fails the test with the verdict, the exponent and its interval,
the sizes and the report's path. The package is imported only when a test
asks for the fixture, so the plugin costs other test runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from quadscope.api import ScalingResult

STRICT_OPTION = "--quadscope-strict"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("quadscope").addoption(
        STRICT_OPTION, action="store_true", default=False,
        help="quadscope: fail a test whose scaling gate is undecided instead of skipping it")


class Scaling:
    """The `scaling` fixture's value: `check` gates one target per call."""

    def __init__(self, tmp_path: Path, strict: bool) -> None:
        self._tmp_path = tmp_path
        self._strict = strict
        self._checks = 0

    def check(self, target: Callable[[Any], Any] | Sequence[str], at_most: str = "n log n",
              **options: Any) -> ScalingResult:
        """Sweep `target` and fail the test unless it grows within `at_most` (see assert_scales)."""
        from quadscope.api import ScalingSkipped, assert_scales

        self._checks += 1
        options.setdefault("report", self._tmp_path / f"scaling-{self._checks}.html")
        options.setdefault("undecided", "fail" if self._strict else "skip")
        try:
            return assert_scales(target, at_most, **options)
        except ScalingSkipped as exc:
            pytest.skip(str(exc))


@pytest.fixture
def scaling(tmp_path: Path, request: pytest.FixtureRequest) -> Scaling:
    """Gate a test on how a function or command grows: `scaling.check(f, at_most="n")`."""
    return Scaling(tmp_path, bool(request.config.getoption(STRICT_OPTION)))
