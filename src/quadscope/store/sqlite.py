"""The results database: every sweep, every run, every attached result, and the queries on it.

Contract: `Store(path)` opens (or creates) one SQLite file and refuses, with a
`StoreError` naming the path, any file that is not a quadscope store or was
written by a newer schema. An older store is upgraded in place, in one
transaction (`migrations.upgrade`), and a raw metric the registry has gained
since the file was written becomes a nullable column; the tables themselves
are declared in `schema`. Each write is its own committed transaction, so a
run passed to `add_run` is on disk before the call returns. Nothing here
prints, measures or fits. Tables and columns are documented in docs/schema.md.

Durability: the database is in WAL mode with `synchronous=NORMAL`. A commit
appends the transaction to the `-wal` file with write(2) before returning, so
once `add_run` returns the run survives the writer being killed (`kill -9`,
Ctrl-C, a crash); the next open replays the WAL. Only an operating-system crash
or power loss can lose the last few commits, never corrupt the file (see
https://www.sqlite.org/wal.html and the `synchronous` pragma documentation).

Concurrency: several processes may share one file (a sweep and the doctor, say).
WAL lets readers run beside the one writer; writers wait up to `busy_timeout_s`
for each other, and read-modify-write updates take the write lock first
(`BEGIN IMMEDIATE`) so two writers cannot deadlock on a lock upgrade.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from quadscope.errors import StoreError, UnknownRunError
from quadscope.model import SCHEMA_VERSION, Run, Sweep
from quadscope.store import migrations
from quadscope.store.schema import BOOL_COLUMNS, RUN_COLUMNS, create_tables

# "QSCP" in ASCII: marks the file as ours in the SQLite header (offset 68), so
# `file(1)`-style tools and our own open can tell a quadscope store apart.
APPLICATION_ID = 0x51534350

_SQLITE_MAGIC = b"SQLite format 3\x00"

DB_ENV_VAR = "QUADSCOPE_DB"
LATEST_REFS = ("last", "latest")

def default_db_path(cwd: Path | None = None, env: Mapping[str, str] = os.environ) -> Path:
    """`$QUADSCOPE_DB` if set (relative to `cwd`), else `.quadscope/results.db` under `cwd`."""
    base = Path.cwd() if cwd is None else cwd
    configured = env.get(DB_ENV_VAR, "")
    if configured:
        return base / Path(configured).expanduser()  # an absolute path replaces base
    return base / ".quadscope" / "results.db"


class Store:
    """One quadscope results database. Use as a context manager, or call `close()`."""

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _refuse_foreign_bytes(self.path)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so every
            # transaction boundary is visible in this file.
            self._conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"cannot open the quadscope store {self.path}: {e}") from e
        try:
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
        except BaseException:
            self._conn.close()
            raise

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
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer quadscope (schema {version}; "
                f"this one reads up to {SCHEMA_VERSION}): upgrade quadscope"
            )
        if app_id == 0:
            with self._write():
                # Re-check under the write lock: another process may have
                # initialised the file since we looked.
                app_id, _, n_tables = self._header()
                if app_id == 0 and n_tables == 0:
                    create_tables(self._conn)
                    self._conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                    self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                elif app_id != APPLICATION_ID:
                    raise StoreError(f"{self.path} is a SQLite database but not a quadscope store")
        elif version < SCHEMA_VERSION:
            self._upgrade(version)
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
                if version < SCHEMA_VERSION:
                    migrations.upgrade(self._conn, version)
        except sqlite3.Error as e:
            raise StoreError(
                f"cannot upgrade {self.path} from schema {version} to {SCHEMA_VERSION}: {e}"
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
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- sweeps --------------------------------------------------------------

    def create_sweep(self, sweep: Sweep) -> Sweep:
        """Store a new sweep; return it with the id the store assigned (a given id is ignored)."""
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO sweeps (name, kind, status, created_at, data) VALUES (?, ?, ?, ?, '')",
                (sweep.name, sweep.kind, sweep.status, sweep.created_at),
            )
            assert cur.lastrowid is not None
            stored = dataclasses.replace(sweep, id=cur.lastrowid)
            c.execute(
                "UPDATE sweeps SET data = ? WHERE id = ?", (_dumps(stored.to_dict()), stored.id)
            )
        return stored

    def update_sweep(self, sweep: Sweep) -> None:
        """Replace the stored settings of `sweep.id` (sizes chosen later, status, ...)."""
        with self._write() as c:
            cur = c.execute(
                "UPDATE sweeps SET name = ?, kind = ?, status = ?, created_at = ?, data = ? "
                "WHERE id = ?",
                (
                    sweep.name,
                    sweep.kind,
                    sweep.status,
                    sweep.created_at,
                    _dumps(sweep.to_dict()),
                    sweep.id,
                ),
            )
            if cur.rowcount == 0:
                raise self._unknown(sweep.id)

    def set_status(self, sweep_id: int, status: str) -> None:
        """Set one sweep's status (running | complete | interrupted | failed)."""
        with self._write():
            sweep = dataclasses.replace(self._sweep_by_id(sweep_id, str(sweep_id)), status=status)
            self._conn.execute(
                "UPDATE sweeps SET status = ?, data = ? WHERE id = ?",
                (status, _dumps(sweep.to_dict()), sweep_id),
            )

    def get_sweep(self, ref: str | int) -> Sweep:
        """Look a sweep up by id ("3"), by name (the most recent), or "last"/"latest"."""
        text = str(ref).strip()
        row: tuple[Any, ...] | None
        if text.lower() in LATEST_REFS:
            row = self._conn.execute(f"{_SWEEP_SELECT} ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                raise UnknownRunError(
                    f"there is no stored sweep in {self.path} yet, so {text!r} names nothing; "
                    "`quadscope run` records one"
                )
            return _row_to_sweep(row)
        row = None
        if text.isdigit():
            row = self._conn.execute(f"{_SWEEP_SELECT} WHERE id = ?", (int(text),)).fetchone()
        if row is None:  # a name, or digits that name a sweep rather than number one
            row = self._conn.execute(
                f"{_SWEEP_SELECT} WHERE name = ? ORDER BY id DESC LIMIT 1", (text,)
            ).fetchone()
        if row is None:
            raise self._unknown(text)
        return _row_to_sweep(row)

    def list_sweeps(self) -> list[tuple[Sweep, int]]:
        """Every sweep with its stored run count (warm-ups and failures included), newest first."""
        rows = self._conn.execute(
            "SELECT s.id, s.name, s.kind, s.status, s.created_at, s.data, "
            "(SELECT count(*) FROM runs r WHERE r.sweep_id = s.id) "
            "FROM sweeps s ORDER BY s.id DESC"
        ).fetchall()
        return [(_row_to_sweep(row[:6]), int(row[6])) for row in rows]

    def _sweep_by_id(self, sweep_id: int, ref: str) -> Sweep:
        row = self._conn.execute(f"{_SWEEP_SELECT} WHERE id = ?", (sweep_id,)).fetchone()
        if row is None:
            raise self._unknown(ref)
        return _row_to_sweep(row)

    def _unknown(self, ref: object) -> UnknownRunError:
        return UnknownRunError(
            f"no stored sweep with id or name {str(ref)!r} in {self.path}; "
            "`quadscope list` shows them"
        )

    # -- runs ----------------------------------------------------------------

    def add_run(self, run: Run) -> None:
        """Store one finished run and commit at once, so a later crash cannot lose it.

        A duplicate (sweep_id, seq) or an unknown sweep_id is a programming error
        and raises `sqlite3.IntegrityError`.
        """
        d = run.to_dict()
        values = tuple(int(d[k]) if k in BOOL_COLUMNS else d[k] for k in RUN_COLUMNS)
        with self._write() as c:
            c.execute(_RUN_INSERT, values)

    def runs(self, sweep_id: int) -> list[Run]:
        """All runs of one sweep, in execution order (by seq)."""
        rows = self._conn.execute(
            f"SELECT {_RUN_COLUMN_LIST} FROM runs WHERE sweep_id = ? ORDER BY seq", (sweep_id,)
        ).fetchall()
        return [_row_to_run(row) for row in rows]

    def next_seq(self, sweep_id: int) -> int:
        """The seq the next run of this sweep gets: one past the highest stored, or 0."""
        row = self._conn.execute(
            "SELECT coalesce(max(seq) + 1, 0) FROM runs WHERE sweep_id = ?", (sweep_id,)
        ).fetchone()
        return int(row[0])

    # -- blobs ---------------------------------------------------------------

    def put_blob(self, sweep_id: int, key: str, obj: dict[str, Any]) -> None:
        """Attach a JSON object to a sweep under `key` (fits, doctor, culprits), replacing any."""
        with self._write() as c:
            c.execute(
                'INSERT INTO blobs (sweep_id, "key", json) VALUES (?, ?, ?) '
                'ON CONFLICT (sweep_id, "key") DO UPDATE SET json = excluded.json',
                (sweep_id, key, _dumps(obj)),
            )

    def get_blob(self, sweep_id: int, key: str) -> dict[str, Any] | None:
        """The object stored under `key` for this sweep, or None."""
        row = self._conn.execute(
            'SELECT json FROM blobs WHERE sweep_id = ? AND "key" = ?', (sweep_id, key)
        ).fetchone()
        if row is None:
            return None
        obj: dict[str, Any] = json.loads(row[0])
        return obj


_SWEEP_SELECT = "SELECT id, name, kind, status, created_at, data FROM sweeps"
_RUN_COLUMN_LIST = ", ".join(RUN_COLUMNS)
_RUN_INSERT = (
    f"INSERT INTO runs ({_RUN_COLUMN_LIST}) VALUES ({', '.join('?' for _ in RUN_COLUMNS)})"
)


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


def _dumps(obj: Mapping[str, Any]) -> str:
    # allow_nan: candidate scores may be inf; Python's json reads "Infinity" back.
    return json.dumps(obj, sort_keys=True, allow_nan=True)


def _row_to_sweep(row: tuple[Any, ...]) -> Sweep:
    sweep_id, name, kind, status, created_at, data = row
    d = json.loads(data)
    # The columns are authoritative for the fields SQL users can query.
    d.update(id=int(sweep_id), name=name, kind=kind, status=status, created_at=created_at)
    return Sweep.from_dict(d)


def _row_to_run(row: tuple[Any, ...]) -> Run:
    d = dict(zip(RUN_COLUMNS, row, strict=True))
    for k in BOOL_COLUMNS:
        d[k] = bool(d[k])
    return Run.from_dict(d)
