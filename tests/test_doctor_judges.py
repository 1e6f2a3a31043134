"""Each doctor probe's verdict logic, fed fake fits and numbers: pure and exact."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from quadscope.classes import INCONCLUSIVE, NAMES
from quadscope.doctor import PROBES, probe_names, select
from quadscope.doctor.base import Evidence, ProbeResult, growth, per_unit, superlinear
from quadscope.doctor.clock import PROBE as CLOCK
from quadscope.doctor.details import ClockDetails, DirScanDetails, NotifyBufferDetails
from quadscope.doctor.dirscan import PROBE as DIRSCAN
from quadscope.doctor.exit_parallel import PROBE as EXIT
from quadscope.doctor.mmaps import PROBE as MMAP
from quadscope.doctor.notify_buffer import PROBE as NOTIFY
from quadscope.doctor.spawn_drift import PROBE as DRIFT
from quadscope.doctor.spawn_size import PROBE as SPAWN
from quadscope.errors import UsageError
from quadscope.model import Candidate, Fit


def fake_fit(
    cls: str,
    b: float,
    *,
    metric: str = "cpu_s",
    confident: bool = True,
    ci: tuple[float, float] = (0.9, 1.1),
    runner_up: str = "",
    k: float = 1.0,
) -> Fit:
    """A fit whose linear candidate has slope `b` and whose verdict is `cls`."""

    def weight(c: str) -> float:
        return 0.7 if c == cls else 0.3 if c == runner_up else 0.0

    cands = tuple(Candidate(c, 1e-3, b, 0.0 if c == cls else 10.0, weight(c), 0.0) for c in NAMES)
    return Fit(
        metric=metric,
        cls=cls if confident else INCONCLUSIVE,
        exponent=k,
        exponent_ci=ci,
        coefficients={"a": 1e-3, "b": b},
        r2=0.99,
        candidates=cands,
        n_points=15,
        best=cls,
    )


def ev(
    fits: dict[str, dict[str, Fit]],
    *,
    details: dict[str, dict[str, Any]] | None = None,
    facts: dict[str, Any] | None = None,
    unavailable: dict[str, str] | None = None,
) -> Evidence:
    return Evidence(
        fits=fits, details=details or {}, facts=facts or {}, unavailable=unavailable or {}
    )


# -- shared helpers -----------------------------------------------------------


def test_per_unit_reads_the_linear_candidate_whatever_class_won() -> None:
    """The per-unit cost is b of a + b·n even when the winning class is n²."""
    assert per_unit(fake_fit("n^2", 7e-9)) == 7e-9
    assert per_unit(None) is None


def test_inconclusive_counts_as_superlinear_only_when_the_exponent_interval_clears_1_5() -> None:
    """n² vs n³ undecided but k ∈ [1.7, 2.9] is superlinear; k ∈ [0.8, 2.9] is not."""
    assert superlinear(fake_fit("n^2", 1.0, confident=False, ci=(1.7, 2.9)))
    assert not superlinear(fake_fit("n^2", 1.0, confident=False, ci=(0.8, 2.9)))
    assert superlinear(fake_fit("n^3", 1.0))
    assert not superlinear(fake_fit("n log n", 1.0))


def test_growth_marks_an_inconclusive_guess_with_its_exponent_never_a_pair() -> None:
    """Undecided: 'n²? (k=1.9)', the best guess and k; never 'X or Y' of unrelated classes."""
    undecided = fake_fit("n^2", 1.0, confident=False, runner_up="n log n", k=1.87)
    assert growth(undecided) == "n²? (k=1.9)"
    assert growth(fake_fit("1", 1.0, confident=False, runner_up="n^3", k=4.0)) == "1?"
    assert growth(fake_fit("n log n", 1.0, confident=False, k=1.1), "i") == "i log i? (k=1.1)"
    assert growth(fake_fit("n", 1.0)) == "n"
    assert growth(None) == "—"


def probe_labels(probe: Any) -> list[str]:
    return [v.label for v in probe.plan(True, {"vsyscall_mode": "xonly"}).variants]


# spawn-drift calls any growth pathological, so an n² guess is rightly pathological there;
# its own test pins the guess that is not judged growing.
@pytest.mark.parametrize(
    "probe", [p for p in PROBES if p.name != "spawn-drift"], ids=lambda p: p.name
)
def test_a_superlinear_guess_that_is_not_judged_so_is_explained_in_the_finding(probe: Any) -> None:
    """Every probe: 'n²? (k=1.9)' shown but k's interval reaches 0.8 → not pathological, and
    the finding says why the class column was not taken at its word."""
    guess = fake_fit("n^2", 2e-6, confident=False, ci=(0.8, 2.9), k=1.9)
    r = probe.judge(ev({label: {"cpu_s": guess} for label in probe_labels(probe)}))
    assert "n²? (k=1.9)" in r.cls
    assert " or " not in r.cls
    assert r.verdict in ("ok", "slow")
    assert "k=1.9 has a 95% interval of 0.8–2.9, which reaches below" in r.finding


def test_select_keeps_the_doctor_order_and_refuses_unknown_names() -> None:
    """--only picks probes in the doctor's order; an unknown name is a usage error."""
    assert [p.name for p in select(["mmap", "clock"])] == ["clock", "mmap"]
    assert select([]) == PROBES
    with pytest.raises(UsageError, match="no doctor probe named 'nope'"):
        select(["nope"])
    assert len(probe_names()) == 7


