"""The results database on a PostgreSQL server, shared by many machines: `PostgresStore`.

Contract: `PostgresStore(url)` (a `base.Store`) connects through psycopg 3 to
a `postgresql://` URL and answers every method as `SqliteStore` does, over
the same tables (schema.py, with `schema.POSTGRES` types) in the URL's schema
(`current_schema()`, normally `public`). An empty schema is initialised;
one holding tables but no `quadscope_meta`, a `quadscope_meta` that names
another application, or a newer schema version is refused with a
`StoreError`. `readonly=True` never creates anything: no store there is an
`UnknownRunError`. Every psycopg failure becomes one `StoreError` sentence
naming the URL with its password masked (`pg_error`: server not answering,
login refused, no such database, permission denied, connection lost).
Tables and indexes are documented in docs/postgres.md.

`quadscope_meta` plays the part SQLite's header plays for a file: one row,
(application, schema_version), written with the tables in one transaction.

Durability: each write is its own transaction, committed before the method
returns; with the server's default `synchronous_commit = on` the commit is
flushed to the server's WAL, so a run survives a crash of the writer, of the
server and of the server's machine.

Concurrency: any number of processes on any number of machines may write at
once. Sweep ids come from an identity column (a sequence), so two writers
never get the same id. Creating or upgrading the tables holds a transaction
advisory lock (`pg_advisory_xact_lock`), and re-checks under it, so two
first writers cannot both create them. `claim` and `set_status` lock the
sweep's row (`SELECT ... FOR UPDATE`) for their read-modify-write, so two
claimants of one sweep are served one after the other and exactly one wins
while the holder lives. `next_seq` is exact for the process holding the
sweep's claim; a second writer using the same seq is refused by the
`UNIQUE (sweep_id, seq)` constraint, never stored twice.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import psycopg
from psycopg import errors as pg_errors

from quadscope.errors import StoreError, UnknownRunError
from quadscope.model import Owner, Run, Sweep
from quadscope.store import base, migrations
from quadscope.store.base import mask_url
from quadscope.store.schema import POSTGRES, STORE_VERSION, create_tables

APPLICATION = "quadscope"
META_TABLE = "quadscope_meta"
_META_SQL = f"CREATE TABLE {META_TABLE} (application TEXT NOT NULL, schema_version INTEGER NOT NULL)"
# "QSCP", as SQLite's application_id: the key of the advisory lock held while
# the tables are created or altered.
_INIT_LOCK_KEY = 0x51534350
CONNECT_TIMEOUT_S = 10

P = ParamSpec("P")
R = TypeVar("R")


def _q(sql: str) -> str:
    return POSTGRES.query(sql)


def _translated(
    method: Callable[Concatenate[PostgresStore, P], R],
) -> Callable[Concatenate[PostgresStore, P], R]:
    """Turn a psycopg failure inside a store method into a `StoreError` naming the URL."""

    @functools.wraps(method)
    def wrapper(self: PostgresStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except psycopg.Error as e:
            raise pg_error(self.location, e) from e

    return wrapper


def _first_line(e: BaseException) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[0] if lines else type(e).__name__
    return text.removeprefix("connection failed: ")


def pg_error(where: str, e: psycopg.Error, *, connecting: bool = False) -> StoreError:
    """One sentence for a PostgreSQL failure on the store at `where` (a masked URL)."""
    text = _first_line(e)
    low = str(e).lower()
    if isinstance(e, pg_errors.InsufficientPrivilege) or "permission denied" in low:
        return StoreError(f"the PostgreSQL store {where} refused: {text}; ask the database's "
                          "owner to grant this user CONNECT on it and CREATE, SELECT, INSERT, "
                          "UPDATE, DELETE on its schema, or point --db at another database")
    if "password authentication failed" in low or "no password supplied" in low or (
            "authentication failed" in low):
        return StoreError(f"cannot log in to {where}: {text}; check the user and the password "
                          "(in the URL, ~/.pgpass or $PGPASSWORD)")
    if "does not exist" in low and "database" in low and connecting:
        return StoreError(f"{where} names a database that does not exist ({text}); create it "
                          "(`createdb NAME`) or point --db at an existing one")
    if connecting or (isinstance(e, psycopg.OperationalError) and e.sqlstate is None):
        return StoreError(f"cannot reach the PostgreSQL server of {where}: {text}; check that "
                          "it is running and that the host, port or socket in the URL are right"
                          + ("" if connecting else "; every run stored before is kept"))
    if isinstance(e, psycopg.IntegrityError):
        return StoreError(f"{where}: another process wrote the same run ({text}); only one "
                          "process may run a sweep at a time")
    return StoreError(f"the quadscope store {where} failed: {text}")


class PostgresStore:
    """One quadscope results database on a PostgreSQL server. Use as a context manager."""

    def __init__(self, url: str, *, readonly: bool = False,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        self.url = url
        self.readonly = readonly
        self._where = mask_url(url)
        try:
            # autocommit: a method's transaction is the explicit `_write` block,
            # and a read is one statement that holds no transaction open.
            self._conn = psycopg.connect(url, autocommit=True, application_name="quadscope",
                                         connect_timeout=max(1, round(connect_timeout_s)))
        except psycopg.Error as e:
            raise pg_error(self._where, e, connecting=True) from e
        try:
            self._check_and_init()
        except psycopg.Error as e:
            self._conn.close()
            raise pg_error(self._where, e) from e
        except BaseException:
            self._conn.close()
            raise

    @property
    def location(self) -> str:
        return self._where

    def _tables(self) -> set[str]:
        rows = self._conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()").fetchall()
        return {str(r[0]) for r in rows}

    def _meta(self) -> tuple[str, int] | None:
        """(application, schema version) from quadscope_meta, None when there is no such table."""
        if META_TABLE not in self._tables():
            return None
        row = self._conn.execute(f"SELECT application, schema_version FROM {META_TABLE}").fetchone()
        return ("", 0) if row is None else (str(row[0]), int(row[1]))

    def _refuse(self, meta: tuple[str, int] | None, tables: set[str]) -> None:
        """Refuse what is not a quadscope store this version can read."""
        if meta is None and tables:
            shown = ", ".join(sorted(tables)[:4]) + (", ..." if len(tables) > 4 else "")
            raise StoreError(
                f"{self._where} is a PostgreSQL database but not a quadscope store: it holds "
                f"tables ({shown}) and no {META_TABLE}; point --db at an empty database, or "
                "give quadscope a schema of its own (`?options=-csearch_path%3Dquadscope`)")
        if meta is not None and meta[0] != APPLICATION:
            raise StoreError(f"{self._where} is a PostgreSQL database but not a quadscope store "
                             f"({META_TABLE} names {meta[0]!r})")
        if meta is not None and meta[1] > STORE_VERSION:
            raise StoreError(
                f"{self._where} was written by a newer quadscope (schema {meta[1]}; "
                f"this one reads up to {STORE_VERSION}): upgrade quadscope")

    def _check_and_init(self) -> None:
        # Tables before meta: both are committed in one transaction, so once a reader sees
        # the tables the next statement sees the meta row too. Read the other way round, a
        # store created between the two reads looked like tables without a marker (found by
        # bench/store_writes.py's four writers opening one empty database at once).
        tables = self._tables()
        meta = self._meta()
        self._refuse(meta, tables)
        if meta is None and self.readonly:
            raise UnknownRunError(f"there is no quadscope store in {self._where} yet: "
                                  "`quadscope run --db URL` records one there")
        if meta is not None and meta[1] == STORE_VERSION and not migrations.missing_metric_columns(
                self._conn, POSTGRES):
            return
        with self._write() as c:
            # Under the lock, another process may have done it all since we looked.
            c.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK_KEY,))
            tables = self._tables()
            meta = self._meta()
            self._refuse(meta, tables)
            if meta is None:
                create_tables(c, POSTGRES)
                c.execute(POSTGRES.ddl(_META_SQL))
                c.execute(f"INSERT INTO {META_TABLE} VALUES (%s, %s)", (APPLICATION, STORE_VERSION))
            elif meta[1] < migrations.FIRST_POSTGRES:
                raise StoreError(f"{self._where} holds schema {meta[1]}, which no PostgreSQL "
                                 f"store was ever written with; this quadscope writes "
                                 f"{STORE_VERSION}: point --db at a new database")
            elif meta[1] < STORE_VERSION:
                migrations.upgrade_shared(c, meta[1], POSTGRES)
                c.execute(f"UPDATE {META_TABLE} SET schema_version = %s", (STORE_VERSION,))
            missing = migrations.missing_metric_columns(c, POSTGRES)
            if missing:
                migrations.add_metric_columns(c, missing, POSTGRES)

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        with self._conn.transaction():
            yield self._conn

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        return self._conn.execute(_q(sql), params).fetchone()

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- sweeps --------------------------------------------------------------

    @_translated
    def create_sweep(self, sweep: Sweep, owner: Owner | None = None) -> Sweep:
        """Store a new sweep with an id from the sequence; with `owner`, claimed in the same commit."""
        with self._write() as c:
            stored = _insert_sweep(c, sweep)
            if owner is not None:
                c.execute(_q(base.OWNER_UPSERT), base.owner_values(stored.id, owner))
        return stored

    @_translated
    def claim(self, sweep_id: int, owner: Owner, alive: Callable[[Owner], bool]) -> Owner | None:
        """Make `owner` the process running the sweep, unless another live one is (see SqliteStore)."""
        with self._write() as c:
            # The sweep's row lock serialises claimants even when no owner row exists yet.
            c.execute("SELECT id FROM sweeps WHERE id = %s FOR UPDATE", (sweep_id,))
            row = c.execute(_q(base.OWNER_SELECT), (sweep_id,)).fetchone()
            if row is not None:
                holder = base.row_to_owner(row)
                if (holder.pid, holder.host) != (owner.pid, owner.host) and alive(holder):
                    return holder
            c.execute(_q(base.OWNER_UPSERT), base.owner_values(sweep_id, owner))
        return None

    @_translated
    def release(self, sweep_id: int, owner: Owner) -> None:
        """`owner` no longer runs the sweep (a claim another process took over stays)."""
        with self._write() as c:
            c.execute(_q(base.OWNER_DELETE), (sweep_id, owner.pid, owner.host))

    @_translated
    def update_sweep(self, sweep: Sweep) -> None:
        """Replace the stored settings of `sweep.id` (sizes chosen later, status, ...)."""
        with self._write() as c:
            cur = c.execute(_q(base.SWEEP_UPDATE), base.sweep_update_values(sweep))
            if cur.rowcount == 0:
                raise base.unknown_sweep(sweep.id, self.location)

    @_translated
    def set_status(self, sweep_id: int, status: str) -> None:
        """Set one sweep's status (running | complete | interrupted | failed)."""
        with self._write() as c:
            row = c.execute(f"{_q(base.SWEEP_SELECT)} WHERE id = %s FOR UPDATE",
                            (sweep_id,)).fetchone()
            if row is None:
                raise base.unknown_sweep(sweep_id, self.location)
            sweep = dataclasses.replace(base.row_to_sweep(row), status=status)
            c.execute(_q(base.STATUS_UPDATE), (status, base.dumps(sweep.to_dict()), sweep_id))

    @_translated
    def owner(self, sweep_id: int) -> Owner | None:
        """The process that claimed the sweep and has not released it, or None."""
        row = self._one(base.OWNER_SELECT, (sweep_id,))
        return None if row is None else base.row_to_owner(row)

    @_translated
    def get_sweep(self, ref: str | int) -> Sweep:
        """Look a sweep up by id ("3"), by name (the most recent), or "last"/"latest"."""
        return base.find_sweep(self._one, ref, self.location)

    @_translated
    def list_sweeps(self) -> list[tuple[Sweep, int]]:
        """Every sweep with its stored run count (warm-ups and failures included), newest first."""
        rows = self._conn.execute(base.LIST_SWEEPS).fetchall()
        return [(base.row_to_sweep(row[:6]), int(row[6])) for row in rows]

    # -- runs ----------------------------------------------------------------

    @_translated
    def store_sweep(self, sweep: Sweep, runs: Sequence[Run]) -> Sweep:
        """A finished sweep and all its runs in one transaction (base.Store.store_sweep)."""
        with self._write() as c:
            stored = _insert_sweep(c, sweep)
            with c.cursor() as cur:
                cur.executemany(_q(base.RUN_INSERT),
                                [base.run_values(dataclasses.replace(r, sweep_id=stored.id))
                                 for r in runs])
        return stored

    @_translated
    def add_run(self, run: Run) -> None:
        """Store one finished run and commit at once; a duplicate (sweep_id, seq) is a StoreError."""
        with self._write() as c:
            c.execute(_q(base.RUN_INSERT), base.run_values(run))

    @_translated
    def add_runs(self, runs: Sequence[Run], *, logged: bool = False) -> None:
        """Store finished runs in one transaction, committed at once (`logged` changes nothing)."""
        if not runs:
            return
        with self._write() as c, c.cursor() as cur:
            cur.executemany(_q(base.RUN_INSERT), [base.run_values(run) for run in runs])

    @_translated
    def runs(self, sweep_id: int) -> list[Run]:
        """All runs of one sweep, in execution order (by seq)."""
        rows = self._conn.execute(_q(base.RUNS_SELECT), (sweep_id,)).fetchall()
        return [base.row_to_run(row) for row in rows]

    @_translated
    def next_seq(self, sweep_id: int) -> int:
        """The seq the next run of this sweep gets: one past the highest stored, or 0."""
        row = self._one(base.NEXT_SEQ, (sweep_id,))
        assert row is not None
        return int(row[0])

    # -- blobs ---------------------------------------------------------------

    @_translated
    def put_blob(self, sweep_id: int, key: str, obj: dict[str, Any]) -> None:
        """Attach a JSON object to a sweep under `key` (fits, doctor, culprits), replacing any."""
        with self._write() as c:
            c.execute(_q(base.BLOB_UPSERT), (sweep_id, key, base.dumps(obj)))

    @_translated
    def get_blob(self, sweep_id: int, key: str) -> dict[str, Any] | None:
        """The object stored under `key` for this sweep, or None."""
        row = self._one(base.BLOB_SELECT, (sweep_id, key))
        return None if row is None else base.blob_from_text(row[0])


def _insert_sweep(c: psycopg.Connection[Any], sweep: Sweep) -> Sweep:
    """Insert `sweep` inside the caller's transaction; return it with the sequence's id."""
    row = c.execute(
        "INSERT INTO sweeps (name, kind, status, created_at, data) "
        "VALUES (%s, %s, %s, %s, '') RETURNING id",
        (sweep.name, sweep.kind, sweep.status, sweep.created_at)).fetchone()
    assert row is not None
    stored = dataclasses.replace(sweep, id=int(row[0]))
    c.execute("UPDATE sweeps SET data = %s WHERE id = %s", (base.dumps(stored.to_dict()), stored.id))
    return stored
