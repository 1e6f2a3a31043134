"""The per-size table (`show --sizes`, `-v`): its statistics, its rendering, `--metric`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from quadscope.analyse.analysis import analyse
from quadscope.analyse.headline import lead_fit
from quadscope.analyse.sizestats import SizeStats, shown_sizes, size_stats
from quadscope.cli import main
from quadscope.model import Measurement, Run, Sweep
from quadscope.render import get_renderer
from quadscope.store import SqliteStore
from test_report import SIZES, synth_runs


def _run(seq: int, n: int, wall_s: float, *, ok: bool = True, warmup: bool = False) -> Run:
    m = Measurement(wall_s=wall_s, user_s=wall_s, sys_s=0.0, exit_code=0 if ok else 1)
    return Run(1, seq, "A", n, seq, warmup, 0.0, m)


def test_size_stats_are_min_median_max_and_mad_over_median_per_size() -> None:
    """Three sizes: n=10 has 1, 2, 3, 10 (median 2.5, MAD median(1.5, .5, .5, 7.5) = 1);
    n=20 one run (no spread); n=30 a median of 0 (no spread)."""
    runs = [_run(0, 10, 1.0), _run(1, 10, 2.0), _run(2, 10, 3.0), _run(3, 10, 10.0),
            _run(4, 20, 5.0), _run(5, 30, 0.0), _run(6, 30, 0.0)]
    got = size_stats(runs, "wall_s")
    assert [s.size_n for s in got] == [10, 20, 30]
    first = got[0]
    assert (first.runs, first.min, first.max) == (4, 1.0, 10.0)
    assert first.median == pytest.approx(2.5)
    assert first.spread == pytest.approx(1.0 / 2.5)
    assert got[1].spread is None and got[1].runs == 1
    assert got[2].spread is None
    assert size_stats(runs, "max_rss_bytes") == ()  # never counted: no rows


def test_shown_sizes_keeps_the_ends_and_spreads_the_rest() -> None:
    stats = tuple(SizeStats(n, 1, 1.0, 1.0, 1.0, None) for n in range(100))
    shown = shown_sizes(stats, 12)
    assert len(shown) == 12 and shown[0].size_n == 0 and shown[-1].size_n == 99
    assert shown_sizes(stats[:5], 12) == stats[:5]


def _sweep(vs: bool = False) -> tuple[Sweep, list[Run]]:
    sweep = Sweep(id=1, name="q", mode="sizes", command=("p", "{n}"),
                  vs_command=("b", "{n}") if vs else None, sizes=SIZES, repeat=3,
                  status="complete")
    runs = synth_runs(SIZES, 3, power=2.0, noise=0.02)
    if vs:
        runs += synth_runs(SIZES, 3, variant="B", power=1.0, coef=2e-7, seed=2, start_seq=100)
    return sweep, runs


def _lines(text: bytes | dict[str, bytes]) -> list[str]:
    assert isinstance(text, bytes)
    return text.decode().splitlines()


def test_sizes_table_shows_every_size_of_the_headline_metric_within_80_columns() -> None:
    """`--sizes`: a table headed n, runs, min, median, max, MAD/median with one row per size
    of the headline's metric; `-v` shows it too; A/B sweeps get one per side."""
    sweep, runs = _sweep()
    analysis = analyse(sweep, runs)
    lines = _lines(get_renderer("terminal", width=80, sizes=True).render(analysis))
    assert all(len(line) <= 80 for line in lines)
    # The headline leads with CPU time here (the less noisy of the two times): so does this.
    assert lines[0].startswith("quadratic: CPU time grows as n²")
    at = lines.index(next(line for line in lines if line.startswith("cpu_s per size")))
    assert lines[at + 1].split() == ["n", "runs", "min", "median", "max", "MAD/median"]
    rows = [line.split() for line in lines[at + 3:at + 3 + len(SIZES)]]
    assert [r[0] for r in rows] == [f"{n // 1000}k" for n in SIZES]
    assert all(r[1] == "3" and r[-1].endswith("%") for r in rows)
    default = _lines(get_renderer("terminal", width=80).render(analysis))
    assert not any("per size" in line for line in default)
    verbose = _lines(get_renderer("terminal", width=80, verbose=True).render(analysis))
    assert any(line.startswith("cpu_s per size") for line in verbose)
    ab = _lines(get_renderer("terminal", width=80, sizes=True,
                             metric="max_rss_bytes").render(analyse(*_sweep(vs=True))))
    assert any(line.startswith("A: max_rss_bytes per size") for line in ab)
    assert any(line.startswith("B: max_rss_bytes per size") for line in ab)


