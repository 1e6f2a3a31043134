"""Version managers' shims: the program a `python3` on PATH really runs.

Contract: `find_shim(argv0, which=, read=, ask=)` is a `Shim` when `argv0`
resolves on PATH to a version manager's shim (pyenv, rbenv, nodenv, asdf: a
small script whose last line is `exec MANAGER exec "$program" "$@"`) and the
manager names the program it would run (`MANAGER which NAME`, in the working
directory, so a `.python-version` there counts); None otherwise, and None
whenever anything is unclear (no shim line, the manager fails, names nothing
executable, or names another shim). `shims_fact(shims)` and `read_fact(text)`
write and read the `Host.shims` fact (JSON: {name: [program, manager]}), and
`see_through(command, fact)` is the argv with its first word replaced by the
program the fact names for it, unchanged otherwise. Lookups go through
injected `which`, `read` and `ask`, so tests pass fakes.

Why: pyenv's `python3` shim is a bash script that runs pyenv's own scripts
before the program (41 processes on this machine's pyenv 2.3): 0.1-0.2 s of
each timed run is pyenv's, not the program's, and every count under Valgrind
follows all 41 processes (64 s of the clock for `python3 -c pass`, 7.5 s for
the interpreter itself). A sweep records the program it ran instead, as the
shim would have found it (`run.session.read_host`), and says so in its notes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

MAX_SHIM_BYTES = 16_384  # a shim is a few lines; a longer script is a program
_ASK_TIMEOUT_S = 10.0
# `exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"` (pyenv, rbenv, nodenv);
# `exec /home/u/.asdf/bin/asdf exec "python3" "$@"` (asdf).
_EXEC_LINE = re.compile(
    r'^\s*exec\s+"?(?P<manager>[^"\s]+)"?\s+exec\s+"?(?:\$\{?program\}?|[\w.+-]+)"?\s+"\$@"',
    re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Shim:
    """`name` (argv[0] as typed) is a shim of `manager` that runs `program` (an absolute path)."""

    name: str
    program: str
    manager: str  # "pyenv", "rbenv", "nodenv", "asdf": the manager's file name


def _read_head(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            head = f.read(MAX_SHIM_BYTES + 1)
    except OSError:
        return None
    return head.decode("utf-8", "replace")


def _ask(argv: Sequence[str]) -> str | None:
    """The first line `argv` prints, or None when it fails, hangs or is absent."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, check=False,
                              timeout=_ASK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def _shim_line(text: str | None) -> re.Match[str] | None:
    """The `exec MANAGER exec ...` line of a short script; None for anything else."""
    if not text or len(text) > MAX_SHIM_BYTES or not text.startswith("#!"):
        return None
    return _EXEC_LINE.search(text)


def find_shim(argv0: str, *, which: Callable[[str], str | None] = shutil.which,
              read: Callable[[str], str | None] = _read_head,
              ask: Callable[[Sequence[str]], str | None] = _ask) -> Shim | None:
    """The shim `argv0` is and the program it runs; None when it is not one (see above)."""
    path = which(argv0)
    match = _shim_line(read(path) if path else None)
    if path is None or match is None:
        return None
    manager = match["manager"]
    if os.sep not in manager:
        manager = which(manager) or ""
    program = ask([manager, "which", os.path.basename(argv0)]) if manager else None
    if (not program or not os.path.isabs(program) or not os.access(program, os.X_OK)
            or _shim_line(read(program))):
        return None
    return Shim(argv0, program, os.path.basename(manager))


def shims_fact(shims: Sequence[Shim]) -> str | None:
    """The `Host.shims` fact for `shims`; None when there are none."""
    if not shims:
        return None
    return json.dumps({s.name: [s.program, s.manager] for s in shims}, sort_keys=True)


def read_fact(text: str | None) -> dict[str, Shim]:
    """The shims a stored `Host.shims` fact names, by name; {} for none or for text that is
    not such a fact (a sweep stored by another tool)."""
    try:
        raw = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(raw, Mapping):
        return {}
    return {name: Shim(name, str(v[0]), str(v[1])) for name, v in raw.items()
            if isinstance(v, list) and len(v) == 2}


def see_through(command: Sequence[str], fact: str | None) -> tuple[str, ...]:
    """`command` with its program replaced by the one its shim runs, per `fact`."""
    if not command or not fact:
        return tuple(command)
    shim = read_fact(fact).get(command[0])
    return tuple(command) if shim is None else (shim.program, *command[1:])
