"""measure/system.py: each check's fact, line and advice from faked files; steal over a sweep."""

from __future__ import annotations

from pathlib import Path

from quadscope.host import Host
from quadscope.measure.system import (
    ASLR,
    BOOST,
    CPU_DIR,
    LOADAVG,
    NO_TURBO,
    THP,
    Aslr,
    CpuGovernor,
    FakeReader,
    HugePages,
    LoadAverage,
    OtherLoad,
    StealTime,
    Turbo,
    advice_from_host,
    cpu_times,
    host_facts,
    read_checks,
)

QUIET = {
    f"{CPU_DIR}/online": "0-1\n",
    f"{CPU_DIR}/cpu0/cpufreq/scaling_governor": "performance\n",
    f"{CPU_DIR}/cpu1/cpufreq/scaling_governor": "performance\n",
    NO_TURBO: "1\n",
    THP: "always [madvise] never\n",
    ASLR: "2\n",
    LOADAVG: "0.20 0.30 0.40 1/100 999\n",
}


def test_a_quiet_machine_gives_facts_and_no_advice() -> None:
    """Every fact is recorded; none of them skews, so there is no advice."""
    checks = read_checks(FakeReader(QUIET))
    assert host_facts(checks) == {"cpu_governor": "performance", "turbo": "off",
                                  "thp": "madvise", "aslr": "2", "load_1m": "0.20/2"}
    assert [c.advice() for c in checks] == [None] * 5


def test_a_noisy_machine_gets_advice_for_each_item() -> None:
    """powersave, turbo on, THP always, ASLR off and a high load each get their fix."""
    files = {**QUIET, f"{CPU_DIR}/cpu1/cpufreq/scaling_governor": "powersave\n",
             NO_TURBO: "0\n", THP: "[always] madvise never\n", ASLR: "0\n",
             LOADAVG: "1.52 1 1 1/1 1\n"}
    advice = [c.advice() or "" for c in read_checks(FakeReader(files))]
    assert "'performance,powersave'" in advice[0] and "cpupower" in advice[0]
    assert NO_TURBO in advice[1]
    assert "echo madvise" in advice[2]
    assert "randomize_va_space=2" in advice[3]
    assert advice[4].startswith("the load average was 1.52 on 2 CPUs")


def test_unreadable_facts_are_left_out() -> None:
    """A VM without cpufreq or turbo files has no governor or turbo check."""
    files = {k: v for k, v in QUIET.items() if "cpufreq" not in k and k != NO_TURBO}
    assert [c.key for c in read_checks(FakeReader(files))] == ["thp", "aslr", "load_1m"]


def test_turbo_from_cpufreq_boost() -> None:
    """Without intel_pstate, cpufreq's boost=1 means turbo is on."""
    assert Turbo.read(FakeReader({BOOST: "1\n"})) == Turbo("on")


def test_lines_for_people() -> None:
    """show() states each fact in words."""
    assert Aslr("2").show() == "ASLR: full (randomize_va_space=2)"
    assert LoadAverage("0.50/4").show() == "load average (1 min) at the start: 0.50 on 4 CPUs"
    assert CpuGovernor("schedutil").show() == "CPU frequency governor: schedutil"
    assert HugePages("never").show() == "transparent huge pages: never"


def test_steal_is_the_hypervisors_share_between_two_readings() -> None:
    """Steal % = Δsteal / Δ(user..steal) between the sweep's start and end."""
    before = cpu_times("cpu  100 0 50 800 0 0 0 50 0 0\ncpu0 1 2 3\n")
    after = cpu_times("cpu  200 0 100 1600 0 0 0 100 9 9\n")
    steal = StealTime.between(before, after)
    assert steal == StealTime("5.0")
    assert "5.0% of the CPU time" in (steal.advice() or "")
    assert StealTime("1.9").advice() is None
    assert StealTime.between((), after) is None


def test_other_load_is_the_busy_time_not_spent_by_quadscope_and_its_runs() -> None:
    """Over 10 s on 2 CPUs (2000 ticks at 100 Hz), 1500 ticks busy (user, nice, system,
    irq, softirq; not steal), of which quadscope's runs used 5 CPU seconds: others kept
    1000 ticks of 2000 busy, one CPU of the two."""
    before = cpu_times("cpu  100 0 50 800 0 0 0 0 0 0\n")
    after = cpu_times("cpu  1300 100 200 1150 100 50 0 50 0 0\n")
    load = OtherLoad.between(before, after, own_cpu_s=5.0, hz=100, cpus=2)
    assert load == OtherLoad("1.00/2") and load.cpus_busy == 1.0
    assert "other work kept 1.00 of the 2 CPUs busy" in (load.advice() or "")
    assert OtherLoad.between(before, after, own_cpu_s=20.0, hz=100, cpus=2) == OtherLoad(
        "0.00/2")  # never below nothing, however the ticks round
    assert OtherLoad("0.49/2").advice() is None
    assert OtherLoad.between((), after, own_cpu_s=0.0, hz=100, cpus=2) is None
    assert OtherLoad.between(before, before, own_cpu_s=0.0, hz=100, cpus=2) is None


def test_the_load_over_the_sweep_supersedes_the_load_average_at_its_start() -> None:
    """Both warn of the same thing; the one measured over the sweep is the one said."""
    (only,) = advice_from_host(Host(load_1m="1.80/2", other_load="1.02/2"))
    assert only.startswith("other work kept 1.02 of the 2 CPUs busy during the sweep")
    assert advice_from_host(Host(load_1m="1.80/2", other_load="0.10/2")) == ()
    (start,) = advice_from_host(Host(load_1m="1.80/2"))
    assert start.startswith("the load average was 1.80")


def test_stored_facts_give_back_their_advice() -> None:
    """A report rebuilds the checks from Sweep.host: only the skewing facts advise."""
    host = Host(kernel="6.1", aslr="2", thp="always", steal_pct="0.3")
    (only,) = advice_from_host(host)
    assert only.startswith("transparent huge pages are 'always'")


def test_own_cpu_adds_the_live_childrens_time_and_theirs(tmp_path: Path) -> None:
    """The launcher reaps the runs: their CPU is its cutime/cstime, which count as ours; a
    process whose parent is another is not (fields 14-17 of /proc/PID/stat, in ticks)."""
    import os

    from quadscope.measure.system import own_cpu_s

    hz = os.sysconf("SC_CLK_TCK")
    child = f"7 (launch er) S {os.getpid()} 7 7 0 -1 0 0 0 0 0 {hz} {hz} {2 * hz} 0 20 0 1 0"
    other = f"8 (x) S 1 8 8 0 -1 0 0 0 0 0 {50 * hz} 0 0 0 20 0 1 0"
    for pid, text in (("7", child), ("8", other), ("self", other)):
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "stat").write_text(text)
    (tmp_path / "9").mkdir()  # exited meanwhile: no stat
    empty = tmp_path / "empty"
    empty.mkdir()
    assert 3.9 < own_cpu_s(tmp_path) - own_cpu_s(empty) < 4.1
