"""A real C program quadratic in one size and linear in another reads so, through the CLI.

Bounded: under the instruction meter (Valgrind: the same count on every run,
whatever the load) on the star design of at most 10 points, two runs each
(the exact meter's repeats stop where two counts agree): about 20 short
Valgrind runs, 10-25 s on a loaded 2-core machine. Never retried.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from quadscope.classes import REGISTRY
from quadscope.cli import main
from quadscope.measure.cbuild import compile_c

pytestmark = pytest.mark.slow

ROWS_BY_COLS = r"""
#include <stdio.h>
#include <stdlib.h>
/* For each of m columns, compare every pair of the n rows: n²·m. */
int main(int argc, char **argv) {
    long n = atol(argv[1]), m = atol(argv[2]);
    volatile long acc = 0;
    for (long c = 0; c < m; c++)
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++) acc += (i ^ j ^ c) & 1;
    printf("%ld\n", (long)acc);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="the instruction meter needs Valgrind")
def test_quadratic_in_rows_linear_in_cols(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    prog = compile_c(ROWS_BY_COLS, name="rows-by-cols", flags=("-O1",))
    out = tmp_path / "multi.json"
    page = tmp_path / "multi.html"
    code = main(["run", "--db", str(tmp_path / "m.db"), "--meter", "instructions",
                 "--sizes", "rows=50..400", "--sizes", "cols=4..32", "--max-points", "10",
                 "--json", str(out), "--html", str(page), "--png", str(tmp_path / "png"),
                 "--fail-above", "rows=n log n", "--fail-above", "cols=n",
                 "--", str(prog), "{rows}", "{cols}"])
    text = capsys.readouterr()
    doc = json.loads(out.read_text())
    assert [a["class"] for a in doc["axes"]] == ["n^2", "n"], doc["axes"]
    assert doc["separable"] == "no"
    assert doc["verdict"].startswith("quadratic in rows, linear in cols; the cost is not "
                                     "separable: rows²·cols fits better than rows²")
    assert "quadratic in rows, linear in cols" in text.out
    assert all(len(line) <= 80 for line in text.out.splitlines())
    assert code == 8  # rows grows faster than n log n: that gate fails; cols ≤ n passes
    assert "gate rows ≤ rows log rows: fail" in text.err
    assert "gate cols ≤ cols: pass" in text.err
    assert page.read_text().count("<svg") == 3
    assert [p.name for p in (tmp_path / "png").iterdir()] == ["instructions.png"]


def test_api_sweeps_a_function_over_two_keyword_sizes(tmp_path: Path):
    """`sweep_sizes` calls func(n=..., m=...) at each point and reads n·m as linear in both."""
    from quadscope.api import sweep_sizes

    seen = set()

    def work(n: int, m: int) -> int:
        seen.add((n, m))
        return sum(range(n * m * 50))

    report = sweep_sizes(work, sizes={"n": [10, 20, 40, 80], "m": [10, 20, 40, 80]},
                         db=tmp_path / "api.db", repeat=2)
    assert len(seen) == 16
    assert report.verdict is not None
    assert [a.axis for a in report.verdict.axes] == ["n", "m"]
    linear = REGISTRY.index("n")  # both axes: the class or bracket holds linear
    for a in report.verdict.axes:
        assert REGISTRY.index(a.growth.at_least) <= linear <= REGISTRY.index(a.growth.at_most), a


ROWS_PLUS_COLS = ROWS_BY_COLS.replace("for (long j = 0; j < n; j++) ", "").replace(
    "(i ^ j ^ c)", "(i ^ c)").replace("n²·m", "n·m")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="the instruction meter needs Valgrind")
def test_run_vs_over_two_sizes_names_the_size_that_became_quadratic(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A linear in rows, B quadratic in rows, both linear in cols: `run --vs --fail-on class`
    fails (8) on rows alone; the exported CSV holds both commands' runs, the HTML the change. Bounded as
    the test above: about 36 short Valgrind runs."""
    linear = compile_c(ROWS_PLUS_COLS, name="rows-plus-cols", flags=("-O1",))
    quadratic = compile_c(ROWS_BY_COLS, name="rows-by-cols", flags=("-O1",))
    db, out = str(tmp_path / "m.db"), tmp_path / "vs.json"
    code = main(["run", "--db", db, "--meter", "instructions", "--sizes", "rows=50..400",
                 "--sizes", "cols=4..32", "--max-points", "9", "--fail-on", "class",
                 "--json", str(out), "--", str(linear), "{rows}", "{cols}",
                 "--vs", str(quadratic), "{rows}", "{cols}"])
    text = capsys.readouterr()
    assert code == 8, text.err
    assert all(len(line) <= 80 for line in text.out.splitlines()), text.out
    assert "B changed the growth: rows: rows → rows²" in text.out
    assert "gate fail: rows: B grows faster than A" in text.err
    assert "gate pass: cols:" in text.err
    doc = json.loads(out.read_text())
    assert doc["metric"] == "instructions"
    assert [c["change"] for c in doc["axes"]] == ["worse", "same"]
    assert main(["export", "--db", db, "last", "--csv", str(tmp_path / "r.csv"),
                 "--html", str(tmp_path / "vs.html")]) == 0
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[0].startswith("sweep_id,seq,variant,size_rows,size_cols,")
    assert {r.split(",")[2] for r in rows[1:]} == {"A", "B"}
    assert "B changed the growth: rows: rows → rows²" in (tmp_path / "vs.html").read_text()