# -- clock ----------------------------------------------------------------------


def clock_fits(vdso: float, syscall: float, vsyscall: float | None, vfaults: float = 1.0) -> Any:
    fits = {
        "vdso": {"cpu_s": fake_fit("n", vdso), "page_faults": fake_fit("1", 0.0)},
        "syscall": {"cpu_s": fake_fit("n", syscall), "page_faults": fake_fit("1", 0.0)},
    }
    if vsyscall is not None:
        fits["vsyscall"] = {"cpu_s": fake_fit("n", vsyscall), "page_faults": fake_fit("n", vfaults)}
    return fits


def test_clock_plan_drops_the_vsyscall_way_when_the_page_is_not_mapped() -> None:
    """vsyscall=none: calling the page would SIGSEGV, so it is not planned at all."""
    none = CLOCK.plan(True, {"vsyscall_mode": "none"})
    xonly = CLOCK.plan(True, {"vsyscall_mode": "xonly"})
    assert [v.label for v in none.variants] == ["vdso", "syscall"]
    assert "vsyscall" in none.unavailable
    assert [v.label for v in xonly.variants] == ["vdso", "syscall", "vsyscall"]
    assert all(v.perf for v in xonly.variants)


def test_clock_emulated_vsyscall_with_a_fault_per_call_is_slow() -> None:
    """xonly: 533 ns and one page fault per call, 159× the vDSO → slow, with the fix."""
    r = CLOCK.judge(ev(clock_fits(3.35e-9, 1.34e-7, 5.33e-7), facts={"vsyscall_mode": "xonly"}))
    assert r.verdict == "slow"
    assert "159× the vDSO" in r.finding
    assert "page fault (1 per call)" in r.finding
    assert "vsyscall=xonly" in r.measured
    assert isinstance(r.details, ClockDetails) and r.details.vsyscall_mode == "xonly"
    assert r.numbers == pytest.approx(
        {"vdso_ns_per_call": 3.35, "syscall_ns_per_call": 134.0, "vsyscall_ns_per_call": 533.0}
    )


def test_clock_without_vsyscall_and_a_fast_vdso_is_ok() -> None:
    """vsyscall=none and a vDSO 40× cheaper than a syscall: nothing to do."""
    r = CLOCK.judge(
        ev(
            clock_fits(3.35e-9, 1.34e-7, None),
            facts={"vsyscall_mode": "none", "vsyscall_param": "none"},
            unavailable={"vsyscall": "the vsyscall page is not mapped (vsyscall=none)"},
        )
    )
    assert r.verdict == "ok"
    assert "not available here" in r.finding
    assert "vsyscall=none (boot: vsyscall=none)" in r.measured
    assert "vsyscall n/a" in r.cost


def test_clock_vdso_as_costly_as_a_syscall_is_slow_and_names_the_clock_source() -> None:
    """A vDSO at 0.6× a syscall means the clock source is not readable from user space."""
    r = CLOCK.judge(
        ev(clock_fits(8e-8, 1.34e-7, None), facts={"clocksource": "hpet", "vsyscall_mode": "none"})
    )
    assert r.verdict == "slow"
    assert "'hpet'" in r.finding


