"""Scratch folders a SIGKILLed quadscope left are removed by the next one, and no one else's.

The dead owner is faked: a PID that no process holds (the highest PID the kernel hands out
plus one) stands for a quadscope killed mid-count.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from quadscope import scratch


def _dead_pid() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def _left(root: Path, kind: str, pid: int, ns: int) -> Path:
    folder = root / f"quadscope-{kind}-p{pid}.{ns}-abcd1234"
    folder.mkdir()
    (folder / "cachegrind.1.out").write_text("partial")
    return folder


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(scratch.tempfile, "tempdir", None)  # re-read TMPDIR
    return tmp_path


def test_a_dead_processs_folder_goes_when_the_next_scratch_is_made(tmp: Path) -> None:
    ns = scratch._namespace()
    dead = _left(tmp, "count", _dead_pid(), ns)
    with scratch.scratch_dir("count") as mine:
        assert Path(mine).parent == tmp and Path(mine).name.startswith(
            f"quadscope-count-p{os.getpid()}.{ns}-")
        assert not dead.exists()
    assert not Path(mine).exists()


def test_live_other_namespace_and_foreign_folders_stay(tmp: Path) -> None:
    ns = scratch._namespace()
    live = _left(tmp, "count", os.getppid(), ns)  # the process that started the tests
    elsewhere = _left(tmp, "count", _dead_pid(), ns + 1)  # a container sharing /tmp
    plain = tmp / "quadscope-count-xyz"  # an older quadscope's name: no owner to ask
    plain.mkdir()
    unrelated = tmp / f"other-p{_dead_pid()}.{ns}-x"
    unrelated.mkdir()
    assert scratch.reap(tmp) == []
    assert live.exists() and elsewhere.exists() and plain.exists() and unrelated.exists()


def test_reap_of_a_missing_folder_is_quiet(tmp_path: Path) -> None:
    assert scratch.reap(tmp_path / "missing") == []


def test_a_folder_left_at_exit_goes_then_and_a_forked_childs_exit_keeps_it(
        tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon thread's folder (a fleet node's sweep) outlives its `finally` when the
    process exits: the exit removes it, but only in the process that made it."""
    kept = scratch.make_scratch("fleet")
    gone = scratch.make_scratch("fleet")
    try:
        real = os.getpid()
        monkeypatch.setattr(scratch.os, "getpid", lambda: real + 1)  # a forked child's exit
        scratch._remove_mine()
        assert kept.exists() and gone.exists()
        monkeypatch.undo()
        kept.rmdir()  # its caller removed it: the exit has nothing to do
        scratch._remove_mine()
        assert not gone.exists()
    finally:
        for path in (kept, gone):
            if path.exists():
                path.rmdir()


@pytest.mark.slow
def test_a_daemon_threads_folder_goes_when_its_process_exits(tmp_path: Path) -> None:
    """As `fleet.tasks.sweep_on_node`'s sweep thread: the process ends mid-sweep, the
    thread's `finally` never runs, the folder goes all the same (it once piled up in /tmp)."""
    import subprocess
    import sys

    script = ("import threading, time, sys\n"
              "from quadscope.scratch import make_scratch\n"
              "made = []\n"
              "def sweep():\n"
              "    path = make_scratch('fleet')\n"
              "    made.append(path)\n"
              "    try:\n"
              "        time.sleep(60)\n"
              "    finally:\n"
              "        print('never', flush=True)\n"
              "threading.Thread(target=sweep, daemon=True).start()\n"
              "while not made:\n"
              "    time.sleep(0.01)\n"
              "print(made[0], flush=True)\n")
    src = str(Path(scratch.__file__).parents[1])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": src,
                                           "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("quadscope-fleet-p")
    assert not folder.exists()
