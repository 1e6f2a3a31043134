"""Whose code is a frame: the user's program, or a runtime or library it runs on. Pure.

Contract: `is_user_dso(dso)` is True for an object or source file the user
wrote or built: an absolute path outside the system's library folders, an
interpreter's own install (its standard library, `site-packages`, a pyenv or
rustup tree) and the interpreter binaries themselves; or a relative Python
file (`users.py`). It is False for the kernel, `[vdso]`-like pseudo objects,
frozen modules (`<frozen importlib._bootstrap>`), start-up (`[interpreter]`),
shared libraries (`lib*.so*`) and unknown objects. `is_user_frame(name, dso)`
also sets aside the C start-up code every program links in (`_start`,
`(below main)`, ...), which lives in the user's binary but is not the user's.

Used by the flame graph (a user frame is never hidden inside a collapsed
chain: `flametree.collapse`) and by the sampled culprit sentence
(`sampled_sentence`), which name the user's function, not the library leaf.
"""

from __future__ import annotations

import os
import re

SYSTEM_PREFIXES = ("/lib/", "/lib64/", "/lib32/", "/usr/lib/", "/usr/lib64/", "/usr/lib32/",
                   "/usr/libexec/", "/usr/local/lib/", "/snap/")
STARTUP_NAMES = frozenset({"(below main)", "_start", "_init", "_fini", "frame_dummy",
                           "register_tm_clones", "deregister_tm_clones",
                           "__do_global_dtors_aux", "__libc_csu_init", "__libc_csu_fini"})
# Path parts of an interpreter's or toolchain's own files, wherever it is installed.
RUNTIME_PARTS = ("/site-packages/", "/dist-packages/", "/.pyenv/versions/", "/.rustup/",
                 "/.cargo/registry/", "/lib/python3", "/lib/pypy")
_INTERPRETER = re.compile(r"^(python|pypy|ruby|perl|node|bash|sh|dash)[0-9.]*[a-z]?$")
_SHARED_LIB = re.compile(r"^lib.*\.so(\.[0-9.]+)?$")


def is_user_dso(dso: str) -> bool:
    """The user's own binary or source file (see the module docstring)."""
    if not dso or dso.startswith(("[", "<")) or "valgrind" in dso:
        return False
    base = os.path.basename(dso)
    if _INTERPRETER.match(base) or _SHARED_LIB.match(base):
        return False
    if not dso.startswith("/"):
        return dso.endswith(".py")
    return not dso.startswith(SYSTEM_PREFIXES) and not any(p in dso for p in RUNTIME_PARTS)


def is_user_frame(name: str, dso: str) -> bool:
    """A function of the user's own code: in a user object, not linked-in start-up code."""
    return is_user_dso(dso) and name not in STARTUP_NAMES and not name.startswith("_start")


__all__ = ["RUNTIME_PARTS", "STARTUP_NAMES", "SYSTEM_PREFIXES", "is_user_dso", "is_user_frame"]
