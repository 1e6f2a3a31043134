"""The results database: every sweep, every run, every attached result, and the queries on it.

Contract: `SqliteStore(path)` (a `base.Store`) opens (or creates) one SQLite file and refuses, with a
`StoreError` naming the path, any file that is not a quadscope store or was
written by a newer schema, a store something else damaged (no schema version,
a table gone, a sweep record that does not parse), a pipe, device or socket,
and a file or folder it cannot write.
`SqliteStore.for_reading(path)` opens an existing store read-only (SQLite `mode=ro`,
`immutable=1` in a folder it cannot write: a read-only file system) and never
creates one (`UnknownRunError` when there is none); closing it removes the
-wal and -shm files a read-only connection leaves, where it may. Every SQLite failure in a
method becomes a `StoreError` sentence naming the file and what to do
(`store_error`: read-only, full disk, locked, corrupt, I/O). An older store is upgraded in place, in one
transaction (`migrations.upgrade`), and a raw metric the registry has gained
since the file was written becomes a nullable column; the tables themselves
are declared in `schema`. Each write but `add_run` is its own committed
transaction; `store_sweep` (an import) writes a sweep and all its runs in
one. Nothing here prints, measures or fits. Tables and columns are
documented in docs/schema.md.

Runs in batches: `add_run` appends the run to this store's journal
(`journal.RunJournal`, a file beside the database) with one write(2), and
commits the runs journaled so far in one transaction once `batch_s` has passed
since the last commit (so a slow sweep commits every run at once, a fast one
every `batch_s`), before any other method of this store answers, and at
`close()`. `add_runs(runs, logged=True)` stores runs kept on disk elsewhere
until it returns (a launcher's chunk, `launcher.Chunk`): in one transaction,
committed at once, not journaled (journaled only if that commit fails);
without `logged`, as `add_run` each, with one write(2) for all. A writable
open first commits (and removes) the journal of any writer that died before
committing (`journal.replay_orphans`; a row no column can hold, such as a
10^23 exit code, is dropped rather than failing every later open), and
`for_reading` opens writable to do so when one is there, so every command that
reads a sweep sees all its runs; another process sees a live sweep's runs at
most `batch_s` late.

Durability: the database is in WAL mode with `synchronous=NORMAL`. A commit
appends the transaction to the `-wal` file with write(2) before returning, and
a journal line is written with write(2) before `add_run` returns, so a
finished run survives the writer being killed (`kill -9`, Ctrl-C, a crash);
the next open replays the WAL and the journal. Only an operating-system crash
or power loss can lose the last runs or commits, never corrupt the file (see
https://www.sqlite.org/wal.html and the `synchronous` pragma documentation).

Concurrency: several processes may share one file (a sweep and the doctor, say).
WAL lets readers run beside the one writer; writers wait up to `busy_timeout_s`
for each other, and read-modify-write updates take the write lock first
(`BEGIN IMMEDIATE`) so two writers cannot deadlock on a lock upgrade. The
`owners` table records which process runs a sweep (`create_sweep(owner=)`,
`claim`, `release`); whether that process still lives is the caller's
`alive` function, so this module reads no /proc.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from quadscope.errors import StoreError, UnknownRunError
from quadscope.model import Owner, Run, Sweep
from quadscope.store import base, journal, migrations
from quadscope.store.base import LATEST_REFS
from quadscope.store.schema import OWNERS_SQL, RUN_COLUMNS, STORE_VERSION, create_tables

# "QSCP" in ASCII: marks the file as ours in the SQLite header (offset 68), so
# `file(1)`-style tools and our own open can tell a quadscope store apart.
APPLICATION_ID = 0x51534350

_SQLITE_MAGIC = b"SQLite format 3\x00"

DB_ENV_VAR = "QUADSCOPE_DB"
# Runs are committed at most this often: a commit (50-200 µs, a checkpoint
# several ms) then costs a fast sweep ~0.1% of its time, and a reader in
# another process sees a live sweep at most this late.
BATCH_S = 0.1


def _insert_sweep(c: sqlite3.Connection, sweep: Sweep) -> Sweep:
    """Insert `sweep` inside the caller's transaction; return it with the id SQLite assigned."""
    cur = c.execute(
        "INSERT INTO sweeps (name, kind, status, created_at, data) VALUES (?, ?, ?, ?, '')",
        (sweep.name, sweep.kind, sweep.status, sweep.created_at),
    )
    assert cur.lastrowid is not None
    stored = dataclasses.replace(sweep, id=cur.lastrowid)
    c.execute("UPDATE sweeps SET data = ? WHERE id = ?", (base.dumps(stored.to_dict()), stored.id))
    return stored

