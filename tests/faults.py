"""Fault injection on a real `quadscope run`: a signal mid-sweep, then `--resume`.

`fault_cycle(signum, seed, workdir)` starts a sweep of 41 fast runs whose every
process carries a unique marker (in its command line or environment; the
command leaves a background child and a `setsid` one behind each run), waits
until a seeded number of runs is stored, sends `signum` to quadscope alone,
then resumes the sweep to its end. It returns a `FaultOutcome`: the exit codes,
the runs lost (stored before the signal, missing or changed after the resume),
duplicated (variant, size, repeat, warm-up) keys, and the marked processes
still alive after each step. Shared by tests/test_faults.py and
bench/reliability.py.

`group_kill_cycle(seed, workdir)` starts the same sweep in a process group of
its own, each run writing its pid to a marker file as its last act; at a
seeded count of markers it stops the whole group (SIGSTOP: quadscope and its
launcher; the run in flight is in a group of its own and goes on), notes which
runs had finished (their pid is gone: the launcher reaped them), SIGKILLs the
group (a CI job cancelled, `timeout -s KILL`; the run in flight dies with the
launcher, or ends unreaped), waits for the runs' processes to go, then resumes.
Every marker not of a finished run is of a run in flight, which no one reaped;
a finished run that the resume had to run again writes a second marker: runs
lost = markers - 41 - those in flight.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
SIZES = "1,2,3,4,5,6,7,8,9,10"  # with --repeat 4 --warmup 1: 41 runs
TOTAL_RUNS = 41
MARK_VAR = "QUADSCOPE_FAULT_MARK"


@dataclass(frozen=True, slots=True)
class FaultOutcome:
    signum: int
    exit_code: int  # of the signalled quadscope (negative: killed by that signal)
    resume_exit_code: int
    runs_before: int  # stored when the signal was sent
    runs_lost: int
    duplicates: int
    runs_after: int
    left_after_signal: int  # marked processes alive once the signalled quadscope ended
    left_after_resume: int
    stderr: str


def command(marker: str) -> str:
    """A fast run that leaves a background child and a setsid child behind, all marked."""
    return (f"export {MARK_VAR}={marker}; sh -c 'sleep 30; :' & "
            f"setsid sh -c 'sleep 30; :' & sleep 0.0$(({{n}} % 3 + 1))")


def marked_processes(marker: str) -> list[int]:
    """Pids of live processes (not zombies) whose command line or environment holds `marker`."""
    found = []
    needle = marker.encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            if needle in Path(entry.path, "cmdline").read_bytes() or \
                    needle in Path(entry.path, "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def settled_marked(marker: str, within_s: float = 3.0) -> int:
    """How many marked processes are left, waiting up to `within_s` for them to go."""
    deadline = time.monotonic() + within_s
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(left)


def stored_runs(db: Path) -> dict[tuple[str, int, int, int], float]:
    """(variant, size, repeat, warm-up) -> wall_s of every stored run; a key twice raises."""
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            rows = conn.execute("SELECT variant, size_n, repeat, warmup, wall_s FROM runs"
                                ).fetchall()
    except sqlite3.OperationalError:  # created, but its tables not yet
        return {}
    out: dict[tuple[str, int, int, int], float] = {}
    for variant, size, repeat, warmup, wall in rows:
        key = (variant, size, repeat, warmup)
        out[key] = -1.0 if key in out else wall  # -1: a duplicate, counted by the caller
    return out


def _quadscope(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "quadscope", *args], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill_marked(marker: str) -> None:
    for pid in marked_processes(marker):  # only ever ours: the marker is this cycle's
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def fault_cycle(signum: int, seed: int, workdir: Path) -> FaultOutcome:
    """One sweep signalled at a seeded point, then resumed; see the module docstring."""
    marker = f"qsfault-{uuid.uuid4().hex}"
    db = workdir / f"faults-{signum}-{seed}.db"
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(workdir / "cache")}
    stop_after = random.Random(seed).randint(1, TOTAL_RUNS - 5)
    # --meter time: the plan's runs and nothing else (the default may count the work after).
    proc = _quadscope(["run", "--db", str(db), "--sizes", SIZES, "--repeat", "4", "--meter",
                       "time", "--warmup", "1", "--shell", "--", command(marker)], env)
    try:
        deadline = time.monotonic() + 60
        before: dict[tuple[str, int, int, int], float] = {}
        while proc.poll() is None and time.monotonic() < deadline:
            before = stored_runs(db)
            if len(before) >= stop_after:
                break
            time.sleep(0.01)
        before = stored_runs(db)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
        left_signal = settled_marked(marker)
        after_signal = stored_runs(db)
        resume = _quadscope(["run", "--db", str(db), "--resume", "1"], env)
        _, err2 = resume.communicate(timeout=60)
        left_resume = settled_marked(marker)
        after = stored_runs(db)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_marked(marker)
    kept = {**before, **after_signal}
    lost = sum(1 for k, v in kept.items() if after.get(k) != v)
    return FaultOutcome(signum, proc.returncode, resume.returncode, len(before), lost,
                        sum(1 for v in after.values() if v == -1.0), len(after), left_signal,
                        left_resume, err + err2)


def group_command(marker: str, markers: Path) -> str:
    """`command(marker)`, then the run's pid appended to `markers` as its last act."""
    return f"{command(marker)}; echo $$ >> {markers}"


def _finished(pids: list[int]) -> int:
    """How many of the runs that wrote their marker had finished: been reaped (pid gone)."""
    return sum(1 for pid in pids if not Path(f"/proc/{pid}").exists())


def _markers(path: Path) -> list[int]:
    try:
        return [int(w) for w in path.read_text().split()]
    except FileNotFoundError:
        return []


def group_kill_cycle(seed: int, workdir: Path) -> FaultOutcome:
    """One sweep whose whole process group is SIGKILLed at a seeded point, then resumed."""
    marker = f"qsfault-{uuid.uuid4().hex}"
    db = workdir / f"group-{seed}.db"
    markers = workdir / f"group-{seed}.pids"
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(workdir / "cache")}
    stop_after = random.Random(seed).randint(1, TOTAL_RUNS - 5)
    proc = subprocess.Popen(
        [sys.executable, "-m", "quadscope", "run", "--db", str(db), "--sizes", SIZES,
         "--repeat", "4", "--warmup", "1", "--meter", "time", "--shell", "--",
         group_command(marker, markers)],
        env=env, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline \
                and len(_markers(markers)) < stop_after:
            time.sleep(0.005)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGSTOP)
        finished = _finished(_markers(markers))
        before = stored_runs(db)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        left_signal = settled_marked(marker)
        in_flight = len(_markers(markers)) - finished
        resume = _quadscope(["run", "--db", str(db), "--resume", "1"], env)
        _, err2 = resume.communicate(timeout=60)
        left_resume = settled_marked(marker)
        after = stored_runs(db)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_marked(marker)
    lost = len(_markers(markers)) - TOTAL_RUNS - in_flight
    return FaultOutcome(signal.SIGKILL, proc.returncode, resume.returncode, len(before),
                        lost, sum(1 for v in after.values() if v == -1.0), len(after),
                        left_signal, left_resume, err + err2)