def test_clock_superlinear_route_is_pathological() -> None:
    """A route whose cost per call rises with the number of calls is pathological."""
    fits = clock_fits(3e-9, 1e-7, None)
    fits["syscall"]["cpu_s"] = fake_fit("n^2", 1e-7)
    assert CLOCK.judge(ev(fits)).verdict == "pathological"


def test_clock_with_nothing_run_is_skipped_with_the_reason() -> None:
    """No route ran: skipped, with the reason the runner recorded."""
    r = CLOCK.judge(ev({}, unavailable={"vdso": "could not compile the helper"}))
    assert (r.verdict, r.finding) == ("skipped", "could not compile the helper")


# -- spawn-size -------------------------------------------------------------------


def test_spawn_size_cheap_relocations_are_ok_and_costed_as_pie_minus_nopie() -> None:
    """PIE 11.1 ns/fn, non-PIE 1.1 ns/fn: relocation 10 ns, under the 20 ns bar."""
    r = SPAWN.judge(
        ev({"pie": {"cpu_s": fake_fit("n", 11.1e-9)}, "nopie": {"cpu_s": fake_fit("1", 1.1e-9)}})
    )
    assert r.verdict == "ok"
    assert r.numbers["relocation_ns"] == pytest.approx(10.0)
    assert r.cls == "pie n, nopie 1"


def test_spawn_size_expensive_relocations_are_slow_with_the_linker_fix() -> None:
    """50 ns per PIE relocation (5 ms per launch at 10⁵) → slow: pack-relative-relocs."""
    r = SPAWN.judge(
        ev({"pie": {"cpu_s": fake_fit("n", 51e-9)}, "nopie": {"cpu_s": fake_fit("1", 1e-9)}})
    )
    assert r.verdict == "slow"
    assert "-Wl,-z,pack-relative-relocs" in r.finding
    assert "5 ms per launch" in r.finding


def test_spawn_size_quadratic_start_up_is_pathological() -> None:
    """Start-up growing as n² in the number of functions is pathological."""
    r = SPAWN.judge(ev({"pie": {"cpu_s": fake_fit("n^2", 1e-9)}}))
    assert r.verdict == "pathological"


def test_spawn_size_linear_start_up_that_is_cheap_says_it_grows_not_that_it_barely_depends() -> None:
    """pie 'n' shown with verdict ok: the finding agrees it grows (1.5 ms at 10⁵), and why ok."""
    r = SPAWN.judge(
        ev({"pie": {"cpu_s": fake_fit("n", 15e-9)}, "nopie": {"cpu_s": fake_fit("1", 1e-9)}})
    )
    assert (r.verdict, r.cls) == ("ok", "pie n, nopie 1")
    assert r.finding.startswith(
        "start-up grows with program size (pie), but cheaply: 1.5 ms per launch at 10⁵ "
        "functions (pie 15 ns, nopie 1 ns per function; relocations cost 14 ns each, under "
        "the 20 ns at which packing them pays); nothing to do"
    )
    assert "barely" not in r.finding


def test_spawn_size_unrelated_guesses_read_as_guesses_and_the_ok_says_why() -> None:
    """The field report: 'nopie 1 or n³', 'pie n² or n log n' with ok. Now each kind shows one
    marked guess, and the finding says why n² / n³ were not believed."""
    r = SPAWN.judge(
        ev(
            {
                "pie": {"cpu_s": fake_fit("n^2", 15e-9, confident=False, ci=(0.8, 2.9), k=1.9)},
                "nopie": {"cpu_s": fake_fit("n^3", 1e-9, confident=False, ci=(-0.4, 1.2), k=0.3)},
            }
        )
    )
    assert (r.verdict, r.cls) == ("ok", "pie n²? (k=1.9), nopie n³? (k=0.3)")
    assert r.finding.endswith(
        "Not judged super-linear: pie leans to n², but its exponent k=1.9 has a 95% interval "
        "of 0.8–2.9, which reaches below 1.5; nopie leans to n³, but its exponent k=0.3 (95% "
        "interval -0.4–1.2) stays below 1.5; a full run (without --quick, or with a larger "
        "--budget) can decide"
    )
    assert r.finding.startswith("start-up grows with program size (pie), but cheaply")


