"""Real-process tests of the profiler: perf on small C programs with a known culprit.

Each is bounded (a few seconds: perf record costs ~1 s to start) and never
retried. They need perf with a working software clock event and a C compiler.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from quadscope.errors import ToolMissingError
from quadscope.model import Sweep
from quadscope.profile.driver import profile_sweep
from quadscope.profile.perf import PerfSampler, PerfSetup, detect_perf
from quadscope.profile.programs import KERNEL_WRITES, QUADRATIC, VSYSCALL_TIME
from quadscope.profile.python import PySpySampler, find_pyspy

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def setup() -> PerfSetup:
    try:
        return detect_perf()
    except ToolMissingError as e:
        pytest.skip(str(e))


def _sweep(binary: Path) -> Sweep:
    return Sweep(id=1, name="t", mode="sizes", command=(str(binary), "{n}"))


def test_quadratic_function_is_culprit_one(setup: PerfSetup, tmp_path: Path) -> None:
    """pair_count (n²) beside linear_scan (n) in main: pair_count ranks first, superlinear,
    and never confidently wrong: its class is n² or unsettled (sampled time on a loaded
    machine pulled k to 1.59 once, so k itself is not pinned to 2)."""
    binary = QUADRATIC.build()
    sampler = PerfSampler(setup, target_samples=400, max_repeats=10)
    a = profile_sweep(_sweep(binary), QUADRATIC.sizes, sampler=sampler, out_dir=tmp_path,
                      measure_overhead=False)
    first = a.culprits[0]
    assert first.symbol == "pair_count"
    assert first.self_exponent is not None and first.self_exponent > 1.3
    assert first.self_class in ("n^2", "inconclusive"), first.self_class
    assert first.call_path[-2:] == ("main", "pair_count")
    assert "linear_scan" in [c.symbol for c in a.culprits[1:]]
    assert (tmp_path / f"folded-n{QUADRATIC.sizes[-1]}.txt").exists()


def test_without_frame_pointers_the_sampler_unwinds_with_dwarf_and_says_so(
        setup: PerfSetup, tmp_path: Path) -> None:
    """gcc -O2 omits frame pointers: fp stacks stop at pair_count, with no caller (issue 26).
    The sampler finds that in its first recording, records with DWARF, names main as the
    caller and says which unwinder it used."""
    binary = QUADRATIC.build(("-O2", "-g", "-fomit-frame-pointer"))
    sampler = PerfSampler(setup, target_samples=400, max_repeats=10)
    a = profile_sweep(_sweep(binary), QUADRATIC.sizes[-3:], sampler=sampler, out_dir=tmp_path,
                      measure_overhead=False)
    assert sampler.call_graph.startswith("dwarf")
    assert any("perf --call-graph dwarf" in n for n in a.notes), a.notes
    # The unwinder is what this test is about: pair_count's stack reaches main. Its rank
    # against linear_scan is the ranking tests' business (under load it can trade places).
    pair = next((c for c in a.culprits if c.symbol == "pair_count"), None)
    assert pair is not None, [c.symbol for c in a.culprits]
    assert "main" in pair.call_path, pair.call_path


def test_kernel_symbol_ranks_high_for_syscall_loop(setup: PerfSetup, tmp_path: Path) -> None:
    """Many 1-byte writes to /dev/null: a kernel function is among the top three culprits."""
    if not setup.kernel:
        pytest.skip("kernel stacks are not permitted here")
    binary = KERNEL_WRITES.build()
    sampler = PerfSampler(setup, target_samples=400, max_repeats=10)
    a = profile_sweep(_sweep(binary), KERNEL_WRITES.sizes[:3], sampler=sampler,
                      out_dir=tmp_path, measure_overhead=False)
    top = a.culprits[:3]
    assert any(c.dso == "[kernel.kallsyms]" for c in top), [(c.symbol, c.dso) for c in top]


def test_vsyscall_time_loop_diagnosis(setup: PerfSetup, tmp_path: Path) -> None:
    """time() through 0xffffffffff600400 in a loop: about 1 fault per call, from tick_loop."""
    if setup.fault_event is None:
        pytest.skip("no fault event can be recorded here")
    binary = VSYSCALL_TIME.build()
    rep = PerfSampler(setup).sample_faults([str(binary), "20000"], size_n=20000,
                                           expected_faults=20000, out_dir=tmp_path)
    assert rep is not None
    # About one per call: perf may miss a sample or two of 20,000 ("about 0.99").
    assert re.match(r"about (1 page fault|0\.9\d page faults|1\.0\d page faults) per call, at "
                    r"the vsyscall page, from tick_loop:", rep.sentences[0]), rep.sentences


def test_run_profile_diagnoses_vsyscall_faults(
    setup: PerfSetup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`quadscope run --profile` on the vsyscall time() loop: rusage sees ~70 faults, perf's
    page_faults one per call, so faults are sampled and the JSON carries the diagnosis, and the
    kernel culprit rows name tick_loop as the caller, not [vsyscall]."""
    if setup.fault_event is None:
        pytest.skip(f"no fault event can be recorded here: {'; '.join(setup.notes) or setup}")
    from quadscope.cli import main

    # `run` has no --no-overhead, and the overhead runs (~7 s) are not what this pins down.
    monkeypatch.setattr(PerfSampler, "overhead", lambda *_a, **_k: None)
    binary = VSYSCALL_TIME.build()
    out = tmp_path / "out.json"
    rc = main(["run", "--db", str(tmp_path / "q.db"), "--sizes", "2500,5000,10000,20000",
               "--repeat", "3", "--warmup", "0", "--profile", "--json", str(out), "--",
               str(binary), "{n}"])
    assert rc == 0
    doc = json.loads(out.read_text())
    if all(r["page_faults"] is None for r in doc["runs"]):
        pytest.skip("perf counted no page_faults for the sweep's runs (perf stat unusable here)")
    assert max(r["minor_faults"] for r in doc["runs"]) < 1000  # what rusage alone would decide on
    faults = doc["profile"]["faults"]
    assert faults is not None, doc["profile"]["notes"]
    # One fault per call; a machine at load 8 lost perf's fault records down to 0.7 a call
    # (CI, 2026-11-28): the diagnosis, not the rate's last digit, is what this pins.
    assert re.match(r"about (1 page fault|0\.[5-9]\d? page faults|1\.[01]\d? page faults) "
                    r"per call, at the vsyscall page, from tick_loop:",
                    faults["sentences"][0]), faults["sentences"]
    kernel = [c for c in doc["profile"]["culprits"] if c["dso"] == "[kernel.kallsyms]"]
    if setup.kernel:
        assert kernel, doc["profile"]["culprits"]
    # The kernel's leading row is the vsyscall faults, named after tick_loop, and its rows
    # named after tick_loop carry most of the kernel's share; others may be the process's own
    # start-up (exec's faults, ld.so's CPU probing: 5.6% of a 12 ms run under load, CI).
    if setup.kernel:
        top = max(kernel, key=lambda c: c["share_at_max"])
        assert top["user_caller"] == "tick_loop", kernel
        ours = sum(c["share_at_max"] for c in kernel if c["user_caller"] == "tick_loop")
        assert ours > sum(c["share_at_max"] for c in kernel) / 2, kernel


