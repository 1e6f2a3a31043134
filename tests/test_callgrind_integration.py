"""Real Callgrind on a small C program built the ordinary way (gcc -O2 -g, no frame pointers).

main -> append_field -> strcat in a loop (quadratic: each strcat walks the whole buffer)
and main -> checksum (linear). Bounded: each count takes about 0.3 s; never retried.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quadscope.errors import ToolMissingError
from quadscope.model import Measurement, Run, Sweep
from quadscope.profile.callgrind import count_sweep
from quadscope.profile.exact_growth import exact_growth

pytestmark = [pytest.mark.slow, pytest.mark.integration]

SOURCE = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void append_field(char *buf, const char *field, int n) {
    for (int i = 0; i < n; i++)
        strcat(buf, field);
}

__attribute__((noinline)) long checksum(const char *buf, size_t len) {
    long s = 0;
    for (size_t i = 0; i < len; i++)
        s += buf[i] * (long)(i & 7);
    return s;
}

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    const char *field = argc > 2 ? argv[2] : "ab,";
    char *buf = calloc((size_t)n * strlen(field) + 1, 1);
    append_field(buf, field, n);
    printf("%ld\\n", checksum(buf, strlen(buf)));
    free(buf);
    return 0;
}
"""
SIZES = (500, 1000, 2000, 4000)


@pytest.fixture(scope="module")
def csvjoin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("valgrind") is None or shutil.which("gcc") is None:
        pytest.skip("needs valgrind and gcc")
    folder = tmp_path_factory.mktemp("csvjoin")
    (folder / "csvjoin.c").write_text(SOURCE)
    binary = folder / "csvjoin"
    subprocess.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", str(binary),
                    str(folder / "csvjoin.c")], check=True, timeout=60)
    return binary


def _runs() -> list[Run]:
    return [Run(1, i, "A", n, 0, False, 0.0, Measurement(wall_s=0.001, exit_code=0))
            for i, n in enumerate(SIZES)]


def test_callgrind_names_append_field_with_its_line_and_checksum_linear(csvjoin: Path) -> None:
    """append_field (csvjoin.c:5) is the culprit, its strcat calls n²; checksum is n."""
    sweep = Sweep(id=1, name="t", mode="sizes", command=(str(csvjoin), "{n}"))
    counted = count_sweep(sweep, _runs(), budget_s=0.0)
    assert counted.sizes == SIZES
    g = exact_growth(counted.sizes, counted.counts)
    c = g.culprit
    assert c is not None
    assert (c.name, Path(c.file).name, c.line, c.via, c.cls) == (
        "append_field", "csvjoin.c", 5, "strcat", "n^2")
    assert g.sentence.startswith("append_field (csvjoin.c:5) makes it grow: its calls to strcat "
                                 "at line 7 are n², ")
    by_name = {r.name: r for r in g.functions}
    assert by_name["checksum"].self_class == "n"
    assert by_name["append_field"].inclusive_class == "n^2"
    assert g.functions[0].name.lstrip("_").startswith("strcat")


def test_run_profile_prints_the_culprit_sentence_under_the_headline(
        csvjoin: Path, tmp_path: Path) -> None:
    """`quadscope run --profile --callgrind on`: the sentence is stored and printed."""
    from quadscope.profile.perf import detect_perf
    try:
        detect_perf()
    except ToolMissingError as e:
        pytest.skip(str(e))
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "quadscope", "run", "--db", str(tmp_path / "q.db"),
         "--sizes", "500..4000*2", "--repeat", "1", "--warmup", "0", "--profile",
         "--callgrind", "on", "--json", str(out), "--", str(csvjoin), "{n}"],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    said = json.loads(out.read_text())["profile"]["extra"]["culprit_sentence"]
    assert said.startswith("append_field (csvjoin.c:5) makes it grow")
    lines = done.stdout.splitlines()
    after = next(i for i, line in enumerate(lines[1:], 1) if not line.startswith("  "))
    # Right under the headline (one line, or two when the work was counted and leads).
    assert lines[after].startswith("append_field (csvjoin.c:5) makes it grow"), done.stdout


def test_without_perf_callgrind_alone_names_the_function(
        csvjoin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No sampler on the machine: `run --profile` still names append_field, from Callgrind."""
    from quadscope.cli import main
    from quadscope.profile import driver

    def no_perf(*_args: object, **_kw: object) -> None:
        raise ToolMissingError("perf is not installed")

    monkeypatch.setattr(driver, "choose_sampler", no_perf)
    out = tmp_path / "r.json"
    code = main(["run", "--db", str(tmp_path / "q.db"), "--sizes", "500..4000*2", "--repeat", "1",
                 "--warmup", "0", "--profile", "--json", str(out), "--", str(csvjoin), "{n}"])
    assert code == 0, capsys.readouterr().err
    profile = json.loads(out.read_text())["profile"]
    assert profile["sampler"] == "callgrind"
    assert profile["culprits"][0]["call_path"][0] == "append_field"
    assert profile["extra"]["culprit_sentence"].startswith("append_field (csvjoin.c:5) makes it grow")


def test_an_inlined_helper_is_found_by_its_call_line(tmp_path: Path) -> None:
    """append_field made static and inlined into main: main (its own line) is named, and the
    strcat call's line 7, inside the inlined code, says where."""
    if shutil.which("valgrind") is None or shutil.which("gcc") is None:
        pytest.skip("needs valgrind and gcc")
    source = SOURCE.replace("__attribute__((noinline)) void", "static void").replace(
        "__attribute__((noinline)) long", "static long")
    (tmp_path / "inl.c").write_text(source)
    subprocess.run(["gcc", "-O2", "-g", "-o", str(tmp_path / "inl"), str(tmp_path / "inl.c")],
                   check=True, timeout=60)
    sweep = Sweep(id=1, name="t", mode="sizes", command=(str(tmp_path / "inl"), "{n}"))
    counted = count_sweep(sweep, _runs(), budget_s=0.0)
    g = exact_growth(counted.sizes, counted.counts)
    assert g.sentence.startswith("main (inl.c:17) makes it grow: its calls to strcat at line 7 "
                                 "are n², "), g.sentence
