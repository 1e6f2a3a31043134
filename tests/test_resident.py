"""The resident launcher: its protocol exactly, and a few real runs (counts against perf stat)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from quadscope.errors import ProgramError
from quadscope.measure.counters import NoCounters, PerfEventCounters, parse_perf_csv
from quadscope.measure.detect import detect_counters
from quadscope.measure.launcher import Job, ProcessExecutor
from quadscope.measure.resident import (
    Reply,
    Request,
    ResidentLauncher,
    build_launcher,
    encode_request,
    parse_reply,
)

MiB = 1024 * 1024
PY = sys.executable


def test_request_is_a_header_then_nul_terminated_strings() -> None:
    """PATH, argv and env entries follow the header, each ending in NUL; -1 means no timeout."""
    got = encode_request("/bin/echo", ["echo", "a b"], [b"K=v"], None)
    assert got == b"run -1 2 1 23\n/bin/echo\0echo\0a b\0K=v\0"
    assert encode_request("/p", ["p"], [], 1.5).startswith(b"run 1500000000 1 0 ")


def test_a_nul_inside_an_argument_is_refused() -> None:
    """An argument holding NUL cannot be passed to exec: ValueError, nothing sent."""
    with pytest.raises(ValueError, match="NUL"):
        encode_request("/p", ["p", "a\0b"], [], None)


def test_reply_fields_and_counts() -> None:
    """A done line gives wall, status, rusage in seconds/KiB, counts, None and open errnos."""
    line = "done 1500 0 768 0 2000 500 1400 49 0 2 1 17 - !2 0"
    r = parse_reply(line, ("page-faults", "context-switches", "instructions"))
    assert (r.wall_ns, r.timed_out, r.status, r.errno) == (1500, False, 768, 0)
    assert r.rusage == {"ru_maxrss": 1400.0, "ru_minflt": 49.0, "ru_majflt": 0.0,
                        "ru_nvcsw": 2.0, "ru_nivcsw": 1.0, "ru_utime": 0.002, "ru_stime": 0.0005}
    assert r.counts == {"page-faults": 17, "context-switches": None, "instructions": None}
    assert r.open_errnos == {"instructions": 2}


def test_a_reply_of_the_wrong_shape_is_an_error() -> None:
    """A line with too few counts is not silently misread."""
    with pytest.raises(RuntimeError, match="replied"):
        parse_reply("done 1 0 0 0 0 0 0 0 0 0 0 0", ("page-faults",))


# --- real processes ---------------------------------------------------------


@pytest.fixture(scope="module")
def counting() -> ProcessExecutor:
    backend, note = detect_counters()
    if isinstance(backend, NoCounters):
        pytest.skip(f"perf_event_open is not usable here: {note}")
    return ProcessExecutor(backend)


@pytest.mark.integration
def test_one_launcher_serves_many_runs_with_their_own_env() -> None:
    """Runs through one launcher each get quadscope's environment plus their own padding."""
    ex = ProcessExecutor()
    tails = [ex.execute_job(Job(("sh", "-c", 'echo "$QUADSCOPE_PAD.$HOME" >&2'), 10.0,
                                env=(("QUADSCOPE_PAD", "x" * k),))).stderr_tail
             for k in (1, 3)]
    assert tails == [f"x.{os.environ['HOME']}\n", f"xxx.{os.environ['HOME']}\n"]
    assert ex._resident is not None
    ex.close()


@pytest.mark.integration
def test_cpu_pins_the_run() -> None:
    """--cpu's CPUs are the only ones the child may run on."""
    cpu = min(os.sched_getaffinity(0))
    m = ProcessExecutor(cpus=(cpu,)).execute(
        ["sh", "-c", "grep Cpus_allowed_list /proc/self/status >&2"], 10.0)
    assert m.stderr_tail.split() == ["Cpus_allowed_list:", str(cpu)]


@pytest.mark.integration
def test_exec_failure_is_a_program_error(tmp_path: Path) -> None:
    """A script whose interpreter is missing fails in exec: one sentence, not a measurement."""
    script = tmp_path / "script"
    script.write_text("#!/quadscope/no/such/interpreter\n")
    script.chmod(0o755)
    with pytest.raises(ProgramError, match=re.escape(
            "could not be run: its interpreter /quadscope/no/such/interpreter (its #! line)")):
        ProcessExecutor().execute([str(script)], 10.0)


