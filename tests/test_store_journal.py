"""The SQLite store's run journal: runs journaled but not committed survive kill -9 and are replayed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import quadscope
from quadscope.errors import StoreError
from quadscope.store import SqliteStore
from quadscope.store.journal import RunJournal, replay_orphans
from test_store import make_run, make_sweep

_CHILD = """
import os, signal, sys
from pathlib import Path

import pytest
from quadscope.store import SqliteStore
from test_store import make_run, make_sweep

store = SqliteStore(Path(sys.argv[1]), batch_s=3600.0)  # nothing committed by time
sweep = store.create_sweep(make_sweep())
for seq in range(5):
    store.add_run(make_run(sweep.id, seq))
os.kill(os.getpid(), signal.SIGKILL)
"""


def _journals(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if "-runs-" in p.name)


@pytest.mark.slow
def test_runs_journaled_by_a_killed_writer_are_replayed_by_the_next_reader(tmp_path: Path) -> None:
    """Five runs added and never committed before kill -9 are all read back by `for_reading`."""
    db = tmp_path / "results.db"
    tests = str(Path(__file__).resolve().parent)
    src = str(Path(quadscope.__file__).resolve().parents[1])
    child = subprocess.run([sys.executable, "-c", _CHILD, str(db)], capture_output=True,
                           text=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join([src, tests])})
    assert child.returncode == -9, child.stderr
    assert len(_journals(db)) == 1
    with SqliteStore.for_reading(db) as store:
        assert [r.seq for r in store.runs(1)] == [0, 1, 2, 3, 4]
    assert _journals(db) == []


def test_a_live_writers_journal_is_left_to_it(tmp_path: Path) -> None:
    """Another open neither replays nor removes a live writer's journal; the writer's close commits it."""
    db = tmp_path / "results.db"
    writer = SqliteStore(db, batch_s=3600.0)
    sweep = writer.create_sweep(make_sweep())
    writer.add_run(make_run(sweep.id, 0))
    writer.add_run(make_run(sweep.id, 1))
    with SqliteStore(db) as reader:
        assert reader.runs(sweep.id) == []
        assert len(_journals(db)) == 1
        writer.close()
        assert [r.seq for r in reader.runs(sweep.id)] == [0, 1]
    assert _journals(db) == []


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    """A journal whose last line was cut short (a power loss) replays the whole lines before it."""
    db = tmp_path / "results.db"
    journal = RunJournal.create(db, ("a", "b"))
    journal.append((1, 2.5))
    journal.append((3, None))
    with journal.path.open("ab") as f:
        f.write(b"[5,")
    journal.close(keep=True)
    seen: list[tuple[tuple[str, ...], list[tuple[object, ...]]]] = []
    assert replay_orphans(db, lambda cols, rows: seen.append((cols, rows))) == 2
    assert seen == [(("a", "b"), [(1, 2.5), (3, None)])]
    assert _journals(db) == []


def test_a_logged_chunk_is_committed_at_once_and_needs_no_journal(tmp_path: Path) -> None:
    """add_runs(logged=True): one transaction, seen by another connection when it returns,
    with nothing journaled; without `logged` the runs wait in the journal for their batch."""
    db = tmp_path / "results.db"
    with SqliteStore(db, batch_s=3600.0) as writer:
        sweep = writer.create_sweep(make_sweep())
        writer.add_runs([make_run(sweep.id, seq) for seq in range(3)], logged=True)
        assert _journals(db) == []
        with SqliteStore(db) as reader:
            assert [r.seq for r in reader.runs(sweep.id)] == [0, 1, 2]
        writer.add_runs([make_run(sweep.id, seq) for seq in range(3, 5)])
        assert len(_journals(db)) == 1
        with SqliteStore(db) as reader:
            assert [r.seq for r in reader.runs(sweep.id)] == [0, 1, 2]
    with SqliteStore(db) as reader:
        assert [r.seq for r in reader.runs(sweep.id)] == [0, 1, 2, 3, 4]


def test_a_logged_chunk_whose_commit_fails_is_journaled_for_the_next_open(
        tmp_path: Path) -> None:
    """The database locked by another writer: the error goes up, and the chunk is in the
    journal (the launcher's log goes at its goodbye), for the close or, after a kill, the
    next open to commit."""
    db = tmp_path / "results.db"
    writer = SqliteStore(db, busy_timeout_s=0.05)
    sweep = writer.create_sweep(make_sweep())
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError):
        writer.add_runs([make_run(sweep.id, seq) for seq in range(4)], logged=True)
    [journal] = _journals(db)
    assert len((db.parent / journal).read_bytes().splitlines()) == 1 + 4  # columns, 4 runs
    blocker.execute("ROLLBACK")
    blocker.close()
    writer.close()  # commits them now that it can
    assert _journals(db) == []
    with SqliteStore(db) as store:
        assert [r.seq for r in store.runs(sweep.id)] == [0, 1, 2, 3]
