"""`quadscope list` at 80 and 160 columns: the verdict in every row, names cut in the middle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from quadscope.analyse.brief import KEY, Brief
from quadscope.cli import main
from quadscope.model import Sweep
from quadscope.render.listing import middle_cut
from quadscope.store import SqliteStore
from test_report import synth_runs

SIZES = (1000, 2000, 4000, 8000, 16000, 32000)
LONG = "python3 -c 'import sys; sorted(range(int(sys.argv[1])))' {n} --and-a-long-tail-END"


def _store(db: Path) -> None:
    """Three stored sweeps: flat, quadratic under a long name, and an A/B whose B is linear."""
    with SqliteStore(db) as store:
        for name, power in (("flat", 0.0), (LONG, 2.0)):
            sweep = store.create_sweep(Sweep(id=0, name=name, mode="sizes", command=("p", "{n}"),
                                             sizes=SIZES, repeat=3, status="complete"))
            for r in synth_runs(SIZES, 3, power=power, coef=2e-9 if power else 0.0, noise=0.02):
                store.add_run(dataclasses.replace(r, sweep_id=sweep.id))
        ab = store.create_sweep(Sweep(id=0, name="fix", mode="sizes", command=("a", "{n}"),
                                      vs_command=("b", "{n}"), sizes=SIZES, repeat=3,
                                      status="complete"))
        runs = synth_runs(SIZES, 3, power=2.0, noise=0.02) + synth_runs(
            SIZES, 3, variant="B", power=1.0, coef=2e-7, noise=0.02, seed=2, start_seq=18)
        for r in runs:
            store.add_run(dataclasses.replace(r, sweep_id=ab.id))


def _list(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, db: Path,
          columns: int) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["list", "--db", str(db)]) == 0
    return capsys.readouterr().out.splitlines()


def test_list_at_80_columns_shows_id_name_verdict_and_when(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """Every line fits 80 columns; the heads are id, name, verdict, when; each sweep's class
    is there (n² for the quadratic, "better: n² → n" for the A/B); the long name is
    shell-quoted and keeps its start and its end."""
    db = tmp_path / "r.db"
    _store(db)
    lines = _list(capsys, monkeypatch, db, 80)
    assert all(len(line.rstrip()) <= 80 for line in lines)
    head = next(line for line in lines if "verdict" in line)
    assert [w for w in head.replace("┃", " ").split()] == ["id", "name", "verdict", "when"]
    rows = {line.split("│")[1].strip(): line for line in lines if line.startswith("│")}
    assert set(rows) == {"1", "2", "3"}
    assert "│ 1 " in rows["1"].replace("  ", " ") and "flat" in rows["1"]
    assert "n²" in rows["2"] and "'python3" in rows["2"] and "END'" in rows["2"]
    assert "…" in rows["2"]
    assert "better: n² → n" in rows["3"]


def test_wider_terminals_add_status_runs_sizes_then_meter_kind_mode(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """160 columns add status, runs and sizes; meter, kind and mode come only where the
    94-character name fits whole beside them (200)."""
    db = tmp_path / "r.db"
    _store(db)
    quoted = LONG.replace("'", "'\"'\"'")
    for width, heads, whole in ((160, ("status", "runs", "sizes"), False),
                                (200, ("status", "runs", "sizes", "meter", "kind", "mode"), True)):
        lines = _list(capsys, monkeypatch, db, width)
        assert all(len(line.rstrip()) <= width for line in lines)
        head = next(line for line in lines if "verdict" in line)
        assert [w for w in head.replace("┃", " ").split()] == ["id", "name", "verdict", "when",
                                                               *heads]
        assert any(f"'{quoted}'" in line for line in lines) == whole
        assert any("1k..32k (6)" in line and "complete" in line for line in lines)


def test_list_keeps_the_verdicts_and_refits_only_a_sweep_that_changed(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """The first `list` stores each brief; a brief made from other runs is made again."""
    db = tmp_path / "r.db"
    _store(db)
    _list(capsys, monkeypatch, db, 80)
    with SqliteStore(db) as store:
        kept = Brief.from_dict(store.get_blob(2, KEY))
        assert kept is not None and kept.text == "n²" and kept.fresh(18)
        store.put_blob(2, KEY, dataclasses.replace(kept, text="stale", runs=5).to_dict())
        store.put_blob(1, KEY, {"text": 3})  # not a brief: made again
    lines = _list(capsys, monkeypatch, db, 80)
    assert not any("stale" in line for line in lines)
    with SqliteStore(db) as store:
        assert (Brief.from_dict(store.get_blob(2, KEY)) or kept).runs == 18
        assert (Brief.from_dict(store.get_blob(1, KEY)) or kept).text == "1"


def test_list_says_what_did_not_complete_where_status_has_no_column(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """An interrupted sweep reads "interrupted: n²" at 80 columns, and how to continue it."""
    db = tmp_path / "r.db"
    _store(db)
    with SqliteStore(db) as store:
        store.set_status(2, "interrupted")
    out = "\n".join(_list(capsys, monkeypatch, db, 80))
    assert "interrupted: n²" in out and "quadscope run --resume 2" in out


def test_middle_cut_keeps_both_ends() -> None:
    assert middle_cut("abcdefghij", 10) == "abcdefghij"
    assert middle_cut("abcdefghij", 5) == "ab…ij"
    assert middle_cut("abcdefghij", 6) == "abc…ij"
    assert middle_cut("abc", 1) == "…"


def _printed(table: object, width: int) -> list[str]:
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None).print(table)
    return buf.getvalue().splitlines()


def test_history_at_80_columns_keeps_class_k_cost_change_and_a_subject() -> None:
    """At 80 columns nothing is cut to "…" but the subject: commit, class, k, cost and the
    change in short; at 160 the intervals and the change in words join."""
    from quadscope.render.history_table import history_table
    from test_history import FEW

    subject = "parser: cache the lookahead buffer so the tokenizer is linear again"
    history = dataclasses.replace(FEW, points=tuple(
        dataclasses.replace(p, subject=subject) for p in FEW.points))
    lines = _printed(history_table(history, 80), 80)
    assert all(len(line.rstrip()) <= 80 for line in lines)
    head = next(line for line in lines if "class" in line)
    assert head.replace("┃", " ").split() == ["commit", "class", "k", "cost", "at", "n",
                                              "change", "subject"]
    rows = [line for line in lines if line.startswith("│")]
    assert "0000003" in rows[2] and "n²" in rows[2] and "210 ms" in rows[2]
    assert "n → n²; ×15.3" in rows[2] and "parser: cache" in rows[2]
    assert all(line.count("…") == 1 for line in rows)  # the subject's, and nothing else's
    wide = _printed(history_table(history, 160), 160)
    assert all(len(line.rstrip()) <= 160 for line in wide)
    assert any("class n → n²; cost ×15.3" in line and subject[:50] in line for line in wide)
    assert any("1.00 [0.90, 1.10]" in line for line in wide)


def test_history_without_subjects_at_60_columns_still_fits() -> None:
    """No subject known and a 60-column terminal: the five answer columns, uncut."""
    from quadscope.render.history_table import history_table
    from test_history import FEW

    lines = _printed(history_table(FEW, 60), 60)
    assert all(len(line.rstrip()) <= 60 for line in lines)
    assert not any("…" in line for line in lines[1:])
    assert any("n² → n; ×0.07" in line for line in lines)


def test_a_store_of_unfitted_sweeps_is_fitted_a_few_at_a_time(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """With FIT_PER_LIST at 1, the first `list` fits the newest sweep and says how many wait
    (shown as —); each `list` after fits one more, until none waits."""
    from quadscope.commands import stored

    monkeypatch.setattr(stored, "FIT_PER_LIST", 1)
    db = tmp_path / "r.db"
    _store(db)
    lines = _list(capsys, monkeypatch, db, 80)
    rows = {line.split("│")[1].strip(): line for line in lines if line.startswith("│")}
    assert "better: n² → n" in rows["3"] and "—" in rows["2"] and "—" in rows["1"]
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["list", "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert "verdicts of 1 older sweeps are not known yet" in " ".join(captured.err.split())
    assert "n²" in next(line for line in captured.out.splitlines() if line.startswith("│  2"))
    _list(capsys, monkeypatch, db, 80)
    assert main(["list", "--db", str(db)]) == 0
    assert capsys.readouterr().err == ""


def test_a_doctor_summary_lists_its_answer(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """The doctor's summary sweep (no runs) lists what its report says, in red when slow."""
    from quadscope.doctor.records import DoctorReport, ProbeResult

    db = tmp_path / "r.db"
    report = DoctorReport((ProbeResult("fork", "m", "n", "1 ms", "slow", "f"),
                           ProbeResult("clock", "m", "1", "20 ns", "ok", "f")),
                          machine={}, quick=True, budget_s=30.0, elapsed_s=9.0)
    with SqliteStore(db) as store:
        s = store.create_sweep(Sweep(id=0, name="doctor", mode="sizes", command=("quadscope",),
                                     kind="doctor", status="complete"))
        store.put_blob(s.id, "doctor", report.to_dict())
    lines = _list(capsys, monkeypatch, db, 80)
    assert any("fork is slow; 1 of 2 probes ok" in line for line in lines)
