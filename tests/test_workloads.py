"""Tests for quadscope.workloads and `quadscope demo`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from quadscope.classes import NAMES
from quadscope.workloads import SUITE, WORKLOADS, build

needs_cc = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v cc || command -v gcc"], capture_output=True).returncode,
    reason="no C compiler (scripts/setup installs gcc)",
)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # One compile cache for the whole session, never the user's real one.
    monkeypatch.setenv("QUADSCOPE_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def test_suite_is_large_enough_and_covers_every_class() -> None:
    """The accuracy suite has at least 12 programs and one for every growth class."""
    assert len(SUITE) >= 12
    assert {WORKLOADS[n].expected for n in SUITE} == set(NAMES)


def test_every_workload_has_a_sane_declaration() -> None:
    """Expected is acceptable, sizes ascend, the argv keeps a placeholder for the sweep."""
    for w in WORKLOADS.values():
        assert w.expected in w.acceptable, w.name
        assert list(w.sizes) == sorted(set(w.sizes)), w.name
        assert (w.mode == "accumulate") == (not w.sizes), w.name
        argv = w.argv("/x/prog", workdir="/tmp/d")
        assert argv[0] == "/x/prog"
        assert any("{n}" in a or "{i}" in a for a in argv[1:]), w.name
        assert "{dir}" not in " ".join(argv)


def test_argv_refuses_a_missing_workdir() -> None:
    """A workload that keeps files between launches cannot be run without its directory."""
    with pytest.raises(ValueError, match="fresh directory"):
        WORKLOADS["log_probe"].argv("/x/prog")


def test_verdict_kind_separates_wrong_from_inconclusive() -> None:
    """Inconclusive is never wrong; a confident verdict outside `acceptable` is."""
    w = WORKLOADS["insertion_sort"]
    assert [w.verdict_kind(v) for v in ("n^2", "inconclusive", "n")] == [
        "correct",
        "inconclusive",
        "wrong",
    ]


@needs_cc
@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_compiles_and_runs_at_its_smallest_size(name: str, tmp_path: Path) -> None:
    """Each program builds and exits 0 at its smallest size, printing a checksum."""
    w = WORKLOADS[name]
    n = w.sizes[0] if w.sizes else 1
    argv = [a.replace("{n}", str(n)).replace("{i}", "1") for a in w.argv(build(name),
                                                                          workdir=tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"\d+\n", proc.stdout)


@needs_cc
@pytest.mark.integration
def test_log_probe_creates_one_file_per_launch_after_probing_every_taken_name(
    tmp_path: Path,
) -> None:
    """Launch k (from 0) in a fresh directory creates app.k.dat after probing k taken names."""
    prog = build("log_probe")
    launches = 6
    for i in range(launches):
        subprocess.run([str(prog), str(tmp_path), str(i)], check=True, capture_output=True)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"app.{k}.dat" for k in range(launches))
    probes = [
        int(re.search(r"probes=(\d+)", (tmp_path / f"app.{k}.dat").read_text()).group(1))  # type: ignore[union-attr]
        for k in range(launches)
    ]
    assert probes == list(range(launches))


@needs_cc
@pytest.mark.integration
def test_log_fixed_creates_one_file_per_launch_without_probing(tmp_path: Path) -> None:
    """The fixed logger creates one uniquely named file per launch and records zero probes."""
    prog = build("log_fixed")
    for i in range(4):
        subprocess.run([str(prog), str(tmp_path), str(i)], check=True, capture_output=True)
    files = list(tmp_path.iterdir())
    assert len(files) == 4
    assert all("probes=0 " in f.read_text() for f in files)


@needs_cc
@pytest.mark.integration
def test_demo_quick_runs_end_to_end_and_stores_both_sweeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`quadscope demo --quick` exits 0, prints both verdicts and stores two complete A/B sweeps."""
    from quadscope.cli import main
    from quadscope.commands.demo import QUICK

    db = tmp_path / "results.db"
    monkeypatch.setenv("QUADSCOPE_DB", str(db))
    assert main(["demo", "--quick", "--no-perf"]) == 0
    out = capsys.readouterr().out
    assert out.count("Verdict: ") == 2
    from quadscope.store import SqliteStore
    with SqliteStore(db) as store:
        stored = {s.name: (s, count) for s, count in store.list_sweeps()}
        ff_all = store.runs(stored["demo: first-fit scan vs fixed"][0].id)
    acc, acc_runs = stored["demo: log probe vs fixed"]
    ff, _ = stored["demo: first-fit scan vs fixed"]
    assert (acc.mode, acc.status, acc_runs) == ("accumulate", "complete", 2 * QUICK.launches)
    assert (ff.mode, ff.status) == ("sizes", "complete")
    # The timed plan (one warm-up per variant, the start-up at n = 1 in every round); where
    # time left a class open (`--meter auto` on a loaded machine), the work's counts follow
    # it, one run each.
    timed = [r for r in ff_all if r.value("instructions") is None]
    assert len(timed) == 2 * ((len(QUICK.sizes) + 1) * QUICK.repeat + 1)
    assert len(ff_all) - len(timed) <= 2 * 8
    assert acc.vs_command is not None and ff.vs_command is not None
