"""The doctor runner with a fake clock, executor and compiler: budget, skipping, storage."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from quadscope.doctor import PROBES
from quadscope.doctor.clock import PROBE as CLOCK
from quadscope.doctor.compare import compare_reports, fmt_number
from quadscope.doctor.details import ClockDetails, ExitParallelDetails, OtherDetails
from quadscope.doctor.dirscan import PROBE as DIRSCAN
from quadscope.doctor.exit_parallel import PROBE as EXIT
from quadscope.doctor.machine import (
    fs_type_of,
    selected,
    vsyscall_mode_from_maps,
    vsyscall_param,
)
from quadscope.doctor.mmaps import PROBE as MMAP
from quadscope.doctor.runner import BLOB_KEY, DoctorReport, ProbeResult, Tools, run_doctor
from quadscope.errors import ToolMissingError
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.store import SqliteStore, Store

MACHINE = {"kernel": "6.18", "cpu": "Test CPU", "vsyscall_mode": "xonly", "machine": "x86_64"}
PER_CALL_S = {"vdso": 3.4e-9, "syscall": 1.3e-7, "vsyscall": 5.4e-7}


def fake_compile(source: str, *, name: str, flags: Sequence[str]) -> Path:
    return Path(f"/fake/bin/{name}")


class Cost:
    """Deterministic per-argv costs with a small repeating jitter so fits have spread."""

    def __init__(self, run_s: float | None = None) -> None:
        self.calls = 0
        self.run_s = run_s

    def __call__(self, argv: Sequence[str]) -> Measurement:
        self.calls += 1
        jitter = 1.0 + 0.01 * ((self.calls * 7) % 5 - 2)
        name = os.path.basename(argv[0])
        n = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
        cpu = 5e-4
        faults = 60
        if name == "qs-doctor-clock":
            cpu += PER_CALL_S[argv[2]] * n
            faults += n if argv[2] == "vsyscall" else 0
        elif name == "qs-doctor-mmap":
            cpu += 3e-6 * n if argv[2] != "firstfit" else 1e-9 * n * n
        wall = self.run_s if self.run_s is not None else cpu * jitter
        return Measurement(
            wall_s=wall,
            user_s=cpu * jitter * 0.5,
            sys_s=cpu * jitter * 0.5,
            max_rss_bytes=1 << 20,
            minor_faults=faults,
            major_faults=0,
            voluntary_ctx_switches=0,
            involuntary_ctx_switches=0,
            exit_code=0,
            page_faults=faults,
        )


def tools_for(cost: Cost, clock: FakeClock, tmp_path: Path, **kw: Any) -> Tools:
    ex = FakeExecutor(cost, clock)
    defaults: dict[str, Any] = {
        "executor": ex,
        "perf_executor": ex,
        "compile": fake_compile,
        "aux": lambda argv, timeout_s: "",
        "scratch_root": str(tmp_path),
        "jobs": 1,
    }
    defaults.update(kw)
    return Tools(**defaults)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return SqliteStore(tmp_path / "results.db")


def test_clock_probe_runs_three_stored_sweeps_and_judges_their_fits(
    store: Store, tmp_path: Path
) -> None:
    """Each way is a stored kind=doctor sweep; the fitted slopes are the per-call costs."""
    clock = FakeClock()
    report = run_doctor(
        [CLOCK],
        quick=True,
        budget_s=300.0,
        store=store,
        clock=clock,
        tools=tools_for(Cost(), clock, tmp_path),
        machine=MACHINE,
    )
    (r,) = report.results
    assert r.verdict == "slow"
    assert r.numbers["vsyscall_ns_per_call"] == pytest.approx(540.0, rel=0.05)
    assert r.numbers["vdso_ns_per_call"] == pytest.approx(3.4, rel=0.05)
    assert isinstance(r.details, ClockDetails) and r.ran is not None
    assert r.details.faults_per_call["vsyscall"] == pytest.approx(1.0, rel=0.05)
    sweeps = r.ran.sweeps
    assert set(sweeps) == {"vdso", "syscall", "vsyscall"}
    for sweep_id in sweeps.values():
        sweep = store.get_sweep(sweep_id)
        assert (sweep.kind, sweep.status) == ("doctor", "complete")
        assert sweep.command[0].endswith("/qs-doctor-clock")
        assert store.get_blob(sweep_id, BLOB_KEY)["verdict"] == "slow"  # type: ignore[index]
    summary = store.get_blob(report.summary_sweep_id, BLOB_KEY)
    assert summary is not None
    assert DoctorReport.from_dict(summary).results == report.results
    assert store.get_sweep("doctor").kind == "doctor"


def test_a_helper_that_cannot_compile_skips_the_probe_with_the_compilers_sentence(
    store: Store, tmp_path: Path
) -> None:
    """ToolMissingError from the compiler: every probe is skipped, none fails, nothing runs."""

    def no_cc(source: str, *, name: str, flags: Sequence[str]) -> Path:
        raise ToolMissingError("no C compiler found (tried $CC, cc, gcc, clang)")

    clock = FakeClock()
    cost = Cost()
    report = run_doctor(
        PROBES,
        quick=True,
        budget_s=30.0,
        store=store,
        clock=clock,
        tools=tools_for(cost, clock, tmp_path, compile=no_cc),
        machine=MACHINE,
    )
    assert [r.verdict for r in report.results] == ["skipped"] * 7
    assert {r.finding for r in report.results} == {
        "no C compiler found (tried $CC, cc, gcc, clang)"
    }
    assert cost.calls == 0


def test_the_budget_bounds_the_whole_doctor_and_stops_sweeps_between_runs(
    store: Store, tmp_path: Path
) -> None:
    """Runs of 1 s each against a 6 s budget: the fake clock ends at or before 6 s."""
    clock = FakeClock()
    report = run_doctor(
        [MMAP, CLOCK],
        quick=True,
        budget_s=6.0,
        store=store,
        clock=clock,
        tools=tools_for(Cost(run_s=1.0), clock, tmp_path),
        machine=MACHINE,
    )
    assert clock.monotonic() <= 6.0
    assert report.elapsed_s <= 6.0
    notes = [n for r in report.results if r.ran is not None for n in r.ran.notes]
    assert any("stopped at its share of the time budget" in n for n in notes)
    statuses = {
        store.get_sweep(i).status for r in report.results if r.ran is not None for i in r.ran.sweeps.values()
    }
    assert "interrupted" in statuses


def test_setup_runs_once_per_size_in_the_variants_scratch_directory(
    store: Store, tmp_path: Path
) -> None:
    """dirscan: `create {tmp}/d{n} {n}` runs for every size before the sweep, JSON kept."""
    seen: list[list[str]] = []

    def aux(argv: Sequence[str], timeout_s: float) -> str:
        seen.append(list(argv))
        return json.dumps({"files": int(argv[-1]), "create_us_per_file": 475.0}) + "\n"

    clock = FakeClock()
    report = run_doctor(
        [DIRSCAN],
        quick=True,
        budget_s=60.0,
        store=store,
        clock=clock,
        tools=tools_for(Cost(), clock, tmp_path, aux=aux),
        machine=MACHINE,
    )
    assert [a[-1] for a in seen] == ["500", "1000", "2500", "5000", "10000"]
    assert all(a[1] == "create" and a[0].endswith("/qs-doctor-dirscan") for a in seen)
    scratch = {os.path.dirname(a[2]) for a in seen}
    assert len(scratch) == 1 and str(tmp_path) in scratch.pop()
    (r,) = report.results
    assert r.numbers["create_us_per_file"] == 475.0
    assert list(tmp_path.glob("quadscope-doctor-*")) == []  # scratch directories removed


def test_detail_json_of_a_helper_reaches_the_judge(store: Store, tmp_path: Path) -> None:
    """exit-parallel's own timings come from one direct run, printed as a JSON line."""

    def aux(argv: Sequence[str], timeout_s: float) -> str:
        kind = argv[2]
        return "noise\n" + json.dumps(
            {
                "n": int(argv[1]),
                "kind": kind,
                "create_us_per_proc": 100.0,
                "destroy_us_per_proc": 40.0,
                "max_stall_ms": 1.5,
                "libs_loaded": 3,
            }
        )

    clock = FakeClock()
    report = run_doctor(
        [EXIT],
        quick=True,
        budget_s=60.0,
        store=store,
        clock=clock,
        tools=tools_for(Cost(), clock, tmp_path, aux=aux),
        machine=MACHINE,
    )
    (r,) = report.results
    assert r.numbers["mem_destroy_us_per_proc"] == 40.0
    assert isinstance(r.details, ExitParallelDetails)
    assert r.details.helper["plain"]["n"] == 256  # the largest --quick size


