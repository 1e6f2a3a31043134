"""Tests for quadscope.store's upgrades: schema 1 -> 2 in place, new metric columns, old exports.

Schema 1 only ever existed as a SQLite file, so its tests are SQLite's; the
new-metric-column upgrade runs on both back ends.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from quadscope import metrics
from quadscope.commands.stored import load_sweep
from quadscope.errors import StoreError
from quadscope.model import Measurement, Run, Sweep
from quadscope.store import SqliteStore, migrations, open_store
from quadscope.store.schema import POSTGRES, RUN_COLUMNS, SQLITE
from quadscope.store.schema import STORE_VERSION as SCHEMA_VERSION

FIXTURE = Path(__file__).parent / "fixtures" / "schema1"


def _old_copy(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE / "store-schema1.db", path)
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY sweep_id, seq")]
    conn.close()
    return rows


def _schema(path: Path) -> tuple[int, list[tuple[str, str]]]:
    conn = sqlite3.connect(path)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    sql = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    return version, sql


def test_schema1_store_is_upgraded_in_place_keeping_every_run(tmp_path: Path) -> None:
    """Opening a 0.1.0 store brings it to a fresh store's schema, every row and value unchanged
    (the runs' `axes` of schema 3 NULL: one size)."""
    path = _old_copy(tmp_path)
    before = _rows(path)
    assert _schema(path)[0] == 1 and len(before) == 681
    SqliteStore(path).close()
    after = _rows(path)
    assert [{k: v for k, v in r.items() if k != "axes"} for r in after] == before
    assert {r["axes"] for r in after} == {None}
    assert list(after[0]) == list(RUN_COLUMNS)
    fresh = tmp_path / "fresh.db"
    SqliteStore(fresh).close()
    assert _schema(path) == _schema(fresh)
    assert _schema(path)[0] == SCHEMA_VERSION == 3


def test_second_open_of_an_upgraded_store_changes_nothing(tmp_path: Path) -> None:
    """Once upgraded, opening again leaves the schema and the rows as they are."""
    path = _old_copy(tmp_path)
    SqliteStore(path).close()
    schema, rows = _schema(path), _rows(path)
    with SqliteStore(path) as s:
        assert len(s.runs(1)) > 0
    assert (_schema(path), _rows(path)) == (schema, rows)


def test_upgraded_store_takes_runs_without_rusage(tmp_path: Path) -> None:
    """After the upgrade a run may lack every metric but wall_s: NULL is stored, None read back."""
    path = _old_copy(tmp_path)
    with SqliteStore(path) as s:
        sweep = s.create_sweep(Sweep(id=0, name="sparse", mode="sizes", command=("x",)))
        run = Run(sweep.id, 0, "A", 5, 0, False, 0.0, Measurement(wall_s=0.5, exit_code=1))
        s.add_run(run)
        assert s.runs(sweep.id) == [run]


def test_a_failed_upgrade_leaves_the_store_at_schema_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration that fails half way is rolled back whole and reported as a StoreError."""
    path = _old_copy(tmp_path)
    schema, rows = _schema(path), _rows(path)

    def half_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE runs")
        raise sqlite3.OperationalError("disk full")

    monkeypatch.setitem(migrations.MIGRATIONS, 2, half_then_fail)
    with pytest.raises(StoreError) as e:
        SqliteStore(path)
    assert str(e.value) == f"cannot upgrade {path} from schema 1 to {SCHEMA_VERSION}: disk full"
    assert (_schema(path), _rows(path)) == (schema, rows)


def _connect(location: Path | str) -> Any:
    if isinstance(location, Path):
        return sqlite3.connect(location, isolation_level=None)
    import psycopg

    return psycopg.connect(location, autocommit=True)


def test_a_metric_missing_from_the_table_is_added_as_nullable(store_location: Path | str) -> None:
    """A raw metric the runs table lacks (added to the registry later) becomes a NULL column, anywhere."""
    with open_store(store_location) as s:
        sweep = s.create_sweep(Sweep(id=0, name="x", mode="sizes", command=("x",)))
        s.add_run(Run(sweep.id, 0, "A", 5, 0, False, 0.0,
                      Measurement(wall_s=0.5, context_switches=4, exit_code=0)))
    with contextlib.closing(_connect(store_location)) as conn:
        conn.execute("ALTER TABLE runs DROP COLUMN context_switches")
    with open_store(store_location, readonly=True) as s:
        assert s.runs(sweep.id)[0].measurement.context_switches is None
    with contextlib.closing(_connect(store_location)) as conn:
        if isinstance(store_location, Path):
            cols = {r[1]: (r[2], r[3]) for r in conn.execute("PRAGMA table_info(runs)")}
            assert cols["context_switches"] == ("INTEGER", 0)  # type, notnull
            dialect = SQLITE
        else:
            cols = {r[0]: (r[1], r[2]) for r in conn.execute(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                "WHERE table_name = 'runs'")}
            assert cols["context_switches"] == ("bigint", "YES")
            assert cols["wall_s"] == ("double precision", "NO")
            dialect = POSTGRES
        assert set(cols) == set(RUN_COLUMNS)
        assert migrations.missing_metric_columns(conn, dialect) == ()


def test_schema1_json_export_still_loads(tmp_path: Path) -> None:
    """`compare RUN export.json` reads a schema-1 export: its sweep and every run, as written."""
    ref = FIXTURE / "export-schema1.json"
    data = json.loads(ref.read_text())
    with SqliteStore(tmp_path / "results.db") as s:
        sweep, runs = load_sweep(s, str(ref))
    assert data["schema"] == 1
    assert sweep.name == data["sweep"]["name"] and len(runs) == len(data["runs"]) == 26
    for run, raw in zip(runs, data["runs"], strict=True):
        assert {k: run.to_dict()[k] for k in raw} == raw
        assert run.measurement.values.keys() == set(metrics.RAW_NAMES)


def test_schema2_store_gains_the_axes_column_and_keeps_every_run(tmp_path: Path) -> None:
    """A schema-2 store (before several sizes) opens at schema 3: same rows, `axes` NULL,
    SQL identical to a fresh store's; its runs read back with no other axes."""
    path = _old_copy(tmp_path)
    to_schema2 = migrations.MIGRATIONS[2]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    to_schema2(conn)
    conn.execute("ALTER TABLE runs DROP COLUMN axes")  # as schema 2 had it
    conn.execute("PRAGMA user_version=2")
    conn.execute("COMMIT")
    conn.close()
    before = _rows(path)
    assert _schema(path)[0] == 2 and "axes" not in before[0]
    with SqliteStore(path) as s:
        assert s.runs(1)[0].axes == ()
    after = _rows(path)
    assert [{k: v for k, v in r.items() if k != "axes"} for r in after] == before
    fresh = tmp_path / "fresh.db"
    SqliteStore(fresh).close()
    assert _schema(path) == _schema(fresh)


def test_runs_over_several_sizes_round_trip(tmp_path: Path) -> None:
    """A run's other axes are stored and read back; a sweep's axes and points too."""
    with SqliteStore(tmp_path / "s.db") as s:
        sweep = s.create_sweep(Sweep(id=0, name="grid", mode="sizes", command=("x", "{n}", "{m}"),
                                     axes=(("n", (1, 2, 4)), ("m", (10, 20, 40))),
                                     points=((1, 10), (4, 40))))
        s.add_run(Run(sweep.id, 0, "A", 4, 0, False, 0.0, Measurement(wall_s=0.5, exit_code=0),
                      axes=(("m", 40),)))
        s.add_run(Run(sweep.id, 1, "A", 1, 0, False, 0.0, Measurement(wall_s=0.1, exit_code=0)))
    with SqliteStore(tmp_path / "s.db") as s:
        runs = s.runs(sweep.id)
        assert [r.axes for r in runs] == [(("m", 40),), ()]
        got = s.get_sweep(str(sweep.id))
        assert got.axes == sweep.axes and got.points == sweep.points
        assert "axes" not in runs[1].to_dict() and runs[0].to_dict()["axes"] == {"m": 40}
