"""The command line starts at once: --help and --version load no scipy, matplotlib or rich."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quadscope.cli import main

SRC = str(Path(__file__).parents[1] / "src")
PROBE = """
import contextlib, io, json, sys
from quadscope.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "loaded": sorted(
    m for m in ("scipy", "matplotlib", "rich", "numpy", "ray") if m in sys.modules)}))
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"],
                                  ["history", "--help"], ["doctor", "--help"]])
@pytest.mark.slow
def test_help_and_version_import_neither_scipy_nor_matplotlib(argv: list[str]) -> None:
    """Building the parser (in a fresh interpreter) leaves scipy, matplotlib, rich and ray unloaded."""
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    assert not {"scipy", "matplotlib", "rich", "ray"} & set(got["loaded"])


def test_completion_scripts_cover_every_sub_command(capsys: pytest.CaptureFixture[str]) -> None:
    """bash and zsh scripts come from the parser: new commands and options complete too."""
    for shell in ("bash", "zsh"):
        assert main(["completion", shell]) == 0
        script = capsys.readouterr().out
        for word in ("history", "import", "--fail-above", "--junit", "--markdown"):
            assert word in script, (shell, word)
