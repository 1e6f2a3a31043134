"""The exact meter for a Python function: a child Python under Callgrind counts the call alone.

Contract: `count_command(func=None, setup=None)` returns a function turning a
run's argv `(target, n[, m...])` into a context manager holding the argv of a
child Python that loads the function (`func`, a `Sent`; without it, function
and setup are imported from the run's `python:MODULE:FUNC[:SETUP]` target,
`target_refs`), builds its argument with the setup (untimed, uncounted;
`setup(n, m)` over several sizes, else the size, or the sizes spread as
`func(n, m)`), and calls it once between two Callgrind client requests, so
only the call's instructions are counted (plus a constant few hundred for the
ctypes calls around it, which land in the fit's offset). The child runs
`sys.executable` with the parent's `sys.path`.

How a function object reaches the child (`send(obj)`): by name
(`MODULE:QUALNAME`, imported: cheap and the very object) when that name leads
back to the object itself (`importable_ref`); otherwise (a lambda, a closure,
a nested function, `__main__`'s, a bound method, a `functools.partial`) by
value, pickled with cloudpickle once in the parent. Its bytes go into a file
in a private folder (`mkdtemp`, mode 0700) made for each counted run and
removed when it ends, also on an error or Ctrl-C, so nothing is left behind.
Before the first count, `check_loads` loads what is sent by value in a plain
child Python (no Valgrind, ~0.1 s plus the imports it needs). A function that
cannot be pickled (its closure holds a lock, an open file...) or that the child
cannot load raises `CannotSend`, a ProgramError whose message is one sentence
naming why ("cannot count `f`: its closure holds a _thread.lock, which cannot be
sent to the counting process"), never a traceback. Run the argv under
`exact.Callgrind` through `exact.InstructionMeter`: Callgrind starts with
instrumentation off, so Python's start-up (and unpickling) runs at Valgrind's
fastest (0.9 s on the 2-core VM) and counts nothing.

The client requests are Valgrind's documented macros (valgrind/callgrind.h,
CALLGRIND_START_INSTRUMENTATION and CALLGRIND_TOGGLE_COLLECT), compiled once
into a small shared library by `cbuild`; outside Valgrind they do nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from quadscope.errors import ProgramError, ToolMissingError
from quadscope.textsafe import shorten, visible

BY_VALUE = "by-value:"  # a ref naming a pickle file; no module name holds a "-"
CHECK_TIMEOUT_S = 60.0  # loading what is sent, in a plain child Python

_MARKS_C = r"""
#include <valgrind/callgrind.h>
void quadscope_count_on(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void quadscope_count_off(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_STOP_INSTRUMENTATION; }
void quadscope_count_dump(const char *what) {
    CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT(what); CALLGRIND_STOP_INSTRUMENTATION;
}
"""

# `load("MODULE:QUALNAME")` in a child: the object it names, or `load("by-value:PATH")`:
# the object pickled in PATH (`profile.pytarget` shares it).
LOAD_SOURCE = """\
def load(ref):
    if ref.startswith("by-value:"):
        import pickle
        with open(ref[len("by-value:"):], "rb") as f:
            return pickle.load(f)
    module, name = ref.split(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj
"""

# Both drivers' start, in the child: argv = marks library, sys.path (JSON), the function's
# ref, the setup's or "", then what to count (one run's sizes, or a JSON list of them).
# `prepared` calls as pyfunc does: setup(n, m), else n, else the sizes spread as func(n, m).
_PRELUDE = """\
import ctypes, importlib, json, os, sys
lib, path, target, setup, what = sys.argv[1:]
sys.path[:0] = json.loads(path)
""" + LOAD_SOURCE + """\
def prepared(func, setup, sizes):
    if setup:
        return func, setup(*sizes)
    if len(sizes) == 1:
        return func, sizes[0]
    return (lambda sizes: func(*sizes)), tuple(sizes)
"""

_DRIVER = _PRELUDE + """\
func, arg = prepared(load(target), load(setup) if setup else None, json.loads(what))
marks = ctypes.CDLL(lib)
on, off = marks.quadscope_count_on, marks.quadscope_count_off
on()
func(arg)
off()
"""


# Counts many sizes under one Valgrind start: each size's call in a forked child (a
# fresh copy of the imported module, as a process of its own would have), its count
# dumped with the sizes in the dump's description ("n=1000", "n=1000,20" over two sizes).
_MANY_DRIVER = _PRELUDE + """\
target = load(target)
setup = load(setup) if setup else None
marks = ctypes.CDLL(lib)
marks.quadscope_count_dump.argtypes = [ctypes.c_char_p]
for sizes in json.loads(what):
    pid = os.fork()
    if pid == 0:
        func, arg = prepared(target, setup, sizes)
        marks.quadscope_count_on()
        func(arg)
        marks.quadscope_count_dump(("n=" + ",".join(map(str, sizes))).encode())
        os._exit(0)
    os.waitpid(pid, 0)
"""

# Loads what is sent and exits: `check_loads`'s child (no marks library, nothing to count).
_CHECK_DRIVER = _PRELUDE + """\
load(target)
if setup:
    load(setup)
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


class CannotSend(ProgramError):
    """A function the counting child cannot get: the message is one sentence saying why."""


@dataclass(frozen=True, slots=True)
class Sent:
    """A function as the counting child gets it: by `ref` (MODULE:QUALNAME), or by value."""

    name: str  # how sentences name it: its qualified name
    ref: str = ""  # MODULE:QUALNAME, imported by the child; "" when sent by value
    data: bytes = b""  # cloudpickle's bytes of it, loaded by the child from a private file

    @property
    def by_value(self) -> bool:
        return not self.ref


def function_name(obj: Callable[..., Any]) -> str:
    """The name a sentence gives a function: its qualified name, shown literally."""
    return visible(shorten(str(getattr(obj, "__qualname__", None) or obj), 120))


def importable_ref(obj: Callable[..., Any]) -> str:
    """`MODULE:QUALNAME` of `obj` when importing that name gives `obj` itself; "" otherwise
    (a lambda, a closure, a nested function, `__main__`'s, a bound method)."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or module == "__main__" \
            or "<" in qualname or module not in sys.modules:
        return ""
    found: Any = sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module}:{qualname}" if found is obj else ""


def send(obj: Callable[..., Any]) -> Sent:
    """`obj` by name when importable, else pickled by value; CannotSend when it cannot be."""
    name = function_name(obj)
    if ref := importable_ref(obj):
        return Sent(name, ref=ref)
    try:
        import cloudpickle
    except ImportError:  # a dependency left out of an install by hand
        raise CannotSend(f"cannot count `{name}`: sending a function that is not importable by "
                         "name needs cloudpickle (`pip install cloudpickle`)") from None

    try:
        return Sent(name, data=cloudpickle.dumps(obj))
    except Exception as exc:  # anything a user's object raises while it is pickled
        raise CannotSend(f"cannot count `{name}`: {_unpicklable(obj, exc)}, which cannot be "
                         "sent to the counting process") from None


_CANNOT_PICKLE = re.compile(r"cannot pickle '([^']+)' object")
_OPEN_FILE = "an open file"
_KINDS = {"_io.TextIOWrapper": _OPEN_FILE, "_io.BufferedReader": _OPEN_FILE,
          "_io.BufferedWriter": _OPEN_FILE, "_io.BufferedRandom": _OPEN_FILE,
          "_io.FileIO": _OPEN_FILE, "_socket.socket": "a socket", "socket.socket": "a socket"}


def _type_name(obj: object) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}".removeprefix("builtins.")


def _kind(exc: BaseException, obj: object) -> tuple[str, bool]:
    """What cannot be pickled, with its article ("a _thread.lock", "an open file"), and
    whether it is `obj` itself (else `obj` holds it)."""
    found = _CANNOT_PICKLE.search(str(exc))
    name = found.group(1) if found else _type_name(obj)
    itself = name == _type_name(obj) or name == type(obj).__name__
    if name in _KINDS:
        return _KINDS[name], itself
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {visible(shorten(name, 60))}", itself


def _parts(obj: Callable[..., Any]) -> Iterator[tuple[str, object]]:
    """Where a function keeps what it carries: (the place, said in words; the value)."""
    code = getattr(obj, "__code__", None)
    cells = getattr(obj, "__closure__", None) or ()
    for var, cell in zip(getattr(code, "co_freevars", ())[:len(cells)], cells, strict=True):
        with contextlib.suppress(ValueError):  # an empty cell
            yield f"its closure's `{var}`", cell.cell_contents
    names = getattr(code, "co_names", ())
    for global_name, value in (getattr(obj, "__globals__", None) or {}).items():
        if global_name in names:
            yield f"the global `{global_name}` it reads", value
    for value in getattr(obj, "__defaults__", None) or ():
        yield "its default argument", value
    for value in (getattr(obj, "__kwdefaults__", None) or {}).values():
        yield "its default argument", value
    if hasattr(obj, "__self__"):
        yield "the object it is bound to", obj.__self__


def _unpicklable(obj: Callable[..., Any], exc: BaseException) -> str:
    """Which part of `obj` stopped the pickling, in words ("its closure's `l` is a
    _thread.lock"); what `obj` holds when no part says ("it holds a _thread.lock")."""
    import cloudpickle

    for where, value in _parts(obj):
        try:
            cloudpickle.dumps(value)
        except Exception as part_exc:  # anything a user's object raises, as in `send`
            return _said(where, part_exc, value)
    return _said("it", exc, obj)


def _said(where: str, exc: BaseException, value: object) -> str:
    """"`where` is a X" / "`where` holds a X" / "`where` (Error: why)"."""
    if not _CANNOT_PICKLE.search(str(exc)):
        return f"{where} cannot be pickled ({_reason(exc)})"
    kind, itself = _kind(exc, value)
    return f"{where} {'is' if itself else 'holds'} {kind}"


def _reason(exc: BaseException) -> str:
    """An exception in a few words: its type and first line, shown literally."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return visible(shorten(f"{type(exc).__name__}: {first}" if first else type(exc).__name__, 160))


@contextlib.contextmanager
def staged(func: Sent, setup: Sent | None) -> Iterator[tuple[str, str]]:
    """(function's ref, setup's ref or "") for a child, valid inside the block: what is sent
    by value lives in a private folder that the block removes, however it ends."""
    sent = [s for s in (func, setup) if s is not None and s.by_value]
    folder = tempfile.mkdtemp(prefix="quadscope-send-") if sent else ""
    try:
        refs = []
        for role, s in (("func", func), ("setup", setup)):
            if s is not None and s.by_value:
                path = os.path.join(folder, f"{role}.pickle")
                with open(path, "wb") as f:
                    f.write(s.data)
                refs.append(BY_VALUE + path)
            else:
                refs.append(s.ref if s is not None else "")
        yield refs[0], refs[1]
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def check_loads(func: Sent, setup: Sent | None = None, *, run: Runner = subprocess.run) -> None:
    """Load what is sent by value in a plain child Python, as the counting child will;
    CannotSend naming why when it cannot (a module the child does not find)."""
    if not func.by_value and (setup is None or not setup.by_value):
        return
    with staged(func, setup) as (target, setup_ref):
        argv = [sys.executable, "-c", _CHECK_DRIVER, "", _path(), target, setup_ref, ""]
        try:
            done = run(argv, capture_output=True, text=True, errors="replace",
                       timeout=CHECK_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            why = f"loading it took over {CHECK_TIMEOUT_S:.0f} s"
        else:
            if done.returncode == 0:
                return
            why = _last_line(done.stderr) or f"exit code {done.returncode}"
    failed = func if func.by_value else setup
    assert failed is not None
    raise CannotSend(f"cannot count `{failed.name}`: the counting process cannot load it "
                     f"({why})")


def _last_line(text: str) -> str:
    """The last line of a child's stderr (the exception of a traceback), shown literally."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return visible(shorten(lines[-1], 200)) if lines else ""


def _path() -> str:
    """The parent's sys.path, as the child prepends it to its own."""
    return json.dumps([p for p in sys.path if p])


def target_refs(target: str) -> tuple[str, str]:
    """(MODULE:FUNC, MODULE:SETUP or "") of a `python:MODULE:FUNC[:SETUP]` target."""
    spec = target.split(":", 1)[1] if target.startswith("python:") else target
    module, func, *setup = spec.split(":")
    return f"{module}:{func}", f"{module}:{setup[0]}" if setup else ""


Command = Callable[[Sequence[str]], AbstractContextManager[list[str]]]
ManyCommand = Callable[[Sequence[Sequence[str]]], AbstractContextManager[list[str]]]


def _sent(argv: Sequence[str], func: Sent | None, setup: Sent | None) -> tuple[Sent, Sent | None]:
    """What a run counts: the function given, else the `python:` target's names."""
    if func is not None:
        return func, setup
    func_ref, setup_ref = target_refs(argv[0])
    return Sent(func_ref, ref=func_ref), Sent(setup_ref, ref=setup_ref) if setup_ref else None


def count_command(func: Sent | None = None, setup: Sent | None = None) -> Command:
    """argv `(target, n[, m...])` -> the child Python's argv, valid inside the context;
    `func` (and `setup`) override the target's names."""
    lib = marks_library()

    @contextlib.contextmanager
    def command(argv: Sequence[str]) -> Iterator[list[str]]:
        with staged(*_sent(argv, func, setup)) as (target, setup_ref):
            sizes = json.dumps([int(a) for a in argv[1:]])
            yield [sys.executable, "-c", _DRIVER, lib, _path(), target, setup_ref, sizes]

    return command


def count_many_command(func: Sent | None = None, setup: Sent | None = None) -> ManyCommand:
    """argvs `(target, n[, m...])` of one target -> one child Python counting each in turn."""
    lib = marks_library()

    @contextlib.contextmanager
    def command(argvs: Sequence[Sequence[str]]) -> Iterator[list[str]]:
        with staged(*_sent(argvs[0], func, setup)) as (target, setup_ref):
            sizes = json.dumps([[int(a) for a in argv[1:]] for argv in argvs])
            yield [sys.executable, "-c", _MANY_DRIVER, lib, _path(), target, setup_ref, sizes]

    return command
