"""A throwaway PostgreSQL server for tests and benchmarks: `initdb` in a temporary folder, a Unix socket only.

`start_server()` makes a cluster in a new folder under /tmp owned by an
unprivileged user (the server refuses to run as root), starts `postgres` on a
socket in that folder (no TCP port), and waits for it at most `timeout_s`.
`PgServer.stop()` stops the server by its postmaster pid and deletes the
folder. The cluster trusts local connections except for two roles the tests
use for failures: `secret` logs in with a password only, and `visitor` may
connect but create nothing. `fsync` is off for tests (speed); a benchmark
passes `durable=True` to keep the server's defaults.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from itertools import count
from pathlib import Path

PG_BINS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
SERVER_USER = "nobody"
SECRET_PASSWORD = "hunter2"
_HBA = "local all secret scram-sha-256\nlocal all all trust\n"


def pg_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder holding initdb and postgres, or None."""
    for folder in reversed(PG_BINS):
        if (folder / "initdb").exists() and (folder / "postgres").exists():
            return folder
    return None


def _as_user(argv: list[str]) -> list[str]:
    if os.getuid() != 0:
        return argv
    entry = pwd.getpwnam(SERVER_USER)
    # setpriv execs the program itself, so the pid we hold is the postmaster's.
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
            "--", *argv]


@dataclass
class PgServer:
    """One running throwaway cluster."""

    folder: Path
    process: subprocess.Popen[bytes]
    _names: count[int]

    def url(self, dbname: str = "postgres", user: str = "postgres", password: str = "") -> str:
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@/{dbname}?host={self.folder}"

    def sql(self, statement: str, dbname: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def new_database(self) -> str:
        """A fresh empty database; its URL (as the superuser)."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self.sql(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.split("@/", 1)[1].split("?", 1)[0]
        self.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # "fast" shutdown: ends every session
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        shutil.rmtree(self.folder, ignore_errors=True)


def start_server(timeout_s: float = 60.0, durable: bool = False) -> PgServer:
    """A new cluster, started and answering; raises RuntimeError (with its log) if it is not."""
    import psycopg

    bin_dir = pg_bin()
    if bin_dir is None:
        raise FileNotFoundError("no PostgreSQL server under /usr/lib/postgresql: run scripts/setup")
    folder = Path(tempfile.mkdtemp(prefix="quadscope-pg-", dir="/tmp"))
    if os.getuid() == 0:
        entry = pwd.getpwnam(SERVER_USER)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    data = folder / "data"
    try:
        subprocess.run(_as_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                                 "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]),
                       check=True, capture_output=True, timeout=timeout_s, cwd=folder)
        (data / "pg_hba.conf").write_text(_HBA)
        settings = ["-c", "listen_addresses=", "-c", f"unix_socket_directories={folder}",
                    "-c", "max_connections=60"]
        if not durable:
            settings += ["-c", "fsync=off", "-c", "synchronous_commit=off",
                         "-c", "full_page_writes=off"]
        log = (folder / "server.log").open("wb")
        process = subprocess.Popen(_as_user([str(bin_dir / "postgres"), "-D", str(data), *settings]),
                                   stdout=log, stderr=subprocess.STDOUT, cwd=folder)
        log.close()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    server = PgServer(folder, process, count())
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                break
        except psycopg.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                text = (folder / "server.log").read_text(errors="replace")
                server.stop()
                raise RuntimeError(f"the test PostgreSQL server did not start:\n{text}") from None
            time.sleep(0.1)
    server.sql(f"CREATE ROLE secret LOGIN PASSWORD '{SECRET_PASSWORD}'")
    server.sql("CREATE ROLE visitor LOGIN")
    return server