def _perf_stat(event: str, argv: list[str]) -> int | None:
    out = subprocess.run(["perf", "stat", "-x,", "--no-big-num", "-e", event, "--", *argv],
                         capture_output=True, text=True, timeout=60, check=True).stderr
    return next((v for v in parse_perf_csv(out).values() if v is not None), None)


TOUCH_100_MIB = [PY, "-c", f"b = bytearray(b'x') * {100 * MiB}"]


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_page_faults_agree_with_perf_stat_within_one_percent(counting: ProcessExecutor) -> None:
    """A program taking ≥10⁴ page faults: the launcher's count is within 1% of perf stat's."""
    if "page-faults" not in counting.counters.events:
        pytest.skip("page-faults cannot be counted here")
    ours = counting.execute(TOUCH_100_MIB, 60.0).page_faults
    theirs = _perf_stat("page-faults", TOUCH_100_MIB)
    assert ours is not None and theirs is not None and theirs >= 10_000
    assert abs(ours - theirs) <= 0.01 * theirs


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_instructions_agree_with_perf_stat_within_one_percent() -> None:
    """Where the hardware counts instructions, ours are within 1% of perf stat's instructions:u."""
    backend, note = detect_counters()
    if "instructions" not in backend.events:
        pytest.skip(f"no hardware instruction counter here: {note}")
    ex = ProcessExecutor(PerfEventCounters(("instructions",)))
    argv = [PY, "-c", "sum(range(3_000_000))"]
    ours = ex.execute(argv, 60.0).instructions
    theirs = _perf_stat("instructions:u", argv)
    assert ours is not None and theirs is not None
    assert abs(ours - theirs) <= 0.01 * theirs


@pytest.mark.integration
def test_orphans_left_by_a_run_are_reaped_before_the_next() -> None:
    """A background child outliving its run is the launcher's (subreaper); no zombie stays."""
    ex = ProcessExecutor()
    ex.execute(["sh", "-c", "sleep 0.05 &"], 10.0)
    subprocess.run(["sleep", "0.3"], check=True)  # the orphan exits and becomes a zombie
    ex.execute(["/bin/true"], 10.0)
    assert ex._resident is not None
    pid = ex._resident._pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    states = [Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[0]
              for c in children]
    assert "Z" not in states
    ex.close()


def _cgroup_of(pid: int) -> str:
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return next((line[3:] for line in lines if line.startswith("0::")), "")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.integration
def test_each_run_is_in_the_launchers_cgroup_where_one_can_be_made(tmp_path: Path) -> None:
    """Where cgroup v2 is writable the launcher says "cgroup" and runs land in its own cgroup."""
    ex = ProcessExecutor()
    out = tmp_path / "cg"
    ex.execute(["sh", "-c", f"cat /proc/self/cgroup > {out}"], 10.0)
    assert ex._resident is not None
    if ex.cleanup != "cgroup":
        ex.close()
        pytest.skip(f"no writable cgroup v2 here: cleanup is {ex.cleanup!r}")
    launcher = ex._resident._pid
    run_cgroup = next(line[3:] for line in out.read_text().splitlines() if line.startswith("0::"))
    assert run_cgroup.endswith(f"/quadscope-launcher-{launcher}")
    assert _cgroup_of(launcher) != run_cgroup  # the launcher itself stays outside
    ex.close()


@pytest.mark.integration
def test_runs_after_a_cgroup_cleanup_still_run() -> None:
    """A run whose setsid child the cleanup kills leaves the next runs unharmed (exit 0)."""
    ex = ProcessExecutor()
    first = ex.execute(["sh", "-c", "setsid sleep 30 & sleep 0.01"], 10.0)
    after = [ex.execute(["/bin/true"], 10.0) for _ in range(3)]
    ex.close()
    assert first.exit_code == 0
    assert [m.exit_code for m in after] == [0, 0, 0]


