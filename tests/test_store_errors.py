"""Store failures (full disk, lock, corruption, read-only) are one sentence each and keep every run."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bad_inputs import fake_measurement, run_argv
from quadscope.errors import StoreError, UnknownRunError
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore, Store


def _sweep(store: Store, clock: FakeClock, n_sizes: int = 6) -> None:
    run_sweep(SweepSpec(command=("prog", "{n}"), name="s", sizes=tuple(range(1, n_sizes + 1)),
                        repeat=1, warmup=0),
              executor=FakeExecutor(lambda argv: fake_measurement(0.001), clock), clock=clock, store=store)


def test_full_disk_is_one_sentence_and_keeps_every_stored_run(tmp_path: Path) -> None:
    """SQLITE_FULL mid-sweep (max_page_count) says the disk is full; the runs before it stay."""
    path = tmp_path / "r.db"
    store = SqliteStore(path)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count={pages + 2}")  # a disk with two pages left
    with pytest.raises(StoreError, match=r"the disk is full; every run stored before is kept"):
        _sweep(store, FakeClock(0.0), n_sizes=2000)
    store.close()
    with SqliteStore(path) as again:
        [(sweep, count)] = again.list_sweeps()
        assert count > 0
        assert [r.seq for r in again.runs(sweep.id)] == list(range(count))


def test_a_locked_store_names_the_file_and_the_wait(tmp_path: Path) -> None:
    """A writer blocked past the busy timeout gets 'is locked', not an OperationalError."""
    path = tmp_path / "r.db"
    SqliteStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with SqliteStore(path, busy_timeout_s=0.05) as store, \
                pytest.raises(StoreError, match=rf"{path} is locked: another process"):
            _sweep(store, FakeClock(0.0))
    finally:
        other.execute("ROLLBACK")
        other.close()


def _corrupt(path: Path) -> None:
    """Overwrite every page after the first with garbage: the header still says SQLite."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = b"\x5a" * (len(data) - page)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("argv", [["list"], ["show", "1"], ["export", "1", "--json", "x.json"],
                                  ["report", "1"], ["compare", "1", "1"]])
def test_corrupt_store_is_one_sentence_for_every_reader(tmp_path: Path, argv: list[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A store whose pages are garbage is exit 4 with 'is corrupt' and the recovery command."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "r.db"
    with SqliteStore(path) as store:
        _sweep(store, FakeClock(0.0), n_sizes=200)
    _corrupt(path)
    code, _, err = run_argv([*argv, "--db", str(path)])
    assert code == 4, err
    assert "is corrupt" in err and ".recover" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["show", "1"], ["report", "1"], ["export", "1", "--json", "x"],
                                  ["compare", "1", "2"]])
def test_readers_never_create_a_database(tmp_path: Path, argv: list[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading commands on a missing store say so (exit 5) and leave no file behind."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_argv([*argv, "--db", str(tmp_path / "none" / "r.db")])
    assert (code, "no results database" in err) == (5, True), err
    assert list(tmp_path.iterdir()) == []


def test_reading_a_directory_as_a_store_advises_a_file_in_it(tmp_path: Path) -> None:
    """`show 1 --db DIR` advised "`quadscope run` records one there", which `run --db DIR`
    refuses (exit 4); a missing file keeps that advice."""
    with pytest.raises(UnknownRunError) as dir_error:
        SqliteStore(tmp_path, readonly=True)
    assert str(dir_error.value) == (f"there is no results database at {tmp_path} (it is a "
                                    "directory): point --db at a database file in it")
    with pytest.raises(UnknownRunError) as missing:
        SqliteStore(tmp_path / "r.db", readonly=True)
    assert str(missing.value) == (f"there is no results database at {tmp_path / 'r.db'}: "
                                  "`quadscope run` records one there, or point --db at an "
                                  "existing one")


def test_list_of_a_missing_store_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    """`list` of a store that does not exist says nothing is stored, exit 0, no file made."""
    code, out, _ = run_argv(["list", "--db", str(tmp_path / "r.db")])
    assert (code, "no sweeps stored" in out) == (0, True)
    assert list(tmp_path.iterdir()) == []


def test_for_reading_refuses_an_empty_database(tmp_path: Path) -> None:
    """An empty SQLite file read-only is 'no sweep stored there yet', not an error about tables."""
    sqlite3.connect(tmp_path / "e.db").execute("CREATE TABLE x (y)").connection.close()
    (tmp_path / "empty.db").touch()
    with pytest.raises(UnknownRunError, match="empty database"):
        SqliteStore.for_reading(tmp_path / "empty.db")


@pytest.fixture
def readonly_tree(tmp_path: Path) -> Iterator[Path]:
    """A store with one sweep that cannot be written: a read-only bind mount as root
    (root ignores file modes), otherwise a read-only file in a read-only folder."""
    folder = tmp_path / "ro"
    folder.mkdir()
    with SqliteStore(folder / "r.db") as store:
        _sweep(store, FakeClock(0.0))
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "--bind", str(folder), str(folder)],
                                 capture_output=True, check=False).returncode == 0
        if not mounted:
            pytest.skip("root, and no bind mount to make a read-only file system with")
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True,
                           capture_output=True, timeout=10)
            yield folder / "r.db"
        finally:
            # Lazy: a connection the garbage collector has not closed yet keeps it busy.
            subprocess.run(["umount", "-l", str(folder)], check=True, timeout=10)
        return
    (folder / "r.db").chmod(0o444)
    folder.chmod(0o555)
    try:
        yield folder / "r.db"
    finally:
        folder.chmod(0o755)


@pytest.mark.slow
def test_read_only_store_reads_and_refuses_writes(readonly_tree: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """On a read-only store, list/show/export work; run is one sentence (exit 4), nothing made."""
    monkeypatch.chdir(readonly_tree.parent.parent)
    before = sorted(p.name for p in readonly_tree.parent.iterdir())
    listed = run_argv(["list", "--db", str(readonly_tree)])
    shown = run_argv(["show", "s", "--db", str(readonly_tree)])
    exported = run_argv(["export", "s", "--db", str(readonly_tree), "--json", "s.json"])
    ran = run_argv(["run", "--db", str(readonly_tree), "--no-perf", "--sizes", "1,2,3,4",
                    "--", "/bin/true", "{n}"])
    assert (listed[0], " s " in listed[1]) == (0, True), listed[2]
    assert (shown[0], exported[0]) == (0, 0), shown[2] + exported[2]
    assert ran[0] == 4, ran[2]
    assert "read-only" in ran[2] and "Traceback" not in ran[2]
    assert sorted(p.name for p in readonly_tree.parent.iterdir()) == before
