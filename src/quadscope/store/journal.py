"""A writer's run journal: the runs it has stored but not yet committed, one line each.

Contract: `RunJournal.create(db_path, columns)` makes a new journal file
beside the SQLite database (`<db name>-runs-<random>`), holds an exclusive
`flock` on it while it is open, and writes its first line: `columns`, the
column names. `append(row)`
writes one run's row (those columns' values) as one JSON line with one
write(2), `append_many(rows)` several. `clear()` empties it once its rows are committed; `close()`
removes it (`keep=True`: leaves it for the next opener to replay).
`replay_orphans(db_path, commit)` finds every journal beside `db_path` whose
writer is gone (its lock is free: the writer was killed, or its commit
failed), hands its columns and rows to `commit` and removes it; a journal
whose writer lives is left alone. `has_orphans(db_path)` says whether one
is there. Nothing here knows SQL.

Durability: once `append` returns the bytes are in the kernel's page cache,
so the run survives the writer being killed (`kill -9`, a crash); it is not
fsync-ed, so an operating-system crash or power loss may lose the runs since
the last commit, as SQLite's `synchronous=NORMAL` may lose its last commits.
A torn last line (a power loss mid-write) is skipped, never misread.

Why: a SQLite commit costs ~50-200 µs (and an occasional checkpoint several
ms); one appended line costs a few µs, and the store commits the journal's
rows in batches.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

_INFIX = "-runs-"

Rows = list[tuple[Any, ...]]


def _prefix(db_path: Path) -> str:
    return f"{db_path.name}{_INFIX}"


# One encoder for every line: json.dumps with options builds a new one per call.
# allow_nan: a metric may be inf or NaN; json reads "Infinity"/"NaN" back.
_ENCODER = json.JSONEncoder(allow_nan=True, separators=(",", ":"))


def _line(obj: Sequence[Any]) -> bytes:
    return (_ENCODER.encode(obj) + "\n").encode()


class RunJournal:
    """One open journal file, locked by this process (see the module docstring)."""

    def __init__(self, fd: int, path: Path, header_bytes: int) -> None:
        self._fd: int | None = fd
        self.path = path
        self._header_bytes = header_bytes

    @classmethod
    def create(cls, db_path: Path, columns: Sequence[str]) -> RunJournal:
        # Made under a hidden name and locked before it gets the name replayers
        # look for, so none can take it for a dead writer's.
        fd, hidden = tempfile.mkstemp(prefix=f".{_prefix(db_path)}", dir=db_path.parent)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            header = _line(list(columns))
            _write_all(fd, header)
            path = Path(hidden).with_name(Path(hidden).name[1:])
            os.rename(hidden, path)
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_APPEND)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(hidden)
            raise
        return cls(fd, path, len(header))

    def append(self, row: Sequence[Any]) -> None:
        """One run's row, on the kernel's side of a write(2) when this returns."""
        assert self._fd is not None, "append() after close()"
        _write_all(self._fd, _line(row))

    def append_many(self, rows: Sequence[Sequence[Any]]) -> None:
        """Runs' rows, one line each, with one write(2)."""
        assert self._fd is not None, "append_many() after close()"
        _write_all(self._fd, b"".join(_line(row) for row in rows))

    def clear(self) -> None:
        """Forget every row (they are committed); the column line stays."""
        assert self._fd is not None
        os.ftruncate(self._fd, self._header_bytes)

    def close(self, *, keep: bool = False) -> None:
        """Remove the file (unless `keep`) and release the lock."""
        if self._fd is None:
            return
        if not keep:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)  # while still locked: no replayer can have it
        os.close(self._fd)
        self._fd = None


def _write_all(fd: int, data: bytes) -> None:
    # A regular file takes the whole buffer in one write(2) unless the disk is full.
    written = os.write(fd, data)
    if written != len(data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _candidates(db_path: Path) -> Iterator[Path]:
    prefix = _prefix(db_path)
    try:
        names = os.listdir(db_path.parent)
    except FileNotFoundError:
        return
    for name in sorted(names):
        if name.startswith(prefix):
            yield db_path.parent / name


def _parse(data: bytes) -> tuple[tuple[str, ...], Rows]:
    lines = data.split(b"\n")[:-1]  # the part after the last newline is torn or empty
    if not lines:
        return (), []
    columns = tuple(json.loads(lines[0]))
    rows: Rows = []
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, list) and len(row) == len(columns):
            rows.append(tuple(row))
    return columns, rows


@contextlib.contextmanager
def _orphan(path: Path) -> Iterator[bytes | None]:
    """The bytes of the journal at `path` if its writer is gone (locked by us meanwhile), else None."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield None
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield None  # its writer lives and will commit it
            return
        if os.fstat(fd).st_nlink == 0:
            yield None  # replayed and removed by another opener meanwhile
            return
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        yield b"".join(chunks)
    finally:
        os.close(fd)


def replay_orphans(db_path: Path,
                   commit: Callable[[tuple[str, ...], Rows], None]) -> int:
    """Commit and remove every dead writer's journal beside `db_path`; how many rows it held."""
    total = 0
    for path in _candidates(db_path):
        with _orphan(path) as data:
            if data is None:
                continue
            columns, rows = _parse(data)
            if rows:
                commit(columns, rows)
                total += len(rows)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    return total


def has_orphans(db_path: Path) -> bool:
    """Whether a dead writer left a journal beside `db_path`."""
    for path in _candidates(db_path):
        with _orphan(path) as data:
            if data is not None:
                return True
    return False
