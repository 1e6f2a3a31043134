"""CI outputs: Markdown (and the GitHub job summary), JUnit gates, the exit-code table."""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
import sqlite3
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import pytest

from junit_schema import valid_junit
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


def _quadratic_sweep(db: Path, name: str, program: str = "prog") -> None:
    """A quadratic `prog` (or a linear `fixed`), on a fake clock."""
    rng = random.Random(3)

    def cost(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        grows = 1e-7 * n if argv[0] == "fixed" else 1e-10 * n * n
        wall = (1e-3 + grows) * rng.lognormvariate(0, 0.02)
        return Measurement(wall_s=wall, user_s=wall, sys_s=0.0, exit_code=0)

    clock = FakeClock(start=1_700_000_000.0)
    # The labels are pinned here, on this noise draw: start-up runs (tests/test_startup_runs.py)
    # would draw it anew, and this draw's B reads "n … n log n" with or without them.
    spec = SweepSpec(command=(program, "{n}"), name=name, repeat=3, warmup=0,
                     sizes=(1000, 2000, 4000, 8000, 16000, 32000), startup_n=None)
    with SqliteStore(db) as store:
        run_sweep(spec, executor=FakeExecutor(cost, clock), clock=clock, store=store)


def test_markdown_escapes_what_could_become_a_link_a_tag_or_a_cell() -> None:
    """Brackets, angle brackets, pipes and backticks are written literally."""
    assert md("[x](javascript:alert(1)) <b>|`") == \
        r"\[x\]\(javascript:alert\(1\)\) \<b\>\|\`"


def test_markdown_escapes_entities_and_math() -> None:
    """An entity in a name is shown as typed, not decoded; dollars are not typeset as math."""
    assert md("a &amp; b &#60;x&#62; $n^2$") == r"a \&amp; b \&\#60;x\&\#62; \$n^2\$"


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
    assert "slow \\[pr\\]\\(x\\)" in written and r"| wall\_s | n² |" in written


def test_junit_has_one_testcase_per_gate_and_skips_any_other_outcome() -> None:
    """Passed is empty, failed holds <failure>, undecided and unknown outcomes are <skipped>."""
    gates = [GateCase("a", "passed"), GateCase("b", "failed", "grows as n^2"),
             GateCase("c", "undecided", "cannot tell"), GateCase("d", "novel")]
    from quadscope.analyse.analysis import analyse
    from quadscope.model import Sweep

    analysis = analyse(Sweep(id=1, name="s", mode="sizes", command=("p",)), [])
    data = JunitRenderer(gates).render(analysis)
    cases = valid_junit(data)
    root = ET.fromstring(data)
    assert root.attrib["tests"] == "4" and root.attrib["failures"] == "1"
    assert root.find("testsuite").attrib["skipped"] == "2"  # type: ignore[union-attr]
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
    cases = valid_junit(out.read_bytes())
    assert [c.attrib["name"] for c in cases] == ["q: --fail-above wall_s=n",
                                                 "q: --fail-above wall_s=n^2"]
    assert [[child.tag for child in c] for c in cases] == [["failure"], ["system-out"]]
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


def test_a_fail_above_case_carries_verdict_exponent_interval_and_sizes(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "q")
    out = tmp_path / "gates.xml"
    assert main(["show", "1", "--db", str(db), "--fail-above", "n", "--fail-above", "quadratic",
                 "--junit", str(out)]) == 8
    failed, passed = valid_junit(out.read_bytes())
    message = failed.find("failure").attrib["message"]  # type: ignore[union-attr]
    assert message.startswith("gate failed: wall_s grows as n²")
    assert "verdict: quadratic" in message
    assert re.search(r"exponent: 2\.\d\d \[\d\.\d\d, \d\.\d\d\] \(95%, wall_s\)", message)
    assert "sizes: 1000, 2000, 4000, 8000, 16000, 32000" in message
    assert "gate passed" in passed.find("system-out").text  # type: ignore[union-attr, operator]


def test_compare_fail_on_gates_are_testcases_with_both_sides(tmp_path: Path) -> None:
    """`compare --fail-on` wrote tests="0"; now each judged metric is a testcase (a bare
    `class` judges the headline time alone, `class=METRIC` the metric named), and a metric
    whose change cannot be decided is skipped with the reason."""
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "ab")
    _quadratic_sweep(db, "fixed", program="fixed")
    out = tmp_path / "ab.xml"
    code = main(["compare", "1", "2", "--db", str(db), "--fail-on", "class",
                 "--fail-on", "class=max_rss_bytes", "--fail-on", "slower=1.1",
                 "--junit", str(out)])
    cases = valid_junit(out.read_bytes())
    names = [c.attrib["name"] for c in cases]
    assert names == ["ab vs fixed: --fail-on class (wall_s)",
                     "ab vs fixed: --fail-on class=max_rss_bytes (max_rss_bytes)",
                     "ab vs fixed: --fail-on slower=1.1 (wall_s)"], names
    wall = cases[0]
    assert [c.tag for c in wall] == ["system-out"]  # B (linear) grows slower than A
    text = wall.find("system-out").text or ""  # type: ignore[union-attr]
    for part in ("gate passed: wall_s: B grows slower than A (n at most, A n² or faster): "
                 "an improvement", "A: verdict: quadratic",
                 "B: verdict: linear", "A: exponent: ", "B: exponent: ", "sizes: "):
        assert part in text, part
    assert cases[1].find("skipped") is not None
    assert code == 9


