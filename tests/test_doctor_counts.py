"""Doctor probes with a countable cause decide from the count, timing beside it (doctor.counts)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tests.test_doctor_judges import ev, fake_fit
from tests.test_doctor_runner import MACHINE, Cost, fake_compile

from quadscope.doctor.base import counted_per_unit
from quadscope.doctor.clock import PROBE as CLOCK
from quadscope.doctor.counts import Calls, failed_creates, parse_summary
from quadscope.doctor.notify_buffer import PROBE as NOTIFY
from quadscope.doctor.runner import Tools, run_doctor
from quadscope.doctor.spawn_drift import PROBE as DRIFT
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.store import SqliteStore

STRACE = """\
    calls    errors syscall
--------- --------- ----------------
        1           read
        3           close
        7         4 openat
        1         1 access
--------- --------- ----------------
       12         5 total
"""


def test_straces_table_is_read_per_call_with_its_errors() -> None:
    table = parse_summary(STRACE)
    assert table["openat"] == Calls(7, 4) and table["close"] == Calls(3, 0)
    assert "total" not in table
    assert failed_creates(table) == 4  # access's error is no create
    assert failed_creates({}) == 0


def _drift_details(first: int, last: int, launches: int = 402) -> dict[str, list[int]]:
    return {"count_launches": [1, launches], "failed_creates": [first, last],
            "syscalls": [30 + first, 30 + last]}


def test_spawn_drift_is_pathological_from_the_count_when_the_timing_sees_no_growth() -> None:
    """A busy machine's timing reads flat (k 0.26 [0, 1.1]); the count, 0 names probed at
    launch 1 and 401 at launch 402, names the pathology anyway, with the time beside."""
    flat = fake_fit("1", 1e-9, confident=False, ci=(0.0, 1.1), k=0.26)
    r = DRIFT.judge(ev({"probe": {"cpu_s": flat}, "fixed": {"cpu_s": fake_fit("1", 0.0)}},
                       details={"probe": _drift_details(0, 401),
                                "fixed": _drift_details(0, 0)}))
    assert r.verdict == "pathological"
    assert "counted, 0 names probed at launch 1, 401 at launch 402" in r.finding
    assert r.numbers["probe_names_probed_per_launch"] == 1.0
    assert r.numbers["fixed_names_probed_per_launch"] == 0.0


def test_spawn_drift_timing_that_grows_does_not_overrule_a_flat_count() -> None:
    """Timing growth (a burst of load) with a count of 0 names probed on every launch: ok,
    the timing said as an aside."""
    r = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("n", 3e-6)},
                        "fixed": {"cpu_s": fake_fit("n", 2e-6)}},
                       details={"probe": _drift_details(0, 0), "fixed": _drift_details(0, 0)},
                       facts={"tmp_fs": "ext4"}))
    assert r.verdict == "ok"
    assert "found a free name at once" in r.finding
    assert "timing alone (not judged)" in r.finding


def test_spawn_drift_fixed_naming_that_collides_is_named_from_the_count() -> None:
    r = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("1", 0.0)},
                        "fixed": {"cpu_s": fake_fit("1", 0.0)}},
                       details={"probe": _drift_details(0, 0), "fixed": _drift_details(0, 300)}))
    assert r.verdict == "pathological" and "collides" in r.finding


def test_without_a_count_spawn_drift_judges_the_timing_as_before() -> None:
    r = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("1", 1e-9)},
                        "fixed": {"cpu_s": fake_fit("1", 0.0)}}))
    assert r.verdict == "ok" and "no launch-to-launch growth" in r.finding


def test_faults_per_unit_come_from_the_counted_runs() -> None:
    assert counted_per_unit({"count_sizes": [1000, 11000], "count_faults": [60, 10060]}) == 1.0
    assert counted_per_unit({}) is None
    assert counted_per_unit({"count_sizes": [5, 5], "count_faults": [1, 1]}) is None


def test_clock_is_slow_from_the_vsyscall_fault_count_even_when_its_sweep_did_not_run() -> None:
    """The budget ran out before the vsyscall sweep; its count, one fault per call, was
    taken first and decides."""
    r = CLOCK.judge(ev({"vdso": {"cpu_s": fake_fit("n", 3.5e-9)}},
                       details={"vsyscall": {"count_sizes": [1000, 11000],
                                             "count_faults": [60, 10060]}},
                       facts={"vsyscall_mode": "xonly"},
                       unavailable={"vsyscall": "no time was left in the budget for it"}))
    assert r.verdict == "slow"
    assert "counted, 1 fault per call" in r.finding


def test_clock_with_a_vsyscall_that_does_not_fault_is_ok() -> None:
    r = CLOCK.judge(ev({"vdso": {"cpu_s": fake_fit("n", 3.5e-9)},
                        "syscall": {"cpu_s": fake_fit("n", 1.3e-7)}},
                       details={"vsyscall": {"count_sizes": [1000, 11000],
                                             "count_faults": [60, 60]}},
                       facts={"vsyscall_mode": "xonly"}))
    assert r.verdict == "ok"


def _notify(fresh_faults: int, *, with_reuse: bool) -> dict[str, dict[str, list[int]]]:
    """Counted faults at 16 and 1024 KiB, 200 events: `fresh_faults` per event per MiB."""
    per_kib = fresh_faults * 200 / 1024
    details = {"fresh": {"count_sizes": [16, 1024],
                         "count_faults": [60, 60 + round(per_kib * 1008)]}}
    if with_reuse:
        details["reuse"] = {"count_sizes": [16, 1024], "count_faults": [60, 60 + 252]}
    return details


def test_notify_buffer_is_slow_from_the_fault_count_whichever_variant_was_timed() -> None:
    """Only the reused buffer was timed (the fresh one's slice ran out): the fresh one's
    counted 256 faults per event per MiB decide "slow" all the same."""
    r = NOTIFY.judge(ev({"reuse": {"cpu_s": fake_fit("n", 3e-5 / 1024 / 200)}},
                        details=_notify(256, with_reuse=True), facts={"quick": True}))
    assert r.verdict == "slow"
    assert "counted, 256 faults per event per MiB against 1 reused" in r.finding


def test_notify_buffer_with_few_counted_faults_is_ok() -> None:
    r = NOTIFY.judge(ev({"fresh": {"cpu_s": fake_fit("n", 3e-5 / 1024 / 200)}},
                        details=_notify(2, with_reuse=False), facts={"quick": True}))
    assert r.verdict == "ok" and "few page faults" in r.finding


def _strace(argv: Sequence[str], timeout_s: float) -> dict[str, Calls]:
    """A fake strace: the probing helper finds every earlier launch's name taken."""
    directory = argv[-1]
    taken = len(os.listdir(directory))
    open(os.path.join(directory, f"name.{taken}"), "w").close()  # the launch's own file
    return {"openat": Calls(taken + 3, taken if argv[1] == "probe" else 0)}


class _Filling(Cost):
    """The fake helper's launches leave their file behind, as the real one's do."""

    def __call__(self, argv: Sequence[str]) -> Measurement:
        if os.path.basename(argv[0]) == "qs-doctor-drift" and argv[1] == "probe":
            directory = argv[2]
            open(os.path.join(directory, f"name.{len(os.listdir(directory))}"), "w").close()
        return super().__call__(argv)


def test_the_runner_counts_a_launch_before_and_after_the_sweep(tmp_path: Path) -> None:
    """spawn-drift's variants are counted at launch 1 and after their K launches (K + 2);
    the counts reach the judge, which names the pathology from them."""
    clock = FakeClock()
    store = SqliteStore(tmp_path / "results.db")
    ex = FakeExecutor(_Filling(), clock)
    tools = Tools(executor=ex, perf_executor=ex, compile=fake_compile,
                  aux=lambda argv, timeout_s: "", scratch_root=str(tmp_path), jobs=1,
                  count=_strace)
    (r,) = run_doctor([DRIFT], quick=True, budget_s=300.0, store=store, clock=clock,
                      tools=tools, machine=MACHINE).results
    assert r.verdict == "pathological"
    assert "counted, 0 names probed at launch 1, 401 at launch 402" in r.finding
    assert r.numbers["probe_names_probed_per_launch"] == 1.0
    assert r.numbers["fixed_names_probed_per_launch"] == 0.0


def test_counts_decide_even_when_no_sweep_of_the_probe_ran() -> None:
    """Every slice ran out under load: the counts taken first still give the verdict."""
    none_ran = {"vdso": "no time was left", "syscall": "no time was left",
                "vsyscall": "no time was left"}
    clock = CLOCK.judge(ev({}, details={"vsyscall": {"count_sizes": [1000, 11000],
                                                     "count_faults": [60, 10060]}},
                           facts={"vsyscall_mode": "xonly"}, unavailable=none_ran))
    assert clock.verdict == "slow"
    assert (clock.cls, clock.cost) == ("vsyscall faults n (counted)",
                                       "vsyscall 1 fault per call (counted)")
    notify = NOTIFY.judge(ev({}, details=_notify(256, with_reuse=False), facts={"quick": True},
                             unavailable={"fresh": "timed out", "reuse": "timed out"}))
    assert notify.verdict == "slow"
    assert CLOCK.judge(ev({}, facts={"vsyscall_mode": "xonly"},
                          unavailable=none_ran)).verdict == "skipped"


# -- the table leads with what decided ---------------------------------------


def test_spawn_drift_row_leads_with_the_count_and_never_shows_a_timing_that_contradicts_it(
) -> None:
    """The quick run's row read "probe cⁱ, fixed i³? (k=4)" beside "pathological" from the
    count; now the class is the count's, and the timing that disagrees with it (probe timed
    as cⁱ, fixed as growing though it probed no name) moves to the finding."""
    r = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("c^n", 4e-6)},
                        "fixed": {"cpu_s": fake_fit("n^3", 1e-7, confident=False,
                                                    ci=(0.0, 4.0), k=4.0)}},
                       details={"probe": _drift_details(0, 401),
                                "fixed": _drift_details(0, 0)}, facts={"tmp_fs": "ext4"}))
    assert r.verdict == "pathological"
    assert r.cls == "names probed at launch i: probe i, fixed 0 (counted)"
    assert r.cost == ("probe +1, fixed +0 names probed per launch (counted); "
                      "timed: 4 µs per existing name")
    assert "(CPU time per launch, not judged: probe cⁱ, fixed i³? (k=4))" in r.finding


