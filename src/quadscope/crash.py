"""What the CLI does with an exception nobody expected: save its traceback, name the file.

Contract: `save_traceback(exc, argv)` writes the traceback (with the argv and
the quadscope and Python versions) to a new file under the user's cache
directory (`$XDG_CACHE_HOME/quadscope/crashes`, else `~/.cache/...`, else the
temporary directory) and returns its path, or None when no file could be
written anywhere. It never raises: it runs while something has already failed.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from quadscope import __version__


def crash_dirs() -> list[Path]:
    """Where crash files go, best first (the temporary folder alone when there is no home)."""
    fallback = Path(tempfile.gettempdir()) / "quadscope-crashes"
    try:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    except RuntimeError:  # Path.home() without $HOME and no passwd entry: still save the crash
        return [fallback]
    return [Path(cache) / "quadscope" / "crashes", fallback]


def save_traceback(exc: BaseException, argv: Sequence[str]) -> Path | None:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = (f"quadscope {__version__}, Python {platform.python_version()}, {platform.platform()}\n"
            f"argv: {list(argv)!r}\n\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    for folder in crash_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"crash-{stamp}-{os.getpid()}.txt"
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return path
        except OSError:
            continue
    return None