def test_spawn_size_says_why_an_n_guess_is_not_counted_as_growth() -> None:
    """'pie n? (k=0.92)' beside 'does not measurably grow': the finding names k's interval."""
    r = SPAWN.judge(
        ev(
            {
                "pie": {"cpu_s": fake_fit("n", 15e-9, confident=False, ci=(0.3, 1.5), k=0.92)},
                "nopie": {"cpu_s": fake_fit("1", 1e-9)},
            }
        )
    )
    assert (r.verdict, r.cls) == ("ok", "pie n? (k=0.92), nopie 1")
    assert r.finding.startswith("start-up cost does not measurably grow with program size")
    assert r.finding.endswith(
        "Not judged growing: pie leans to n, but its exponent k=0.92 has a 95% interval of "
        "0.3–1.5, which reaches below 0.5; a full run (without --quick, or with a larger "
        "--budget) can decide"
    )


def test_spawn_size_plan_builds_one_binary_per_size_and_kind() -> None:
    """Each size is its own binary, linked under a name the {n} template reaches."""
    plan = SPAWN.plan(True, {"machine": "x86_64"})
    names = {h.name for h in plan.helpers}
    assert "qs-doctor-spawn-pie-300" in names and "qs-doctor-spawn-nopie-30000" in names
    pie = plan.variants[0]
    assert pie.argv == ("{bin}/qs-doctor-spawn-pie-{n}",)
    assert max(pie.sizes) == 30_000
    assert max(SPAWN.plan(False, {"machine": "x86_64"}).variants[0].sizes) == 100_000


# -- spawn-drift -----------------------------------------------------------------


def test_spawn_drift_probing_that_grows_is_pathological_with_the_cost_per_name() -> None:
    """Launch i costs i × 3 µs more: pathological, 30 ms once 10⁴ files exist."""
    r = DRIFT.judge(
        ev({"probe": {"cpu_s": fake_fit("n", 3e-6)}, "fixed": {"cpu_s": fake_fit("1", 0.0)}})
    )
    assert r.verdict == "pathological"
    assert "3 µs more on every launch" in r.finding
    assert "30 ms per launch once 10⁴ files exist" in r.finding
    assert r.cls == "probe i, fixed 1"


def test_spawn_drift_flat_launches_are_ok() -> None:
    """No growth against i in either program: ok."""
    r = DRIFT.judge(
        ev({"probe": {"cpu_s": fake_fit("1", 1e-9)}, "fixed": {"cpu_s": fake_fit("1", 0.0)}})
    )
    assert r.verdict == "ok"


def test_spawn_drift_fixed_program_growing_blames_the_file_system() -> None:
    """If even time+pid naming slows down, the directory, not the naming, is at fault."""
    r = DRIFT.judge(
        ev(
            {"probe": {"cpu_s": fake_fit("1", 0.0)}, "fixed": {"cpu_s": fake_fit("n", 2e-6)}},
            facts={"tmp_fs": "ext4"},
        )
    )
    assert r.verdict == "pathological"
    assert "never collides" in r.finding and "ext4" in r.finding
    both = DRIFT.judge(
        ev(
            {"probe": {"cpu_s": fake_fit("n", 3e-6)}, "fixed": {"cpu_s": fake_fit("n", 2e-6)}},
            facts={"tmp_fs": "ext4"},
        )
    )
    assert "probes name.0" in both.finding
    assert both.finding.endswith("even time+pid naming slows by 2 µs per file present on ext4")


def test_spawn_drift_names_the_launch_index_i_and_explains_an_unconfirmed_growth() -> None:
    """'√i? (k=0.4)', not '√i or log i' (nor 'iconclusive'); ok says why not growing."""
    r = DRIFT.judge(
        ev(
            {
                "probe": {"cpu_s": fake_fit("sqrt n", 1e-9, confident=False, ci=(0.1, 0.9), k=0.4)},
                "fixed": {"cpu_s": fake_fit("1", 0.0)},
            }
        )
    )
    assert (r.verdict, r.cls) == ("ok", "probe √i? (k=0.4), fixed 1")
    assert "Not judged growing: probe leans to √i, but its exponent k=0.4" in r.finding


def test_a_guess_whose_whole_interval_is_below_the_bar_is_not_called_undecided() -> None:
    """k=0.22 in 0.22–0.29 'stays below' 0.5: no 'reaches below', no advice to run longer."""
    r = DRIFT.judge(
        ev(
            {
                "probe": {"cpu_s": fake_fit("n", 3e-6)},
                "fixed": {"cpu_s": fake_fit("sqrt n", 1e-9, confident=False, ci=(0.22, 0.29), k=0.22)},
            }
        )
    )
    assert r.verdict == "pathological"
    assert r.finding.endswith(
        ". Not judged growing: fixed leans to √i, but its exponent k=0.22 (95% interval "
        "0.22–0.29) stays below 0.5"
    )


