"""Tests for quadscope.store on both back ends: round trips, lookups, refusals, durability.

Tests taking `store` or `store_location` run on SQLite and on a throwaway
PostgreSQL server; those about the SQLite file itself (its header, WAL,
foreign files) take `tmp_path` and run on SQLite only.
"""

from __future__ import annotations

import dataclasses
import os
import selectors
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import quadscope
from quadscope.errors import StoreError, UnknownRunError
from quadscope.host import Host
from quadscope.model import Measurement, Run, Sweep
from quadscope.store import (
    APPLICATION_ID,
    SqliteStore,
    Store,
    as_location,
    default_db_path,
    default_location,
    open_store,
)
from quadscope.store.schema import POSTGRES, SQLITE, Dialect, table_columns
from quadscope.store.schema import STORE_VERSION as SCHEMA_VERSION


def make_sweep(name: str = "sort", **kw: object) -> Sweep:
    base = Sweep(
        id=0,
        name=name,
        mode="sizes",
        command=("./sort", "{n}"),
        vs_command=("./sort2", "{n}"),
        sizes=(100, 200, 400),
        timeout_s=5.0,
        predict_n=10_000,
        counters="perf",
        host=Host(cpu="x86_64", kernel="6.1"),
        created_at=1_700_000_000.5,
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def make_run(sweep_id: int, seq: int, *, size_n: int = 100, perf: bool = True) -> Run:
    m = Measurement(
        wall_s=0.25 + seq,
        user_s=0.125,
        sys_s=0.0625,
        max_rss_bytes=1 << 20,
        minor_faults=10 + seq,
        major_faults=0,
        voluntary_ctx_switches=2,
        involuntary_ctx_switches=1,
        exit_code=-9 if seq == 2 else 0,
        timed_out=seq == 2,
        stderr_tail="Killed\n" if seq == 2 else "",
        instructions=123_456_789_012 if perf else None,
        cycles=98_765_432_100 if perf else None,
        page_faults=7 if perf else None,
        context_switches=3 if perf else None,
    )
    return Run(
        sweep_id=sweep_id,
        seq=seq,
        variant="B" if seq % 2 else "A",
        size_n=size_n,
        repeat=seq // 2,
        warmup=seq == 0,
        started_at=1_700_000_001.0 + seq,
        measurement=m,
    )


@pytest.fixture
def store(store_location: Path | str) -> Iterator[Store]:
    with open_store(store_location) as s:
        yield s


def _dialect(store: Store) -> Dialect:
    return SQLITE if isinstance(store, SqliteStore) else POSTGRES


def _raw(store: Store, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Rows of a query run on the store's own connection, bypassing its methods."""
    conn = store._conn  # type: ignore[attr-defined]
    return list(conn.execute(_dialect(store).query(sql), params).fetchall())


def test_default_db_path_env_then_cwd(tmp_path: Path) -> None:
    """$QUADSCOPE_DB wins (relative to cwd); otherwise .quadscope/results.db under cwd."""
    assert default_db_path(tmp_path, env={}) == tmp_path / ".quadscope" / "results.db"
    assert default_db_path(tmp_path, env={"QUADSCOPE_DB": ""}) == (
        tmp_path / ".quadscope" / "results.db"
    )
    assert default_db_path(tmp_path, env={"QUADSCOPE_DB": "/x/y.db"}) == Path("/x/y.db")
    assert default_db_path(tmp_path, env={"QUADSCOPE_DB": "r.db"}) == tmp_path / "r.db"


def test_a_url_in_quadscope_db_names_a_server_not_a_file(tmp_path: Path) -> None:
    """$QUADSCOPE_DB holding a postgresql:// or postgres:// URL is kept as the URL; a path is a Path."""
    url = "postgresql://ci@db.example/quadscope"
    assert default_location(tmp_path, env={"QUADSCOPE_DB": url}) == url
    assert default_location(tmp_path, env={"QUADSCOPE_DB": "POSTGRES://x/y"}) == "POSTGRES://x/y"
    assert default_location(tmp_path, env={"QUADSCOPE_DB": "r.db"}) == tmp_path / "r.db"
    assert as_location("postgres://h/db") == "postgres://h/db"
    assert as_location("postgresql.db") == Path("postgresql.db")


def test_open_creates_parent_and_marks_file_as_ours(tmp_path: Path) -> None:
    """A new path gets its parent directory, our application_id and user_version."""
    path = tmp_path / "deep" / "dir" / "results.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID == 0x51534350
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_empty_file_is_initialised(tmp_path: Path) -> None:
    """A zero-byte file is taken as a new store, not refused."""
    path = tmp_path / "results.db"
    path.touch()
    with SqliteStore(path) as s:
        assert s.list_sweeps() == []


def test_wal_mode_is_on(tmp_path: Path) -> None:
    """The file is in WAL journal mode, seen from an independent connection."""
    path = tmp_path / "results.db"
    with SqliteStore(path):
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()


def test_sweep_and_runs_round_trip(store_location: Path | str) -> None:
    """Sweeps and runs read back equal to what was written, across a reopen."""
    with open_store(store_location) as s:
        sweep = s.create_sweep(make_sweep())
        runs = [make_run(sweep.id, seq, perf=seq != 3) for seq in range(5)]
        for run in runs:
            s.add_run(run)
    with open_store(store_location, readonly=True) as s:
        assert s.get_sweep(sweep.id) == sweep
        got = s.runs(sweep.id)
    assert got == runs
    assert got[0].warmup is True and got[1].warmup is False
    assert got[2].measurement.timed_out is True
    assert got[3].measurement.instructions is None


def test_runs_come_back_in_seq_order(store: Store) -> None:
    """runs() orders by seq, not by insertion order."""
    sweep = store.create_sweep(make_sweep())
    for seq in (3, 0, 2, 1):
        store.add_run(make_run(sweep.id, seq))
    assert [r.seq for r in store.runs(sweep.id)] == [0, 1, 2, 3]


def test_ids_are_assigned(store: Store) -> None:
    """create_sweep returns a copy with a fresh id (1, 2, ...) and ignores any id given."""
    a = store.create_sweep(make_sweep("a"))
    b = store.create_sweep(make_sweep("b", id=99))
    assert (a.id, b.id) == (1, 2)
    assert a == make_sweep("a", id=1)


def test_get_sweep_by_id_name_and_last(store: Store) -> None:
    """A ref is an id (int or digits), a name (most recent wins), or last/latest."""
    first = store.create_sweep(make_sweep("sort"))
    other = store.create_sweep(make_sweep("hash"))
    second = store.create_sweep(make_sweep("sort", sizes=(1, 2, 3)))
    assert store.get_sweep(first.id) == first
    assert store.get_sweep(str(other.id)) == other
    assert store.get_sweep("sort") == second
    assert store.get_sweep("hash") == other
    assert store.get_sweep("last") == second
    assert store.get_sweep("latest") == second


def test_get_sweep_digits_fall_back_to_name(store: Store) -> None:
    """Digits that are no id are looked up as a name."""
    named = store.create_sweep(make_sweep("2024"))
    assert store.get_sweep("2024") == named


def test_unknown_sweep_raises(store: Store) -> None:
    """An unknown id or name raises UnknownRunError naming the ref, the path and the fix."""
    store.create_sweep(make_sweep())
    with pytest.raises(UnknownRunError) as e:
        store.get_sweep("nope")
    assert str(e.value) == (
        f"no stored sweep with id or name 'nope' in {store.location}; `quadscope list` shows them"
    )
    with pytest.raises(UnknownRunError, match="'42'"):
        store.get_sweep(42)
    with pytest.raises(UnknownRunError, match="'7'"):
        store.set_status(7, "failed")


def test_last_in_empty_store_raises(store: Store) -> None:
    """Asking for the last sweep of an empty store raises UnknownRunError."""
    with pytest.raises(UnknownRunError, match="no stored sweep"):
        store.get_sweep("last")


def test_update_sweep_and_set_status(store: Store) -> None:
    """update_sweep replaces the settings; set_status changes the status column and the JSON."""
    sweep = store.create_sweep(make_sweep(mode="adaptive", sizes=()))
    chosen = dataclasses.replace(sweep, sizes=(10, 20, 40, 80))
    store.update_sweep(chosen)
    assert store.get_sweep(sweep.id) == chosen
    store.set_status(sweep.id, "interrupted")
    assert store.get_sweep(sweep.id) == dataclasses.replace(chosen, status="interrupted")
    [(status, data)] = _raw(store, "SELECT status, data FROM sweeps WHERE id = ?", (sweep.id,))
    assert isinstance(data, str) and status == "interrupted" and '"status": "interrupted"' in data
    with pytest.raises(UnknownRunError):
        store.update_sweep(dataclasses.replace(chosen, id=99))


def test_list_sweeps_newest_first_with_counts(store: Store) -> None:
    """list_sweeps gives (sweep, run count) newest first, counting sweeps with no runs as 0."""
    a = store.create_sweep(make_sweep("a"))
    b = store.create_sweep(make_sweep("b"))
    c = store.create_sweep(make_sweep("c"))
    for seq in range(3):
        store.add_run(make_run(a.id, seq))
    store.add_run(make_run(c.id, 0))
    assert store.list_sweeps() == [(c, 1), (b, 0), (a, 3)]


def test_next_seq_for_resume(store: Store) -> None:
    """next_seq is 0 for a new sweep and one past the highest stored seq after."""
    sweep = store.create_sweep(make_sweep())
    assert store.next_seq(sweep.id) == 0
    store.add_run(make_run(sweep.id, 0))
    store.add_run(make_run(sweep.id, 4))
    assert store.next_seq(sweep.id) == 5


def test_duplicate_seq_is_refused(store: Store) -> None:
    """A second run with the same (sweep_id, seq) is a StoreError (at the latest from the next
    method, once its batch is committed) and changes nothing."""
    sweep = store.create_sweep(make_sweep())
    store.add_run(make_run(sweep.id, 0))
    with pytest.raises(StoreError, match="only one process"):
        store.add_run(make_run(sweep.id, 0, size_n=999))
        store.next_seq(sweep.id)
    assert [r.size_n for r in store.runs(sweep.id)] == [100]


def test_run_columns_follow_run_to_dict(store: Store) -> None:
    """The runs table has one column per Run.to_dict() key, in the same order, then `axes`
    (a run's other sizes; not in a one-size run's dict)."""
    columns = table_columns(store._conn, "runs", _dialect(store))  # type: ignore[attr-defined]
    assert list(columns) == [*make_run(1, 0).to_dict(), "axes"]


def test_blobs_round_trip(store: Store) -> None:
    """put_blob/get_blob round-trip a dict (inf included), replace on rewrite, None when absent."""
    sweep = store.create_sweep(make_sweep())
    fits = {"A": {"wall_s": {"class": "n^2", "score": float("inf"), "ci": [1.9, 2.1]}}}
    assert store.get_blob(sweep.id, "fits") is None
    store.put_blob(sweep.id, "fits", fits)
    assert store.get_blob(sweep.id, "fits") == fits
    store.put_blob(sweep.id, "fits", {"v": 2})
    assert store.get_blob(sweep.id, "fits") == {"v": 2}
    assert store.get_blob(sweep.id, "doctor") is None


def test_garbage_file_is_refused(tmp_path: Path) -> None:
    """A file that is not SQLite raises StoreError and is left untouched."""
    for name, content in (("short", b"x"), ("long", os.urandom(8192))):
        path = tmp_path / f"{name}.db"
        path.write_bytes(content)
        with pytest.raises(StoreError) as e:
            SqliteStore(path)
        assert str(e.value).startswith(
            f"{path} is not a SQLite database (corrupt, or not a quadscope store): "
        )
        assert path.read_bytes() == content


def test_corrupt_sqlite_body_is_refused(tmp_path: Path) -> None:
    """A SQLite header followed by garbage raises StoreError, not sqlite3.DatabaseError."""
    path = tmp_path / "results.db"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    with pytest.raises(StoreError, match=str(path)):
        SqliteStore(path)


def test_foreign_sqlite_db_is_refused(tmp_path: Path) -> None:
    """A SQLite DB with other tables and a foreign application_id raises StoreError, unchanged."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path} is a SQLite database but not a quadscope store"
    assert path.read_bytes() == before
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.close()
    with pytest.raises(StoreError, match="not a quadscope store"):
        SqliteStore(path)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    """A store whose user_version exceeds SCHEMA_VERSION raises StoreError saying to upgrade."""
    path = tmp_path / "results.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path} was written by a newer quadscope (schema {SCHEMA_VERSION + 1}; "
        f"this one reads up to {SCHEMA_VERSION}): upgrade quadscope"
    )


def test_two_connections_share_one_store(store_location: Path | str) -> None:
    """Runs written through one Store are visible to another open once the writer has committed
    them (any other method of the writer commits the runs it journaled)."""
    with open_store(store_location) as writer, open_store(store_location) as reader:
        sweep = writer.create_sweep(make_sweep())
        writer.add_run(make_run(sweep.id, 0))
        assert writer.next_seq(sweep.id) == 1
        assert reader.runs(sweep.id) == [make_run(sweep.id, 0)]
        reader.put_blob(sweep.id, "doctor", {"ok": True})
        assert writer.get_blob(sweep.id, "doctor") == {"ok": True}


_CHILD = """
import sys
from pathlib import Path
from quadscope.model import Measurement, Run, Sweep
from quadscope.store import as_location, open_store

store = open_store(as_location(sys.argv[1]))
sweep = store.create_sweep(Sweep(id=0, name="victim", mode="sizes", command=("x",)))
print(sweep.id, flush=True)
m = Measurement(wall_s=0.5, user_s=0.25, sys_s=0.0, max_rss_bytes=1024, minor_faults=1,
                major_faults=0, voluntary_ctx_switches=0, involuntary_ctx_switches=0, exit_code=0)
seq = 0
while True:
    store.add_run(Run(sweep.id, seq, "A", seq, 0, False, 0.0, m))
    print(seq, flush=True)
    seq += 1
"""


@pytest.mark.integration
def test_committed_runs_survive_kill_9(store_location: Path | str) -> None:
    """Every run a writer reported committed is readable after the writer is kill -9-ed mid-loop."""
    src = str(Path(quadscope.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(store_location)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    try:
        assert child.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(child.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 30.0
        while len(lines) < 21 and time.monotonic() < deadline:
            if sel.select(timeout=max(0.0, deadline - time.monotonic())):
                line = child.stdout.readline()
                if not line:
                    break
                lines.append(line)
        sel.close()
    finally:
        child.kill()  # SIGKILL: no atexit, no close, no checkpoint
        _, stderr = child.communicate(timeout=30)
    assert child.returncode == -9, stderr
    assert len(lines) == 21, f"child printed {lines!r}; stderr: {stderr}"
    sweep_id = int(lines[0])
    printed = [int(x) for x in lines[1:]]
    assert printed == list(range(20))
    with open_store(store_location) as s:
        stored = [r.seq for r in s.runs(sweep_id)]
        if isinstance(s, SqliteStore):
            assert s._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # The child may have committed more runs after its last line was read.
    assert stored[: len(printed)] == printed
    assert stored == list(range(len(stored)))