__all__ = ["APPLICATION_ID", "DB_ENV_VAR", "LATEST_REFS", "SqliteStore", "default_db_path"]

def default_db_path(cwd: Path | None = None, env: Mapping[str, str] = os.environ) -> Path:
    """`$QUADSCOPE_DB` if set (relative to `cwd`), else `.quadscope/results.db` under `cwd`."""
    base = Path.cwd() if cwd is None else cwd
    configured = env.get(DB_ENV_VAR, "")
    if configured:
        return base / Path(configured).expanduser()  # an absolute path replaces base
    return base / ".quadscope" / "results.db"

P = ParamSpec("P")
R = TypeVar("R")


def _translated(method: Callable[Concatenate[SqliteStore, P], R]) -> Callable[Concatenate[SqliteStore, P], R]:
    """Turn a SQLite failure inside a store method into a `StoreError` naming the file."""

    @functools.wraps(method)
    def wrapper(self: SqliteStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise store_error(self.path, e, self._busy_timeout_s) from e
        except OSError as e:  # the journal's write
            raise store_error(self.path, sqlite3.OperationalError(
                "disk is full" if e.errno == errno.ENOSPC else f"disk I/O error: {e}"),
                self._busy_timeout_s) from e

    return wrapper


def _committed(method: Callable[Concatenate[SqliteStore, P], R]) -> Callable[Concatenate[SqliteStore, P], R]:
    """Commit the journaled runs first, so the method sees (and orders after) every run stored."""

    @functools.wraps(method)
    def wrapper(self: SqliteStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._pending:
            self._commit_pending()
        return method(self, *args, **kwargs)

    return wrapper


def store_error(path: Path, e: sqlite3.Error, busy_timeout_s: float = 30.0) -> StoreError:
    """One sentence for a SQLite failure on `path`: what happened and what to do."""
    text = str(e)
    low = text.lower()
    if "readonly" in low or "read-only" in low:
        return StoreError(f"cannot write to {path}: the database or its folder is read-only "
                          "(or on a read-only file system); make both writable, or point "
                          "--db at another file")
    if "disk is full" in low or "disk full" in low:
        return StoreError(f"cannot write to {path}: the disk is full; every run stored before "
                          "is kept: free some space and try again")
    if "malformed" in low or "not a database" in low or "encrypted" in low:
        return StoreError(f"{path} is corrupt ({text}): recover what it holds with "
                          f"`sqlite3 {path} .recover | sqlite3 recovered.db`, or point --db "
                          "at a new file")
    if "locked" in low or "busy" in low:
        return StoreError(f"{path} is locked: another process has held it for more than "
                          f"{busy_timeout_s:.0f} s; wait for it to finish, or point --db at "
                          "another file")
    if "unable to open" in low:
        return StoreError(f"cannot open {path}: {text}; check that its folder exists and is "
                          "readable, or point --db at another file")
    if "disk i/o" in low:
        return StoreError(f"cannot read or write {path}: disk I/O error; check the disk and "
                          "its free space")
    if isinstance(e, sqlite3.IntegrityError):
        return StoreError(f"{path}: another process wrote the same run ({text}); only one "
                          "process may run a sweep at a time")
    return StoreError(f"the quadscope store {path} failed: {text}")


def _uri(path: Path) -> str:
    """`path` as a SQLite URI naming that file literally. Opened as a plain name, a path that
    starts with "file:" (`--db file:/tmp/x.db`) is read as a URI by a SQLite built with
    SQLITE_USE_URI: `run` stored into /tmp/x.db while `list` looked for ./file:/tmp/x.db."""
    from urllib.parse import quote

    return f"file:{quote(str(path.absolute()))}"


def _readonly_uri(path: Path) -> str:
    # A WAL database read-only needs its -shm file; in a folder we cannot write
    # (a read-only file system) that file cannot be made, so the file is read
    # as immutable: SQLite then takes no locks and reads it as it is.
    uri = f"{_uri(path)}?mode=ro"
    if not os.access(path.parent, os.W_OK):
        uri += "&immutable=1"
    return uri


def _tidy_wal(path: Path) -> None:
    """Remove the -wal and -shm files a read-only connection leaves behind (it may not
    checkpoint): a writable connection closed as the last one checkpoints and removes
    them, as every writer's close does. It waits for no lock and changes no row; another
    process still using the store keeps them, and a store we cannot write is left as is."""
    wal = path.with_name(path.name + "-wal")
    if not wal.exists() or not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        return
    with contextlib.suppress(sqlite3.Error):  # busy or gone: the files stay, as SQLite leaves them
        conn = sqlite3.connect(_uri(path), timeout=0, uri=True)
        try:
            conn.execute("PRAGMA schema_version").fetchone()  # a read, so it sees the WAL
        finally:
            conn.close()


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


class SqliteStore:
    """One quadscope results database in a SQLite file. Use as a context manager, or call `close()`."""

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0, readonly: bool = False,
                 batch_s: float = BATCH_S) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._busy_timeout_s = busy_timeout_s
        self._batch_s = batch_s
        self._journal: journal.RunJournal | None = None  # made at the first add_run
        self._pending: list[tuple[Any, ...]] = []  # journaled, not yet committed
        self._committed_at_s = time.monotonic()
        _refuse_special(self.path)
        if readonly and not self.path.is_file():
            # A directory cannot take a database: "`quadscope run` records one there" was
            # advice that `run` then refused (exit 4, "cannot open").
            raise UnknownRunError(
                f"there is no results database at {self.path}"
                + (" (it is a directory): point --db at a database file in it"
                   if self.path.is_dir() else
                   ": `quadscope run` records one there, or point --db at an existing one")
            )
        try:
            if not readonly:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            _refuse_foreign_bytes(self.path)
            if not readonly:
                _refuse_read_only(self.path)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so every
            # transaction boundary is visible in this file.
            self._conn = sqlite3.connect(_readonly_uri(self.path) if readonly else _uri(self.path),
                                         timeout=busy_timeout_s, isolation_level=None, uri=True)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"cannot open the quadscope store {self.path}: "
                             f"{getattr(e, 'strerror', None) or e}") from e
        try:
            if readonly:
                self._check_readable()
                return
            self._check_and_init()
            # Only now that the file is known to be ours may we change its journal mode.
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"cannot switch {self.path} to WAL mode (got {mode!r}): "
                    "put the store on a local file system or set $QUADSCOPE_DB"
                )
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            journal.replay_orphans(self.path, self._commit_orphan)
        except sqlite3.Error as e:
            self._conn.close()
            raise store_error(self.path, e, busy_timeout_s) from e
        except BaseException:
            self._conn.close()
            raise

    @property
    def location(self) -> str:
        return str(self.path)

    @classmethod
    def for_reading(cls, path: Path) -> SqliteStore:
        """Open `path` to read only: never created, never written, works on a read-only file system.

        A store from an older quadscope is upgraded first (that writes) when it
        can be; a read-only one that would need it is refused with the fix.
        """
        store = cls(path, readonly=True)
        if journal.has_orphans(store.path) and os.access(Path(path).parent, os.W_OK):
            store.close()
            return cls(path)  # which commits the runs a killed writer journaled
        if store._needs_upgrade():
            store.close()
            if not os.access(path, os.W_OK) or not os.access(Path(path).parent, os.W_OK):
                raise StoreError(f"{path} was written by an older quadscope and must be upgraded "
                                 "once, which needs write access: make it (and its folder) "
                                 "writable and run any quadscope command on it")
            return cls(path)
        return store

    def _check_readable(self) -> None:
        try:
            app_id, version, n_tables = self._header()
        except sqlite3.DatabaseError as e:
            raise store_error(self.path, e, self._busy_timeout_s) from e
        if app_id != APPLICATION_ID:
            if app_id == 0 and n_tables == 0:
                raise UnknownRunError(f"{self.path} is an empty database: no sweep is stored "
                                      "there yet; `quadscope run` records one")
            raise StoreError(f"{self.path} is a SQLite database but not a quadscope store")
        if version > STORE_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer quadscope (schema {version}; "
                f"this one reads up to {STORE_VERSION}): upgrade quadscope"
            )
        self._refuse_damaged(version)

    def _refuse_damaged(self, version: int) -> None:
        """StoreError when a file marked as ours has no schema version or lacks a table.

        quadscope never writes such a file (the marks and tables are set in one
        transaction), so something else changed it; upgrading or reading it would fail
        deep inside with no sentence.
        """
        missing = sorted({"sweeps", "runs", "blobs"} - _tables(self._conn))
        if version >= 1 and not missing:
            return
        what = (f"its schema version is {version}" if version < 1
                else f"it lacks the {', '.join(missing)} table{'s' * (len(missing) > 1)}")
        raise StoreError(f"{self.path} is marked as a quadscope store but {what}, so something "
                         "other than quadscope changed it; copy out what it holds with "
                         f"`sqlite3 {self.path} .dump`, or point --db at a new file")

    def _needs_upgrade(self) -> bool:
        _, version, _ = self._header()
        return version < STORE_VERSION or bool(migrations.missing_metric_columns(self._conn))

    def _check_and_init(self) -> None:
        """Refuse files that are not ours or too new; initialise an empty one; upgrade an old one."""
        try:
            app_id, version, n_tables = self._header()
        except sqlite3.DatabaseError as e:
            if "not a database" in str(e):
                raise StoreError(
                    f"{self.path} is not a SQLite database (corrupt, or not a quadscope store): {e}"
                ) from e
            raise StoreError(f"cannot read the quadscope store {self.path}: {e}") from e
        if not (app_id == APPLICATION_ID or (app_id == 0 and n_tables == 0)):
            raise StoreError(f"{self.path} is a SQLite database but not a quadscope store")
        if version > STORE_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer quadscope (schema {version}; "
                f"this one reads up to {STORE_VERSION}): upgrade quadscope"
            )
        if app_id == APPLICATION_ID:
            self._refuse_damaged(version)
        if app_id == 0:
            with self._write():
                # Re-check under the write lock: another process may have
                # initialised the file since we looked.
                app_id, _, n_tables = self._header()
                if app_id == 0 and n_tables == 0:
                    create_tables(self._conn)
                    self._conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                    self._conn.execute(f"PRAGMA user_version={STORE_VERSION}")
                elif app_id != APPLICATION_ID:
                    raise StoreError(f"{self.path} is a SQLite database but not a quadscope store")
        elif version < STORE_VERSION:
            self._upgrade(version)
        if "owners" not in _tables(self._conn):
            with self._write() as c:
                c.execute(OWNERS_SQL)
        if migrations.missing_metric_columns(self._conn):
            with self._write():
                # Under the write lock, another process may have added them already.
                migrations.add_metric_columns(
                    self._conn, migrations.missing_metric_columns(self._conn)
                )

    def _upgrade(self, version: int) -> None:
        """Migrate an older store in place, in one transaction: all of it or none of it."""
        try:
            with self._write():
                _, version, _ = self._header()  # another process may have upgraded it
                if version < STORE_VERSION:
                    migrations.upgrade(self._conn, version)
        except sqlite3.Error as e:
            raise StoreError(
                f"cannot upgrade {self.path} from schema {version} to {STORE_VERSION}: {e}"
            ) from e

    def _header(self) -> tuple[int, int, int]:
        app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        n_tables = self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        return int(app_id), int(version), int(n_tables)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the write lock from the start."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            # A failed COMMIT (a full disk) may have ended the transaction already;
            # the error that matters is the one being raised, not the rollback's.
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        """Commit the journaled runs and close; if that commit fails, the journal stays for the next open."""
        keep = True
        try:
            if self._pending:
                self._commit_pending()
            keep = False
        except sqlite3.Error:
            pass  # the journal stays: the next open commits its runs
        finally:
            if self._journal is not None:
                self._journal.close(keep=keep)
                self._journal = None
            self._conn.close()
            if self.readonly:
                _tidy_wal(self.path)

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- sweeps --------------------------------------------------------------

    @_translated
    @_committed
    def create_sweep(self, sweep: Sweep, owner: Owner | None = None) -> Sweep:
        """Store a new sweep; return it with the id the store assigned (a given id is ignored).

        With `owner`, the sweep is claimed for that process in the same transaction.
        """
        with self._write() as c:
            stored = _insert_sweep(c, sweep)
            if owner is not None:
                self._set_owner(stored.id, owner)
        return stored

    @_translated
    @_committed
    def store_sweep(self, sweep: Sweep, runs: Sequence[Run]) -> Sweep:
        """A finished sweep and all its runs in one transaction (base.Store.store_sweep)."""
        with self._write() as c:
            stored = _insert_sweep(c, sweep)
            c.executemany(base.RUN_INSERT, (base.run_values(dataclasses.replace(r, sweep_id=stored.id))
                                            for r in runs))
        return stored

    @_translated
    @_committed
    def claim(self, sweep_id: int, owner: Owner, alive: Callable[[Owner], bool]) -> Owner | None:
        """Make `owner` the process running the sweep, unless another live one is.

        Returns None when claimed, or the other process's record when it holds
        the sweep and `alive` says it still runs; a dead holder's claim is taken over.
        """
        with self._write() as c:
            row = c.execute(base.OWNER_SELECT, (sweep_id,)).fetchone()
            if row is not None:
                holder = base.row_to_owner(row)
                if (holder.pid, holder.host) != (owner.pid, owner.host) and alive(holder):
                    return holder
            self._set_owner(sweep_id, owner)
        return None

    @_translated
    @_committed
    def release(self, sweep_id: int, owner: Owner) -> None:
        """`owner` no longer runs the sweep (a claim another process took over stays)."""
        with self._write() as c:
            c.execute(base.OWNER_DELETE, (sweep_id, owner.pid, owner.host))

    @_translated
    @_committed
    def owner(self, sweep_id: int) -> Owner | None:
        """The process that claimed the sweep and has not released it, or None."""
        row = self._conn.execute(base.OWNER_SELECT, (sweep_id,)).fetchone()
        return None if row is None else base.row_to_owner(row)

    def _set_owner(self, sweep_id: int, owner: Owner) -> None:
        self._conn.execute(base.OWNER_UPSERT, base.owner_values(sweep_id, owner))

    @_translated
    @_committed
    def update_sweep(self, sweep: Sweep) -> None:
        """Replace the stored settings of `sweep.id` (sizes chosen later, status, ...)."""
        with self._write() as c:
            cur = c.execute(base.SWEEP_UPDATE, base.sweep_update_values(sweep))
            if cur.rowcount == 0:
                raise base.unknown_sweep(sweep.id, self.location)

    @_translated
    @_committed
    def set_status(self, sweep_id: int, status: str) -> None:
        """Set one sweep's status (running | complete | interrupted | failed)."""
        with self._write():
            sweep = dataclasses.replace(self._sweep_by_id(sweep_id, str(sweep_id)), status=status)
            self._conn.execute(base.STATUS_UPDATE,
                               (status, base.dumps(sweep.to_dict()), sweep_id))

    @_translated
    @_committed
    def get_sweep(self, ref: str | int) -> Sweep:
        """Look a sweep up by id ("3"), by name (the most recent), or "last"/"latest"."""
        return base.find_sweep(lambda sql, params: self._conn.execute(sql, params).fetchone(),
                               ref, self.location)

    @_translated
    @_committed
    def list_sweeps(self) -> list[tuple[Sweep, int]]:
        """Every sweep with its stored run count (warm-ups and failures included), newest first."""
        rows = self._conn.execute(base.LIST_SWEEPS).fetchall()
        return [(base.row_to_sweep(row[:6]), int(row[6])) for row in rows]

    def _sweep_by_id(self, sweep_id: int, ref: str) -> Sweep:
        row = self._conn.execute(f"{base.SWEEP_SELECT} WHERE id = ?", (sweep_id,)).fetchone()
        if row is None:
            raise base.unknown_sweep(ref, self.location)
        return base.row_to_sweep(row)

    # -- runs ----------------------------------------------------------------

    @_translated
    def add_run(self, run: Run) -> None:
        """Store one finished run: journaled before returning, committed in a batch (module docstring).

        A duplicate (sweep_id, seq) or an unknown sweep_id (two processes
        running one sweep) raises `StoreError` at the commit of its batch.
        """
        self._journaled([base.run_values(run)])
        if time.monotonic() - self._committed_at_s >= self._batch_s:
            self._commit_pending()

    @_translated
    def add_runs(self, runs: Sequence[Run], *, logged: bool = False) -> None:
        """Store finished runs in order (base.Store.add_runs): `logged` ones committed now, in
        one transaction, without the journal; others journaled with one write(2), as `add_run`.

        A logged chunk whose commit fails is journaled before the error goes up, so the
        next open stores it (its log goes with the launcher's goodbye).
        """
        values = [base.run_values(run) for run in runs]
        if not values:
            return
        if not logged:
            self._journaled(values)
            if time.monotonic() - self._committed_at_s >= self._batch_s:
                self._commit_pending()
            return
        self._pending.extend(values)
        try:
            self._commit_pending()
        except sqlite3.IntegrityError:
            raise  # the others are committed (_commit_pending), that one refused
        except BaseException:
            with contextlib.suppress(OSError):
                self._journal_append(values)
            raise

    def _journaled(self, values: list[tuple[Any, ...]]) -> None:
        """Rows on the journal (one write(2)), pending their commit."""
        self._journal_append(values)
        self._pending.extend(values)

    def _journal_append(self, values: list[tuple[Any, ...]]) -> None:
        if self._journal is None:
            self._journal = journal.RunJournal.create(self.path, RUN_COLUMNS)
        self._journal.append_many(values)

    def _commit_pending(self) -> None:
        pending, refused = self._pending, None
        try:
            with self._write() as c:
                c.executemany(base.RUN_INSERT, pending)
        except sqlite3.IntegrityError:
            # Another process stored one of these runs: keep the others, refuse that one.
            for row in pending:
                try:
                    with self._write() as c:
                        c.execute(base.RUN_INSERT, row)
                except sqlite3.IntegrityError as e:
                    refused = refused or e
        self._pending = []
        self._committed_at_s = time.monotonic()
        if self._journal is not None:
            self._journal.clear()
        if refused is not None:
            raise refused

    def _commit_orphan(self, columns: tuple[str, ...], rows: journal.Rows) -> None:
        # OR IGNORE: its writer may have committed some rows before it died.
        known = [c for c in columns if c in set(RUN_COLUMNS)]
        index = [columns.index(c) for c in known]
        sql = (f"INSERT OR IGNORE INTO runs ({', '.join(known)}) "
               f"VALUES ({', '.join('?' for _ in known)})")
        values = [tuple(row[i] for i in index) for row in rows]
        try:
            with self._write() as c:
                c.executemany(sql, values)
        except (sqlite3.IntegrityError, sqlite3.InterfaceError, OverflowError):
            # A row no column can hold (an integer past 64 bits, a NULL time) must not
            # keep every later open failing: store the others, drop that one.
            for row in values:
                with contextlib.suppress(sqlite3.IntegrityError, sqlite3.InterfaceError,
                                         OverflowError), self._write() as c:
                    c.execute(sql, row)

    @_translated
    @_committed
    def runs(self, sweep_id: int) -> list[Run]:
        """All runs of one sweep, in execution order (by seq)."""
        rows = self._conn.execute(base.RUNS_SELECT, (sweep_id,)).fetchall()
        return [base.row_to_run(row) for row in rows]

    @_translated
    @_committed
    def next_seq(self, sweep_id: int) -> int:
        """The seq the next run of this sweep gets: one past the highest stored, or 0."""
        return int(self._conn.execute(base.NEXT_SEQ, (sweep_id,)).fetchone()[0])

    # -- blobs ---------------------------------------------------------------

    @_translated
    @_committed
    def put_blob(self, sweep_id: int, key: str, obj: dict[str, Any]) -> None:
        """Attach a JSON object to a sweep under `key` (fits, doctor, culprits), replacing any."""
        with self._write() as c:
            c.execute(base.BLOB_UPSERT, (sweep_id, key, base.dumps(obj)))

    @_translated
    @_committed
    def get_blob(self, sweep_id: int, key: str) -> dict[str, Any] | None:
        """The object stored under `key` for this sweep, or None."""
        row = self._conn.execute(base.BLOB_SELECT, (sweep_id, key)).fetchone()
        return None if row is None else base.blob_from_text(row[0])


def _refuse_special(path: Path) -> None:
    # A pipe would block the first read forever (until something writes to it), a
    # device or socket is no database: only a regular file (or none yet) is opened.
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # absent (or unreadable): the open that follows says which
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise StoreError(f"{path} is not a regular file (a pipe, a device or a socket), so it "
                         "cannot hold a quadscope store; point --db at a file")


def _refuse_foreign_bytes(path: Path) -> None:
    # SQLite treats a file shorter than one page as an empty database and would
    # overwrite it, so a short non-SQLite file must be refused before connecting.
    try:
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    if head and head != _SQLITE_MAGIC:
        raise StoreError(
            f"{path} is not a SQLite database (corrupt, or not a quadscope store): "
            "it does not start with the SQLite header"
        )


def _refuse_read_only(path: Path) -> None:
    # Writing needs the file and its folder (WAL keeps -wal and -shm files beside
    # it); finding out before a sweep starts beats failing at its first run.
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(path.parent, os.W_OK):
        raise StoreError(f"cannot write to {path}: the database or its folder is read-only "
                         "(or on a read-only file system); make both writable, or point --db "
                         "at another file")