def _stored(tmp_path: Path) -> str:
    db = tmp_path / "r.db"
    sweep, runs = _sweep()
    with SqliteStore(db) as store:
        stored = store.create_sweep(dataclasses.replace(sweep, id=0))
        for r in runs:
            store.add_run(dataclasses.replace(r, sweep_id=stored.id))
    return str(db)


def test_show_metric_prints_that_metric_per_size_and_refuses_an_unknown_one(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """`show --metric max_rss_bytes` prints its table (no --sizes needed); a metric that is
    no metric, or one the sweep did not count, is one sentence on stderr and exit 2."""
    db = _stored(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", "1", "--db", db, "--metric", "max_rss_bytes"]) == 0
    out = capsys.readouterr().out
    assert "max_rss_bytes per size" in out and "MiB" in out
    for bad, said in (("walltime", "is not a metric"),
                      ("instructions", "was not measured in this sweep")):
        assert main(["show", "1", "--db", db, "--metric", bad]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        err = " ".join(captured.err.split())
        assert err.startswith(f"quadscope: --metric {bad} {said}; give one of: wall_s")
        assert err.count(".") <= 1 and "Traceback" not in err


def test_runs_own_sizes_option_does_not_ask_for_the_table(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --sizes 1e3..64e3` names the sizes to sweep: its report has no per-size table,
    while `show --sizes` (dest per_size) does."""
    import argparse

    from quadscope.commands.common import print_analysis

    monkeypatch.setenv("COLUMNS", "80")
    analysis = analyse(*_sweep())
    print_analysis(analysis, argparse.Namespace(sizes="1e3..64e3", metric=None))
    assert "per size" not in capsys.readouterr().out
    print_analysis(analysis, argparse.Namespace(per_size=True, size_metric="wall_s"))
    assert "wall_s per size" in capsys.readouterr().out


def test_show_json_carries_the_per_size_table_of_every_fitted_metric(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`show --sizes --json -` holds the table the terminal prints: `size_stats[metric]` for the
    headline metric (and any other the compact report shows), one row per size with n,
    runs, min, median, max and the spread (MAD/median)."""
    import json

    db = _stored(tmp_path)
    assert main(["show", "1", "--db", db, "--sizes", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sweep, runs = _sweep()
    analysis = analyse(sweep, runs)
    lead = lead_fit(analysis.fits["A"], analysis.work_metric)
    assert lead is not None and doc["schema"] == 2
    assert next(iter(doc["size_stats"])) == lead.metric  # the headline's table first
    assert set(doc["size_stats"]) <= set(doc["fits"]) and "wall_s" in doc["size_stats"]
    rows = doc["size_stats"]["wall_s"]
    measured = [r for r in runs if not r.warmup and r.measurement.ok]
    want = [s.to_dict() for s in size_stats(measured, "wall_s")]
    assert [r["n"] for r in rows] == sorted({r.size_n for r in measured}) == [w["n"] for w in want]
    for got, expected in zip(rows, want, strict=True):
        assert got["runs"] == expected["runs"]
        for key in ("min", "median", "max"):
            assert got[key] == pytest.approx(expected[key], rel=1e-12)
        assert (got["mad_over_median"] is None) == (expected["mad_over_median"] is None)
    assert "vs_size_stats" not in doc
    ab = analyse(*_sweep(vs=True)).to_dict()
    assert [r["n"] for r in ab["vs_size_stats"]["wall_s"]] == list(SIZES)
    assert ab["vs_size_stats"]["wall_s"][-1]["median"] < ab["size_stats"]["wall_s"][-1]["median"]
