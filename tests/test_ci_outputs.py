"""CI outputs: Markdown (and the GitHub job summary), JUnit gates, the exit-code table."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import pytest

from quadscope.cli import build_parser, main
from quadscope.errors import exit_codes
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.render.junit import GateCase, JunitRenderer
from quadscope.render.markdown import md
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore

README = Path(__file__).parents[1] / "README.md"


def _quadratic_sweep(db: Path, name: str) -> None:
    rng = random.Random(3)

    def cost(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        wall = (1e-3 + 1e-10 * n * n) * rng.lognormvariate(0, 0.02)
        return Measurement(wall_s=wall, user_s=wall, sys_s=0.0, exit_code=0)

    clock = FakeClock(start=1_700_000_000.0)
    spec = SweepSpec(command=("prog", "{n}"), name=name, repeat=3, warmup=0,
                     sizes=(1000, 2000, 4000, 8000, 16000, 32000))
    with SqliteStore(db) as store:
        run_sweep(spec, executor=FakeExecutor(cost, clock), clock=clock, store=store)


def test_markdown_escapes_what_could_become_a_link_a_tag_or_a_cell() -> None:
    """Brackets, angle brackets, pipes and backticks are written literally."""
    assert md("[x](javascript:alert(1)) <b>|`") == \
        r"\[x\]\(javascript:alert\(1\)\) \<b\>\|\`"


def test_markdown_file_is_also_appended_to_the_github_step_summary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With $GITHUB_STEP_SUMMARY set, each --markdown output is appended there too."""
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "slow [pr](x)")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["show", "1", "--db", str(db), "--markdown", str(tmp_path / "a.md")]) == 0
    written = (tmp_path / "a.md").read_text()
    assert summary.read_text() == "earlier step\n" + written
    assert "slow \\[pr\\]\\(x\\)" in written and r"| wall\_s | n^2 |" in written


def test_junit_has_one_testcase_per_gate_and_skips_any_other_outcome() -> None:
    """Passed is empty, failed holds <failure>, undecided and unknown outcomes are <skipped>."""
    gates = [GateCase("a", "passed"), GateCase("b", "failed", "grows as n^2"),
             GateCase("c", "undecided", "cannot tell"), GateCase("d", "novel")]
    from quadscope.analyse.analysis import analyse
    from quadscope.model import Sweep

    analysis = analyse(Sweep(id=1, name="s", mode="sizes", command=("p",)), [])
    root = ET.fromstring(JunitRenderer(gates).render(analysis))
    assert root.attrib["tests"] == "4" and root.attrib["failures"] == "1"
    assert root.attrib["skipped"] == "2"
    cases = root.findall("./testsuite/testcase")
    assert [c.attrib["name"] for c in cases] == ["a", "b", "c", "d"]
    assert [[child.tag for child in c] for c in cases] == [[], ["failure"], ["skipped"], ["skipped"]]
    assert cases[1][0].attrib["message"] == "grows as n^2"
    assert cases[3][0].attrib["message"] == "novel"


def test_junit_from_the_cli_judges_each_gate_alone(tmp_path: Path) -> None:
    """A quadratic sweep fails `n` and passes `n^2`: one failure, one pass, exit 8."""
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "q")
    out = tmp_path / "gates.xml"
    code = main(["show", "1", "--db", str(db), "--fail-above", "wall_s=n",
                 "--fail-above", "wall_s=n^2", "--junit", str(out)])
    assert code == 8
    cases = ET.parse(out).getroot().findall("./testsuite/testcase")
    assert [c.attrib["name"] for c in cases] == ["q: wall_s=n", "q: wall_s=n^2"]
    assert [[child.tag for child in c] for c in cases] == [["failure"], []]
    assert "n²" in cases[0][0].attrib["message"]


def test_every_exit_code_is_in_the_help_and_the_readme() -> None:
    """--help's epilog and the README's table list the same codes, every one the CLI uses."""
    codes = exit_codes()
    assert {0, 2, 3, 4, 5, 6, 7, 8, 9, 130} <= set(codes)
    help_text = build_parser().format_help()
    listed = {int(m) for m in re.findall(r"^\s+(\d+)  ", help_text.split("exit codes:")[1], re.M)}
    assert listed == set(codes)
    table = README.read_text().split("Exit codes")[1]
    assert {int(m) for m in re.findall(r"^\| (\d+) \|", table, re.M)} == set(codes)
