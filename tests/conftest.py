"""Shared fixtures: a store in tmp (SQLite, or either back end), a fake clock, a fake executor, a browser."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import pg
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.store import SqliteStore, Store

# A test run started in the background without job control (`(make test &)`) inherits
# SIGINT ignored, and an ignored signal stays ignored across exec: the Ctrl-C tests'
# quadscope would never see the signal they send. A handler here is reset to the default
# in every child, so each child starts as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def measurement(wall_s: float, exit_code: int = 0, **kw: float) -> Measurement:
    """A measurement where user time is the wall time and other counts are derived from it."""
    return Measurement(
        wall_s=wall_s,
        user_s=kw.get("user_s", wall_s),
        sys_s=kw.get("sys_s", 0.0),
        max_rss_bytes=int(kw.get("max_rss_bytes", 4 << 20)),
        minor_faults=int(kw.get("minor_faults", 100)),
        major_faults=0,
        voluntary_ctx_switches=int(kw.get("voluntary_ctx_switches", 1)),
        involuntary_ctx_switches=int(kw.get("involuntary_ctx_switches", 0)),
        exit_code=exit_code,
    )


def size_of(argv: Sequence[str]) -> int:
    """The size a fake workload was called with: its last argument."""
    return int(argv[-1])


def cost_model(f: Callable[[int], float]) -> Callable[[Sequence[str]], Measurement]:
    """A fake workload whose wall time is f(n), deterministic, with rss and faults growing as n."""

    def cost(argv: Sequence[str]) -> Measurement:
        n = size_of(argv)
        return measurement(f(n), max_rss_bytes=(4 << 20) + 4096 * n, minor_faults=100 + n)

    return cost


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return SqliteStore(tmp_path / "results.db")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[pg.PgServer]:
    """One throwaway PostgreSQL server for the whole session (skipped without the binaries)."""
    if pg.pg_bin() is None:
        pytest.skip("no PostgreSQL server under /usr/lib/postgresql: run scripts/setup")
    pytest.importorskip("psycopg")
    server = pg.start_server()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: pg.PgServer) -> Iterator[str]:
    """The URL of a fresh, empty database on the session's server, dropped afterwards."""
    url = pg_server.new_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a new store goes, on each back end: a file in tmp, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "results.db"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


def fake_executor(f: Callable[[int], float], clock: FakeClock) -> FakeExecutor:
    return FakeExecutor(cost_model(f), clock)


# Debian's Chromium, started as the machine notes advise: headless, no sandbox (root),
# and no background networking, which this machine's closed network would refuse.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module, closed afterwards (skipped without one)."""
    if not shutil.which(CHROMIUM):
        pytest.skip("no /usr/bin/chromium: run scripts/setup")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# The fast tier (`make test-fast`, `pytest -m "not slow"`) is every test that runs on fakes.
# A test that starts a real process, server, cluster or browser carries `slow`; the guard
# below makes that a rule rather than a habit: an unmarked test that spawns a process fails.
_SLOW_MARKS = ("slow", "integration", "browser")
_SLOW_FIXTURES = ("pg_server", "browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """integration, browser, and any test on a real server or browser, are slow too."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        param = getattr(getattr(item, "callspec", None), "params", {}).get("store_location")
        if (any(item.get_closest_marker(m) for m in _SLOW_MARKS[1:])
                or any(f in names for f in _SLOW_FIXTURES) or param == "postgresql"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def _launcher_built() -> None:
    """quadscope's C launcher compiled once, before any test: a fresh machine's first
    `ProcessExecutor` builds it (cached per user), which is no test's process."""
    import contextlib

    from quadscope.errors import ToolMissingError
    from quadscope.measure.resident import build_launcher

    with contextlib.suppress(ToolMissingError):  # no compiler: executors use posix_spawn
        build_launcher()


@pytest.fixture(autouse=True)
def _fast_tests_start_no_process(request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test without the `slow` marker that starts a process fails, naming what it started."""
    if request.node.get_closest_marker("slow"):
        yield
        return
    import os
    import subprocess

    started: list[str] = []
    popen_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def record(what: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def spawn(*args: Any, **kwargs: Any) -> Any:
            argv = args[1] if what == "Popen" and len(args) > 1 else ()
            # Libraries' one-time questions are not the test's processes: matplotlib asks
            # fontconfig once for its font cache, platform.processor() asks uname once.
            if not (isinstance(argv, list | tuple) and list(argv[:1]) in (["fc-list"], ["uname"])):
                started.append(repr(argv)[:120] if argv else what)
            return real(*args, **kwargs)
        return spawn

    monkeypatch.setattr(subprocess.Popen, "_execute_child", record("Popen", popen_child))
    for name in ("posix_spawn", "posix_spawnp", "fork"):
        monkeypatch.setattr(os, name, record(f"os.{name}", getattr(os, name)))
    yield
    if started:
        pytest.fail(f"this test starts a process ({started[0]}): mark it @pytest.mark.slow "
                    "(the fast tier runs on fakes)", pytrace=False)
