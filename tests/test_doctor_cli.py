"""`quadscope doctor` through the CLI: refusals, a compiler-less run, and one real --quick run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from junit_schema import valid_junit
from quadscope import cli
from quadscope.doctor import probe_names
from quadscope.doctor.base import VERDICTS
from quadscope.doctor.machine import vsyscall_mode_from_maps
from quadscope.errors import ToolMissingError


@pytest.fixture(autouse=True)
def doctor_registered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Until the lead adds it to cli.COMMAND_MODULES; harmless once it is there.
    modules = tuple(dict.fromkeys((*cli.COMMAND_MODULES, "quadscope.commands.doctor")))
    monkeypatch.setattr(cli, "COMMAND_MODULES", modules)
    monkeypatch.setenv("QUADSCOPE_DB", str(tmp_path / "results.db"))


def test_unknown_probe_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--only with a name that is not a probe: exit 2 and the list of names."""
    assert cli.main(["doctor", "--only", "nope"]) == 2
    assert "choose from clock, spawn-size" in capsys.readouterr().err


def test_vs_file_that_is_not_a_doctor_report_is_refused_before_measuring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--vs of some other JSON: one sentence naming --save, exit 2."""
    other = tmp_path / "other.json"
    other.write_text('{"schema": 1}')
    assert cli.main(["doctor", "--only", "clock", "--vs", str(other)]) == 2
    assert "is not a doctor report" in capsys.readouterr().err


@pytest.mark.parametrize(("target", "phrase"), [
    ("/proc/quadscope-doctor.json", "--save /proc/quadscope-doctor.json: cannot write in /proc"),
    ("{tmp}", "is a directory: name the file to write"),
])
def test_a_save_path_that_cannot_be_written_is_refused_before_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    target: str, phrase: str,
) -> None:
    """--save was written only after every probe ran (minutes): now it is tried first."""
    def measured(*args: object, **kwargs: object) -> None:
        raise AssertionError("the doctor measured before refusing --save")

    monkeypatch.setattr("quadscope.doctor.runner.run_doctor", measured)
    assert cli.main(["doctor", "--only", "clock", "--save",
                     target.format(tmp=tmp_path)]) == 2
    assert phrase in " ".join(capsys.readouterr().err.split())


def test_without_a_compiler_every_probe_is_skipped_and_the_doctor_says_it_checked_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A probe whose helper cannot compile is skipped with the sentence, not failed; the
    report is still written, but a doctor that checked nothing exits 6, not 0."""

    def no_cc(source: str, *, name: str, flags: Sequence[str] = ()) -> Path:
        raise ToolMissingError(f"could not compile the {name} helper with /nonexistent: gone")

    monkeypatch.setattr("quadscope.doctor.runner.compile_c", no_cc)
    monkeypatch.setattr("quadscope.measure.cbuild.compile_c", no_cc)  # nor quadscope's launcher
    out = tmp_path / "doctor.json"
    junit = tmp_path / "doctor.xml"
    assert cli.main(["doctor", "--quick", "--no-perf", "--json", str(out),
                     "--junit", str(junit)]) == 6
    data = json.loads(out.read_text())
    assert [p["verdict"] for p in data["probes"]] == ["skipped"] * 7
    cases = valid_junit(junit.read_bytes())  # the Jenkins/Ant schema, one case a probe
    assert [[x.tag for x in c] for c in cases] == [["skipped"]] * 7
    assert data["probes"][0]["finding"].startswith("could not compile the qs-doctor-clock")
    err = " ".join(capsys.readouterr().err.split())
    assert ("quadscope: doctor checked nothing: its 7 probes were skipped (clock: could not "
            "compile the qs-doctor-clock") in err