def test_spawn_drift_runs_in_accumulate_mode() -> None:
    """Both programs are launched K times in a row in one directory, not swept over n."""
    plan = DRIFT.plan(True, {})
    assert {v.mode for v in plan.variants} == {"accumulate"}
    assert {v.runs for v in plan.variants} == {400}
    assert plan.variants[0].argv == ("{bin}/qs-doctor-drift", "probe", "{tmp}")


# -- exit-parallel ---------------------------------------------------------------


def helper_numbers(kind: str, create: float, destroy: float, stall: float) -> dict[str, Any]:
    return {
        "n": 320,
        "kind": kind,
        "libs_loaded": 58 if kind == "libs" else 0,
        "create_us_per_proc": create,
        "destroy_us_per_proc": destroy,
        "max_stall_ms": stall,
    }


def exit_evidence(stall: float = 2.0, plain_cls: str = "n") -> Evidence:
    return ev(
        {
            k: {"cpu_s": fake_fit(plain_cls if k == "plain" else "n", 1e-4)}
            for k in ("plain", "libs", "mem")
        },
        details={
            "plain": helper_numbers("plain", 600.0, 50.0, 1.0),
            "libs": helper_numbers("libs", 1700.0, 245.0, stall),
            "mem": helper_numbers("mem", 2300.0, 185.0, 3.0),
        },
    )


def test_exit_parallel_linear_with_short_stalls_is_ok_and_compares_the_kinds() -> None:
    """Linear, 3 ms longest stall: ok, saying how much slower heavy children die."""
    r = EXIT.judge(exit_evidence())
    assert r.verdict == "ok"
    assert "children with 58 libraries die 4.9× slower" in r.finding
    assert "with 2 MiB each 3.7× slower" in r.finding
    assert "longest stall 3.0 ms" in r.finding
    assert r.numbers["libs_destroy_us_per_proc"] == 245.0
    assert "plain +600 µs/−50 µs" in r.cost


def test_exit_parallel_a_long_reap_stall_is_slow() -> None:
    """A 120 ms stall while reaping is long enough to freeze a service: slow."""
    r = EXIT.judge(exit_evidence(stall=120.0))
    assert r.verdict == "slow"
    assert "stalled the reaper for 120 ms" in r.finding


def test_exit_parallel_quick_reaches_hundreds_of_processes() -> None:
    """The issue asks for hundreds: even --quick forks at least 200, and reports that n."""
    for quick in (True, False):
        for v in EXIT.plan(quick, {}).variants:
            assert max(v.sizes) >= 200
            assert v.detail_n == max(v.sizes)


def test_exit_parallel_superlinear_teardown_is_pathological() -> None:
    """Creating and killing n processes growing as n² is pathological."""
    assert EXIT.judge(exit_evidence(plain_cls="n^2")).verdict == "pathological"


# -- mmap ------------------------------------------------------------------------


def mmap_fits(default: str = "n", firstfit: str = "n^2") -> dict[str, dict[str, Fit]]:
    return {
        "default": {"cpu_s": fake_fit(default, 2.8e-6)},
        "hint": {"cpu_s": fake_fit("n", 3.1e-6)},
        "noreplace": {"cpu_s": fake_fit("n", 2.9e-6)},
        "firstfit": {"cpu_s": fake_fit(firstfit, 1e-6)},
    }


def test_mmap_linear_placement_with_a_recognised_reference_is_ok() -> None:
    """Kernel ways linear, first-fit reference seen as n²: ok, no caveat."""
    r = MMAP.judge(ev(mmap_fits()))
    assert r.verdict == "ok"
    assert "2.8 µs each" in r.finding
    assert "not recognised" not in r.finding
    assert r.numbers == pytest.approx(
        {"default_us_per_mapping": 2.8, "hint_us_per_mapping": 3.1, "noreplace_us_per_mapping": 2.9}
    )


def test_mmap_ok_says_the_quadratic_in_its_class_column_is_the_reference() -> None:
    """firstfit n² is shown beside an ok verdict: the finding says it is the reference."""
    r = MMAP.judge(ev(mmap_fits()))
    assert r.verdict == "ok"
    assert "firstfit n²" in r.cls
    assert "(the first-fit reference grows as n², as a list scan must)" in r.finding


