"""Importing hyperfine and pytest-benchmark JSON, written by the real tools, as sweeps."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quadscope.cli import main
from quadscope.interop import ImportFormatError, read_sweeps
from quadscope.store import SqliteStore

BENCH_TEST = """
import pytest

@pytest.mark.parametrize("n", [200, 400, 800, 1600])
def test_sort(benchmark, n):
    data = list(range(n, 0, -1))
    benchmark.pedantic(sorted, args=(data,), rounds=3, iterations=1)
"""


def _pytest_benchmark_json(tmp_path: Path, *extra: str) -> Path:
    """pytest-benchmark's saved file (`--benchmark-save`): statistics, rounds only if asked."""
    (tmp_path / "test_b.py").write_text(BENCH_TEST)
    storage = tmp_path / "storage"
    shutil.rmtree(storage, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_b.py",
                    "--benchmark-save=run", f"--benchmark-storage=file://{storage}", *extra],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    (out,) = storage.rglob("*.json")
    return out


@pytest.mark.integration
def test_hyperfine_parameter_scan_is_one_sweep_with_every_run(tmp_path: Path) -> None:
    """Each of hyperfine's per-run times is a run at its parameter's value, {n} in the command."""
    if shutil.which("hyperfine") is None:
        pytest.skip("hyperfine is not installed (scripts/setup installs it)")
    out = tmp_path / "hf.json"
    subprocess.run(["hyperfine", "-N", "--style", "none", "--runs", "3", "--warmup", "0",
                    "--parameter-scan", "n", "1", "4", "--export-json", str(out),
                    "true {n}"], check=True, capture_output=True, timeout=120)
    db = tmp_path / "r.db"
    assert main(["import", str(out), "--db", str(db), "--name", "hf"]) == 0
    with SqliteStore(db) as store:
        sweep = store.get_sweep("hf")
        runs = store.runs(sweep.id)
    assert sweep.command == ("true", "{n}") and sweep.counters == "hyperfine"
    assert [r.size_n for r in runs] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    assert [r.repeat for r in runs[:3]] == [0, 1, 2]
    assert all(r.measurement.ok and r.measurement.wall_s > 0 for r in runs)
    assert all(r.measurement.user_s is None for r in runs)


@pytest.mark.integration
def test_pytest_benchmark_rounds_become_runs_and_statistics_a_median(tmp_path: Path) -> None:
    """With --benchmark-save-data every round is a run; without, one median per size."""
    saved = json.loads(_pytest_benchmark_json(tmp_path, "--benchmark-save-data").read_text())
    (item,) = read_sweeps(saved, source="b.json", now=0.0)
    assert item.sweep.name == "test_b.py::test_sort" and item.sweep.counters == "pytest-benchmark"
    assert [n for n, _ in item.runs] == [200] * 3 + [400] * 3 + [800] * 3 + [1600] * 3
    stats_only = json.loads(_pytest_benchmark_json(tmp_path).read_text())
    (item,) = read_sweeps(stats_only, source="b.json", now=0.0)
    medians = [b["stats"]["median"] for b in stats_only["benchmarks"]]
    assert [(n, m.wall_s) for n, m in item.runs] == list(zip([200, 400, 800, 1600], medians,
                                                            strict=True))
    assert "--benchmark-save-data" in item.sweep.counters_note
    db = tmp_path / "r.db"
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(saved))
    assert main(["import", str(path), "--db", str(db)]) == 0
    assert main(["show", "test_b.py::test_sort", "--db", str(db)]) == 0


def test_parameters_pick_n_or_ask_for_param() -> None:
    """One numeric parameter is n; several need --param, which then picks one."""
    doc = {"results": [{"command": "p 10 x", "times": [0.1], "exit_codes": [0],
                        "parameters": {"n": "10", "m": "3"}}]}
    with pytest.raises(ImportFormatError, match="name n with --param"):
        read_sweeps(doc, source="f.json", now=0.0)
    (item,) = read_sweeps(doc, source="f.json", now=0.0, param="n")
    assert item.runs[0][0] == 10 and item.sweep.command == ("p", "{n}", "x")
    with pytest.raises(ImportFormatError, match="no numeric parameter 'k'"):
        read_sweeps(doc, source="f.json", now=0.0, param="k")


@pytest.mark.parametrize("text, sentence", [
    ("not json", "is not JSON"),
    ('{"a": 1}', "is neither `hyperfine --export-json` output"),
    ('{"results": [{"command": "p"}]}', "has no parameter to use as n"),
    ('{"benchmarks": [{"name": "t[1]", "params": {"n": 1}}]}', "lacks 'stats'"),
])
def test_a_bad_file_is_one_sentence_and_exit_2(tmp_path: Path, text: str, sentence: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Unreadable or foreign files give one line on stderr naming the problem, never a trace."""
    path = tmp_path / "f.json"
    path.write_text(text)
    assert main(["import", str(path), "--db", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and sentence in err and err.startswith("quadscope: ")


@pytest.mark.parametrize("value", ["\uff11\uff10", "1_000", "\u0663"])
def test_a_parameter_in_other_digits_is_not_a_size(value: str) -> None:
    """Decimal read hyperfine's parameter "１０" as 10 and "1_000" as 1000; n is written with
    ASCII digits, as --sizes takes it, so the parameter is not numeric."""
    doc = {"results": [{"command": f"p {v}", "times": [0.1], "exit_codes": [0],
                        "parameters": {"n": v}} for v in (value, "2", "3", "4")]}
    with pytest.raises(ImportFormatError, match="0 numeric parameters"):
        read_sweeps(doc, source="f.json", now=0.0)
