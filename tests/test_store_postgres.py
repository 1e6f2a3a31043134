"""The PostgreSQL store alone: refusing foreign databases, one-sentence errors, many writers, the CLI.

Everything the two back ends share is tested on both in test_store.py; here
is what only a server has: a database that is not ours, a login or a grant
refused, several processes writing at once, and `--db postgresql://...`
through the whole command line. All against the session's throwaway server.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

import pg
from bad_inputs import run_argv
from quadscope.errors import StoreError, UnknownRunError
from quadscope.model import Measurement, Owner, Run, Sweep
from quadscope.store import mask_url, open_store
from quadscope.store.postgres import META_TABLE, PostgresStore
from quadscope.store.schema import STORE_VERSION as SCHEMA_VERSION

SRC = Path(__file__).resolve().parents[1] / "src"


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT table_name FROM information_schema.tables "
                            "WHERE table_schema = 'public'").fetchall()
    return {str(r[0]) for r in rows}


def _sql(url: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]


def test_a_new_database_gets_our_tables_and_marker(pg_url: str) -> None:
    """Opening an empty database creates the four tables and quadscope_meta at SCHEMA_VERSION."""
    open_store(pg_url).close()
    assert _tables(pg_url) == {"sweeps", "runs", "blobs", "owners", META_TABLE}
    with psycopg.connect(pg_url) as conn:
        assert conn.execute(f"SELECT * FROM {META_TABLE}").fetchall() == [
            ("quadscope", SCHEMA_VERSION)]


def test_a_database_with_other_tables_is_refused_untouched(pg_url: str) -> None:
    """A database holding tables but no quadscope_meta is refused, and nothing is created in it."""
    _sql(pg_url, "CREATE TABLE notes (body TEXT)")
    with pytest.raises(StoreError, match=r"is a PostgreSQL database but not a quadscope store: "
                                         r"it holds tables \(notes\) and no quadscope_meta"):
        open_store(pg_url)
    assert _tables(pg_url) == {"notes"}


def test_a_meta_table_of_another_application_or_a_newer_schema_is_refused(pg_url: str) -> None:
    """quadscope_meta naming another application, or a newer schema, is a StoreError."""
    open_store(pg_url).close()
    _sql(pg_url, f"UPDATE {META_TABLE} SET schema_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError) as e:
        open_store(pg_url, readonly=True)
    assert str(e.value) == (f"{pg_url} was written by a newer quadscope (schema "
                            f"{SCHEMA_VERSION + 1}; this one reads up to {SCHEMA_VERSION}): "
                            "upgrade quadscope")
    _sql(pg_url, f"UPDATE {META_TABLE} SET application = 'other', schema_version = 2")
    with pytest.raises(StoreError, match=r"not a quadscope store \(quadscope_meta names 'other'\)"):
        open_store(pg_url)


def test_reading_never_creates_tables(pg_url: str) -> None:
    """`list` and `show` on an empty database say nothing is stored and leave it empty."""
    with pytest.raises(UnknownRunError, match="there is no quadscope store in"):
        open_store(pg_url, readonly=True)
    code, out, _ = run_argv(["list", "--db", pg_url])
    assert code == 0 and out.startswith("no sweeps stored: there is no quadscope store in")
    code, _, err = run_argv(["show", "last", "--db", pg_url])
    assert code != 0 and "Traceback" not in err
    assert _tables(pg_url) == set()


def test_mask_url_hides_passwords() -> None:
    """A password in the user part or in the query is shown as ***; the rest is kept."""
    assert mask_url("postgresql://bob:s3cr%40t@db.example:5432/q?sslmode=require") == (
        "postgresql://bob:***@db.example:5432/q?sslmode=require")
    assert mask_url("postgres://db/q?user=bob&password=x&sslmode=require") == (
        "postgres://db/q?user=bob&password=***&sslmode=require")
    assert mask_url("postgresql://bob@db/q") == "postgresql://bob@db/q"


def _cli_error(url: str) -> str:
    code, out, err = run_argv(["list", "--db", url])
    assert code == StoreError.exit_code, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_connection_failures_are_one_sentence_each(pg_server: pg.PgServer, pg_url: str,
                                                   tmp_path: Path) -> None:
    """No server, a wrong password, no such database, no grant: one StoreError sentence each."""
    silent = f"postgresql://postgres@/x?host={tmp_path}"
    assert f"cannot reach the PostgreSQL server of {silent}: " in _cli_error(silent)
    wrong = pg_server.url("postgres", user="secret", password="wrong")
    err = _cli_error(wrong)
    assert "cannot log in to postgresql://secret:***@/postgres" in err and "wrong" not in err
    assert "password authentication failed" in err
    missing = pg_server.url("no_such_db")
    assert f"{missing} names a database that does not exist" in _cli_error(missing)
    name = pg_url.split("@/")[1].split("?")[0]
    visitor = pg_server.url(name, user="visitor")
    code, _, err = run_argv(["run", "--db", visitor, "--no-perf", "--sizes", "1,2", "--", "true",
                             "{n}"])
    assert code == StoreError.exit_code and "Traceback" not in err
    assert f"the PostgreSQL store {visitor} refused: permission denied for schema public" in err


def test_a_password_login_works(pg_server: pg.PgServer, pg_url: str) -> None:
    """The right password in the URL logs in (given CREATE on the schema), and is never shown."""
    name = pg_url.split("@/")[1].split("?")[0]
    _sql(pg_url, "GRANT CREATE ON SCHEMA public TO secret")
    url = pg_server.url(name, user="secret", password=pg.SECRET_PASSWORD)
    with open_store(url) as s:
        assert s.list_sweeps() == [] and pg.SECRET_PASSWORD not in s.location


def test_two_claimants_of_one_sweep_get_it_one_at_a_time(pg_url: str) -> None:
    """Many connections claiming one sweep at once: exactly one wins, the others see it as holder."""
    with open_store(pg_url) as s:
        sweep = s.create_sweep(Sweep(id=0, name="s", mode="sizes", command=("x",)))
    results: list[Owner | None] = []
    start = threading.Barrier(6)

    def claim(i: int) -> None:
        with open_store(pg_url) as s:
            start.wait(timeout=30)
            results.append(s.claim(sweep.id, Owner(pid=1000 + i, host=f"h{i}"),
                                   alive=lambda o: True))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    winners = [r for r in results if r is None]
    assert len(results) == 6 and len(winners) == 1
    assert len({(r.pid, r.host) for r in results if r is not None}) == 1


def test_a_store_created_by_another_process_while_we_look_is_ours(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer creates the store between our two catalogue reads: we open it, not refuse."""
    created: list[bool] = []

    def after_first_read(read):  # type: ignore[no-untyped-def]
        def wrapped(self):  # type: ignore[no-untyped-def]
            result = read(self)
            if not created:
                created.append(True)
                open_store(pg_url).close()  # another writer commits the whole store now
            return result
        return wrapped

    monkeypatch.setattr(PostgresStore, "_meta", after_first_read(PostgresStore._meta))
    monkeypatch.setattr(PostgresStore, "_tables", after_first_read(PostgresStore._tables))
    with open_store(pg_url) as store:
        assert store.list_sweeps() == []
    assert created == [True]


