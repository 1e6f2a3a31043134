"""quadscope started with standard error closed (`2>&-`) or on a read-only descriptor runs
as if stderr went to /dev/null: it measured nothing and exited 1 before (the first warning
had nowhere to go), and the next file opened could have taken descriptor 2."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SRC = str(Path(__file__).parents[1] / "src")


def _close_stderr() -> None:
    os.close(2)


def _read_only_stderr() -> None:  # what a bash shim leaves: its script, open for reading
    fd = os.open(__file__, os.O_RDONLY)
    os.dup2(fd, 2)
    os.close(fd)


@pytest.mark.slow
@pytest.mark.parametrize("damage", [_close_stderr, _read_only_stderr])
def test_a_sweep_with_no_usable_stderr_is_measured_and_stored(
        tmp_path: Path, damage: Callable[[], None]) -> None:
    db = tmp_path / "r.db"
    proc = subprocess.run(
        [sys.executable, "-m", "quadscope", "run", "--db", str(db), "--meter", "time",
         "--repeat", "1", "--warmup", "0", "--sizes", "100,200,400,800",
         "--", "python:math:factorial", "{n}"],
        env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
        preexec_fn=damage, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout.decode(errors="replace")
    assert b"sweep 1" in proc.stdout
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from runs").fetchone()[0] >= 4