# -- machine facts and --vs ------------------------------------------------------------


def test_every_probe_s_details_are_its_typed_record_and_survive_the_store(
    store: Store, tmp_path: Path
) -> None:
    """Each probe judges into its own details record; the stored blob reads back equal."""
    clock = FakeClock()

    def aux(argv: Sequence[str], timeout_s: float) -> str:
        return json.dumps({"files": 5, "create_us_per_file": 4.0, "n": 256,
                           "create_us_per_proc": 3.0}) + "\n"

    report = run_doctor(list(PROBES), quick=True, budget_s=300.0, store=store, clock=clock,
                        tools=tools_for(Cost(), clock, tmp_path, aux=aux), machine=MACHINE)
    for r in report.results:
        assert not isinstance(r.details, OtherDetails), r.probe
        assert type(r.details).probe == r.probe and r.ran is not None
        (sweep_id, *_) = r.ran.sweeps.values()
        blob = store.get_blob(sweep_id, BLOB_KEY)
        assert blob is not None and ProbeResult.from_dict(blob) == r
    assert DoctorReport.from_dict(report.to_dict()) == report


def test_details_of_an_unknown_or_older_probe_are_kept_as_stored() -> None:
    """A probe this version does not know, or a record missing a key, loads as OtherDetails."""
    stored = {"probe": "clock", "verdict": "ok",
              "details": {"vsyscall_mode": "xonly", "numbers": {"vdso_ns_per_call": 3.0},
                          "sweeps": {"vdso": 4}}}
    r = ProbeResult.from_dict(stored)
    assert r.details == OtherDetails({"vsyscall_mode": "xonly",
                                      "numbers": {"vdso_ns_per_call": 3.0}})
    assert r.numbers == {"vdso_ns_per_call": 3.0} and r.ran is not None
    assert r.ran.sweeps == {"vdso": 4}
    assert r.to_dict()["details"] == stored["details"]


