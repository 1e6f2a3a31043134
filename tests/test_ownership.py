"""Whose code a frame is, and the flame graph never hiding the user's function behind "…"."""

from __future__ import annotations

import pytest

from quadscope.profile.flametree import collapse
from quadscope.profile.ownership import is_user_dso, is_user_frame
from quadscope.profile.records import FlameNode, FlameTree

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
PROG = "/home/me/csvjoin/csvjoin"


@pytest.mark.parametrize(("dso", "user"), [
    (PROG, True), ("/tmp/cl/textkit/core.py", True), ("users.py", True),
    (LIBC, False), ("/opt/x/lib/libfoo.so.1", False), ("[kernel.kallsyms]", False),
    ("<frozen importlib._bootstrap>", False), ("[interpreter]", False), ("", False),
    ("/root/.pyenv/versions/3.11.7/bin/python3.11", False),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", False),
    ("/work/main/.venv/lib/python3.11/site-packages/numpy/core.py", False),
    ("/usr/bin/python3.11", False), ("/usr/lib/valgrind/vgpreload_core.so", False),
])
def test_a_dso_is_the_user_s_when_outside_every_runtime_and_library(dso: str, user: bool) -> None:
    assert is_user_dso(dso) is user


def test_start_up_code_in_the_user_s_binary_is_not_the_user_s_function() -> None:
    assert is_user_frame("append_field", PROG)
    assert not is_user_frame("_start", PROG) and not is_user_frame("(below main)", PROG)


def _chain(frames: list[tuple[str, str]]) -> FlameTree:
    node: FlameNode | None = None
    for name, dso in reversed(frames):
        node = FlameNode(name, dso, 1.0, 2.0, 500, 1.0, False,
                         children=() if node is None else (node,))
    assert node is not None
    return FlameTree(FlameNode("all", "", 1.0, 2.0, 500, 1.0, False, children=(node,)), (1, 8))


def _names(node: FlameNode) -> list[str]:
    return [node.name] + [n for c in node.children for n in _names(c)]


def test_collapse_hides_runtime_frames_only_and_shows_each_user_function() -> None:
    """The issue's chain: `_start → … → __strcat_evex` hid append_field and main."""
    tree = _chain([("_start", PROG), ("__libc_start_main", LIBC),
                   ("__libc_start_call_main", LIBC), ("main", PROG), ("append_field", PROG),
                   ("__strcat_evex", LIBC)])
    shown = _names(collapse(tree).root)
    assert shown == ["all → … → __libc_start_call_main", "main", "append_field → __strcat_evex"]


def test_a_python_chain_keeps_the_user_s_function_apart_from_the_interpreter() -> None:
    py = "/root/.pyenv/versions/3.11.7/bin/python3.11"
    tree = _chain([("_start", py), ("Py_RunMain", py), ("<module>", "users.py"),
                   ("main", "users.py"), ("remember_user", "users.py"),
                   ("list_contains", py), ("PyObject_RichCompare", py)])
    shown = _names(collapse(tree).root)
    assert shown == ["all → … → Py_RunMain", "<module>", "main",
                     "remember_user → … → PyObject_RichCompare"]
