"""Version managers' shims are seen through: a sweep runs the program the shim would run."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement

from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.measure.provenance import Provenance
from quadscope.measure.shims import Shim, find_shim, read_fact, see_through, shims_fact
from quadscope.measure.system import FakeReader, advice_from_host
from quadscope.model import Measurement
from quadscope.run import session
from quadscope.run.spec import SweepSpec, run_command
from quadscope.store import Store

PYENV = """#!/usr/bin/env bash
set -e
program="${0##*/}"
export PYENV_ROOT="/root/.pyenv"
exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"
"""
ASDF = """#!/usr/bin/env bash
# asdf-plugin: python 3.11.0
exec /home/u/.asdf/bin/asdf exec "python3" "$@" # asdf_allow: ' asdf '
"""


@pytest.fixture
def program(tmp_path: Path) -> str:
    """A real executable file, as `pyenv which` names one."""
    path = tmp_path / "python3.11"
    path.write_text("\x7fELF")
    path.chmod(0o755)
    return str(path)


def _find(text: str | None, answer: str | None, asked: list[Sequence[str]] | None = None,
          files: dict[str, str] | None = None) -> Shim | None:
    def ask(argv: Sequence[str]) -> str | None:
        if asked is not None:
            asked.append(tuple(argv))
        return answer

    scripts = {"/shims/python3": text, **(files or {})}
    return find_shim("python3", which=lambda name: {"python3": "/shims/python3",
                                                   "asdf": "/bin/asdf"}.get(name),
                     read=scripts.get, ask=ask)


def test_a_pyenv_shim_names_the_program_pyenv_which_names(program: str) -> None:
    asked: list[Sequence[str]] = []
    assert _find(PYENV, program, asked) == Shim("python3", program, "pyenv")
    assert asked == [("/root/.pyenv/libexec/pyenv", "which", "python3")]


def test_an_asdf_shim_is_asked_through_its_manager(program: str) -> None:
    asked: list[Sequence[str]] = []
    assert _find(ASDF, program, asked) == Shim("python3", program, "asdf")
    assert asked == [("/home/u/.asdf/bin/asdf", "which", "python3")]


@pytest.mark.parametrize("text", [None, "\x7fELF binary", "#!/bin/sh\nexec python3.11 \"$@\"\n",
                                  "#!/bin/sh\n" + "x" * 20000 + PYENV])
def test_anything_but_a_shim_line_is_not_a_shim(text: str | None, program: str) -> None:
    assert _find(text, program) is None


def test_a_manager_that_names_nothing_usable_leaves_the_program_as_typed(
        tmp_path: Path, program: str) -> None:
    assert _find(PYENV, None) is None  # `pyenv which` failed
    assert _find(PYENV, "python3.11") is None  # not an absolute path
    assert _find(PYENV, str(tmp_path / "missing")) is None
    plain = tmp_path / "plain"
    plain.write_text("data")  # not executable
    assert _find(PYENV, str(plain)) is None
    # A manager naming another shim would loop: left as typed.
    assert _find(PYENV, program, files={program: PYENV}) is None


def test_the_fact_round_trips_and_replaces_only_the_program_it_names(program: str) -> None:
    fact = shims_fact([Shim("python3", program, "pyenv")])
    assert fact is not None and shims_fact([]) is None
    assert read_fact(fact) == {"python3": Shim("python3", program, "pyenv")}
    assert see_through(("python3", "-c", "pass", "{n}"), fact) == (program, "-c", "pass", "{n}")
    assert see_through(("python3.12", "x"), fact) == ("python3.12", "x")
    assert see_through(("python3",), None) == ("python3",)
    for junk in ("not json", "[1, 2]", '{"python3": "x"}'):
        assert read_fact(junk) == {}


def test_a_sweep_records_the_shim_says_so_and_runs_the_program(store: Store,
                                                                 program: str) -> None:
    """The session records the shim as a host fact; the runner runs the program it names
    (timed runs and counts alike go through the same argv); the report's notes say so."""
    clock = FakeClock(1000.0)
    seen: list[Sequence[str]] = []

    def timed(argv: Sequence[str]) -> Measurement:
        seen.append(tuple(argv))
        return measurement(0.01)

    machine = session.Machine(FakeReader({}), provenance=lambda host: Provenance(),
                              find_shim=lambda p: Shim(p, program, "pyenv")
                              if p == "python3" else None)
    spec = SweepSpec(command=("python3", "prog.py", "{n}"), sizes=(10, 20, 40), repeat=1,
                     warmup=0, meter="time")
    executor = FakeExecutor(timed, clock)
    sweep = session.start(spec, store=store, clock=clock, machine=machine,
                          measuring=session.Measuring(executor, "none", ""))
    assert sweep.command == ("python3", "prog.py", "{n}")  # stored as typed
    assert run_command(sweep) == (program, "prog.py", "{n}")
    assert seen and all(a[0] == program and a[1] == "prog.py" for a in seen)
    notes = advice_from_host(sweep.host)
    assert any(n.startswith("python3 is a pyenv shim") and program in n for n in notes)


def test_a_shell_command_is_never_seen_through(store: Store, program: str) -> None:
    machine = session.Machine(FakeReader({}), provenance=lambda host: Provenance(),
                              find_shim=lambda p: Shim(p, program, "pyenv"))
    spec = SweepSpec(command=("python3 prog.py {n}",), shell=True, sizes=(10, 20, 40))
    facts = session.read_host(machine, spec=spec)
    assert facts.host.shims is None and not facts.advice


def test_the_real_lookup_finds_nothing_in_a_plain_program() -> None:
    """Without fakes: /bin/sh is no shim (the real `which`, `read` and `ask`)."""
    assert os.path.exists("/bin/sh")
    assert find_shim("/bin/sh") is None
    assert find_shim("no-such-program-here") is None
