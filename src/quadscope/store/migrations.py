"""Bringing an older store up to STORE_VERSION: the numbered migrations, and new metric columns.

Contract: `upgrade(conn, version)` runs every migration from `version` up to
`STORE_VERSION` in order, inside the caller's transaction (SQLite's DDL is
transactional, so a failed upgrade leaves the file as it was), and sets
`user_version`. `MIGRATIONS[v]` takes a store at schema v - 1 to schema v and
keeps every row. `missing_metric_columns(conn)` names the registry's raw
metrics the runs table lacks and `add_metric_columns(conn, names)` adds them as
nullable columns, so a metric added to the registry later needs no migration
of its own: old runs read it as None. Both take the store's `Dialect`
(schema.py), so a PostgreSQL store gains new metric columns the same way; a
PostgreSQL store starts at schema 2 (there never was a schema-1 one), so the
SQLite-only rebuild below never runs there, and a migration 3 on must be
written in the shared words of `schema` and run on both.

History (model.py's schema comment says what each version means):
  2 — the runs table is rebuilt from the registry, metric columns nullable
      except wall_s. SQLite cannot drop NOT NULL in place, so the table is
      copied into a new one (https://www.sqlite.org/lang_altertable.html,
      "Making Other Kinds Of Table Schema Changes").
  3 — the runs table gains `axes` (TEXT, nullable): a run's other sizes in a
      sweep over several (issue 28). SQLite rebuilds the table as for 2, so an
      upgraded file's SQL is a fresh one's; PostgreSQL adds the column
      (`SHARED`, `upgrade_shared`). Old runs read it as NULL: one size.
      The store's version is `schema.STORE_VERSION`, not the exported
      format's (`model.SCHEMA_VERSION`, still 2).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from quadscope import metrics
from quadscope.store.schema import (
    SQLITE,
    STORE_VERSION,
    Dialect,
    metric_column_sql,
    runs_table_sql,
    table_columns,
)


def _rebuild_runs(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: the runs table re-created from the registry, every row copied."""
    # The old table moves aside rather than the new one being renamed into place,
    # so the new table's SQL is exactly a fresh store's. Safe here: no view,
    # trigger or foreign key refers to runs.
    conn.execute("ALTER TABLE runs RENAME TO runs_schema1")
    conn.execute(runs_table_sql())
    old = set(table_columns(conn, "runs_schema1"))
    kept = ", ".join(c for c in table_columns(conn, "runs") if c in old)
    conn.execute(f"INSERT INTO runs ({kept}) SELECT {kept} FROM runs_schema1")
    conn.execute("DROP TABLE runs_schema1")


def _add_axes(conn: Any, dialect: Dialect = SQLITE) -> None:
    """Schema 2 -> 3: the runs' `axes` column (several sizes), NULL for every run stored."""
    conn.execute(dialect.ddl("ALTER TABLE runs ADD COLUMN axes TEXT"))


def _rebuild_with_axes(conn: sqlite3.Connection) -> None:
    """Schema 2 -> 3 on SQLite: rebuilt as in 1 -> 2, so its SQL is a fresh store's."""
    _rebuild_runs(conn)


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _rebuild_runs,
    3: _rebuild_with_axes,
}
# The migrations PostgreSQL runs, in the shared words of `schema` (from its first schema on).
FIRST_POSTGRES = 2
SHARED: dict[int, Callable[[Any, Dialect], None]] = {
    3: _add_axes,
}


def upgrade(conn: sqlite3.Connection, version: int) -> None:
    """Migrate a store at `version` to STORE_VERSION, in the caller's transaction."""
    for target in range(version + 1, STORE_VERSION + 1):
        MIGRATIONS[target](conn)
    conn.execute(f"PRAGMA user_version={STORE_VERSION}")


def upgrade_shared(conn: Any, version: int, dialect: Dialect) -> None:
    """Migrate a PostgreSQL store at `version` (≥ FIRST_POSTGRES) to STORE_VERSION."""
    for target in range(version + 1, STORE_VERSION + 1):
        SHARED[target](conn, dialect)


def missing_metric_columns(conn: Any, dialect: Dialect = SQLITE) -> tuple[str, ...]:
    """The registry's raw metrics that the runs table has no column for, in registry order."""
    have = set(table_columns(conn, "runs", dialect))
    return tuple(name for name in metrics.RAW_NAMES if name not in have)


def add_metric_columns(conn: Any, names: Sequence[str], dialect: Dialect = SQLITE) -> None:
    """Add each named raw metric as a nullable column, in the caller's transaction."""
    for name in names:
        metric = metrics.get(name)
        assert metric.nullable, f"{name} cannot be added to stored runs that lack it"
        conn.execute(dialect.ddl(f"ALTER TABLE runs ADD COLUMN {metric_column_sql(metric)}"))
