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
