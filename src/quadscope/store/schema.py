"""The store's tables as they are at SCHEMA_VERSION, the `runs` columns read from the registry.

Contract: `create_tables(conn)` makes the four tables of an empty store
(`owners` is also added to older files that lack it, see OWNERS_SQL);
`runs_table_sql()` is the `CREATE TABLE` of the runs table (migrations
rebuild it with this); `RUN_COLUMNS` are its columns in `Run.to_dict()` order,
so SQL, CSV and JSON share one layout; `metric_column_sql(metric)` declares one
raw metric's column. A metric column is REAL, or INTEGER for an integral
metric, and NOT NULL only for wall_s: a meter that cannot give a metric stores
NULL. Derived metrics are never stored. Tables and columns are documented in
docs/schema.md.
"""

from __future__ import annotations

import sqlite3

from quadscope import metrics
from quadscope.model import RUN_KEYS

# The declarations of the columns that are not metrics.
_DECLS: dict[str, str] = {
    "sweep_id": "INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE",
    "seq": "INTEGER NOT NULL",
    "variant": "TEXT    NOT NULL",
    "size_n": "INTEGER NOT NULL",
    "repeat": "INTEGER NOT NULL",
    "warmup": "INTEGER NOT NULL",
    "started_at": "REAL    NOT NULL",
    "exit_code": "INTEGER NOT NULL",
    "timed_out": "INTEGER NOT NULL",
    "stderr_tail": "TEXT    NOT NULL",
}

RUN_COLUMNS: tuple[str, ...] = RUN_KEYS
BOOL_COLUMNS = frozenset({"warmup", "timed_out"})  # stored as 0/1


def metric_column_sql(metric: metrics.Metric) -> str:
    """`name TYPE [NOT NULL]` for one raw metric's column."""
    kind = "INTEGER" if metric.integral else "REAL"
    return f"{metric.name:<24} {kind:<7} {'' if metric.nullable else 'NOT NULL'}".rstrip()


def runs_table_sql() -> str:
    decls = [
        f"{col:<24} {_DECLS[col]}" if col in _DECLS else metric_column_sql(metrics.get(col))
        for col in RUN_COLUMNS
    ]
    decls.append("UNIQUE (sweep_id, seq)")
    body = ",\n    ".join(decls)
    return f"CREATE TABLE runs (\n    {body}\n)"


_SWEEPS_SQL = """CREATE TABLE sweeps (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    created_at REAL    NOT NULL,
    data       TEXT    NOT NULL  -- Sweep.to_dict() as JSON
)"""
_SWEEPS_INDEX_SQL = "CREATE INDEX sweeps_name ON sweeps (name)"
# Who runs a sweep now: one row while a process runs it, deleted when it ends.
# Added beside the schema-2 tables when missing (no migration: an older file
# simply has no sweep running), so it carries no schema number of its own.
OWNERS_SQL = """CREATE TABLE IF NOT EXISTS owners (
    sweep_id    INTEGER PRIMARY KEY REFERENCES sweeps (id) ON DELETE CASCADE,
    pid         INTEGER NOT NULL,
    host        TEXT    NOT NULL,
    boot_id     TEXT    NOT NULL,
    start_ticks INTEGER NOT NULL,
    since       REAL    NOT NULL
)"""
_BLOBS_SQL = """CREATE TABLE blobs (
    sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    "key"    TEXT    NOT NULL,
    json     TEXT    NOT NULL,
    PRIMARY KEY (sweep_id, "key")
)"""


def create_tables(conn: sqlite3.Connection) -> None:
    """The tables of an empty store, inside the caller's transaction."""
    for stmt in (_SWEEPS_SQL, _SWEEPS_INDEX_SQL, runs_table_sql(), _BLOBS_SQL, OWNERS_SQL):
        conn.execute(stmt)


def table_columns(conn: sqlite3.Connection, table: str) -> tuple[str, ...]:
    return tuple(str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})"))
