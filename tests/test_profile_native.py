"""perf's C chains spliced under py-spy's Python frames (profile/native.py), with fakes."""

from __future__ import annotations

from pathlib import Path

from quadscope.profile.native import (
    NATIVE_KEY,
    PythonNativeSampler,
    native_chain,
    splice_native,
)
from quadscope.profile.sampler import FakeSampler
from quadscope.profile.stacks import UNKNOWN, Frame, Stack, StackProfile

LIBPY = "/usr/lib/libpython3.11.so.1.0"
MOD = Frame("<module>", "<string>")
COMP = Frame("<listcomp>", "<string>")
EVAL = Frame("_PyEval_EvalFrameDefault", LIBPY)
INSERT = Frame("list_insert", LIBPY)
MEMMOVE = Frame("__memmove_avx_unaligned_erms", "/usr/lib/libc.so.6")
IMPORT = Frame("_find_and_load", "<frozen importlib._bootstrap>")


def _profile(n: int, py: dict[Stack, int], native: dict[Stack, int]) -> StackProfile:
    return StackProfile(n, py, sum(py.values()), "py-spy", 1.0, extra={NATIVE_KEY: native})


def _quadratic(n: int) -> StackProfile:
    """py-spy sees <listcomp> own time only; perf sees list_insert growing as n²."""
    k = n // 1000
    py = {(MOD, COMP): 10 * k * k + 5 * k, (IMPORT,): 50}
    native = {(INSERT,): 9 * k * k, (EVAL,): 5 * k, (Frame("main", "/usr/bin/python3"),
              Frame("Py_RunMain", LIBPY), IMPORT): 50, (Frame(UNKNOWN, UNKNOWN), EVAL): 3}
    return _profile(n, py, native)


def test_native_chain_is_the_c_part_below_the_loop() -> None:
    """The chain is the known frames after the last interpreter-loop frame, at most three."""
    stack = (Frame("main", "/usr/bin/python3"), EVAL, Frame("method_vectorcall", LIBPY),
             Frame(UNKNOWN, UNKNOWN), INSERT, MEMMOVE)
    assert native_chain(stack) == (Frame("method_vectorcall", LIBPY), INSERT, MEMMOVE)
    assert native_chain((Frame("py::f:q.py", "/tmp/perf-1.map"), EVAL)) == ()
    assert native_chain((INSERT,)) == (INSERT,)


def test_list_insert_goes_under_the_hot_python_frame() -> None:
    """list_insert is placed under <module> → <listcomp> at every size, in perf's proportion."""
    merged, note = splice_native([_quadratic(n) for n in (4000, 2000, 1000)])
    assert [p.size_n for p in merged] == [1000, 2000, 4000]
    top = merged[-1]
    assert NATIVE_KEY not in top.extra
    total = 10 * 16 + 5 * 4 + 50
    assert top.total_weight == total  # py-spy's totals are kept
    assert top.stacks[(MOD, COMP, INSERT)] == round(total * 144 / (144 + 20 + 50 + 3))
    assert top.stacks[(MOD, COMP)] == 10 * 16 + 5 * 4 - top.stacks[(MOD, COMP, INSERT)]
    small = merged[0].stacks[(MOD, COMP, INSERT)]
    assert small < top.stacks[(MOD, COMP, INSERT)]
    assert note is not None and "<listcomp>" in note and "list_insert" in note


def test_splice_never_takes_more_than_the_frame_owns() -> None:
    """A chain heavier in perf than the Python frame's own samples takes all of them, no more."""
    py = {(MOD, COMP): 10, (MOD, Frame("g", "q.py")): 90}
    native = {(INSERT,): 100}
    merged, _ = splice_native([_profile(1000, py, native), _profile(2000, py, native)])
    assert merged[-1].stacks == {(MOD, Frame("g", "q.py"), INSERT): 90, (MOD, COMP): 10}


def test_nothing_spliced_without_native_stacks_or_a_python_frame() -> None:
    """Profiles without perf stacks, or whose hot stacks are all start-up, come back unchanged."""
    plain = StackProfile(1000, {(MOD, COMP): 5}, 5, "py-spy", 1.0)
    assert splice_native([plain]) == ((plain,), None)
    startup = _profile(1000, {(IMPORT,): 5}, {(INSERT,): 5})
    merged, note = splice_native([startup])
    assert note is None and merged[0].stacks == {(IMPORT,): 5} and not merged[0].extra


def test_chain_already_shown_by_pyspy_is_not_added_twice() -> None:
    """A C function py-spy --native already shows under the frame is not spliced again."""
    py = {(MOD, COMP): 50, (MOD, COMP, MEMMOVE): 50}
    merged, note = splice_native([_profile(1000, py, {(MEMMOVE,): 100})])
    assert note is None and merged[0].stacks == py


def test_sampler_records_both_and_carries_perf_stacks(tmp_path: Path) -> None:
    """PythonNativeSampler runs both samplers on the same argv and keeps perf's stacks aside."""
    spy = FakeSampler(lambda n: {(MOD, COMP): n}, notes=("a",))
    perf = FakeSampler(lambda n: {(INSERT,): 2 * n}, notes=("a", "b"))
    both = PythonNativeSampler(spy, perf)
    assert both.name == "fake + fake" and both.notes == ("a", "b")
    prof = both.sample(["python3", "q.py", "7"], size_n=7, reference_s=1.0, out_dir=tmp_path)
    assert prof.stacks == {(MOD, COMP): 7} and prof.extra[NATIVE_KEY] == {(INSERT,): 14}
    assert spy.calls == perf.calls == [("sample", ("python3", "q.py", "7"), 7)]


def test_a_stripped_interpreter_is_named_in_a_note() -> None:
    """perf's work all in an interpreter without symbols: nothing spliced, a note says why."""
    stripped = Frame(UNKNOWN, "/usr/bin/python3.11")
    merged, note = splice_native([_profile(1000, {(MOD, COMP): 9}, {(stripped,): 90})])
    assert merged[0].stacks == {(MOD, COMP): 9}
    assert note is not None and "/usr/bin/python3.11, which has no symbols" in note