def test_overhead_is_measured(setup: PerfSetup) -> None:
    """The overhead run times the workload with and without perf; perf's start-up apart."""
    binary = QUADRATIC.build()
    oh = PerfSampler(setup).overhead([str(binary), "4000"], size_n=4000, runs=1)
    assert oh is not None
    # No bound on the ratio itself: that is a timing, and this machine is shared.
    assert oh.plain_wall_s > 0 and oh.profiled_wall_s > 0 and oh.startup_s > 0
    assert oh.ratio == pytest.approx(oh.profiled_wall_s / oh.plain_wall_s)


@pytest.mark.skipif(find_pyspy() is None, reason="py-spy is not installed")
def test_python_functions_via_pyspy(tmp_path: Path) -> None:
    """A Python script's quadratic function is named by py-spy, ranked first."""
    script = tmp_path / "q.py"
    script.write_text(
        "import sys\n"
        "def quad(n):\n    s = 0\n    for i in range(n):\n        for j in range(n):\n"
        "            s += i ^ j\n    return s\n"
        "def lin(n):\n    return sum(range(n * 200))\n"
        "n = int(sys.argv[1]); lin(n); quad(n)\n"
    )
    pyspy = find_pyspy()
    assert pyspy is not None
    sweep = Sweep(id=1, name="py", mode="sizes", command=(sys.executable, str(script), "{n}"))
    # Runs of 0.1 s and more: py-spy, which starts the program itself, took no sample of
    # runs of 20 ms or less (n = 150–500) on this VM, and one size is no growth to rank.
    a = profile_sweep(sweep, (1000, 2000, 4000), sampler=PySpySampler(pyspy, target_samples=200),
                      out_dir=tmp_path / "out", measure_overhead=False)
    assert a.culprits[0].symbol == "quad"
    assert a.culprits[0].dso.endswith("q.py")


