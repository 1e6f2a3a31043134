"""A profiler's run ends at its deadline with everything it started: `quadscope profile` of a
program that hangs once waited 600 s a recording (up to 10 of them, times 20 repeats under
perf) and then ended with exit 70 on subprocess.TimeoutExpired."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from quadscope.profile.child import run_bounded


def _gone(pids: list[int], within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s  # killed, then reaped by init: a zombie a moment
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.05)
    return False

def _assert_both_gone(pids: Path) -> None:
    """The two pids the test's shell wrote are gone; any left are killed, by pid, either way."""
    left = [int(p) for p in pids.read_text().split()]
    try:
        assert len(left) == 2 and _gone(left)
    finally:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)



@pytest.mark.slow
def test_a_hanging_run_and_what_it_forked_end_at_the_deadline(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    done = run_bounded(["/bin/sh", "-c", f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; "
                        "sleep 60"], 0.5)
    assert done.timed_out and done.returncode is None
    assert time.monotonic() - started < 30
    _assert_both_gone(pids)


@pytest.mark.slow
@pytest.mark.parametrize("launcher", [True, False], ids=["launcher", "no-compiler"])
def test_a_finished_run_says_what_it_printed_and_its_leftovers_go(
        monkeypatch: pytest.MonkeyPatch, launcher: bool) -> None:
    """Through the launcher, or (no C compiler to build it) in a session of its own."""
    from quadscope.profile import child

    if not launcher:
        monkeypatch.setattr(child, "_launcher", lambda: None)
    done = run_bounded(["/bin/sh", "-c", "sleep 60 & echo out; echo err >&2; exit 3"], 30,
                       capture=("stdout", "stderr"))
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
    assert not done.timed_out and done.wall_s > 0
    with pytest.raises(FileNotFoundError):
        run_bounded(["/nonexistent/profiler", "x"], 30)


@pytest.mark.slow
@pytest.mark.parametrize("deadline_s", [None, 1.0])
def test_a_daemon_that_left_the_session_goes_too(tmp_path: Path, deadline_s: float | None) -> None:
    """A program that started a daemon with `setsid` (or a double fork out of the session,
    ignoring SIGTERM) left one running after every sampled run: 31 after one `profile`."""
    pids = tmp_path / "pids"
    script = (f"setsid sleep 60 & echo $! >> {pids}; "
              f"(setsid sh -c 'trap \"\" TERM; sleep 60 & echo $! >> {pids}; wait' &); "
              f"sleep 0.3; echo $$ >> {pids}" + ("; sleep 60" if deadline_s else ""))
    started = time.monotonic()
    done = run_bounded(["/bin/sh", "-c", script], deadline_s)
    assert done.timed_out == bool(deadline_s) and time.monotonic() - started < 30
    left = [int(p) for p in pids.read_text().split()]
    try:  # reaped by quadscope before run_bounded returned: not even a zombie is left
        assert len(left) == 3 and _gone(left, within_s=0.5)
    finally:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


_RECORDER = """
import sys
from quadscope.profile.child import run_bounded
run_bounded(["/bin/sh", "-c", sys.argv[1]], 120)
"""


@pytest.mark.slow
@pytest.mark.parametrize("group", [False, True], ids=["its-pid", "its-group"])
def test_a_sigkilled_recorder_leaves_nothing_running(tmp_path: Path, group: bool) -> None:
    """A SIGKILLed `profile` left the recording and a `setsid` daemon of the profiled program
    running (10 after one killed `profile`): its subreaper ended with it. The run is now the
    launcher's, which reads EOF when quadscope dies (its watchdog acts when the group dies)."""
    import subprocess
    import sys

    pids = tmp_path / "pids"
    script = f"setsid sleep 60 & echo $! >> {pids}; echo $$ >> {pids}; sleep 60"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    recorder = subprocess.Popen([sys.executable, "-c", _RECORDER, script], env=env,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while (not pids.exists() or len(pids.read_text().split()) < 2) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        if group:
            os.killpg(recorder.pid, signal.SIGKILL)
        else:
            recorder.kill()
        recorder.wait(timeout=30)
        _assert_both_gone(pids)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(recorder.pid, signal.SIGKILL)
        recorder.wait(timeout=30)
