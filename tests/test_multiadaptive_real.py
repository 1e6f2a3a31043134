"""Adaptive mode over several sizes on a real C program, through the CLI (run.multiadaptive).

Bounded: the instruction meter (Valgrind: the same count on every run, whatever the
load) with one run a point, within --budget 40: the 3 × 3 base design, a confirming
look, perhaps an extension; about 15 short Valgrind runs, 10-45 s on a loaded 2-core
machine. Never retried.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.test_multi_integration import ROWS_BY_COLS

from quadscope.cli import main
from quadscope.measure.cbuild import compile_c

pytestmark = pytest.mark.slow


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="the instruction meter needs Valgrind")
def test_adaptive_mode_reads_quadratic_in_rows_linear_in_cols(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = compile_c(ROWS_BY_COLS, name="rows-by-cols", flags=("-O1",))
    out = tmp_path / "grid.json"
    code = main(["run", "--db", str(tmp_path / "r.db"), "--meter", "instructions",
                 "--budget", "40", "--start", "rows=40", "--start", "cols=4",
                 "--json", str(out), "--", str(prog), "{rows}", "{cols}"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "chosen adaptively within 40 s" in text
    assert "quadratic in rows, linear in cols" in text
    data = json.loads(out.read_text())
    sizes = {a["name"]: a["sizes"] for a in data["sweep"]["axes"]}
    assert sizes["rows"][:3] == [40, 80, 160] and sizes["cols"][:3] == [4, 8, 16]
    classes = {a["axis"]: a["class"] for a in data["axes"]}
    assert classes == {"rows": "n^2", "cols": "n"}