def test_missing_perf_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without perf on PATH: ToolMissingError saying to install linux-perf."""
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(ToolMissingError, match="install linux-perf"):
        detect_perf()


@pytest.mark.skipif(find_pyspy() is None, reason="py-spy is not installed")
@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ is profiled by perf -X perf")
def test_list_insert_shows_its_c_function_under_the_python_frame(
        setup: PerfSetup, tmp_path: Path) -> None:
    """A loop of l.insert(0, i) on Python 3.11: the culprit is libpython's insert (or memmove)
    under <listcomp>, from perf's stacks spliced under py-spy's, not <listcomp> itself."""
    from quadscope.profile.native import PythonNativeSampler

    pyspy = find_pyspy()
    assert pyspy is not None
    code = "import sys; l=[]; [l.insert(0, i) for i in range(int(sys.argv[1]))]"
    sweep = Sweep(id=1, name="py", mode="sizes", command=(sys.executable, "-c", code, "{n}"))
    sampler = PythonNativeSampler(PySpySampler(pyspy, target_samples=200, max_runs=3),
                                  PerfSampler(setup, target_samples=300, max_repeats=3))
    a = profile_sweep(sweep, (5000, 10000, 20000, 40000), sampler=sampler,
                      out_dir=tmp_path / "out", measure_overhead=False)
    top = a.culprits[0]
    assert top.symbol in ("list_insert", "ins1") or "memmove" in top.symbol, a.culprits[:3]
    assert "libpython" in top.dso or "libc" in top.dso
    assert top.call_path[-2] == "<listcomp>"
    assert any("come from perf recordings" in note for note in a.notes)


def _is_binary(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _python_312() -> str | None:
    """A CPython 3.12+ interpreter binary here (pyenv's, then PATH's; not a shell shim)."""
    found = [str(p) for p in sorted(Path("/root/.pyenv/versions").glob("3.1[23].*/bin/python3"))]
    found += [w for name in ("python3.13", "python3.12") if (w := shutil.which(name))]
    return next((f for f in found if _is_binary(f)), None)


FRONT_PY = """\
import sys

def remember_user(log, i):
    log.insert(0, i)

log = []
for i in range(int(sys.argv[1])):
    remember_user(log, i)
"""


@pytest.mark.skipif(_python_312() is None, reason="no CPython 3.12+ for perf's -X perf")
def test_python_312_trampolines_put_list_insert_under_the_user_function(
        setup: PerfSetup, tmp_path: Path) -> None:
    """`python3.12 -X perf` under perf with DWARF: list_insert sits right under
    remember_user (the trampoline frame read as a Python frame, the loop dropped), the
    user's function is named in the sentence, and the note names the unwinder."""
    from quadscope.profile.trampoline import UNWINDER_NOTE

    script = tmp_path / "front.py"
    script.write_text(FRONT_PY)
    python = _python_312()
    assert python is not None
    sweep = Sweep(id=1, name="py", mode="sizes", command=(python, str(script), "{n}"))
    sampler = PerfSampler(setup, target_samples=300, max_repeats=3, python_perf=True)
    a = profile_sweep(sweep, (5000, 10000, 20000, 40000), sampler=sampler,
                      out_dir=tmp_path / "out", measure_overhead=False)
    top = a.culprits[0]
    assert top.symbol in ("list_insert", "ins1") or "memmove" in top.symbol, a.culprits[:3]
    assert "remember_user" in top.call_path, top.call_path
    assert not any(p.startswith("py::") for c in a.culprits for p in c.call_path)
    assert a.culprit_sentence is not None and a.culprit_sentence.startswith("remember_user")
    assert UNWINDER_NOTE in a.notes
