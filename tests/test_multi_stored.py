"""`export` and `compare` of a stored sweep over several sizes, on fakes (no real process):
export writes the several-size document `show --json` writes; compare refuses its export, which
holds no runs, in one sentence (tests/test_multi_compare.py compares stored ones)."""

from __future__ import annotations

import json

from tests.test_multi_sweep import _cost, _spec

from quadscope.cli import main
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.run.runner import run_sweep
from quadscope.store import Store


def _stored(store: Store, clock: FakeClock) -> int:
    return run_sweep(_spec(), executor=FakeExecutor(_cost, clock), clock=clock, store=store).id


def test_export_writes_the_several_size_document_show_writes(tmp_path, store, clock, capsys):
    sweep_id = _stored(store, clock)
    db = str(tmp_path / "results.db")
    assert main(["export", "--db", db, str(sweep_id), "--json", str(tmp_path / "e.json")]) == 0
    assert capsys.readouterr().out == ""  # export reports nothing on the terminal
    assert main(["show", "--db", db, str(sweep_id), "--json", str(tmp_path / "s.json")]) == 0
    exported = json.loads((tmp_path / "e.json").read_text())
    assert exported == json.loads((tmp_path / "s.json").read_text())
    assert exported["format"] == "quadscope.multi/1"
    assert [a["axis"] for a in exported["axes"]] == ["n", "m"]
    assert [a["class"] for a in exported["axes"]] == ["n^2", "n"]


def test_report_writes_the_several_size_document_not_a_one_size_page(tmp_path, store, clock,
                                                                     monkeypatch):
    """`report` of a sweep over several sizes once drew it as a one-size sweep of its first
    axis ("sizes 4: 10, 20, 40, 80", a verdict in n alone); it writes what `export` does."""
    sweep_id = _stored(store, clock)
    db = str(tmp_path / "results.db")
    assert main(["report", "--db", db, str(sweep_id), "--json", str(tmp_path / "r.json")]) == 0
    reported = json.loads((tmp_path / "r.json").read_text())
    assert reported["format"] == "quadscope.multi/1"
    assert [a["axis"] for a in reported["axes"]] == ["n", "m"]
    monkeypatch.chdir(tmp_path)  # with no output option: quadscope-<id>.html, the several-size page
    assert main(["report", "--db", db, str(sweep_id)]) == 0
    page = (tmp_path / f"quadscope-{sweep_id}.html").read_text()
    assert "How the cost grows in each size" in page


def test_compare_refuses_an_exported_sweep_over_several_sizes_in_one_sentence(
        tmp_path, store, clock, capsys):
    sweep_id = _stored(store, clock)
    db = str(tmp_path / "results.db")
    assert main(["export", "--db", db, str(sweep_id), "--json", str(tmp_path / "e.json")]) == 0
    capsys.readouterr()
    code = main(["compare", "--db", db, str(tmp_path / "e.json"), str(sweep_id)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("quadscope:") == 1 and "Traceback" not in err
    assert "is a sweep over several sizes exported as its verdict, without its runs" in err


def test_a_sweep_named_like_a_file_here_is_still_the_stored_sweep(tmp_path, store, clock,
                                                                  monkeypatch, capsys):
    """`export join` where ./join is the program swept (as it often is): the stored sweep
    over several sizes, not the one-size path (whose CSV once crashed on its runs' axes)."""
    import dataclasses

    sweep = run_sweep(dataclasses.replace(_spec(), name="join"),
                      executor=FakeExecutor(_cost, clock), clock=clock, store=store)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "join").write_text("#!/bin/sh\n")
    code = main(["export", "--db", str(tmp_path / "results.db"), "join", "--csv", "j.csv"])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "j.csv").read_text().startswith("sweep_id,seq,variant,size_n,size_m,")
    assert sweep.id == 1
