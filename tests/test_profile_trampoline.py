"""Native frames under Python frames: 3.12+ trampolines (profile/trampoline.py) and the
sampler chosen for a Python script when a tool is missing (driver.choose_sampler), on fakes."""

from __future__ import annotations

import pytest

from quadscope.errors import ToolMissingError
from quadscope.profile import driver
from quadscope.profile.attribute import attribute
from quadscope.profile.native import PythonNativeSampler
from quadscope.profile.perf import PerfSampler, PerfSetup
from quadscope.profile.python import PySpySampler
from quadscope.profile.stacks import Frame, Stack, StackProfile
from quadscope.profile.trampoline import UNWINDER_NOTE, python_frame, python_stack, python_stacks
from quadscope.render.terminal import culprit_name

LIBPY = "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0"
MAP = "/tmp/perf-4242.map"
EVAL = Frame("_PyEval_EvalFrameDefault", LIBPY)
INSERT = Frame("list_insert", LIBPY)
MEMMOVE = Frame("__memmove_avx_unaligned_erms", "/usr/lib/x86_64-linux-gnu/libc.so.6")
MAIN_PY = Frame("py::main:/home/me/front.py", MAP)
USER_PY = Frame("py::remember_user:/home/me/front.py", MAP)
REMEMBER = Frame("remember_user", "/home/me/front.py")


def test_a_trampoline_symbol_is_a_python_frame() -> None:
    assert python_frame("py::remember_user:/home/me/front.py") == REMEMBER
    assert python_frame("py::<module>:<string>") == Frame("<module>", "<string>")
    assert python_frame("py::Log.add:/a:b/c.py") == Frame("Log.add", "/a:b/c.py")
    assert python_frame("list_insert") is None
    assert python_frame("py::nofile") is None


def test_the_loop_under_a_python_frame_is_dropped_other_c_kept() -> None:
    """remember_user → list_insert → memmove, as the user reads it; C between two Python
    frames that is not the loop (a builtin calling back) stays."""
    stack = (MAIN_PY, EVAL, USER_PY, EVAL, INSERT, MEMMOVE)
    assert python_stack(stack) == (Frame("main", "/home/me/front.py"), REMEMBER, INSERT, MEMMOVE)
    sort = Frame("list_sort", LIBPY)
    key = Frame("py::key:/home/me/front.py", MAP)
    assert python_stack((MAIN_PY, EVAL, sort, EVAL, key, EVAL)) == (
        Frame("main", "/home/me/front.py"), sort, EVAL, Frame("key", "/home/me/front.py"))
    # A native program's stack is left as it is.
    native = (Frame("main", "/usr/bin/prog"), EVAL, INSERT)
    assert python_stack(native) == native


def test_stacks_that_become_equal_add_up() -> None:
    got = python_stacks({(USER_PY, EVAL): 3, (USER_PY,): 4, (USER_PY, EVAL, INSERT): 5})
    assert got == {(REMEMBER,): 7, (REMEMBER, INSERT): 5}


def _profile(n: int) -> StackProfile:
    """perf -X perf at size n: list_insert's work n², the bytecode's n (weights in ns)."""
    k = n // 1000
    stacks: dict[Stack, int] = python_stacks({
        (MAIN_PY, EVAL, USER_PY, EVAL, INSERT, MEMMOVE): 1000 * k * k,
        (MAIN_PY, EVAL, USER_PY, EVAL): 4000 * k,
        (MAIN_PY, EVAL): 1000 * k,
    })
    total = sum(stacks.values())
    return StackProfile(n, stacks, total // 100, "cpu-clock", total / 1e9)


def test_the_culprit_row_reads_user_function_then_c() -> None:
    """The growing leaf is memmove, and its row names the C chain under remember_user."""
    result = attribute([_profile(n) for n in (1000, 2000, 4000, 8000, 16000)])
    top = result.culprits[0]
    assert top.symbol == MEMMOVE.symbol
    assert top.call_path[-3:] == ("remember_user", "list_insert", MEMMOVE.symbol)
    assert culprit_name(top) == f"list_insert → {MEMMOVE.symbol}"


SETUP = PerfSetup("perf", "cpu-clock", True, 10000, None)


def _fake_tools(monkeypatch: pytest.MonkeyPatch, *, version: tuple[int, int],
                perf: bool, pyspy: bool) -> None:
    def detect() -> PerfSetup:
        if not perf:
            raise ToolMissingError("perf is not installed: install linux-perf.")
        return SETUP
    monkeypatch.setattr(driver, "python_version", lambda _python: version)
    monkeypatch.setattr(driver, "detect_perf", detect)
    monkeypatch.setattr(driver, "find_pyspy", lambda: "/bin/py-spy" if pyspy else None)
    monkeypatch.setattr(driver, "pyspy_native_works", lambda _spy, _python: True)


def test_python_312_uses_perf_trampolines_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tools(monkeypatch, version=(3, 12), perf=True, pyspy=True)
    s = driver.choose_sampler(["python3.12", "front.py", "10"])
    assert isinstance(s, PerfSampler) and s.python_perf and s.call_graph.startswith("dwarf")
    assert UNWINDER_NOTE in s.notes


def test_python_311_pairs_pyspy_with_perf(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tools(monkeypatch, version=(3, 11), perf=True, pyspy=True)
    s = driver.choose_sampler(["python3", "front.py", "10"])
    assert isinstance(s, PythonNativeSampler) and s.name == "py-spy --native + perf"


@pytest.mark.parametrize("version", [(3, 11), (3, 12)])
def test_without_perf_pyspy_alone_says_why(monkeypatch: pytest.MonkeyPatch,
                                           version: tuple[int, int]) -> None:
    """No perf: today's py-spy profile, and one sentence saying C frames are missing."""
    _fake_tools(monkeypatch, version=version, perf=False, pyspy=True)
    s = driver.choose_sampler(["python3", "front.py", "10"])
    assert isinstance(s, PySpySampler)
    said = [n for n in s.notes if "not shown" in n]
    assert len(said) == 1 and "perf is not installed" in said[0]


def test_without_perf_or_pyspy_the_error_is_perf_s(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tools(monkeypatch, version=(3, 12), perf=False, pyspy=False)
    with pytest.raises(ToolMissingError, match="perf is not installed"):
        driver.choose_sampler(["python3", "front.py", "10"])