RUNS_PER_WRITER = 30


def _writer(url: str, worker: int, shared_id: int, out: multiprocessing.Queue[int]) -> None:
    """One machine of a fleet: a sweep of its own, and its share of the shared one."""
    m = Measurement(wall_s=0.5, user_s=0.25, exit_code=0)
    with open_store(url) as s:
        own = s.create_sweep(Sweep(id=0, name=f"w{worker}", mode="sizes", command=("x",)))
        out.put(own.id)
        for i in range(RUNS_PER_WRITER):
            s.add_run(Run(own.id, i, "A", i, 0, False, 0.0, m))
            # Disjoint seqs per writer in the shared sweep: one run each, all must land once.
            s.add_run(Run(shared_id, worker * RUNS_PER_WRITER + i, "A", i, 0, False, 0.0, m))


@pytest.mark.integration
def test_several_processes_write_at_once_without_losing_a_run(pg_url: str) -> None:
    """Four writer processes, each with its own sweep and a share of one: every run stored once."""
    writers = 4
    with open_store(pg_url) as s:
        shared = s.create_sweep(Sweep(id=0, name="shared", mode="sizes", command=("x",)))
    ctx = multiprocessing.get_context("spawn")
    ids: multiprocessing.Queue[int] = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(pg_url, w, shared.id, ids)) for w in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * writers
    own_ids = sorted(ids.get(timeout=5) for _ in range(writers))
    with open_store(pg_url, readonly=True) as s:
        assert sorted(s.next_seq(i) for i in own_ids) == [RUNS_PER_WRITER] * writers
        for i in own_ids:
            assert [r.seq for r in s.runs(i)] == list(range(RUNS_PER_WRITER))
        assert [r.seq for r in s.runs(shared.id)] == list(range(writers * RUNS_PER_WRITER))
        counts = {sweep.name: n for sweep, n in s.list_sweeps()}
    assert len(set(own_ids)) == writers and shared.id not in own_ids
    assert counts == {"shared": writers * RUNS_PER_WRITER,
                      **{f"w{w}": RUNS_PER_WRITER for w in range(writers)}}


@pytest.mark.integration
def test_run_then_list_and_show_through_the_cli(pg_url: str, tmp_path: Path) -> None:
    """`quadscope run --db URL -- true {n}` stores a sweep that `list` and `show` ($QUADSCOPE_DB) read."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(tmp_path), "COLUMNS": "300"}
    done = subprocess.run(
        [sys.executable, "-m", "quadscope", "run", "--db", pg_url, "--no-perf", "--name", "t",
         "--sizes", "1,2,4,8", "--repeat", "1", "--warmup", "0", "--", "true", "{n}"],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode in (0, 5), done.stderr  # 5: `true` is too fast to fit, which is fine
    assert "Traceback" not in done.stderr
    listed = subprocess.run([sys.executable, "-m", "quadscope", "list"], env={
        **env, "QUADSCOPE_DB": pg_url}, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("sweeps in") and "postgresql://postgres@/" in listed.stdout
    assert " t " in listed.stdout and " complete " in listed.stdout
    shown = subprocess.run([sys.executable, "-m", "quadscope", "show", "t", "--db", pg_url,
                            "--json", "-"], env=env, capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
    assert shown.returncode in (0, 5), shown.stderr
    assert '"name": "t"' in shown.stdout
    assert not (tmp_path / ".quadscope").exists()  # nothing went to a default SQLite file
