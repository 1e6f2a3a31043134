"""The results database: `Store` over one SQLite file, with all the SQL in this package.

`sqlite` holds `Store` and its queries, `schema` the tables (the runs columns
read from the metric registry) and `migrations` the numbered upgrades of older
stores. Callers import from here.
"""

from quadscope.store.sqlite import (
    APPLICATION_ID,
    DB_ENV_VAR,
    LATEST_REFS,
    Store,
    default_db_path,
)

__all__ = ["APPLICATION_ID", "DB_ENV_VAR", "LATEST_REFS", "Store", "default_db_path"]
