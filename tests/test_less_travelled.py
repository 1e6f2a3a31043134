"""The less-travelled commands under faults (BENCHMARKS.md §8, the second round): each a
reproduction of what once failed, fast and with fakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quadscope.cli import main


def _hyperfine(sizes: list[int], command: str = "p") -> dict[str, object]:
    return {"results": [{"command": f"{command} {n}", "parameters": {"n": str(n)},
                         "times": [0.1 * (i + 1), 0.1 * (i + 1)]} for i, n in enumerate(sizes)]}


def test_a_sweep_with_size_zero_is_imported_and_shown_with_that_size_left_out_of_the_fits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Sizes start at 0, but a growth class is read in log n: an imported n = 0 ended
    `import` and `show` with exit 70 (ZeroDivisionError in the tie sentence's log10(hi / 0))."""
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([0, 1, 2, 4])))
    db = str(tmp_path / "r.db")
    assert main(["import", str(src), "--db", db]) == 0
    assert main(["show", "1", "--db", db, "-v"]) == 0
    out = capsys.readouterr().out
    assert "size 0 is not fitted" in out


def test_bisect_and_history_run_like_a_sweep_over_several_sizes_say_so(tmp_path: Path) -> None:
    """`history NAME --run A..B` (and `bisect --like`) of a sweep over rows and cols once said
    "no {n} in `prog {rows} {cols}`", which named no cause: they sweep one size."""
    from quadscope.commands.commits import like_spec
    from quadscope.errors import UsageError
    from quadscope.model import Sweep

    multi = Sweep(id=7, name="grid", mode="sizes", command=("./prog", "{rows}", "{co\x1b[2Jls}"),
                  sizes=(1, 2, 4, 8), axes=(("rows", (1, 2, 4, 8)), ("co\x1b[2Jls", (1, 2, 4, 8))),
                  points=((1, 1), (2, 2), (4, 4), (8, 8)))
    with pytest.raises(UsageError) as caught:
        like_spec(multi, ref="sweep 7 (grid)")
    said = str(caught.value)
    assert "over several sizes (rows, co\\x1b[2Jls)" in said and "\x1b" not in said


@pytest.mark.parametrize("name", ["file:x.db", "file:x.db?mode=memory", ":memory:", "a b%20ü\n.db"])
def test_a_db_path_is_a_path_whatever_it_spells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 name: str) -> None:
    """`--db file:/tmp/x.db`: SQLite (built with SQLITE_USE_URI) read the writer's path as a
    URI, so `import` stored into x.db while `list` and `show` looked for ./file:x.db (and
    `:memory:` stored nothing at all); the store is the file the path names."""
    from quadscope.store import SqliteStore

    monkeypatch.chdir(tmp_path)
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 4, 8])))
    assert main(["import", str(src), "--db", name]) == 0
    assert (tmp_path / name).is_file() and not (tmp_path / "x.db").exists()
    assert main(["show", "1", "--db", name]) == 0
    with SqliteStore.for_reading(tmp_path / name) as store:
        assert len(store.list_sweeps()) == 1


def test_a_script_whose_interpreter_is_missing_is_named_as_such(tmp_path: Path) -> None:
    """exec says "No such file or directory" of a script that is there: its #! names
    an interpreter that is not; and "Exec format error" of a file that is no program here."""
    import errno

    from quadscope.measure.launcher import cannot_run

    script = tmp_path / "job.sh"
    script.write_text("#!/nonexistent/interp -x\n")
    said = str(cannot_run(str(script), errno.ENOENT))
    assert "its interpreter /nonexistent/interp (its #! line) does not exist" in said
    assert "No such file" in str(cannot_run(str(tmp_path / "gone"), errno.ENOENT))
    assert "not a program this machine runs" in str(cannot_run(str(script), errno.ENOEXEC))


@pytest.mark.parametrize("given", [2, None, 2.0, ["n"]])
def test_a_class_given_as_no_text_is_one_sentence(given: object) -> None:
    """`assert_scales(f, at_most=2)`: AttributeError "'int' object has no attribute 'strip'"."""
    from quadscope.classes import REGISTRY, UnknownClassError

    with pytest.raises(UnknownClassError, match="is not a class: write it as text"):
        REGISTRY.parse(given)  # type: ignore[arg-type]


