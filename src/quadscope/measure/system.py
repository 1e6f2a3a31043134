"""What on this machine skews timings: one small check per item, as `pyperf system show` has.

Contract: each check is a frozen record of one fact, with `key` (the name of
its field in `Host`, a sweep's `host`), `value` (the fact as stored there),
`show()` (a line for people) and `advice()` (None when the fact is harmless,
else what is wrong and what to do). `read_checks(reader)` reads every check
this machine can answer through a `Reader` (a fact it cannot read is left out,
as a VM without cpufreq has no governor); `StealTime.between(before, after)`
is the hypervisor's share of CPU time between two readings of /proc/stat,
taken at the start and the end of a sweep. `with_checks(host, checks)`
records checks in a `Host`; `checks_from_host(host)` rebuilds the checks from
a stored sweep's facts and `advice_from_host(host)` gives their advice, so a
report shows yesterday's warnings without reading today's machine.
Everything here is pure given the reader: tests use `FakeReader`.

The items and their thresholds follow pyperf's `system show`
(pyperf/_system.py): a governor other than `performance`, turbo boost on,
ASLR not fully on; plus transparent huge pages set to `always` (faults and
RSS then move in 2 MiB steps as n grows), a load average above half the CPUs
at the start, steal time of 2% or more over the sweep, and other work keeping
LOAD_CPUS or more busy over it (which supersedes the load average's advice). `Shims` is not
read from the machine: the session records which of the command's programs
were version managers' shims (`measure.shims`), and its advice says what ran.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from quadscope.host import Host
from quadscope.measure.shims import read_fact
from quadscope.textsafe import visible


class Reader(Protocol):
    def read(self, path: str) -> str | None: ...


class FileReader:
    """Reads the real files; None for one that is missing or unreadable."""

    def read(self, path: str) -> str | None:
        try:
            return Path(path).read_text()
        except OSError:
            return None


@dataclass(frozen=True, slots=True)
class FakeReader:
    """Files from a dict, for tests."""

    files: Mapping[str, str]

    def read(self, path: str) -> str | None:
        return self.files.get(path)


CPU_DIR = "/sys/devices/system/cpu"
THP = "/sys/kernel/mm/transparent_hugepage/enabled"
ASLR = "/proc/sys/kernel/randomize_va_space"
LOADAVG = "/proc/loadavg"
STAT = "/proc/stat"
NO_TURBO = f"{CPU_DIR}/intel_pstate/no_turbo"
BOOST = f"{CPU_DIR}/cpufreq/boost"


MAX_CPU = 65535  # Linux's NR_CPUS tops out at 8192 today; a generous bound all the same


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """CPUs from the kernel's list format, `0-3,6`, sorted; ValueError when it is not one."""
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        first, last = int(lo), int(hi or lo)
        if first < 0 or last < first:
            raise ValueError(f"{part!r} is not a CPU or a range of CPUs")
        if last > MAX_CPU:  # `0-999999999` would otherwise fill memory with CPU numbers
            raise ValueError(f"{part!r} names CPUs past {MAX_CPU}, more than Linux numbers")
        cpus.update(range(first, last + 1))
    return tuple(sorted(cpus))


def online_cpus(reader: Reader) -> tuple[int, ...]:
    """The online CPUs; () when unreadable."""
    try:
        return parse_cpu_list(reader.read(f"{CPU_DIR}/online") or "")
    except ValueError:
        return ()


@dataclass(frozen=True, slots=True)
class CpuGovernor:
    """The cpufreq governors of the online CPUs, distinct, comma-separated."""

    value: str
    key = "cpu_governor"

    @classmethod
    def read(cls, reader: Reader) -> CpuGovernor | None:
        found = [reader.read(f"{CPU_DIR}/cpu{c}/cpufreq/scaling_governor")
                 for c in online_cpus(reader)]
        names = sorted({g.strip() for g in found if g})
        return cls(",".join(names)) if names else None

    def show(self) -> str:
        return f"CPU frequency governor: {self.value}"

    def advice(self) -> str | None:
        if self.value == "performance":
            return None
        return (f"the CPU frequency governor is {self.value!r}: the clock speed follows the "
                "load, so short runs are timed at a lower speed than long ones; run "
                "`cpupower frequency-set -g performance`")


@dataclass(frozen=True, slots=True)
class Turbo:
    """Turbo boost: "on" or "off" (intel_pstate's no_turbo, or cpufreq's boost)."""

    value: str
    key = "turbo"

    @classmethod
    def read(cls, reader: Reader) -> Turbo | None:
        no_turbo = reader.read(NO_TURBO)
        if no_turbo is not None:
            return cls("off" if no_turbo.strip() == "1" else "on")
        boost = reader.read(BOOST)
        if boost is not None:
            return cls("on" if boost.strip() == "1" else "off")
        return None

    def show(self) -> str:
        return f"turbo boost: {self.value}"

    def advice(self) -> str | None:
        if self.value != "on":
            return None
        return ("turbo boost is on: the clock speed depends on temperature and on how many "
                f"cores are busy; turn it off with `echo 1 > {NO_TURBO}` "
                f"(or `echo 0 > {BOOST}`)")