def test_a_budget_too_small_for_any_probe_is_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`doctor --budget 0.001` skipped every probe and exited 0; now the report is written,
    then one sentence, exit 6 (nothing to fit), and nothing is measured."""
    out = tmp_path / "doctor.json"
    assert cli.main(["doctor", "--budget", "0.001", "--no-perf", "--json", str(out)]) == 6
    assert [p["verdict"] for p in json.loads(out.read_text())["probes"]] == ["skipped"] * 7
    err = capsys.readouterr().err
    assert err.count("quadscope: doctor checked nothing") == 1 and "Traceback" not in err
    assert ("--budget 0.001 s left no time for any of its 7 probes; give it more, e.g. "
            "--budget 30") in " ".join(err.split())


def test_a_doctor_that_checked_one_probe_checked_something() -> None:
    from quadscope.commands.doctor import checked_nothing
    from quadscope.doctor.records import DoctorReport, ProbeResult

    skipped = ProbeResult.skipped("clock", "m", "no time was left in the budget; raise --budget")
    ok = ProbeResult("mmap", "m", "n", "1 µs", "ok", "nothing to do")
    assert checked_nothing(DoctorReport((skipped, ok), {}, False, 1.0, 1.0)) is None
    assert checked_nothing(DoctorReport((skipped,), {}, False, 1.0, 1.0)) == (
        "doctor checked nothing: --budget 1 s left no time for any of its 1 probe; give it "
        "more, e.g. --budget 30 (--quick's)")


@pytest.mark.integration
def test_quick_doctor_on_this_machine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--quick runs all seven probes here, each with a verdict; clock reports the maps mode."""
    out = tmp_path / "doctor.json"
    saved = tmp_path / "machine.json"
    assert cli.main(["doctor", "--quick", "--json", str(out), "--save", str(saved)]) == 0
    data = json.loads(out.read_text())
    assert [p["probe"] for p in data["probes"]] == list(probe_names())
    assert all(p["verdict"] in VERDICTS and p["finding"] for p in data["probes"])
    clock = data["probes"][0]
    expected = vsyscall_mode_from_maps(Path("/proc/self/maps").read_text())
    assert clock["details"]["vsyscall_mode"] == expected
    assert data["machine"]["vsyscall_mode"] == expected
    assert data["machine"]["kernel"] and data["machine"]["libc"]
    assert json.loads(saved.read_text())["probes"] == data["probes"]
    text = capsys.readouterr().out
    assert "findings:" in text and "verdict" in text


def test_dir_that_cannot_be_listed_or_without_dirscan_is_refused_before_measuring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--dir PATH: a missing path, a file, or --only without dirscan is one sentence, exit 2."""
    assert cli.main(["doctor", "--dir", str(tmp_path / "missing")]) == 2
    assert f"cannot list --dir {tmp_path / 'missing'}: No such file or directory" in (
        capsys.readouterr().err
    )
    (tmp_path / "f").write_text("x")
    assert cli.main(["doctor", "--dir", str(tmp_path / "f")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert cli.main(["doctor", "--only", "clock", "--dir", str(tmp_path)]) == 2
    assert "--dir is for the dirscan probe; add dirscan to --only" in capsys.readouterr().err


@pytest.mark.integration
def test_dirscan_on_a_users_directory_reads_it_as_it_is(tmp_path: Path) -> None:
    """--dir scans prefixes of the existing listing and leaves the directory untouched."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(400):
        (tree / f"f{i:04d}").write_bytes(b"x" * (i % 7))
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tree.iterdir())
    tree_mtime = tree.stat().st_mtime_ns
    out = tmp_path / "doctor.json"
    args = ["doctor", "--quick", "--no-perf", "--only", "dirscan", "--dir", str(tree)]
    assert cli.main([*args, "--budget", "10", "--json", str(out)]) == 0
    (probe,) = json.loads(out.read_text())["probes"]
    assert probe["measured"].startswith(f"readdir+fstatat of the first n of 400 entries of {tree}")
    assert probe["verdict"] in VERDICTS and probe["details"]["setup"] == {}
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tree.iterdir()) == before
    assert tree.stat().st_mtime_ns == tree_mtime