def test_an_undecided_gate_is_skipped_naming_the_deciding_n_or_fails_under_strict(
        tmp_path: Path) -> None:
    """An undecided gate wrote <skipped> with no text."""
    from quadscope.analyse.analysis import analyse
    from quadscope.commands.gates import junit_cases
    from quadscope.model import Fit, Sweep

    fits = {"wall_s": Fit(metric="wall_s", cls="inconclusive", exponent=1.5, exponent_ci=(1.0, 2.0),
                          coefficients={}, r2=1.0, candidates=(), n_points=8, decide_n=64000,
                          best="n", at_least="n", at_most="n^2")}
    analysis = analyse(Sweep(id=1, name="u", mode="sizes", command=("p",)), [])
    analysis = dataclasses.replace(analysis, fits={"A": fits})
    args = argparse.Namespace(fail_above=["n log n"], strict_gate=False)
    (case,) = valid_junit(JunitRenderer(junit_cases(args, analysis)).render(analysis))
    skipped = case.find("skipped")
    assert skipped is not None and "measure up to n = 64000 to decide" in skipped.attrib["message"]
    args = argparse.Namespace(fail_above=["n log n"], strict_gate=True)
    (case,) = valid_junit(JunitRenderer(junit_cases(args, analysis)).render(analysis))
    assert case.find("failure") is not None


def test_doctor_probes_are_testcases_slow_failing_with_its_advice() -> None:
    """`doctor --junit` wrote tests="0" while its probes said "slow"."""
    import dataclasses

    from quadscope.analyse.analysis import analyse
    from quadscope.doctor.records import DoctorReport, ProbeResult
    from quadscope.model import Sweep

    probes = (ProbeResult("clock", "clock_gettime", "1", "20 ns", "ok", ""),
              ProbeResult("spawn", "fork+exec", "n", "2 ms", "slow",
                          "spawning grows with RSS: use posix_spawn"),
              ProbeResult("perf", "perf_event", "—", "—", "skipped", "perf is not installed"))
    report = DoctorReport(probes, {}, quick=True, budget_s=1.0, elapsed_s=1.0)
    analysis = dataclasses.replace(
        analyse(Sweep(id=1, name="doctor", mode="sizes", command=("doctor",)), []), doctor=report)
    cases = valid_junit(JunitRenderer().render(analysis))
    assert [c.attrib["name"] for c in cases] == ["doctor: clock", "doctor: spawn", "doctor: perf"]
    assert [[x.tag for x in c] for c in cases] == [["system-out"], ["failure"], ["skipped"]]
    assert cases[1][0].attrib["message"].startswith(
        "spawn is slow: spawning grows with RSS: use posix_spawn")


