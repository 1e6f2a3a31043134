"""The exact meter for a Python function: a child Python under Callgrind counts the call alone.

Contract: `count_command(func_ref=None, setup_ref="")` returns a function
turning a run's argv `(target, size)` into the argv of a child Python that
imports the function (`func_ref`, `MODULE:QUALNAME`; without it, function and
setup are read from the run's `python:MODULE:FUNC[:SETUP]` target by
`target_refs`), builds its argument with the setup (untimed, uncounted), and calls it once
between two Callgrind client requests, so only the call's instructions are
counted (plus a constant few hundred for the ctypes calls around it, which
land in the fit's offset). The child runs `sys.executable` with the parent's
`sys.path`. A function a child cannot import (a lambda, a nested function,
`__main__`'s) is refused by `importable_ref` with ProgramError before anything
runs. Run it under
`exact.Callgrind` through `exact.InstructionMeter`: Callgrind starts with
instrumentation off, so Python's start-up runs at Valgrind's fastest (0.9 s
on the 2-core VM) and counts nothing.

The client requests are Valgrind's documented macros (valgrind/callgrind.h,
CALLGRIND_START_INSTRUMENTATION and CALLGRIND_TOGGLE_COLLECT), compiled once
into a small shared library by `cbuild`; outside Valgrind they do nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from quadscope.errors import ProgramError, ToolMissingError

_MARKS_C = r"""
#include <valgrind/callgrind.h>
void quadscope_count_on(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void quadscope_count_off(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_STOP_INSTRUMENTATION; }
void quadscope_count_dump(const char *what) {
    CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT(what); CALLGRIND_STOP_INSTRUMENTATION;
}
"""

# `load("MODULE:QUALNAME")` in a child: the object it names (`profile.pytarget` shares it).
LOAD_SOURCE = """\
def load(ref):
    module, name = ref.split(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj
"""

# Both drivers' start, in the child: argv = marks library, sys.path (JSON), MODULE:FUNC,
# MODULE:SETUP or "", then what to count (one n, or a JSON list of them).
_PRELUDE = """\
import ctypes, importlib, json, os, sys
lib, path, target, setup, what = sys.argv[1:]
sys.path[:0] = json.loads(path)
""" + LOAD_SOURCE

_DRIVER = _PRELUDE + """\
n = what
func = load(target)
arg = load(setup)(int(n)) if setup else int(n)
marks = ctypes.CDLL(lib)
on, off = marks.quadscope_count_on, marks.quadscope_count_off
on()
func(arg)
off()
"""


# Counts many sizes under one Valgrind start: each size's call in a forked child (a
# fresh copy of the imported module, as a process of its own would have), its count
# dumped with the size in the dump's description ("n=1000").
_MANY_DRIVER = _PRELUDE + """\
func = load(target)
make = load(setup) if setup else int
marks = ctypes.CDLL(lib)
marks.quadscope_count_dump.argtypes = [ctypes.c_char_p]
for n in json.loads(what):
    pid = os.fork()
    if pid == 0:
        arg = make(int(n))
        marks.quadscope_count_on()
        func(arg)
        marks.quadscope_count_dump(f"n={n}".encode())
        os._exit(0)
    os.waitpid(pid, 0)
"""


def marks_library() -> str:
    """Path of the client-request library, built at first use; ToolMissingError without it."""
    from quadscope.measure.cbuild import compile_c

    try:
        return str(compile_c(_MARKS_C, name="quadscope-count-marks",
                             flags=("-O2", "-shared", "-fPIC")))
    except ToolMissingError as exc:
        raise ToolMissingError(
            f"{str(exc).rstrip('.')}; counting a Python call needs valgrind's headers "
            "(`apt-get install valgrind`) and a C compiler") from None


def importable_ref(obj: Callable[..., Any]) -> str:
    """`MODULE:QUALNAME` of a function a child Python can import; ProgramError otherwise."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        raise ProgramError(
            f"{qualname or obj!r} cannot be imported by a child Python: the instruction meter "
            "needs module-level functions (not lambdas, nested functions or __main__'s)")
    return f"{module}:{qualname}"


def target_refs(target: str) -> tuple[str, str]:
    """(MODULE:FUNC, MODULE:SETUP or "") of a `python:MODULE:FUNC[:SETUP]` target."""
    spec = target.split(":", 1)[1] if target.startswith("python:") else target
    module, func, *setup = spec.split(":")
    return f"{module}:{func}", f"{module}:{setup[0]}" if setup else ""


def count_command(func_ref: str | None = None,
                  setup_ref: str = "") -> Callable[[Sequence[str]], list[str]]:
    """argv `(target, n)` -> the child Python's argv; `func_ref` overrides the target's name."""
    lib = marks_library()
    path = json.dumps([p for p in sys.path if p])

    def command(argv: Sequence[str]) -> list[str]:
        func, setup = (func_ref, setup_ref) if func_ref else target_refs(argv[0])
        return [sys.executable, "-c", _DRIVER, lib, path, func, setup, str(argv[-1])]

    return command


def count_many_command(func_ref: str | None = None, setup_ref: str = "",
                       ) -> Callable[[Sequence[Sequence[str]]], list[str]]:
    """argvs `(target, n)` of one target -> one child Python counting every n in turn."""
    lib = marks_library()
    path = json.dumps([p for p in sys.path if p])

    def command(argvs: Sequence[Sequence[str]]) -> list[str]:
        func, setup = (func_ref, setup_ref) if func_ref else target_refs(argvs[0][0])
        sizes = json.dumps([int(a[-1]) for a in argvs])
        return [sys.executable, "-c", _MANY_DRIVER, lib, path, func, setup, sizes]

    return command
