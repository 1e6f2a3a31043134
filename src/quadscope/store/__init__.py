"""The results database: the `Store` protocol, its two back ends, and all the SQL, in this package.

`base` holds the `Store` protocol and the queries and row conversions both
back ends share; `sqlite` holds `SqliteStore` (one file, the default), with
`journal` its run journal (one line per run, committed in batches, replayed
after a crash); `postgres` `PostgresStore` (a shared server, loaded only for a
`postgresql://` URL); `schema` the tables (the runs columns read from the
metric registry) and the one `Dialect` that says how PostgreSQL differs;
`migrations` the numbered upgrades of older stores; `location` the factory
`open_store` choosing the back end by URL scheme. Callers import from here.
"""

from quadscope.store.base import LATEST_REFS, Store
from quadscope.store.location import as_location, default_location, is_url, mask_url, open_store
from quadscope.store.sqlite import APPLICATION_ID, DB_ENV_VAR, SqliteStore, default_db_path

__all__ = [
    "APPLICATION_ID",
    "DB_ENV_VAR",
    "LATEST_REFS",
    "SqliteStore",
    "Store",
    "as_location",
    "default_db_path",
    "default_location",
    "is_url",
    "mask_url",
    "open_store",
]
