"""CPython 3.12+ perf trampolines: `py::FUNC:FILE` frames read as Python frames. Pure.

Contract: `python_frame(symbol)` turns the symbol perf gives a trampoline of
`python -X perf` (`py::remember_user:/home/me/users.py`, in
`/tmp/perf-PID.map`) into `Frame("remember_user", "/home/me/users.py")`, the
frame py-spy would show, and returns None for any other symbol.
`python_stacks(stacks)` rewrites a profile's stacks: trampoline frames become
Python frames, and the interpreter-loop frames right below a Python frame
(`_PyEval_EvalFrameDefault`: the loop running that function's bytecode) are
dropped, so the C function the bytecode calls sits directly under the Python
function (`remember_user → list_insert`, as `native.splice_native` places it
on 3.11) and the loop's own samples are the Python function's own time, as
py-spy counts it. Frames of C code between two Python frames other than the
loop (`PyObject_Vectorcall`, a builtin calling back into Python) are kept.

`UNWINDER_NOTE` is the sentence a profile carries to say how its native frames
under Python frames were found.
"""

from __future__ import annotations

from collections.abc import Mapping

from quadscope.profile.stacks import Frame, Stack

PREFIX = "py::"
UNWINDER_NOTE = ("C functions under Python frames come from CPython's perf trampolines "
                 "(python -X perf, 3.12+), unwound by perf with DWARF (--call-graph dwarf): "
                 "each sample's C frames are those its Python function called")


def python_frame(symbol: str) -> Frame | None:
    """`py::FUNC:FILE` → Frame(FUNC, FILE); None for a symbol that is no trampoline."""
    if not symbol.startswith(PREFIX):
        return None
    func, sep, file = symbol[len(PREFIX):].partition(":")
    if not func or not sep:
        return None
    return Frame(func, file or "[python]")


def is_loop(frame: Frame) -> bool:
    """The bytecode loop itself (`_PyEval_EvalFrameDefault`, `PyEval_EvalCode`)."""
    return frame.symbol.startswith(("_PyEval_", "PyEval_"))


def _is_python(frame: Frame) -> bool:
    return frame.dso.endswith(".py") or (frame.dso.startswith("<") and frame.dso.endswith(">"))


def python_stack(stack: Stack) -> Stack:
    """One root-first stack rewritten (see the module docstring)."""
    out: list[Frame] = []
    under_python = False
    for f in stack:
        py = python_frame(f.symbol)
        if py is not None:
            out.append(py)
            under_python = True
        elif under_python and is_loop(f):
            continue
        else:
            out.append(f)
            under_python = _is_python(f)
    return tuple(out) or stack


def python_stacks(stacks: Mapping[Stack, int]) -> dict[Stack, int]:
    """Every stack rewritten by `python_stack`, weights of stacks made equal summed."""
    out: dict[Stack, int] = {}
    for stack, w in stacks.items():
        st = python_stack(stack)
        out[st] = out.get(st, 0) + w
    return out


__all__ = ["PREFIX", "UNWINDER_NOTE", "is_loop", "python_frame", "python_stack",
           "python_stacks"]