@dataclass(frozen=True, slots=True)
class HugePages:
    """Transparent huge pages: always, madvise or never."""

    value: str
    key = "thp"

    @classmethod
    def read(cls, reader: Reader) -> HugePages | None:
        text = reader.read(THP)
        if text is None or "[" not in text:
            return None
        return cls(text.split("[", 1)[1].split("]", 1)[0])

    def show(self) -> str:
        return f"transparent huge pages: {self.value}"

    def advice(self) -> str | None:
        if self.value != "always":
            return None
        return ("transparent huge pages are 'always': page faults and RSS move in 2 MiB "
                "steps once an allocation is large enough, a jump that can pass for growth; "
                f"run `echo madvise > {THP}`")


@dataclass(frozen=True, slots=True)
class Aslr:
    """kernel.randomize_va_space: 0 off, 1 partial, 2 full."""

    value: str
    key = "aslr"

    @classmethod
    def read(cls, reader: Reader) -> Aslr | None:
        text = reader.read(ASLR)
        return None if text is None else cls(text.strip())

    def show(self) -> str:
        words = {"0": "off", "1": "partial", "2": "full"}
        return f"ASLR: {words.get(self.value, self.value)} (randomize_va_space={self.value})"

    def advice(self) -> str | None:
        if self.value == "2":
            return None
        return (f"ASLR is not fully on (randomize_va_space={self.value}): every run gets the "
                "same memory layout, so one lucky or unlucky layout biases all of them alike; "
                "run `sysctl kernel.randomize_va_space=2`")


@dataclass(frozen=True, slots=True)
class LoadAverage:
    """The 1-minute load average at the start, over the online CPUs ("1.52/2")."""

    value: str
    key = "load_1m"

    @classmethod
    def read(cls, reader: Reader) -> LoadAverage | None:
        text = reader.read(LOADAVG)
        if not text:
            return None
        cpus = len(online_cpus(reader)) or (os.cpu_count() or 1)
        return cls(f"{float(text.split()[0]):.2f}/{cpus}")

    def show(self) -> str:
        load, cpus = self.value.split("/")
        return f"load average (1 min) at the start: {load} on {cpus} CPUs"

    def advice(self) -> str | None:
        load, cpus = self.value.split("/")
        if float(load) <= int(cpus) / 2:
            return None
        return (f"the load average was {load} on {cpus} CPUs when the sweep started: other "
                "work competes with the runs for the CPUs; wait for a quieter machine, or pin "
                "the runs to an idle CPU with --cpu")


def cpu_times(stat_text: str | None) -> tuple[int, ...]:
    """The aggregate `cpu` line of /proc/stat as numbers (user, nice, system, idle, iowait,
    irq, softirq, steal, ...); () when unreadable."""
    for line in (stat_text or "").splitlines():
        if line.startswith("cpu "):
            return tuple(int(x) for x in line.split()[1:])
    return ()


@dataclass(frozen=True, slots=True)
class StealTime:
    """The share of CPU time the hypervisor gave other guests during the sweep, in %."""

    value: str
    key = "steal_pct"

    @classmethod
    def between(cls, before: tuple[int, ...], after: tuple[int, ...]) -> StealTime | None:
        if len(before) < 8 or len(after) < 8:
            return None
        # guest and guest_nice (fields 9, 10) are already inside user and nice.
        total = sum(after[:8]) - sum(before[:8])
        if total <= 0:
            return None
        return cls(f"{100 * (after[7] - before[7]) / total:.1f}")

    def show(self) -> str:
        return f"steal time over the sweep: {self.value}%"

    def advice(self) -> str | None:
        if float(self.value) < 2.0:
            return None
        return (f"the hypervisor took {self.value}% of the CPU time from this VM during the "
                "sweep (steal time): other tenants slowed the runs unpredictably; prefer "
                "cpu_s to wall_s, or measure on a dedicated machine")


@dataclass(frozen=True, slots=True)
class Shims:
    """The programs run in place of version managers' shims (`measure.shims`), as stored."""

    value: str
    key = "shims"

    def show(self) -> str:
        return "; ".join(f"{s.name} runs {s.program} ({s.manager} shim)"
                         for s in read_fact(self.value).values())

    def advice(self) -> str | None:
        said = [f"{visible(s.name)} is a {s.manager} shim, a script that runs {s.manager} "
                f"before the program: every run executes {visible(s.program)} directly "
                f"(`{s.manager} which`), so neither the time nor a count includes "
                f"{s.manager}'s start-up" for s in read_fact(self.value).values()]
        return "; ".join(said) or None