def test_junit_is_valid_xml_whatever_the_names_hold(tmp_path: Path) -> None:
    """Control characters (even NUL and ESC), markup and lone surrogates in a sweep name."""
    from quadscope.analyse.analysis import analyse
    from quadscope.model import Sweep

    name = "bad\x00\x1b[31m<&>\"'\udcff\x7f"  # an imported or 0.1.0 sweep's name is not checked
    analysis = analyse(Sweep(id=1, name=name, mode="sizes", command=("p\x01", "{n}")), [])
    gates = [GateCase(f"{name}: --fail-above n", "failed", f"gate failed: {name}", (name,))]
    (case,) = valid_junit(JunitRenderer(gates).render(analysis))
    assert case.attrib["name"] == "bad\\x00\\x1b[31m<&>\"'\\udcff\\x7f: --fail-above n"


def _ab(tmp_path: Path) -> Path:
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "before")
    _quadratic_sweep(db, "after", program="fixed")
    return db


def test_ab_markdown_leads_with_the_change_then_labels_each_sides_verdict(tmp_path: Path) -> None:
    """A PR fixing a quadratic led with A's red-sounding "**quadratic: …**"."""
    out = tmp_path / "ab.md"
    assert main(["compare", "1", "2", "--db", str(_ab(tmp_path)), "--markdown", str(out)]) == 0
    lines = [ln for ln in out.read_text().splitlines() if ln][1:4]
    assert lines[0].startswith("**B changed the class: n² → n; ") and "faster" in lines[0]
    assert lines[1].startswith("- A: quadratic: wall time grows as n²")
    assert lines[2].startswith("- B: linear: wall time grows as n ")