def test_spawn_drift_row_keeps_a_timing_that_agrees_with_the_count_after_it() -> None:
    r = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("n", 4e-6)},
                        "fixed": {"cpu_s": fake_fit("1", 0.0)}},
                       details={"probe": _drift_details(0, 401),
                                "fixed": _drift_details(0, 0)}))
    assert r.cls == ("names probed at launch i: probe i, fixed 0 (counted); "
                     "timed: probe i, fixed 1")
    assert "not judged" not in r.finding
    # A flat count against a timing that looks like growth: ok, and the class is the count's.
    ok = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("n", 3e-6)},
                         "fixed": {"cpu_s": fake_fit("1", 0.0)}},
                        details={"probe": _drift_details(0, 0),
                                 "fixed": _drift_details(0, 0)}))
    assert ok.verdict == "ok"
    assert ok.cls == "names probed at launch i: probe 0, fixed 0 (counted)"
    assert "not judged: probe i, fixed 1" in ok.finding
    # Twice as many names per launch reads as 2·i.
    two = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("n", 4e-6)}},
                         details={"probe": _drift_details(0, 802)}))
    assert two.cls.startswith("names probed at launch i: probe 2·i (counted)")


def test_clock_and_notify_rows_lead_with_the_counted_faults_the_timing_after() -> None:
    r = CLOCK.judge(ev({"vdso": {"cpu_s": fake_fit("n", 3.5e-9)},
                        "syscall": {"cpu_s": fake_fit("n", 1.3e-7)},
                        "vsyscall": {"cpu_s": fake_fit("n", 9.6e-7),
                                     "page_faults": fake_fit("n", 1.0)}},
                       details={"vsyscall": {"count_sizes": [1000, 11000],
                                             "count_faults": [60, 10060]}},
                       facts={"vsyscall_mode": "xonly"}))
    assert r.verdict == "slow"
    assert r.cls == "vsyscall faults n (counted); timed: vdso n, syscall n, vsyscall n"
    assert r.numbers["vsyscall_faults_per_call_counted"] == 1.0  # JSON and --vs carry it
    assert r.cost == ("vsyscall 1 fault per call (counted); timed: vdso 3.5 ns; "
                      "syscall 130 ns; vsyscall 960 ns per call")
    ok = CLOCK.judge(ev({"vdso": {"cpu_s": fake_fit("n", 3.5e-9)}},
                        details={"vsyscall": {"count_sizes": [1000, 11000],
                                              "count_faults": [60, 60]}},
                        facts={"vsyscall_mode": "xonly"}))
    assert ok.verdict == "ok" and ok.cls == "vsyscall faults 1 (counted); timed: vdso n"
    n = NOTIFY.judge(ev({"fresh": {"cpu_s": fake_fit("n", 4e-4 * 200 / 1024),
                                   "minor_faults": fake_fit("n", 50.0)},
                         "reuse": {"cpu_s": fake_fit("n", 4e-5 * 200 / 1024)}},
                        details=_notify(256, with_reuse=True), facts={"quick": True}))
    assert n.verdict == "slow"
    assert abs(n.numbers["fresh_faults_per_event_at_1MiB_counted"] - 256) < 0.5
    assert n.cls == "faults per event: fresh n (counted); timed: fresh n, reuse n"
    assert n.cost == ("fresh 256, reuse 1 faults per event per MiB (counted); "
                      "timed: fresh 400 µs; reuse 40 µs per event at 1 MiB")
    few = NOTIFY.judge(ev({"fresh": {"cpu_s": fake_fit("n", 3e-5 / 1024 / 200)}},
                          details=_notify(2, with_reuse=False), facts={"quick": True}))
    assert few.cls.startswith("faults per event: fresh 1 (counted)")