def test_vsyscall_mode_is_read_from_the_maps_permissions() -> None:
    """r-xp is emulate, --xp is xonly, no line is none."""
    line = "ffffffffff600000-ffffffffff601000 {} 00000000 00:00 0      [vsyscall]"
    assert vsyscall_mode_from_maps(line.format("--xp")) == "xonly"
    assert vsyscall_mode_from_maps(line.format("r-xp")) == "emulate"
    assert vsyscall_mode_from_maps("00400000-00401000 r-xp 0 0:0 0 /bin/x") == "none"


def test_vsyscall_param_ignores_what_init_receives_after_double_dash() -> None:
    """Only the kernel's own vsyscall= counts; the last one wins."""
    assert vsyscall_param("quiet vsyscall=emulate vsyscall=none ro") == "none"
    assert vsyscall_param("quiet -- vsyscall=emulate") == ""


def test_fs_type_is_the_longest_matching_mount() -> None:
    """/tmp on its own tmpfs mount beats /."""
    mounts = "/dev/vda / ext4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\ntmpfs /tmpx tmpfs rw 0 0\n"
    assert fs_type_of("/tmp/x", mounts) == "tmpfs"
    assert fs_type_of("/home", mounts) == "ext4"
    assert selected("always [madvise] never") == "madvise"


def _report(numbers: dict[str, float], verdict: str = "ok") -> DoctorReport:
    r = ProbeResult("exit-parallel", "m", "n", "c", verdict, "f",
                    ExitParallelDetails(helper={}, classes={}, numbers=numbers))
    return DoctorReport((r,), {"kernel": "6.1", "cpu": "Old CPU"}, True, 30.0, 20.0)


def test_vs_names_each_number_that_moved_with_its_ratio_and_units() -> None:
    """destruction 4.1× slower here is said with both values in their units."""
    here = _report({"plain_destroy_us_per_proc": 41.0, "plain_create_us_per_proc": 100.0})
    there = _report({"plain_destroy_us_per_proc": 10.0, "plain_create_us_per_proc": 105.0})
    (c,) = compare_reports(here, there)
    assert c.sentence == (
        "exit-parallel: plain_destroy_us_per_proc 4.1× slower here (41 µs vs 10 µs)"
    )
    assert c.worst_ratio == pytest.approx(4.1)


def test_vs_reports_verdict_changes_and_sameness() -> None:
    """A verdict change is named; numbers within 25% read as the same."""
    same = compare_reports(_report({"x_ms": 10.0}), _report({"x_ms": 11.0}))
    assert same[0].sentence == "exit-parallel: the same within 1.2× on every number"
    changed = compare_reports(_report({"x_ms": 10.0}, "slow"), _report({"x_ms": 10.0}))
    assert changed[0].sentence == "exit-parallel: ok there, slow here"
    assert fmt_number("vdso_ns_per_call", 3.4) == "3.4 ns"


def test_every_doctor_sweep_records_the_host_facts_run_records(store: Store,
                                                                tmp_path: Path) -> None:
    """Probe sweeps and the summary go through the session: host_info and skew checks (no git)."""
    from quadscope.host import Host
    from quadscope.measure.provenance import Provenance
    from quadscope.measure.system import THP, FakeReader
    from quadscope.run.session import Machine

    clock = FakeClock()
    host = Machine(FakeReader({THP: "[always] madvise never\n"}),
                   host_info=lambda: Host(hostname="box", kernel="6.18"),
                   provenance=lambda host: Provenance(git_commit="abc123"))
    report = run_doctor([CLOCK], quick=True, budget_s=300.0, store=store, clock=clock,
                        tools=tools_for(Cost(), clock, tmp_path, host=host), machine=MACHINE)
    ran = report.results[0].ran
    assert ran is not None
    ids = [*ran.sweeps.values(), report.summary_sweep_id]
    assert len(ids) == 4
    for sweep_id in ids:
        sweep = store.get_sweep(sweep_id)
        assert sweep.host == Host(hostname="box", kernel="6.18", thp="always")
        assert sweep.git_commit == ""  # quadscope's helpers, not the user's code
