"""A python:MODULE:FUNC target profiled through a child Python that repeats the call."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from quadscope.model import Measurement, Run, Sweep
from quadscope.profile.pytarget import (
    MAX_CALLS,
    as_program,
    calls_per_run,
    function_name,
    per_call,
    profiled_sweep,
)
from quadscope.profile.stacks import Frame, StackProfile
from quadscope.run.spec import substitute

TARGET = ("python:textkit.core:unique_words_slow:make_words", "{n}")


def test_a_function_target_becomes_a_child_python_and_other_commands_stay() -> None:
    program = as_program(TARGET)
    assert program is not None and program[0] == sys.executable and program[-1] == "{n}"
    assert program[4:6] == ("textkit.core:unique_words_slow", "textkit.core:make_words")
    assert as_program(("./csvjoin", "{n}")) is None
    sweep = Sweep(id=3, name="t", mode="sizes", command=TARGET)
    assert profiled_sweep(sweep).command == program
    plain = Sweep(id=3, name="t", mode="sizes", command=("./a.out", "{n}"))
    assert profiled_sweep(plain) is plain
    assert function_name(("python:pkg.mod:Parser.parse", "{n}")) == "parse"


def _run(n: int, wall_s: float, seq: int = 0) -> Run:
    return Run(1, seq, "A", n, 0, False, 0.0, Measurement(wall_s=wall_s, exit_code=0))


def test_calls_per_run_fill_a_quarter_second_within_bounds() -> None:
    runs = [_run(1000, 0.005), _run(1000, 0.005, 1), _run(8000, 0.3), _run(10, 1e-9)]
    assert calls_per_run(runs) == {1000: 50, 8000: 1, 10: MAX_CALLS}


def test_per_call_keeps_the_call_per_call_and_the_rest_per_run() -> None:
    """10 calls per run: the call's 100 samples are 10 per call, start-up's 50 stay 50."""
    call = (Frame("<module>", "<string>"), Frame("unique_words_slow", "core.py"))
    boot = (Frame("_find_and_load", "<frozen importlib._bootstrap>"),)
    prof = StackProfile(1000, {call: 100, boot: 50}, 150, "py-spy", 0.15)
    out = per_call(prof, 10, "unique_words_slow")
    spw = out.seconds_per_weight()
    assert out.stacks[call] * spw == pytest.approx(0.1 / 10)
    assert out.stacks[boot] * spw == pytest.approx(0.05)
    assert per_call(prof, 1, "unique_words_slow") is prof


@pytest.mark.slow
def test_the_child_python_makes_the_calls(tmp_path: Path) -> None:
    """The child's argv runs: it imports, builds the argument and calls the function."""
    (tmp_path / "tk.py").write_text(
        "import os\ndef make(n):\n    return list(range(n))\n"
        "def work(xs):\n    open(os.environ['OUT'], 'a').write(f'{len(xs)}\\n')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        program = as_program(("python:tk:work:make", "{n}"))
    finally:
        sys.path.remove(str(tmp_path))
    assert program is not None
    out = tmp_path / "out.txt"
    argv = [*substitute(program, False, 7), "3"]
    proc = subprocess.run(argv, env={"OUT": str(out), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().split() == ["7", "7", "7"]
    assert json.loads(program[3])[0] == str(tmp_path)


@pytest.mark.slow
def test_profile_of_a_function_target_names_it_with_the_sweep_s_class(tmp_path: Path) -> None:
    """Issue 26: `--profile` on a python: target gave "only 0 samples" and nothing."""
    from quadscope.profile.python import find_pyspy

    if find_pyspy() is None:
        pytest.skip("py-spy is not installed")
    (tmp_path / "slowkit.py").write_text(
        "def make_words(n):\n    return [f'w{i}' for i in range(n)]\n"
        "def unique_words_slow(words):\n    out = []\n    for w in words:\n"
        "        if w not in out:\n            out.append(w)\n    return out\n")
    out = tmp_path / "out.json"
    env_path = f"{tmp_path}:{Path(__file__).resolve().parent.parent / 'src'}"
    proc = subprocess.run(
        [sys.executable, "-m", "quadscope", "run", "--db", str(tmp_path / "q.db"),
         "--sizes", "500,1000,2000,4000,8000", "--repeat", "3", "--meter", "time", "--profile",
         "--json", str(out), "--", "python:slowkit:unique_words_slow:make_words", "{n}"],
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"}, capture_output=True,
        text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    said = doc["profile"]["extra"]["culprit_sentence"]
    # The sweep's class, or its exponent where 4 sizes on a loaded machine leave it open.
    grown = re.match(r"unique_words_slow \(slowkit\.py\) makes it grow: its calls, timed by "
                     r"the sweep, grow as (n²|about n\^(\d\.\d))", said)
    assert grown is not None, said
    assert grown.group(1) == "n²" or 1.7 <= float(grown.group(2)) <= 2.3, said
    assert "only 0 samples" not in proc.stderr
