"""What every store back end is: the `Store` protocol, and the rows and queries they share.

Contract: `Store` is the interface the commands, the runner, the doctor and
the API use; `sqlite.SqliteStore` (one file) and `postgres.PostgresStore` (one
database on a server) satisfy it with the same tables (schema.py) and the same
answers. `location` names the store for the user (a path, or a URL with its
password masked). The query text here is in SQLite's words with `?`
placeholders; a back end passes it through its `Dialect.query`. The row
conversions read the columns back into `Sweep` and `Run`, so both back ends
return equal records for equal rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol

from quadscope.errors import StoreError, UnknownRunError
from quadscope.model import Owner, Run, Sweep
from quadscope.store.schema import BOOL_COLUMNS, RUN_COLUMNS

LATEST_REFS = ("last", "latest")


class Store(Protocol):
    """One quadscope results database.

    Each write is its own committed transaction, except `add_run`: once it
    returns the run survives the writer's death (kill -9 included), but it may
    reach the tables later, in a batch: PostgreSQL commits it at once; SQLite
    journals it and commits within its batch interval, before any other method
    of the same store answers, at `close()`, or at the next open after a kill.
    `add_runs` is `add_run` for several, and commits `logged` ones at once, in
    one transaction.
    """

    @property
    def location(self) -> str: ...

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def create_sweep(self, sweep: Sweep, owner: Owner | None = None) -> Sweep: ...

    def store_sweep(self, sweep: Sweep, runs: Sequence[Run]) -> Sweep:
        """A finished sweep (an import) and all its runs in one transaction: all or none.

        Returns the sweep with its id; each run's `sweep_id` is replaced by it.
        """
        ...

    def claim(self, sweep_id: int, owner: Owner,
              alive: Callable[[Owner], bool]) -> Owner | None: ...

    def release(self, sweep_id: int, owner: Owner) -> None: ...

    def owner(self, sweep_id: int) -> Owner | None:
        """The process that claimed the sweep and has not released it, or None."""
        ...

    def update_sweep(self, sweep: Sweep) -> None: ...

    def set_status(self, sweep_id: int, status: str) -> None: ...

    def get_sweep(self, ref: str | int) -> Sweep: ...

    def list_sweeps(self) -> list[tuple[Sweep, int]]: ...

    def add_run(self, run: Run) -> None: ...

    def add_runs(self, runs: Sequence[Run], *, logged: bool = False) -> None:
        """Finished runs, in order, as `add_run` each; `logged` (they are on disk elsewhere
        until this returns: the launcher's reply log, `launcher.Chunk`): committed before it
        returns, in one transaction, with no journal of ours."""
        ...

    def runs(self, sweep_id: int) -> list[Run]: ...

    def next_seq(self, sweep_id: int) -> int: ...

    def put_blob(self, sweep_id: int, key: str, obj: dict[str, Any]) -> None: ...

    def get_blob(self, sweep_id: int, key: str) -> dict[str, Any] | None: ...


SWEEP_SELECT = "SELECT id, name, kind, status, created_at, data FROM sweeps"
LIST_SWEEPS = (
    "SELECT s.id, s.name, s.kind, s.status, s.created_at, s.data, "
    "(SELECT count(*) FROM runs r WHERE r.sweep_id = s.id) "
    "FROM sweeps s ORDER BY s.id DESC"
)
RUN_COLUMN_LIST = ", ".join(RUN_COLUMNS)
RUN_INSERT = f"INSERT INTO runs ({RUN_COLUMN_LIST}) VALUES ({', '.join('?' for _ in RUN_COLUMNS)})"
RUNS_SELECT = f"SELECT {RUN_COLUMN_LIST} FROM runs WHERE sweep_id = ? ORDER BY seq"
NEXT_SEQ = "SELECT coalesce(max(seq) + 1, 0) FROM runs WHERE sweep_id = ?"
OWNER_SELECT = "SELECT pid, host, boot_id, start_ticks, since FROM owners WHERE sweep_id = ?"
OWNER_UPSERT = (
    "INSERT INTO owners (sweep_id, pid, host, boot_id, start_ticks, since) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sweep_id) DO UPDATE SET pid = excluded.pid, "
    "host = excluded.host, boot_id = excluded.boot_id, start_ticks = excluded.start_ticks, "
    "since = excluded.since"
)
OWNER_DELETE = "DELETE FROM owners WHERE sweep_id = ? AND pid = ? AND host = ?"
SWEEP_UPDATE = (
    "UPDATE sweeps SET name = ?, kind = ?, status = ?, created_at = ?, data = ? WHERE id = ?"
)
STATUS_UPDATE = "UPDATE sweeps SET status = ?, data = ? WHERE id = ?"
BLOB_UPSERT = (
    'INSERT INTO blobs (sweep_id, "key", json) VALUES (?, ?, ?) '
    'ON CONFLICT (sweep_id, "key") DO UPDATE SET json = excluded.json'
)
BLOB_SELECT = 'SELECT json FROM blobs WHERE sweep_id = ? AND "key" = ?'


def run_values(run: Run) -> tuple[Any, ...]:
    """The runs-table row of `run`, in RUN_COLUMNS order (booleans as 0/1)."""
    # Run.to_dict's values without its dicts: this is on every run's path.
    m = run.measurement
    fields = (run.sweep_id, run.seq, run.variant, run.size_n, run.repeat, int(run.warmup),
              run.started_at, m.exit_code, int(m.timed_out), m.stderr_tail,
              json.dumps(dict(run.axes), separators=(",", ":")) if run.axes else None)
    values = m.values
    return tuple(fields[k] if isinstance(k, int) else values[k] for k in _ROW_PLAN)


# Each column of RUN_COLUMNS: its index in run_values' `fields`, or the metric it holds.
_FIELDS = ("sweep_id", "seq", "variant", "size_n", "repeat", "warmup", "started_at",
           "exit_code", "timed_out", "stderr_tail", "axes")
_ROW_PLAN: tuple[int | str, ...] = tuple(_FIELDS.index(c) if c in _FIELDS else c
                                         for c in RUN_COLUMNS)


def sweep_update_values(sweep: Sweep) -> tuple[Any, ...]:
    """SWEEP_UPDATE's parameters for `sweep`: its columns, its JSON, then its id."""
    return (sweep.name, sweep.kind, sweep.status, sweep.created_at, dumps(sweep.to_dict()),
            sweep.id)


def owner_values(sweep_id: int, owner: Owner) -> tuple[Any, ...]:
    return (sweep_id, owner.pid, owner.host, owner.boot_id, owner.start_ticks, owner.since)


def row_to_owner(row: tuple[Any, ...]) -> Owner:
    return Owner(int(row[0]), str(row[1]), str(row[2]), int(row[3]), float(row[4]))


def dumps(obj: Mapping[str, Any]) -> str:
    # allow_nan: candidate scores may be inf; Python's json reads "Infinity" back.
    return json.dumps(obj, sort_keys=True, allow_nan=True)


def row_to_sweep(row: tuple[Any, ...]) -> Sweep:
    sweep_id, name, kind, status, created_at, data = row
    try:
        d = json.loads(data)
        # The columns are authoritative for the fields SQL users can query.
        d.update(id=int(sweep_id), name=name, kind=kind, status=status, created_at=created_at)
        return Sweep.from_dict(d)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise damaged(f"sweep {sweep_id}'s record", exc) from None


def row_to_run(row: tuple[Any, ...]) -> Run:
    d = dict(zip(RUN_COLUMNS, row, strict=True))
    for k in BOOL_COLUMNS:
        d[k] = bool(d[k])
    return Run.from_dict(d)


def blob_from_text(text: str) -> dict[str, Any]:
    try:
        obj = json.loads(text)
    except (ValueError, TypeError, RecursionError) as exc:
        raise damaged("a stored result (profile, doctor or fits)", exc) from None
    if not isinstance(obj, dict):
        raise damaged("a stored result (profile, doctor or fits)",
                      TypeError(f"a {type(obj).__name__}, not an object"))
    return obj


def damaged(what: str, exc: BaseException) -> StoreError:
    """The sentence for a stored record quadscope cannot read: something else changed it."""
    return StoreError(f"{what} in the store cannot be read ({type(exc).__name__}: "
                      f"{str(exc)[:100]}): something other than quadscope changed the "
                      "database; copy out what it holds with `sqlite3 FILE .dump` (or "
                      "pg_dump), or point --db at a new file")


def unknown_sweep(ref: object, location: str) -> UnknownRunError:
    return UnknownRunError(
        f"no stored sweep with id or name {str(ref)!r} in {location}; `quadscope list` shows them"
    )


def find_sweep(fetchone: Callable[[str, tuple[Any, ...]], tuple[Any, ...] | None],
               ref: str | int, location: str) -> Sweep:
    """A sweep by id ("3"), by name (the most recent), or "last"/"latest", through `fetchone`."""
    text = str(ref).strip()
    if text.lower() in LATEST_REFS:
        row = fetchone(f"{SWEEP_SELECT} ORDER BY id DESC LIMIT 1", ())
        if row is None:
            raise UnknownRunError(
                f"there is no stored sweep in {location} yet, so {text!r} names nothing; "
                "`quadscope run` records one"
            )
        return row_to_sweep(row)
    row = None
    # ids are 64-bit integers on both back ends, written in ASCII digits: "１" read as 1,
    # and "²" (a digit to isdigit, not to int) was exit 70
    if text.isascii() and text.isdigit() and int(text) < 2**63:
        row = fetchone(f"{SWEEP_SELECT} WHERE id = ?", (int(text),))
    if row is None:  # a name, or digits that name a sweep rather than number one
        row = fetchone(f"{SWEEP_SELECT} WHERE name = ? ORDER BY id DESC LIMIT 1", (text,))
    if row is None:
        raise unknown_sweep(text, location)
    return row_to_sweep(row)


_PASSWORD_IN_NETLOC = re.compile(r"^([a-z]+://[^:/@?#]*):[^@/?#]*@", re.IGNORECASE)
_PASSWORD_IN_QUERY = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def mask_url(url: str) -> str:
    """`url` with any password (`user:secret@`, `?password=secret`) shown as `***`."""
    return _PASSWORD_IN_QUERY.sub(r"\1***", _PASSWORD_IN_NETLOC.sub(r"\1:***@", url))