def test_the_80_column_table_shows_the_counted_class_beside_the_verdict() -> None:
    """`doctor --quick` at 80 columns: spawn-drift's class cell reads the count, and no
    timed class that disagrees with it (cⁱ, i³?) appears in the table, only in the finding."""
    from quadscope.doctor.records import DoctorReport
    from quadscope.render.doctor import doctor_text

    r = DRIFT.judge(ev({"probe": {"cpu_s": fake_fit("c^n", 4e-6)},
                        "fixed": {"cpu_s": fake_fit("n^3", 1e-7, confident=False,
                                                    ci=(0.0, 4.0), k=4.0)}},
                       details={"probe": _drift_details(0, 401),
                                "fixed": _drift_details(0, 0)}))
    text = doctor_text(DoctorReport((r,), machine={}, quick=True, budget_s=30.0,
                                    elapsed_s=9.0), width=80)
    table, findings = text.split("findings:")
    assert max(len(line) for line in table.splitlines()) <= 80
    cells = " ".join(line.split("│")[1].strip() for line in table.splitlines() if "│" in line)
    cells = " ".join(cells.split())
    assert cells == "names probed at launch i: probe i, fixed 0 (counted)"
    assert "pathological" in table and "cⁱ" not in table and "i³" not in table
    assert "cⁱ" in findings
