"""Silently wrong no more: a B that always fails, two outputs on stdout, unknown URLs, empty options."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement

from quadscope.analyse.analysis import analyse, refuse_if_nothing
from quadscope.cli import main
from quadscope.errors import FitRefusedError
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store


def _b_fails(argv: Sequence[str]) -> Measurement:
    n = int(argv[-1])
    return measurement(1e-3 * n, exit_code=1 if argv[0] == "false" else 0)


def test_a_vs_command_that_fails_every_run_is_a_refusal_not_a_verdict_on_a_alone(
        store: Store, clock: FakeClock) -> None:
    """`run A --vs B` where B always fails: FitRefusedError (exit 6) saying so, not A's verdict."""
    spec = SweepSpec(command=("true", "{n}"), vs_command=("false", "{n}"),
                     sizes=(1, 2, 4, 8), repeat=2, warmup=0)
    sweep = run_sweep(spec, executor=FakeExecutor(_b_fails, clock), clock=clock, store=store)
    analysis = analyse(sweep, store.runs(sweep.id))
    assert analysis.fits["A"]
    with pytest.raises(FitRefusedError) as e:
        refuse_if_nothing(analysis)
    assert str(e.value).startswith("every run of the --vs command (B) failed (exit codes [1])")
    assert e.value.exit_code == 6


@pytest.mark.parametrize("argv", [
    ["show", "1", "--json", "-", "--csv", "-"],
    ["export", "1", "--csv", "-", "--json", "-"],
    ["import", "{tmp}/hf.json", "--json", "-", "--csv", "-"],
])
def test_two_outputs_to_stdout_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           argv: list[str]) -> None:
    """`--json - --csv -` would be one unparseable stream: exit 2, one sentence, nothing on stdout."""
    db = str(tmp_path / "r.db")
    (tmp_path / "hf.json").write_text('{"results": [' + ", ".join(
        f'{{"command": "p {n}", "parameters": {{"n": "{n}"}}, "times": [0.1, 0.2]}}'
        for n in (1, 2, 4, 8)) + "]}")
    if argv[0] != "import":
        assert main(["import", str(tmp_path / "hf.json"), "--db", db]) == 0
        capsys.readouterr()
    assert main([a.format(tmp=tmp_path) for a in argv] + ["--db", db]) == 2
    out, err = capsys.readouterr()
    assert "both write to standard output" in err and err.count("\n") == 1
    assert out == ""


@pytest.mark.parametrize("db", ["mysql://user:secret@host/db", "sqlite:///x.db", "file:///tmp/x"])
def test_a_db_url_of_another_scheme_is_refused_and_makes_no_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        db: str) -> None:
    """--db mysql://… is one sentence (password hidden), exit 2, and no `mysql:` folder appears."""
    monkeypatch.chdir(tmp_path)
    assert main(["list", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "URL, which quadscope cannot store in" in err and "secret" not in err
    monkeypatch.setenv("QUADSCOPE_DB", db)
    assert main(["list"]) == 2
    assert "$QUADSCOPE_DB" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["doctor", "--only", ""],
    ["doctor", "--only="],
    ["list", "--db", ""],
    ["run", "--sizes", "1,2,4,8", "--until", "", "--", "true", "{n}"],
    ["run", "--sizes", "1,2,4,8", "--name=", "--", "true", "{n}"],
    ["show", "1", "--json", ""],
    ["compare", "1", "2", "--fail-on", ""],
])
def test_an_empty_option_is_refused_not_ignored(capsys: pytest.CaptureFixture[str],
                                                argv: list[str]) -> None:
    """An option given an empty value would read as left out: exit 2, naming it."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert " is empty: give it a value, or leave the option out" in err and err.count("\n") == 1


def test_doctor_only_with_blank_names_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`doctor --only ,` names no probe: refused, not every probe run."""
    assert main(["doctor", "--only", " , "]) == 2
    assert "--only names no probe" in capsys.readouterr().err


def test_sizes_past_two_to_the_53_reach_the_program_exactly_and_are_fitted(
        store: Store, clock: FakeClock) -> None:
    """Sizes up to 2^63 - 1 are passed as exact integers, stored exactly, and fitted as floats."""
    from quadscope.run.sizes import parse_sizes

    sizes = parse_sizes("18014398509481985,72057594037927937,1152921504606846977,"
                        "9223372036854775807")
    ex = FakeExecutor(lambda argv: measurement(1e-3 * (1 + int(argv[-1]) / 2**60)), clock)
    spec = SweepSpec(command=("prog", "{n}"), sizes=sizes, repeat=2, warmup=0)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    assert {c[-1] for c in ex.calls} == {str(n) for n in sizes} | {"1"}  # and the start-up
    assert {r.size_n for r in store.runs(sweep.id)} == set(sizes) | {1}
    analysis = analyse(sweep, store.runs(sweep.id))
    assert analysis.fits["A"]["wall_s"].best == "n"


@pytest.mark.parametrize("cpus", ["0-999999999", "99999999999999999999", "0,70000"])
def test_a_cpu_list_past_any_machine_is_refused_without_filling_memory(
        capsys: pytest.CaptureFixture[str], cpus: str) -> None:
    """`--cpu 0-999999999` was expanded into a billion numbers (the OOM killer ended it)."""
    assert main(["run", "--sizes", "1,2,4,8", "--cpu", cpus, "--", "true", "{n}"]) == 2
    assert "names CPUs past 65535" in capsys.readouterr().err