def test_mmap_says_when_the_quadratic_reference_was_not_recognised() -> None:
    """If first-fit does not read as n², a mild superlinear cost could hide: say so."""
    r = MMAP.judge(ev(mmap_fits(firstfit="n")))
    assert r.verdict == "ok"
    assert "was not recognised as quadratic" in r.finding


def test_mmap_quadratic_default_placement_is_pathological() -> None:
    """The kernel placing mappings like a first-fit scan is pathological."""
    r = MMAP.judge(ev(mmap_fits(default="n^2")))
    assert r.verdict == "pathological"
    assert "the default way grows as n²" in r.finding


# -- notify-buffer ---------------------------------------------------------------


def notify_fits(fresh_cls: str = "n", fresh_b: float = 1e-5, reuse_b: float = 1e-6) -> Any:
    # slopes per KiB over 200 events (--quick)
    return {
        "fresh": {"cpu_s": fake_fit(fresh_cls, fresh_b), "minor_faults": fake_fit("n", 50.0)},
        "reuse": {"cpu_s": fake_fit("n", reuse_b), "minor_faults": fake_fit("1", 0.0)},
    }


def test_notify_fresh_buffer_ten_times_the_reused_one_is_slow() -> None:
    """10× per byte, 256 faults per event at 1 MiB: slow, keep one buffer."""
    r = NOTIFY.judge(ev(notify_fits(), facts={"quick": True}))
    assert r.verdict == "slow"
    assert "costs 10.0× a reused one" in r.finding
    assert isinstance(r.details, NotifyBufferDetails) and r.details.events == 200
    assert r.details.faults_per_event_at_1MiB["fresh"] == pytest.approx(256.0)
    assert r.numbers["fresh_us_per_event_at_1MiB"] == pytest.approx(1e-5 / 200 * 1024 * 1e6)
    assert "256 faults" in r.cost


def test_notify_fresh_buffer_close_to_the_reused_one_is_ok() -> None:
    """1.2× per byte: ok."""
    r = NOTIFY.judge(ev(notify_fits(fresh_b=1.2e-6), facts={"quick": True}))
    assert r.verdict == "ok"


def test_notify_superlinear_zeroing_is_pathological() -> None:
    """Cost per event growing faster than the buffer is pathological."""
    assert NOTIFY.judge(ev(notify_fits(fresh_cls="n^2"))).verdict == "pathological"


# -- dirscan ----------------------------------------------------------------------

_FS = {"tmp_fs": "ext4", "tmp_dir": "/tmp"}


def test_dirscan_quadratic_scan_is_pathological_with_the_ext4_fix() -> None:
    """A scan growing as n² means unindexed lookups: name dir_index."""
    r = DIRSCAN.judge(ev({"scan": {"cpu_s": fake_fit("n^2", 1e-6)}}, facts=_FS))
    assert r.verdict == "pathological"
    assert "dir_index" in r.finding


def test_dirscan_slow_stat_is_slow() -> None:
    """30 µs of CPU per file (a network file system) is slow."""
    r = DIRSCAN.judge(ev({"scan": {"cpu_s": fake_fit("n", 3e-5)}}, facts=_FS))
    assert r.verdict == "slow"
    assert "each file costs 30 µs of CPU to stat on ext4 in /tmp" in r.finding


def test_dirscan_judges_the_scan_and_keeps_slow_file_creation_as_an_aside() -> None:
    """The field report: 339 µs to create a file drove 'slow'. The probe measures scanning:
    1.78 µs per file is ok; creation is a note in the finding and details, not the cost."""
    r = DIRSCAN.judge(
        ev(
            {"scan": {"cpu_s": fake_fit("n", 1.78e-6), "wall_s": fake_fit("n", 1.9e-6)}},
            details={"scan": {"create_us_per_file": 339.0, "link_us_per_name": 20.0}},
            facts=_FS,
        )
    )
    assert (r.verdict, r.cls, r.cost) == ("ok", "n", "1.78 µs per file")
    assert r.finding == (
        "scanning costs 1.78 µs per file on ext4 in /tmp and does not grow as n² or worse in "
        "the number of files; nothing to do. Aside, not judged: creating one file to fill the "
        "test directory took 339 µs in /tmp"
    )
    assert isinstance(r.details, DirScanDetails)
    assert r.details.create_note.startswith("Aside, not judged: creating one file")
    assert r.numbers == pytest.approx(
        {"us_per_file": 1.78, "wall_us_per_file": 1.9, "create_us_per_file": 339.0}
    )