@pytest.mark.integration
def test_what_a_sigkilled_launcher_left_is_killed_by_the_next_one(tmp_path: Path) -> None:
    """A run's setsid child does not outlive its SIGKILLed launcher for long: the launcher's
    watchdog kills its cgroup, and at the latest the next launcher's start sweeps it."""
    import signal
    import threading
    ex = ProcessExecutor()
    ex.execute(["/bin/true"], 10.0)
    assert ex._resident is not None
    if ex.cleanup != "cgroup":
        ex.close()
        pytest.skip(f"no writable cgroup v2 here: cleanup is {ex.cleanup!r}")
    launcher = ex._resident._pid
    pidfile = tmp_path / "pid"
    argv = ["sh", "-c", f"setsid sleep 60 & echo $! > {pidfile}; sleep 60"]
    worker = threading.Thread(target=_run_ignoring_death, args=(ex, argv), daemon=True)
    worker.start()
    for _ in range(500):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        subprocess.run(["sleep", "0.01"], check=True)
    orphan = int(pidfile.read_text())
    try:
        os.kill(launcher, signal.SIGKILL)
        worker.join(10.0)
        nxt = ProcessExecutor()
        nxt.execute(["/bin/true"], 10.0)  # its start sweeps the dead launcher's cgroup
        for _ in range(200):
            if not _alive(orphan):
                break
            subprocess.run(["sleep", "0.01"], check=True)
        assert not _alive(orphan)
        nxt.close()
    finally:
        if _alive(orphan):
            os.kill(orphan, signal.SIGKILL)


def _run_ignoring_death(ex: ProcessExecutor, argv: list[str]) -> None:
    """Run argv on ex, ignoring the error its launcher's death raises."""
    with contextlib.suppress(RuntimeError, OSError):
        ex.execute(argv, 60.0)


# --- batches ----------------------------------------------------------------


def _launcher(**kw: object) -> ResidentLauncher:
    return ResidentLauncher(build_launcher(), **kw)  # type: ignore[arg-type]


def _sh(script: str) -> Request:
    return Request("/bin/sh", ("sh", "-c", script), (), 10.0)


@pytest.mark.integration
def test_a_batch_replies_in_order_each_with_its_own_stderr_tail() -> None:
    """Runs of a batch go back to back; each reply carries that run's stderr end, not a later one's."""
    launcher = _launcher(tail_bytes=7)
    try:
        replies = list(launcher.run_many(
            [_sh(f"echo 0123456789-run-{k:02d} >&2; exit {k}") for k in range(20)]))
    finally:
        launcher.close()
    assert [os.waitstatus_to_exitcode(r.status) for r in replies] == list(range(20))
    assert [r.stderr_tail for r in replies] == [f"run-{k:02d}\n" for k in range(20)]
    quiet = _launcher()
    try:
        assert [r.stderr_tail for r in quiet.run_many([_sh("true")] * 3)] == ["", "", ""]
    finally:
        quiet.close()


@pytest.mark.integration
def test_ctrl_c_in_a_batch_keeps_the_runs_that_ended_and_starts_no_more(tmp_path: Path) -> None:
    """An exception thrown into a batch yields the finished runs' replies, then re-raises;
    the launcher is closed and runs no request it had not started."""
    log = tmp_path / "log"
    launcher = _launcher()
    batch = launcher.run_many([_sh(f"echo x >> {log}; sleep 0.01")] * 200)
    got = [next(batch)]
    import time
    time.sleep(0.3)  # the launcher goes on meanwhile: replies wait in the pipe
    with pytest.raises(KeyboardInterrupt):
        for reply in _thrown(batch, KeyboardInterrupt()):
            got.append(reply)
    assert launcher.closed
    assert len(got) >= 5  # the runs that ended while quadscope slept were not lost
    started = len(log.read_text().splitlines())
    assert started - len(got) <= 1  # at most the run in flight, killed
    time.sleep(0.1)
    assert len(log.read_text().splitlines()) == started  # and nothing after it


def _thrown(batch: Generator[Reply, None, None], exc: BaseException) -> Iterator[Reply]:
    yield batch.throw(exc)
    yield from batch


