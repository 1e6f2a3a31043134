"""Compile small C helpers at first use into a per-user cache.

Contract: `compile_c(source, name=..., flags=...)` returns the path of an
executable built from `source` with the system C compiler, reusing a cached
build when the source, flags and compiler are unchanged (the cache key is a
hash of all three). No compiler → `ToolMissingError`; a compile error →
`ToolMissingError` carrying the compiler's first error line, so callers can
skip a probe with that sentence rather than fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from quadscope.errors import ToolMissingError
from quadscope.scratch import scratch_dir


def cache_dir(env: os._Environ[str] | dict[str, str] = os.environ) -> Path:
    base = env.get("QUADSCOPE_CACHE") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "quadscope"
    )
    return Path(base) / "bin"


def find_compiler(env: os._Environ[str] | dict[str, str] = os.environ) -> str:
    chosen = env.get("CC")
    if chosen:
        # An explicit $CC is the user's choice: falling back to another compiler would hide it.
        if path := shutil.which(chosen):
            return path
        raise ToolMissingError(f"$CC is set to {chosen!r}, which is not an executable on PATH")
    for cand in ("cc", "gcc", "clang"):
        if cand and (path := shutil.which(cand)):
            return path
    raise ToolMissingError(
        "no C compiler found (tried $CC, cc, gcc, clang): install one with `apt-get install gcc`"
    )


def compile_c(
    source: str,
    *,
    name: str,
    flags: Sequence[str] = ("-O2",),
    env: os._Environ[str] | dict[str, str] = os.environ,
) -> Path:
    """Build `source` into an executable named after `name` and its hash; reuse if cached."""
    cc = find_compiler(env)
    key = hashlib.sha256("\0".join([cc, *flags, source]).encode()).hexdigest()[:16]
    out_dir = cache_dir(env)
    out = out_dir / f"{name}-{key}"
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    with scratch_dir("cc") as tmp:
        src = Path(tmp) / f"{name}.c"
        src.write_text(source)
        tmp_out = Path(tmp) / name
        proc = subprocess.run(
            [cc, *flags, "-o", str(tmp_out), str(src)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr)
            raise ToolMissingError(f"could not compile the {name} helper with {cc}: {first.strip()}")
        # Rename is atomic, so two processes compiling at once both end with a whole file.
        os.replace(tmp_out, out)
    return out