def test_dirscan_stat_that_waits_far_beyond_its_cpu_is_slow() -> None:
    """2 µs of CPU but 60 µs of wall time per file: every stat waits (network, cold disk)."""
    r = DIRSCAN.judge(
        ev({"scan": {"cpu_s": fake_fit("n", 2e-6), "wall_s": fake_fit("n", 6e-5)}}, facts=_FS)
    )
    assert r.verdict == "slow"
    assert r.cost == "2 µs per file (60 µs wall)"
    assert "each file waits 60 µs to be stat'ed on ext4 in /tmp, 30× its CPU time" in r.finding


def test_dirscan_wall_time_a_few_times_the_cpu_but_small_is_ok() -> None:
    """8 µs of wall vs 2 µs of CPU per file is a busy machine, not a waiting file system."""
    r = DIRSCAN.judge(
        ev({"scan": {"cpu_s": fake_fit("n", 2e-6), "wall_s": fake_fit("n", 8e-6)}}, facts=_FS)
    )
    assert (r.verdict, r.cost) == ("ok", "2 µs per file")


def test_dirscan_fast_linear_scan_is_ok() -> None:
    """1.8 µs per file, files cheap to create: ok."""
    r = DIRSCAN.judge(
        ev(
            {"scan": {"cpu_s": fake_fit("n", 1.8e-6)}},
            details={"scan": {"create_us_per_file": 15.0}},
            facts=_FS,
        )
    )
    assert (r.verdict, r.cls) == ("ok", "n")


def test_dirscan_plan_fills_each_size_before_the_sweep() -> None:
    """The setup command creates the size's directory; the sweep scans it."""
    (v,) = DIRSCAN.plan(True, {}).variants
    assert v.setup == (("{bin}/qs-doctor-dirscan", "create", "{tmp}/d{n}", "{n}"),)
    assert v.argv == ("{bin}/qs-doctor-dirscan", "scan", "{tmp}/d{n}")


def test_dirscan_on_a_users_directory_scans_prefixes_of_its_listing_and_writes_nothing() -> None:
    """--dir: no setup (nothing created there); n = the first k entries, 5% … all of them."""
    probe = replace(DIRSCAN, target="/data/tree", target_entries=1234, target_fs="nfs4")
    (v,) = probe.plan(False, {}).variants
    assert v.setup == ()
    assert v.argv == ("{bin}/qs-doctor-dirscan", "scan", "/data/tree", "{n}")
    assert v.sizes == (62, 123, 308, 617, 1234)
    (big,) = replace(probe, target_entries=1_000_000).plan(True, {}).variants
    assert big.sizes == (1_000, 2_000, 5_000, 10_000, 20_000)
    r = probe.judge(ev({"scan": {"cpu_s": fake_fit("n", 3e-5)}}, facts=_FS))
    assert r.measured == "readdir+fstatat of the first n of 1234 entries of /data/tree (nfs4)"
    assert isinstance(r.details, DirScanDetails)
    assert (r.verdict, r.details.create_note) == ("slow", "")
    assert "on nfs4 in /data/tree" in r.finding


def test_dirscan_on_a_directory_too_small_to_fit_is_skipped_with_the_count() -> None:
    """12 entries cannot show a growth class: skipped, saying how many it needs."""
    probe = replace(DIRSCAN, target="/data/few", target_entries=12)
    plan = probe.plan(True, {})
    assert plan.variants == ()
    r = probe.judge(ev({}, unavailable=dict(plan.unavailable)))
    assert (r.verdict, r.finding) == (
        "skipped",
        "/data/few holds 12 entries; the scan needs at least 50 to show how its cost grows",
    )


# -- every probe -------------------------------------------------------------------


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_every_probe_skips_with_the_reason_when_nothing_ran(probe: Any) -> None:
    """No fits and one unavailable reason: skipped with that sentence, never a crash."""
    labels = [v.label for v in probe.plan(True, {"vsyscall_mode": "xonly"}).variants]
    r: ProbeResult = probe.judge(
        ev({}, unavailable={label: "could not compile the helper" for label in labels})
    )
    assert r.verdict == "skipped"
    assert r.finding == "could not compile the helper"
    assert ProbeResult.from_dict(r.to_dict()) == r