def test_ab_terminal_leads_with_the_change_then_labels_each_sides_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "1", "2", "--db", str(_ab(tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("B changed the class: n² → n; ")
    assert lines[1].startswith("A: quadratic: wall time grows as n²")
    assert lines[2].startswith("B: linear: wall time grows as n ")
    assert main(["compare", "1", "2", "--db", str(tmp_path / "r.db"), "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines() == lines[:1]


def test_ab_html_labels_each_sides_verdict_under_the_change(tmp_path: Path) -> None:
    """The A/B page showed an unlabelled red box (A's verdict) under B's green change."""
    out = tmp_path / "ab.html"
    assert main(["compare", "1", "2", "--db", str(_ab(tmp_path)), "--html", str(out)]) == 0
    page = out.read_text()
    change = page.index('id="change"')
    a = page.index('<p class="verdict" id="verdict">A: quadratic')
    b = page.index('<p class="verdict calm" id="verdict-b">B: linear')
    assert change < a < b


def test_import_takes_fail_above_and_writes_its_gate_to_junit(tmp_path: Path) -> None:
    """`import --junit` wrote an empty file: import had no gate."""
    results = [{"command": f"sort {n}", "parameters": {"n": str(n)},
                "times": [1e-3 + 1e-10 * n * n * f for f in (0.99, 1.0, 1.01)]}
               for n in (1000, 2000, 4000, 8000, 16000, 32000)]
    path = tmp_path / "hf.json"
    path.write_text(json.dumps({"results": results}))
    out = tmp_path / "gates.xml"
    assert main(["import", str(path), "--db", str(tmp_path / "r.db"), "--fail-above",
                 "n log n", "--junit", str(out)]) == 8
    (case,) = valid_junit(out.read_bytes())
    assert "gate failed: wall_s grows as n²" in case.find("failure").attrib["message"]  # type: ignore[union-attr]
    assert main(["import", str(path), "--db", str(tmp_path / "r.db"), "--fail-above",
                 "O(n^2)"]) == 0


def test_show_writes_a_valid_junit_file_for_a_name_holding_markup_and_controls(
        tmp_path: Path) -> None:
    """A stored name with markup, quotes and an escape sequence, through the CLI."""
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "q")
    name = "<q a=\"1\">&amp;]]>\x1b[31m\x07"
    with sqlite3.connect(db) as conn:  # as an old or imported store holds it
        conn.execute("UPDATE sweeps SET name = ?", (name,))
    conn.close()
    out = tmp_path / "gates.xml"
    assert main(["show", "1", "--db", str(db), "--fail-above", "n", "--junit", str(out)]) == 8
    (case,) = valid_junit(out.read_bytes())
    assert case.attrib["classname"] == "quadscope.<q a=\"1\">&amp;]]>\\x1b[31m\\x07"


@pytest.mark.slow  # `run` launches the programs it measures
def test_run_and_run_vs_write_junit_files_the_schema_accepts(tmp_path: Path) -> None:
    """`run --fail-above` and the A/B `run --vs --fail-on`, each on a program that takes ~ms."""
    py = "/root/.pyenv/versions/3.11.7/bin/python3"
    prog = [py, "-c", "import sys; sum(range(int(sys.argv[1])))", "{n}"]
    base = ["run", "--db", str(tmp_path / "r.db"), "--sizes", "1000,2000,4000,8000",
            "--repeat", "3", "--warmup", "0", "--meter", "time", "--quiet"]
    one, ab = tmp_path / "one.xml", tmp_path / "ab.xml"
    main([*base, "--fail-above", "n^3", "--junit", str(one), "--", *prog])
    (case,) = valid_junit(one.read_bytes())
    assert case.attrib["name"].endswith("--fail-above n^3")
    main([*base, "--fail-on", "class", "--junit", str(ab), "--", *prog, "--vs", *prog])
    (case,) = valid_junit(ab.read_bytes())
    assert "--fail-on class" in case.attrib["name"]


def test_show_refuses_a_gate_that_is_not_a_class_before_printing_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`show 1 --fail-above n^9` printed the whole report, then the refusal: now the refusal
    alone, exit 2."""
    db = tmp_path / "r.db"
    _quadratic_sweep(db, "q")
    assert main(["show", "1", "--db", str(db), "--fail-above", "n^9"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "'n^9' is not a class" in err


def test_markdown_writes_classes_and_exponents_as_the_terminal_does() -> None:
    """An unsettled time read "| wall\\_s | inconclusive | 4.00 [0.00, 4.00] | 1 … n^3 |" in
    the Markdown summary of an imported hyperfine scan (k = 4 is the power law's search
    edge, not a measurement), where the terminal and the page read "1 … n³?" and "—". The
    table now writes each cell as they do, the comparison's classes too, and names the
    size variable ("largest i" for launches)."""
    from quadscope.analyse.analysis import analyse
    from quadscope.classes import INCONCLUSIVE
    from quadscope.model import Sweep
    from quadscope.render.markdown import MarkdownRenderer
    from test_report import synth_runs

    sizes = (1000, 2000, 4000, 8000, 16000)
    sweep = Sweep(id=2, name="scan", mode="sizes", command=("prog", "{n}"),
                  vs_command=("b", "{n}"), sizes=sizes, repeat=3)
    runs = synth_runs(sizes, 3, power=2.0, coef=1e-9) + synth_runs(
        sizes, 3, variant="B", power=2.0, coef=1e-9, seed=2, start_seq=100)
    a = analyse(sweep, runs)
    open_fit = dataclasses.replace(a.fits["A"]["wall_s"], cls=INCONCLUSIVE, at_least="1",
                                   at_most="n^3", best="n^2", exponent=4.0,
                                   exponent_ci=(0.0, 4.0))
    a = dataclasses.replace(a, fits={**a.fits, "A": {**a.fits["A"], "wall_s": open_fit}})
    assert a.comparison is not None
    lines = MarkdownRenderer().render(a).decode().splitlines()
    assert "| wall\\_s | 1 … n³? | — | 1 … n³ | 0.000 | 16000 |".replace(
        "0.000", f"{open_fit.r2:.3f}") in lines
    settled = a.fits["B"]["wall_s"]
    assert settled.cls == "n^2"
    assert any(line.startswith("| wall\\_s | n² | ") and line.endswith(" | n² | "
               f"{settled.r2:.3f} | 16000 |") for line in lines)
    change = next(mc.change for mc in a.comparison.metrics if mc.metric == "wall_s")
    assert f"| wall\\_s | {change} | 1 … n³? | n² |" in lines  # the change table
    lines = MarkdownRenderer().render(dataclasses.replace(
        a, sweep=dataclasses.replace(a.sweep, mode="accumulate"))).decode().splitlines()
    assert "| metric | class | exponent k [95%] | supported classes | r² | largest i |" in lines
