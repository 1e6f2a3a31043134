"""A CLI that starts at once: `--help` and `--version` load no heavy library.

Each case runs the real command in a fresh interpreter and reads `sys.modules`
after it, so the pin is on what is imported, not on a time (which a loaded
machine would make flaky); `bench/`-style timing belongs to hyperfine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("numpy", "scipy", "matplotlib", "rich", "ray", "psycopg")

_PROBE = """
import contextlib, io, json, sys
from quadscope import cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = cli.main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _start(*argv: str) -> dict[str, object]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
@pytest.mark.slow
def test_help_and_version_import_no_heavy_library(argv: list[str]) -> None:
    """`quadscope --help`, `--version` and a bare `quadscope` import no numpy, scipy, etc."""
    got = _start(*argv)
    modules = set(got["modules"])  # type: ignore[call-overload]
    assert [m for m in HEAVY if m in modules] == []
    assert sorted(m for m in modules if m.startswith("quadscope.")) == ["quadscope.cli",
                                                                         "quadscope.errors"]


@pytest.mark.slow
def test_top_level_help_lists_every_command() -> None:
    """The light `--help` still lists every sub-command with its line of help."""
    from quadscope.cli import COMMANDS

    got = _start("--help")
    assert got["code"] == 0
    for c in COMMANDS:
        assert c.name in str(got["out"])
        assert " ".join(c.help.split()[:4]) in " ".join(str(got["out"]).split())


@pytest.mark.parametrize("command", ["run", "show", "report", "doctor", "history"])
@pytest.mark.slow
def test_a_command_help_builds_its_options_without_numpy(command: str) -> None:
    """`quadscope CMD --help` loads that command's options, and still no numpy or scipy."""
    got = _start(command, "--help")
    modules = set(got["modules"])  # type: ignore[call-overload]
    assert got["code"] == 0 and "--db" in str(got["out"])
    assert [m for m in HEAVY if m in modules] == []
