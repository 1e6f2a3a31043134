"""`quadscope import` of a file holding several sweeps writes every one of them.

Before, the page, the markdown and the JUnit file held only the last sweep stored.
Now a renderer that can (`renders_several`) writes one document with a summary
of every sweep's answer first and a section per sweep; the others one file each.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from junit_schema import valid_junit
from quadscope.cli import main
from quadscope.store import SqliteStore

SIZES = (1000, 2000, 4000, 8000, 16000, 32000)


def _hyperfine(path: Path) -> Path:
    """hyperfine --parameter-scan of two commands: one quadratic, one linear."""
    results = []
    for name, cost in (("insert", lambda n: 1e-10 * n * n), ("append", lambda n: 1e-7 * n)):
        results += [{"command": f"{name} {n}", "parameters": {"n": str(n)},
                     "times": [1e-3 + cost(n) * f for f in (0.99, 1.0, 1.01)]} for n in SIZES]
    path.write_text(json.dumps({"results": results}))
    return path


def test_every_sweep_of_the_file_is_in_the_page_the_markdown_and_junit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _hyperfine(tmp_path / "hf.json")
    out = tmp_path / "out"
    db = tmp_path / "r.db"
    assert main(["import", str(src), "--db", str(db), "--fail-above", "n log n",
                 "--html", str(out / "p.html"), "--markdown", str(out / "p.md"),
                 "--junit", str(out / "g.xml"), "--json", str(out / "s.json")]) == 8
    terminal = capsys.readouterr().out
    assert terminal.index("quadratic: wall time grows as n²") < terminal.index("linear")
    with SqliteStore(db) as store:
        stored = sorted((s.id, s.name, count) for s, count in store.list_sweeps())
    assert stored == [(1, "insert {n}", 18), (2, "append {n}", 18)]

    page = (out / "p.html").read_text()
    summary, first, second = page.split("<section")[0], page.index('id="s1"'), page.index('id="s2"')
    # The summary leads, the first sweep's verdict carrying #verdict, then a section each.
    assert re.search(r'id="verdict">quadratic: wall time grows as n²', summary)
    assert "linear" in summary and summary.count("<td class=\"nw\">#") == 2
    assert first < second and page.count('class="qs-data"') == 2
    assert 'id="s1-verdict">quadratic' in page and 'id="s2-verdict">linear' in page
    assert page.count("<footer>") == 1

    md = (out / "p.md").read_text()
    assert md.startswith("### quadscope: 2 sweeps")
    heads = [line for line in md.splitlines() if line.startswith("#### quadscope:")]
    assert len(heads) == 2 and "(sweep 1)" in heads[0] and "(sweep 2)" in heads[1]
    assert md.index("| 1 | insert") < md.index("| 2 | append") < md.index(heads[0])

    junit = (out / "g.xml").read_bytes()
    root_cases = valid_junit(junit)
    assert [s.attrib["name"] for s in ET.fromstring(junit)] == [
        "quadscope: insert {n}", "quadscope: append {n}"]  # one suite per sweep
    assert root_cases[0].find("failure") is not None  # the quadratic one exceeds n log n
    assert root_cases[1].find("failure") is None

    # JSON has no combined form: one file per sweep, the id before the extension.
    assert [json.loads((out / f"s-{i}.json").read_text())["sweep"]["id"] for i in (1, 2)] == [1, 2]
    assert not (out / "s.json").exists()


def test_several_documents_to_stdout_are_refused_before_anything_is_stored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _hyperfine(tmp_path / "hf.json")
    db = tmp_path / "r.db"
    assert main(["import", str(src), "--db", str(db), "--json", "-"]) == 2
    err = capsys.readouterr().err
    assert "--json - would write 2 documents" in err and "Traceback" not in err
    with SqliteStore(db) as store:
        assert store.list_sweeps() == []  # refused before the store was written
    # One document holding both may go to stdout.
    assert main(["import", str(src), "--db", str(db), "--markdown", "-"]) == 0
    assert capsys.readouterr().out.startswith("### quadscope: 2 sweeps")


def test_quiet_prints_each_sweeps_verdict_a_line_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`import --quiet`: the headline of every sweep, as `show --quiet` prints one."""
    src = _hyperfine(tmp_path / "hf.json")
    assert main(["import", str(src), "--db", str(tmp_path / "r.db"), "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[1] == ""
    assert out[0].startswith("quadratic: wall time grows as n²") and out[2].startswith("linear")
