"""The store's write rate: runs/s through `add_run`, SQLite against PostgreSQL.

Each writer is a process that opens the store, creates its own sweep, waits
for the others, then stores R runs with `add_run`, as `quadscope run` stores them (PostgreSQL:
each its own committed transaction; SQLite: journaled, committed in batches). The rate is all writers' runs
over the wall time from the first writer's first run to the last writer's
last. Measured with 1 writer and with N writers at once (N processes into
one SQLite file, or into one PostgreSQL database: a fleet sweeping into one
store), for:

* SQLite: a file in a scratch folder, WAL with `synchronous=NORMAL` (the
  store's settings: each run journaled with one write(2), committed in
  batches every 0.1 s; nothing fsync-ed, so an OS crash may lose the last
  few).
* PostgreSQL, durable: a throwaway server (tests/pg.py, Debian's binaries,
  Unix socket) with the server's defaults: each commit waits for its WAL
  flush (`synchronous_commit = on`).
* PostgreSQL, async commit: the same server, the session started with
  `synchronous_commit = off` (through the URL:
  `?options=-csynchronous_commit%3Doff`), whose guarantee matches SQLite's
  WAL/NORMAL: an OS crash may lose the last commits, never corrupt.

Reported: the median over rounds of runs/s for each, and its ratio to
SQLite's with the same number of writers (rounds interleave the back ends,
so drift on this shared machine hits all alike); then the space one stored
run takes on each back end, indexes included (PostgreSQL:
`pg_total_relation_size('runs')`; SQLite: the file after a checkpoint), over
the runs of the last round's concurrent case: the figure docs/scale.md
multiplies out.

usage: .venv/bin/python bench/store_writes.py [--rounds 3] [--runs 2000] [--writers 4] [--quick]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from common import log, table

import pg  # the tests' throwaway server
from quadscope.model import Measurement, Run, Sweep
from quadscope.store import open_store

ASYNC_OPTION = "&options=-csynchronous_commit%3Doff"


def _writer(location: str, runs: int, ready: multiprocessing.Queue[int],
            go: multiprocessing.Event, out: multiprocessing.Queue[tuple[float, float]]) -> None:
    m = Measurement(wall_s=0.5, user_s=0.25, sys_s=0.01, max_rss_bytes=1 << 20, minor_faults=10,
                    major_faults=0, voluntary_ctx_switches=1, involuntary_ctx_switches=0,
                    exit_code=0)
    with open_store(Path(location) if "://" not in location else location) as store:
        sweep = store.create_sweep(Sweep(id=0, name="bench", mode="sizes", command=("x", "{n}")))
        ready.put(sweep.id)
        go.wait(timeout=120)
        start = time.perf_counter()
        for seq in range(runs):
            store.add_run(Run(sweep.id, seq, "A", 1000 + seq, seq % 5, False, time.time(), m))
        out.put((start, time.perf_counter()))


def rate(location: str, writers: int, runs: int) -> float:
    """Runs/s of `writers` processes each storing `runs` runs at once into `location`."""
    ctx = multiprocessing.get_context("spawn")
    ready: multiprocessing.Queue[int] = ctx.Queue()
    out: multiprocessing.Queue[tuple[float, float]] = ctx.Queue()
    go = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(location, runs, ready, go, out))
             for _ in range(writers)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=120)
    go.set()
    spans = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    # perf_counter is CLOCK_MONOTONIC, shared by the processes of one machine.
    return writers * runs / (max(e for _, e in spans) - min(s for s, _ in spans))


def _pg_runs_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE runs")
        row = conn.execute("SELECT pg_total_relation_size('runs')").fetchone()
    assert row is not None
    return int(row[0])


def _sqlite_bytes(path: str) -> int:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return Path(path).stat().st_size


def measure(rounds: int, runs: int, n_writers: int,
            sizes: dict[str, float]) -> dict[tuple[str, int], list[float]]:
    """Runs/s per (back end, writers) over rounds; fills `sizes` with bytes per stored run."""
    server = pg.start_server(durable=True)
    results: dict[tuple[str, int], list[float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="quadscope-bench-") as scratch:
            for k in range(rounds):
                for writers in (1, n_writers):
                    url = server.new_database()
                    backends = {"SQLite (WAL, NORMAL)": str(Path(scratch) / f"r{k}-{writers}.db"),
                                "PostgreSQL, durable commit": url,
                                "PostgreSQL, async commit": url + ASYNC_OPTION}
                    names = list(backends)
                    order = names[k % len(names):] + names[:k % len(names)]
                    for name in order:
                        r = rate(backends[name], writers, runs)
                        log(f"store_writes: round {k + 1}/{rounds}, {writers} writer(s), "
                            f"{name}: {r:.0f} runs/s")
                        results.setdefault((name, writers), []).append(r)
                    stored = 2 * writers * runs  # the durable and the async pass, one database
                    sizes["PostgreSQL"] = _pg_runs_bytes(url) / stored
                    sizes["SQLite"] = _sqlite_bytes(backends["SQLite (WAL, NORMAL)"]) / (stored / 2)
                    server.drop_database(url)
    finally:
        server.stop()
    return results


def markdown(results: dict[tuple[str, int], list[float]], runs: int) -> str:
    med = {key: statistics.median(v) for key, v in results.items()}
    rows = []
    for (name, writers), r in med.items():
        base = med[("SQLite (WAL, NORMAL)", writers)]
        rows.append([name, str(writers), f"{r:,.0f}", f"**{r / base:.2f}**"])
    rounds = len(next(iter(results.values())))
    return (f"{rounds} interleaved round(s); each writer stores {runs} runs, one committed "
            "transaction each; runs/s are medians over rounds, ratios against SQLite with the "
            "same number of writers.\n\n"
            + table(["store", "writers", "runs/s", "vs SQLite"], rows))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=2000, help="runs each writer stores")
    p.add_argument("--writers", type=int, default=4, help="writers at once in the concurrent case")
    p.add_argument("--quick", action="store_true", help="1 round, 200 runs, 2 writers: checks it works")
    args = p.parse_args(argv)
    rounds, runs, writers = (1, 200, 2) if args.quick else (args.rounds, args.runs, args.writers)
    if pg.pg_bin() is None:
        print("store_writes: no PostgreSQL server under /usr/lib/postgresql: run scripts/setup",
              file=sys.stderr)
        return 2
    sizes: dict[str, float] = {}
    print(markdown(measure(rounds, runs, writers, sizes), runs))
    print("\nSpace per stored run, indexes included: "
          + ", ".join(f"{name} {b:,.0f} bytes" for name, b in sizes.items()) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
