"""`run --profile` over two sizes on a real program: each axis's culprit named (slow)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from quadscope.errors import ToolMissingError
from quadscope.profile.perf import detect_perf

pytestmark = [pytest.mark.slow, pytest.mark.integration]

SOURCE = """\
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long scan_rows(long r) {
    volatile long s = 0;
    for (long i = 0; i < r * 200; i++) s += i ^ r;
    return s;
}
__attribute__((noinline)) long pair_cols(long c) {
    volatile long s = 0;
    for (long i = 0; i < c; i++) for (long j = 0; j < c; j++) s += i * j;
    return s;
}
int main(int argc, char **argv) {
    printf("%ld\\n", scan_rows(atol(argv[1])) + pair_cols(atol(argv[2])));
    return 0;
}
"""


def test_each_axis_names_its_own_function(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """rows costs scan_rows (linear), cols costs pair_cols (quadratic): profiled along each
    axis through the base point, cols's culprit is pair_cols and rows's is scan_rows. cols reaches
    8000 (64M iterations): at 4000, pair_cols's 16 ms were within the noise of scan_rows's
    sampled time at load 9, and scan_rows was ranked first along cols in 2 of 3 runs."""
    try:
        detect_perf()
    except ToolMissingError as e:
        pytest.skip(f"perf: {e}")
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    from quadscope.cli import main
    from quadscope.store import open_store

    (tmp_path / "grid.c").write_text(SOURCE)
    binary = tmp_path / "grid"
    subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", str(binary),
                    str(tmp_path / "grid.c")], check=True, timeout=60)
    db = tmp_path / "q.db"
    code = main(["run", "--db", str(db), "--sizes", "rows=10000..80000", "--sizes",
                 "cols=1000..8000", "--repeat", "1", "--profile", "--callgrind", "off",
                 "--meter", "time", "--", str(binary), "{rows}", "{cols}"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "along rows (cols = " in err and "along cols (rows = " in err
    with open_store(db) as store:
        sweep = store.get_sweep("last")
        rows = store.get_blob(sweep.id, "profile-rows")
        cols = store.get_blob(sweep.id, "profile-cols")
    assert rows is not None and cols is not None
    assert cols["culprits"][0]["symbol"] == "pair_cols", json.dumps(cols["culprits"][:2])
    assert rows["culprits"][0]["symbol"] == "scan_rows", json.dumps(rows["culprits"][:2])
    assert (db.parent / "profile" / f"{db.stem}-sweep-{sweep.id}" / "axis-cols"
            / "flame-diff.svg").exists()
