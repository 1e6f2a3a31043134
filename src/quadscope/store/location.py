"""Where the store is: a SQLite file (the default) or a PostgreSQL URL, and the one factory for both.

Contract: `open_store(location, readonly=)` returns the `base.Store` for a
path (`SqliteStore`) or a `postgresql://` / `postgres://` URL
(`PostgresStore`, whose module and psycopg load only then, so commands that
never touch PostgreSQL start as fast as before). `default_location()` is
`$QUADSCOPE_DB` (a URL as given, a path relative to the working directory) or
`.quadscope/results.db`. `as_location(given)` reads `--db`/`db=` (None or ""
→ `default_location()`, a URL as text, anything else a `Path`); a URL of
another scheme (`mysql://`), given either way, is a UsageError, never a folder
named `mysql:`. `is_url(location)` says whether it names PostgreSQL. A
writable open of a SQLite file in a folder named `.quadscope` puts a
`.gitignore` holding `*` there (as pytest's cache does), so the folder never
shows in `git status`. `mask_url` (from base) hides a URL's password wherever
a URL is shown to the user.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from quadscope.errors import UsageError
from quadscope.store.base import Store, mask_url
from quadscope.store.sqlite import DB_ENV_VAR, SqliteStore, default_db_path

__all__ = ["as_location", "default_location", "is_url", "mask_url", "open_store"]

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(location: str | Path) -> bool:
    """Whether `location` names a PostgreSQL database rather than a file."""
    return isinstance(location, str) and location.lower().startswith(URL_SCHEMES)


# Any URL (RFC 3986 scheme, then `://`): one quadscope cannot open must not become a folder.
_ANY_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _refuse_other_url(location: str, where: str) -> None:
    if _ANY_URL.match(location) and not is_url(location):
        scheme = location.split("://", 1)[0]
        raise UsageError(f"{where} {mask_url(location)} is a {scheme}:// URL, which quadscope "
                         "cannot store in: give a SQLite file path or a postgresql:// URL")


def default_location(cwd: Path | None = None, env: Mapping[str, str] = os.environ) -> Path | str:
    """`$QUADSCOPE_DB` (a URL, or a path relative to `cwd`), else `.quadscope/results.db`."""
    configured = env.get(DB_ENV_VAR, "")
    _refuse_other_url(configured, f"${DB_ENV_VAR}")
    return configured if is_url(configured) else default_db_path(cwd, env)


def as_location(given: str | Path | None) -> Path | str:
    """What `--db` (or `db=`) names: a URL kept as text, a path as a Path, nothing the default.

    A URL of any other scheme (`mysql://`) is refused (UsageError) rather than read as a path.
    """
    if given is None or given == "":
        return default_location()
    if isinstance(given, str):
        _refuse_other_url(given, "--db")
    return given if is_url(given) else Path(given)


def open_store(location: str | Path, *, readonly: bool = False) -> Store:
    """The store at `location`; `readonly` opens an existing one to read and never creates one."""
    if is_url(location):
        from quadscope.store.postgres import PostgresStore

        return PostgresStore(str(location), readonly=readonly)
    path = Path(location)
    if readonly:
        return SqliteStore.for_reading(path)
    store = SqliteStore(path)
    _ignore_in_git(path.parent)
    return store


DEFAULT_FOLDER = ".quadscope"
GITIGNORE = "# Created by quadscope: the results database stays out of git.\n*\n"


def _ignore_in_git(folder: Path) -> None:
    """A `.quadscope/` folder ignores itself in git, as pytest's `.pytest_cache/` does."""
    marker = folder / ".gitignore"
    if folder.name != DEFAULT_FOLDER or marker.exists():
        return
    with contextlib.suppress(OSError):  # a read-only folder: git status shows it, nothing worse
        marker.write_text(GITIGNORE)