@pytest.mark.integration
def test_a_program_that_cannot_run_in_a_batch_stops_it_and_the_next_batch_runs(
        tmp_path: Path) -> None:
    """ProgramError at the bad run; the executor starts a fresh launcher for the next batch."""
    script = tmp_path / "script"
    script.write_text("#!/quadscope/no/such/interpreter\n")
    script.chmod(0o755)
    ex = ProcessExecutor()
    jobs = [Job(("/bin/true",), 10.0), Job((str(script),), 10.0), Job(("/bin/true",), 10.0)]
    got = []
    with pytest.raises(ProgramError, match="could not be run"):
        for m in ex.execute_many(jobs):
            got.append(m)
    assert [m.exit_code for m in got] == [0]
    assert [m.exit_code for m in ex.execute_many([Job(("/bin/true",), 10.0)] * 3)] == [0, 0, 0]
    ex.close()


@pytest.mark.integration
def test_untimed_commands_run_in_their_place_within_a_batch(tmp_path: Path) -> None:
    """A job with --prepare splits the batch: its prepare runs right before it, in order."""
    log = tmp_path / "log"
    ex = ProcessExecutor()

    def job(k: int, prepare: bool = False) -> Job:
        return Job(("sh", "-c", f"echo run{k} >> {log}"), 10.0,
                   prepare=("sh", "-c", f"echo prep{k} >> {log}") if prepare else None)

    ms = list(ex.execute_many([job(0), job(1), job(2, True), job(3), job(4, True)]))
    ex.close()
    assert [m.exit_code for m in ms] == [0] * 5
    assert log.read_text().split() == ["run0", "run1", "prep2", "run2", "run3", "prep4", "run4"]


@pytest.mark.integration
def test_one_launcher_serves_batch_after_batch() -> None:
    """A batch whose every reply was taken leaves the launcher running when it is closed
    (the runner closes each batch's generator): the next batch uses the same process."""
    ex = ProcessExecutor()
    pids = []
    for _ in range(3):
        batch = ex.execute_many([Job(("/bin/true",), 10.0)] * 4)
        assert [next(batch).exit_code for _ in range(4)] == [0] * 4
        batch.close()  # type: ignore[attr-defined]
        assert ex._resident is not None and not ex._resident.closed
        pids.append(ex._resident._pid)
    ex.close()
    assert len(set(pids)) == 1


@pytest.mark.integration
def test_requests_larger_than_the_pipe_go_through_in_pieces() -> None:
    """Three requests of 100 KiB each (more than a pipe holds): no deadlock, three replies."""
    import threading

    launcher = _launcher()
    big = Request("/bin/true", ("true", "x" * 100_000), (), 10.0)
    got: list[Reply] = []
    worker = threading.Thread(target=lambda: got.extend(launcher.run_many([big] * 3)),
                              daemon=True)
    worker.start()
    worker.join(20)
    alive = worker.is_alive()
    if alive:
        os.kill(launcher._pid, 9)  # unblocks the worker; the test then fails
    else:
        launcher.close()
    assert not alive, "the batch hung"
    assert [r.status for r in got] == [0, 0, 0]


@pytest.mark.integration
def test_a_chunk_not_acknowledged_keeps_the_launchers_logs(tmp_path: Path) -> None:
    """run_chunks: a list the caller took and acknowledged (by asking for more) is done with;
    closing the generator at a yield (the caller could not store that list) closes the
    launcher without goodbye, so its reply logs stay for the rescue; a batch taken to its
    end leaves the launcher for the next, which says goodbye and removes them."""
    def logs() -> list[str]:
        return sorted(p.name.rsplit(".", 1)[-1] for p in tmp_path.iterdir()
                      if ".rescue." in p.name)

    launcher = _launcher(rescue_dir=tmp_path)
    assert launcher.logging
    chunks = launcher.run_chunks([_sh("true")] * 3, ["a", "b", "c"])
    assert sum(len(c) for c in chunks) == 3
    assert not launcher.closed
    chunks = launcher.run_chunks([_sh("true")] * 3, ["d", "e", "f"])
    first = next(chunks)
    assert first
    chunks.close()
    assert launcher.closed
    assert logs() == ["0"]  # the replies, for run.rescue

    again = _launcher(rescue_dir=tmp_path / "b")
    assert sum(len(c) for c in again.run_chunks([_sh("true")] * 2, ["g", "h"])) == 2
    again.close()
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())
