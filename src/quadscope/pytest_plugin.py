"""The pytest plugin (entry point `pytest11`): a `scaling` fixture that gates a test on growth.

Contract: `scaling.check(target, at_most="n log n", **options)` is
`quadscope.assert_scales` with test-suite defaults: the HTML report goes in
the test's `tmp_path` (never the user's tree), and an undecided gate skips
the test with the sentence naming the n that would decide, unless
`--quadscope-strict` is given (then it fails, as `ScalingUndecided`). A
failed gate fails the test with the verdict, the exponent and its interval,
the sizes and the report's path. The helpers hide their frames
(`__tracebackhide__`), so a failure shows the test's line and the verdict
lines, and a skip is reported at the test (a marker's gate, run before
the body, at the test's definition). The package is imported only when a test
asks for the fixture, so the plugin costs other test runs nothing.

The marker `@pytest.mark.scales(...)` (declared in `pytest_configure`, so it
passes `--strict-markers`) takes `assert_scales`'s arguments. With a target,
`@pytest.mark.scales(f, at_most="n", sizes=[...])`, the test is gated on f
before its body runs (a failed gate is the test's failure); without one,
`@pytest.mark.scales(at_most="n", budget_s=5)`, its keywords are the defaults
of every `scaling.check` in that test (a keyword given to `check` wins).
A target or setup may be a lambda or a closure defined in the test: when the
work is counted, it is sent to Valgrind's child Python by value
(`measure.pycount`), and where it cannot be (its closure holds a lock) the
undecided sentence says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from quadscope.api import ScalingResult

STRICT_OPTION = "--quadscope-strict"
MARKER = "scales"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("quadscope").addoption(
        STRICT_OPTION, action="store_true", default=False,
        help="quadscope: fail a test whose scaling gate is undecided instead of skipping it")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(target=None, at_most='n log n', **options): quadscope gates the "
        "test on how target grows (assert_scales's options); without a target, the defaults "
        "of scaling.check in this test")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A marker that names a target needs the fixture, whether the test asks for it or not.
    for item in items:
        marker = item.get_closest_marker(MARKER)
        names = getattr(item, "fixturenames", None)
        if marker is not None and marker.args and names is not None and "scaling" not in names:
            names.append("scaling")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Gate a test whose marker names a target before its body runs, as part of the test."""
    __tracebackhide__ = True
    marker = item.get_closest_marker(MARKER)
    if marker is not None and marker.args:
        scaling: Scaling = item.funcargs["scaling"]  # type: ignore[attr-defined]
        try:
            scaling.check(*marker.args)
        except pytest.skip.Exception as exc:
            # No frame of the test ran: report the skip at the test, not in this plugin.
            raise pytest.skip.Exception(str(exc.msg), _use_item_location=True) from None


class Scaling:
    """The `scaling` fixture's value: `check` gates one target per call."""

    def __init__(self, tmp_path: Path, strict: bool, defaults: dict[str, Any] | None = None) -> None:
        self._tmp_path = tmp_path
        self._strict = strict
        self._defaults = dict(defaults or {})
        self._checks = 0

    def check(self, target: Callable[[Any], Any] | Sequence[str], at_most: str | None = None,
              **options: Any) -> ScalingResult:
        """Sweep `target` and fail the test unless it grows within `at_most` (see assert_scales).

        Keywords the test's `scales` marker gives are the defaults; `at_most` is
        "n log n" when neither says.
        """
        __tracebackhide__ = True  # failures and skips point at the test's line
        from quadscope.api import ScalingSkipped, assert_scales

        options = {**self._defaults, **options}
        at_most = at_most or options.pop("at_most", "n log n")
        options.pop("at_most", None)
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
    marker = request.node.get_closest_marker(MARKER)
    return Scaling(tmp_path, bool(request.config.getoption(STRICT_OPTION)),
                   dict(marker.kwargs) if marker is not None else None)