def test_a_scans_size_is_found_where_it_stands_not_in_every_digit() -> None:
    """Every occurrence of the size's digits was taken for it: `python3 bench.py 3` became
    `python{n} bench.py {n}`, a sweep of its own, and an escape's digits became {n} too."""
    from quadscope.interop import size_templates

    scan = [(f"python3 bench.py {n}", str(n)) for n in (1, 2, 3, 13)]
    assert set(size_templates(scan)) == {"python3 bench.py {n}"}
    assert size_templates([("p -O1 1", "1"), ("p -O1 2", "2")]) == ["p -O1 {n}"] * 2
    assert size_templates([("run 3 3", "3")]) == ["run 3 {n}"]  # alone: the last place
    assert size_templates([("x\x1b[31m 1", "1"), ("x\x1b[31m 2", "2")]) == ["x\x1b[31m {n}"] * 2
    assert size_templates([("p --size=1k", "1k")]) == ["p --size={n}"]


def test_a_hyperfine_scan_of_python3_is_one_sweep(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 3, 4, 8], command="python3 bench.py")))
    assert main(["import", str(src), "--db", str(tmp_path / "r.db")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert err.count("imported sweep") == 1 and "python3 bench.py {n}, 10 runs at 5 sizes" in err


def test_a_sweep_of_very_many_runs_is_fitted_on_an_even_share_of_each_size() -> None:
    """An imported hyperfine file of 500,000 runs (5,000 a size) read every run's every metric
    for many minutes before a fit; past MAX_FIT_RUNS each size keeps an evenly spaced share."""
    from quadscope.analyse.thin import MAX_FIT_RUNS, thinned
    from quadscope.model import Measurement, Run

    sizes, per = (1, 2, 4, 8), MAX_FIT_RUNS // 2
    runs = [Run(1, i * 4 + j, "A", n, i, False, 0.0, Measurement(wall_s=0.1 * n, exit_code=0))
            for i in range(per) for j, n in enumerate(sizes)]
    kept, note = thinned({"A": runs})
    share = MAX_FIT_RUNS // len(sizes)
    assert len(kept["A"]) == MAX_FIT_RUNS and {r.size_n for r in kept["A"]} == set(sizes)
    assert [r.repeat for r in kept["A"] if r.size_n == 1][:3] == [0, 2, 4]
    assert f"at most {share:,} runs a size (of {len(runs):,} runs)" in note
    small, none = thinned({"A": runs[:1000]})
    assert len(small["A"]) == 1000 and none == ""


def test_ctrl_c_while_the_commands_modules_load_is_one_sentence(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C in the first second of `quadscope bisect …` (its modules loading, at load)
    ended in a Python traceback; now one sentence and exit 130."""
    from quadscope import cli

    def interrupted(only: str | None = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["bisect", "HEAD~1", "HEAD"]) == 130
    err = capsys.readouterr().err
    assert err == "quadscope: interrupted before anything ran\n"


def test_a_file_of_more_runs_than_an_import_takes_is_one_sentence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A 28 MB hyperfine file of 3,980,000 runs ran past 120 s, storing with nothing said."""
    from quadscope import interop

    monkeypatch.setattr(interop, "MAX_RUNS", 7)
    hf, pb = tmp_path / "hf.json", tmp_path / "pb.json"
    hf.write_text(json.dumps(_hyperfine([1, 2, 4, 8])))  # 8 runs
    pb.write_text(json.dumps({"benchmarks": [
        {"name": f"test_x[{n}]", "params": {"n": n}, "stats": {"data": [0.1] * 2, "median": 0.1}}
        for n in (1, 2, 4, 8)]}))
    for src, what in ((hf, "hyperfine's results hold 8 runs"), (pb, "its benchmarks hold 8 runs")):
        assert main(["import", str(src), "--db", str(tmp_path / "r.db")]) == 2
        err = capsys.readouterr().err
        assert what in err and "imports at most 7 from one file" in err
    assert not (tmp_path / "r.db").exists()


def test_comparing_an_ab_sweep_says_its_vs_side_is_left_out(tmp_path: Path) -> None:
    """`compare AB X` compared AB's main command and dropped its --vs side, saying nothing."""
    from bad_inputs import fake_measurement
    from quadscope.commands.stored import combined
    from quadscope.measure.clock import FakeClock
    from quadscope.measure.launcher import FakeExecutor
    from quadscope.run.runner import run_sweep
    from quadscope.run.spec import SweepSpec
    from quadscope.store import SqliteStore

    clock = FakeClock(start=1000.0)
    fake = FakeExecutor(lambda argv: fake_measurement(1e-6 * int(argv[-1]) ** 2), clock)
    sizes = (100, 200, 400, 800)
    with SqliteStore(tmp_path / "r.db") as store:
        run_sweep(SweepSpec(command=("/bin/true", "{n}"), name="ab", sizes=sizes, repeat=2,
                            warmup=0, vs_command=("/bin/echo", "{n}")),
                  executor=fake, clock=clock, store=store)
        run_sweep(SweepSpec(command=("/bin/true", "{n}"), name="one", sizes=sizes, repeat=2,
                            warmup=0), executor=fake, clock=clock, store=store)
        notes = combined(store, "ab", "one").notes
        assert notes[0] == ("sweep ab is an A/B sweep: its main command is compared, its --vs "
                            "command left out")
        assert not any("A/B sweep" in n for n in combined(store, "one", "one").notes)


def test_comparing_a_quiet_sweep_with_a_loaded_one_says_the_load_differed(tmp_path: Path
                                                                          ) -> None:
    """A on a quiet machine, B beside a job keeping a CPU busy: B's times carry that load."""
    from bad_inputs import fake_measurement
    from quadscope.commands.stored import combined
    from quadscope.host import Host
    from quadscope.measure.clock import FakeClock
    from quadscope.measure.launcher import FakeExecutor
    from quadscope.run.runner import run_sweep
    from quadscope.run.spec import SweepSpec
    from quadscope.store import SqliteStore

    clock = FakeClock(start=1000.0)
    fake = FakeExecutor(lambda argv: fake_measurement(1e-6 * int(argv[-1])), clock)
    with SqliteStore(tmp_path / "r.db") as store:
        for name, load in (("quiet", "0.03/2"), ("busy", "1.05/2"), ("also", "0.40/2")):
            run_sweep(SweepSpec(command=("/bin/true", "{n}"), name=name,
                                sizes=(100, 200, 400, 800), repeat=2, warmup=0),
                      executor=fake, clock=clock, store=store, host=Host(other_load=load))
        assert ("other work kept 0.0 of 2 CPUs busy during A's sweep and 1.1 of 2 during "
                "B's: a constant factor between their times may be the load's, not the "
                "programs'") in combined(store, "quiet", "busy").notes
        assert not any("other work" in n for n in combined(store, "quiet", "also").notes)

def _imported_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> str:
    """A store in `tmp_path` (the working directory) holding one imported sweep, "q"."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 4, 8, 16])))
    db = str(tmp_path / "r.db")
    assert main(["import", str(src), "--db", db, "--name", "q"]) == 0
    capsys.readouterr()
    return db



def test_a_folder_output_to_standard_output_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`export --png -` wrote a folder named "-" (and `show`/`compare` too), which the next
    `history --html -` then could not write into: one sentence now, exit 2."""
    db = _imported_in(tmp_path, monkeypatch, capsys)
    for argv in (["export", "q", "--png", "-"], ["show", "q", "--png", "-"],
                 ["compare", "q", "q", "--png", "-"], ["profile", "q", "--out", "-"]):
        assert main([*argv, "--db", db]) == 2
        err = capsys.readouterr().err
        assert err.count("quadscope:") == 1
        assert f"{argv[-2]} writes a folder of files" in err and "give a directory, not -" in err
    assert not (tmp_path / "-").exists()


@pytest.mark.slow  # history orders sweeps by git
def test_history_html_dash_is_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`history --html -` wrote a file named "-"; a bad --html path is refused first."""
    db = _imported_in(tmp_path, monkeypatch, capsys)
    assert main(["history", "q", "--db", db, "--html", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and not (tmp_path / "-").exists()
    assert main(["history", "q", "--db", db, "--html", str(tmp_path / "hf.json" / "h.html")]) == 2
    assert "--html" in capsys.readouterr().err  # checked before anything is read or swept


@pytest.mark.parametrize("option", ["--csv", "--json", "--html", "--markdown"])
def test_an_output_that_is_the_store_itself_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        option: str) -> None:
    """`export NAME --csv results.db` overwrote the store with CSV: every sweep lost. The
    store, however its path is spelled, and SQLite's files beside it are refused, exit 2."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 4, 8, 16])))
    db = tmp_path / "r.db"
    assert main(["import", str(src), "--db", str(db), "--name", "q"]) == 0
    before = db.read_bytes()
    capsys.readouterr()
    for target in (str(db), "r.db", f"{tmp_path}/../{tmp_path.name}/r.db", f"{db}-wal"):
        assert main(["export", "q", "--db", str(db), option, target]) == 2
        err = capsys.readouterr().err
        assert err.count("quadscope:") == 1 and "results database" in err
    assert db.read_bytes() == before and not (tmp_path / "r.db-wal").exists()
    assert main(["doctor", "--db", str(db), "--save", "r.db", "--only", "clock"]) == 2
    assert main(["import", str(src), "--db", str(db), option, str(db)]) == 2
    assert db.read_bytes() == before
    assert main(["export", "q", "--db", str(db), option, str(tmp_path / "out")]) == 0


def test_a_stopped_command_says_what_it_kept_by_what_it_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGTERMed `import` said "every finished run is stored" of a file it had stored
    nothing of; a reader (`list`) has nothing to keep."""
    from quadscope import jsonfile
    from quadscope.errors import Stopped

    def stopped(*_a: object, **_k: object) -> None:
        raise Stopped(15)

    monkeypatch.setattr(jsonfile, "read_json", stopped)
    monkeypatch.setattr("quadscope.commands.imports.read_json", stopped)
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 4, 8])))
    assert main(["import", str(src), "--db", str(tmp_path / "r.db")]) == 143
    assert capsys.readouterr().err == (
        "quadscope: stopped by SIGTERM; each sweep is stored whole or not at all: `quadscope "
        "list` shows those that were.\n")
    monkeypatch.setattr("quadscope.commands.stored.open_store", stopped)
    assert main(["list", "--db", str(tmp_path / "r.db")]) == 143
    assert capsys.readouterr().err == "quadscope: stopped by SIGTERM.\n"


def test_compare_with_another_tools_json_says_what_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`compare NAME doctor.json` (or a hyperfine file) said "(KeyError: 'sweep')"."""
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 4, 8, 16])))
    doctor = tmp_path / "doctor.json"
    doctor.write_text(json.dumps({"kind": "doctor", "probes": []}))
    db = str(tmp_path / "r.db")
    assert main(["import", str(src), "--db", db, "--name", "q"]) == 0
    capsys.readouterr()
    for path, said in ((doctor, "is a doctor report (`quadscope doctor --vs FILE` compares"),
                       (src, "is hyperfine output (`quadscope import FILE` stores it")):
        assert main(["compare", "q", str(path), "--db", db]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert said in err and "KeyError" not in err


def test_digits_of_other_scripts_are_no_sweep_id_and_no_width(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`show １` showed sweep 1 and `show ²` was exit 70 (isdigit() is true of both, int()
    reads the first); COLUMNS=² ended every command with exit 70 (rich reads it so)."""
    src = tmp_path / "hf.json"
    src.write_text(json.dumps(_hyperfine([1, 2, 4, 8, 16])))
    db = str(tmp_path / "r.db")
    assert main(["import", str(src), "--db", db, "--name", "q"]) == 0
    capsys.readouterr()
    for ref in ("\uff11", "\u00b2", "\u0661"):
        assert main(["show", ref, "--db", db, "--quiet"]) == 5
        assert "no stored sweep with id or name" in capsys.readouterr().err
    monkeypatch.setenv("COLUMNS", "\u00b2")
    assert main(["list", "--db", db]) == 0
    assert main(["show", "1", "--db", db, "--quiet"]) == 0


def test_a_fleet_port_in_other_digits_is_one_sentence() -> None:
    from quadscope.errors import UsageError
    from quadscope.fleet.cluster import host_port

    with pytest.raises(UsageError, match="the port must be a number"):
        host_port("head:\u00b2")


def test_history_of_a_name_only_the_doctor_or_no_run_has_says_so() -> None:
    """`history doctor` said "no stored sweep is named 'doctor'" beside `list` showing one."""
    from quadscope.commands.history import _none_to_follow
    from quadscope.model import Sweep

    def sweep(i: int, kind: str) -> Sweep:
        return Sweep(id=i, name="doctor", mode="sizes", command=("x",), kind=kind)

    assert _none_to_follow("doctor", [sweep(8, "doctor")]) == (
        "sweep 8 named 'doctor' is a doctor sweep, with no history to follow: `history` "
        "follows the sweeps `quadscope run --name` stores")
    assert _none_to_follow("doctor", [sweep(1, "sweep"), sweep(2, "profile")]).startswith(
        "the 2 sweeps named 'doctor' are profile sweeps,")
    assert _none_to_follow("nope", []) == (
        "no stored sweep is named 'nope'; `quadscope list` shows them")
