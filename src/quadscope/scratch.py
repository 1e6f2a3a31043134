"""Temporary folders that a killed quadscope does not leave behind for good.

Contract: `scratch_dir(kind)` is a context manager yielding a new folder in the
temporary directory, `quadscope-KIND-pPID.NS-RANDOM` (PID this process, NS its
PID namespace's inode), removed when the block ends. `make_scratch(kind)` is the
folder alone, for a caller that removes it itself. A process ended by SIGKILL,
the OOM killer or a lost machine runs no cleanup, so its folders (Valgrind's
count files, a profile's samples, an API sweep's store) would stay for good:
before making a folder, `reap()` removes every such folder of this user whose
PID, in this same PID namespace, names no live process. A folder of a live
process, of another namespace (a container sharing /tmp) or of another user is
never touched; a reused PID keeps its dead owner's folder until it too ends.
A folder still there when its process exits normally (one a daemon thread was
using, such as a fleet node's sweep: the thread is stopped without its
`finally`) is removed at exit, by the process that made it, never a forked
child. `reap` never raises: cleanup is a courtesy, not a reason to fail.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

_OWNED = re.compile(r"^quadscope-[a-z0-9-]+?-p(\d+)\.(\d+)-")
_MINE: dict[Path, int] = {}  # folders made here, by the PID that made them
_MINE_LOCK = threading.Lock()  # threads make folders too (a fleet node's sweep)


@atexit.register
def _remove_mine() -> None:
    """At a normal exit, this process's folders still there (a forked child's are its
    parent's: left alone)."""
    with _MINE_LOCK:
        mine = [path for path, pid in _MINE.items() if pid == os.getpid()]
    for path in mine:
        shutil.rmtree(path, ignore_errors=True)


def _namespace() -> int:
    """The inode of this process's PID namespace (0 where /proc does not say)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, as another user's process
        return True
    return True


def reap(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders (in `root`, default the temporary directory) of dead
    quadscope processes of this user and PID namespace; the folders removed."""
    folder = Path(root or tempfile.gettempdir())
    ns, uid, gone = _namespace(), os.getuid(), []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        owner = _OWNED.match(entry.name)
        if not owner or int(owner.group(2)) != ns or int(owner.group(1)) == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != uid:
                continue
        except OSError:
            continue
        if not _alive(int(owner.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            gone.append(Path(entry.path))
    return gone


def make_scratch(kind: str) -> Path:
    """A new folder `quadscope-KIND-pPID.NS-…` in the temporary directory (the dead's reaped
    first); the caller removes it."""
    reap()
    path = Path(tempfile.mkdtemp(prefix=f"quadscope-{kind}-p{os.getpid()}.{_namespace()}-"))
    with _MINE_LOCK:
        for done in [p for p in _MINE if not p.exists()]:  # removed by their callers
            del _MINE[done]
        _MINE[path] = os.getpid()
    return path


@contextlib.contextmanager
def scratch_dir(kind: str) -> Iterator[str]:
    """`make_scratch(kind)` as a block: the folder's path, removed when the block ends."""
    path = make_scratch(kind)
    try:
        yield str(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


__all__ = ["make_scratch", "reap", "scratch_dir"]