def own_cpu_s(proc: Path = Path("/proc")) -> float:
    """The CPU seconds this process has used, with its children's: those it waited for
    (`os.times`) and those alive now, each with what it used and what its own waited-for
    children did (/proc/PID/stat utime, stime, cutime, cstime): the resident launcher
    starts the runs and reaps them, so their CPU time is its children's, not ours."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    me, hz = os.getpid(), os.sysconf("SC_CLK_TCK")
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == me:  # fields[1] is the parent's pid (field 4)
                total += sum(int(x) for x in fields[11:15]) / hz  # fields 14-17
        except (OSError, IndexError, ValueError):
            continue  # exited meanwhile, or not readable
    return total


LOAD_CPUS = 0.5  # other work keeping this many CPUs busy over a sweep is worth naming


@dataclass(frozen=True, slots=True)
class OtherLoad:
    """The CPUs other work kept busy during the sweep, on average, over the online CPUs
    ("1.02/2"): the busy time of /proc/stat (user, nice, system, irq, softirq) less the
    CPU time of quadscope and the runs it waited for, over the time that passed."""

    value: str
    key = "other_load"

    @classmethod
    def between(cls, before: tuple[int, ...], after: tuple[int, ...], own_cpu_s: float,
                hz: int, cpus: int) -> OtherLoad | None:
        """From two readings of /proc/stat's `cpu` line (`cpu_times`, in 1/`hz` s of one
        CPU), the CPU seconds this process and its children used in between, and the
        online CPUs."""
        if len(before) < 8 or len(after) < 8 or hz <= 0:
            return None
        delta = [a - b for a, b in zip(after[:8], before[:8], strict=True)]
        total = sum(delta)
        if total <= 0 or cpus <= 0:
            return None
        busy = delta[0] + delta[1] + delta[2] + delta[5] + delta[6]  # steal is StealTime's
        other = max(0.0, busy - own_cpu_s * hz)
        return cls(f"{cpus * other / total:.2f}/{cpus}")

    @staticmethod
    def parse(text: str | None) -> tuple[float, int] | None:
        """The CPUs busy and the online CPUs of a recorded value ("1.02/2"), None where
        it was not recorded or does not read."""
        busy, _, cpus = (text or "").partition("/")
        try:
            return float(busy), int(cpus)
        except ValueError:
            return None

    @property
    def cpus_busy(self) -> float:
        return (self.parse(self.value) or (0.0, 0))[0]

    def show(self) -> str:
        busy, _, cpus = self.value.partition("/")
        return f"other work over the sweep: {busy} of {cpus} CPUs busy"

    def advice(self) -> str | None:
        busy, _, cpus = self.value.partition("/")
        if self.cpus_busy < LOAD_CPUS:
            return None
        return (f"other work kept {busy} of the {cpus} CPUs busy during the sweep: it shares "
                "the CPUs, caches and memory with the runs, so the times carry its "
                "contention; measure on a quieter machine, or count the work "
                "(--meter instructions), which load does not change")


def loads_apart(host_a: Host, host_b: Host) -> str | None:
    """A sentence where two sweeps compared ran beside other work that differed by
    LOAD_CPUS or more (each `OtherLoad`), else None: a constant factor between their
    times may then be the load's."""
    load_a, load_b = OtherLoad.parse(host_a.other_load), OtherLoad.parse(host_b.other_load)
    if load_a is None or load_b is None:
        return None
    (a, cpus_a), (b, cpus_b) = load_a, load_b
    if abs(a - b) < LOAD_CPUS:
        return None
    return (f"other work kept {a:.1f} of {cpus_a} CPUs busy during A's sweep and {b:.1f} of "
            f"{cpus_b} during B's: a constant factor between their times may be the load's, "
            "not the programs'")


Check = (CpuGovernor | Turbo | HugePages | Aslr | LoadAverage | StealTime | OtherLoad
         | Shims)
_KINDS: tuple[type[Check], ...] = (CpuGovernor, Turbo, HugePages, Aslr, LoadAverage, StealTime,
                                   OtherLoad, Shims)


def read_checks(reader: Reader) -> tuple[Check, ...]:
    """Every start-of-sweep check this machine answers (steal time comes at the end)."""
    found = (CpuGovernor.read(reader), Turbo.read(reader), HugePages.read(reader),
             Aslr.read(reader), LoadAverage.read(reader))
    return tuple(c for c in found if c is not None)


def host_facts(checks: tuple[Check, ...]) -> dict[str, str]:
    """The checks as `Host` facts: {field name: value}."""
    return {c.key: c.value for c in checks}


def with_checks(host: Host, checks: tuple[Check, ...]) -> Host:
    """`host` with each check's fact recorded (each check's `key` names a `Host` field)."""
    return Host.from_dict({**host.to_dict(), **host_facts(checks)})


def checks_from_host(host: Host) -> tuple[Check, ...]:
    """The checks a stored sweep recorded, in the order above."""
    facts = host.to_dict()
    return tuple(kind(facts[kind.key]) for kind in _KINDS if kind.key in facts)


def advice_from_host(host: Host) -> tuple[str, ...]:
    """The advice of every recorded fact that likely skewed the sweep's timings; where the
    other work over the whole sweep was measured, the load average at its start is not
    advised on too (the one supersedes the other)."""
    checks = checks_from_host(host)
    if any(isinstance(c, OtherLoad) for c in checks):
        checks = tuple(c for c in checks if not isinstance(c, LoadAverage))
    return tuple(a for c in checks if (a := c.advice()) is not None)
