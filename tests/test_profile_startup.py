"""Tests for folding interpreter start-up (profile/startup.py) and py-spy's native frames."""

from __future__ import annotations

import pytest

from quadscope.profile.attribute import attribute
from quadscope.profile.python import interpreter_note, is_python_file, parse_pyspy_raw
from quadscope.profile.records import Culprit
from quadscope.profile.stacks import UNKNOWN, Frame, Stack, StackProfile
from quadscope.profile.startup import STARTUP, fold_startup, is_startup_stack, loglog_slope

BOOT = Frame("_find_and_load", "<frozen importlib._bootstrap>")
SITE = Frame("main", "<frozen site>")
MOD = Frame("<module>", "prog.py")
LOOP = Frame("<listcomp>", "prog.py")
SIZES = (1000, 2000, 4000, 8000)


def profile(n: int, startup_weight: int) -> StackProfile:
    """A quadratic loop plus `startup_weight` samples under the import system (1 µs each)."""
    stacks: dict[Stack, int] = {
        (MOD, LOOP): n * n // 1000,
        (SITE, BOOT, Frame("_compile_bytecode", "<frozen importlib._bootstrap_external>")):
            startup_weight // 2,
        (BOOT, Frame("<module>", "typing.py")): startup_weight - startup_weight // 2,
    }
    total = sum(stacks.values())
    return StackProfile(n, stacks, total, "py-spy", total * 1e-6)


def test_constant_startup_becomes_one_frame() -> None:
    """Start-up stacks of constant cost are one (STARTUP,) stack of the same summed weight."""
    fold = fold_startup([profile(n, 4000) for n in SIZES])
    assert fold.exponent == pytest.approx(0.0, abs=1e-9)
    assert fold.note is not None and "start-up" in fold.note and "4 ms" in fold.note
    for p in fold.profiles:
        assert p.stacks[(STARTUP,)] == 4000
        assert not any(is_startup_stack(st) for st in p.stacks if st != (STARTUP,))
        assert p.total_weight == p.size_n * p.size_n // 1000 + 4000


def test_growing_imports_are_kept() -> None:
    """Imports whose cost grows as n (a module loaded per item) are the program's: not folded."""
    before = [profile(n, 4 * n) for n in SIZES]
    fold = fold_startup(before)
    assert fold.note is None
    assert fold.exponent == pytest.approx(1.0, abs=1e-3)
    assert [dict(p.stacks) for p in fold.profiles] == [dict(p.stacks) for p in before]


def test_startup_whose_share_grows_is_kept() -> None:
    """A flat start-up in a program that shrinks is not outgrown by it: kept as measured."""
    profs = [StackProfile(n, {(BOOT,): 100, (MOD,): 100_000 // n}, 1, "py-spy",
                          (100 + 100_000 // n) * 1e-6) for n in SIZES]
    assert fold_startup(profs).note is None


def test_startup_is_never_a_culprit() -> None:
    """After folding, attribution names the loop and never the start-up frame."""
    fold = fold_startup([profile(n, 40_000) for n in SIZES])
    culprits = attribute(list(fold.profiles)).culprits
    assert culprits[0].symbol == "<listcomp>"
    assert all(c.symbol != STARTUP.symbol for c in culprits)


def test_loglog_slope_exact() -> None:
    """The least-squares log-log slope of c·n^1.5 is 1.5; zero costs are left out."""
    assert loglog_slope(SIZES, [3 * n ** 1.5 for n in SIZES]) == pytest.approx(1.5)
    assert loglog_slope((10, 20, 40), (0.0, 2.0, 4.0)) == pytest.approx(1.0)
    assert loglog_slope((10, 20), (0.0, 1.0)) is None
    assert loglog_slope((10, 20), (1.0, 1.0)) == 0.0


def test_pyspy_native_frames() -> None:
    """Native addresses are their object's unknown code; the bare libc root is dropped."""
    raw = ["0x7f3b (libc.so.6);<module> (z.py:3);zlib_compress_impl (zlibmodule.c:374);"
           "deflate (libz.so.1);0x7f8f (libz.so.1) 5",
           "0x7f3b (libc.so.6);<module> (z.py:3);deflate (libz.so.1);0x7f90 (libz.so.1) 2"]
    out = parse_pyspy_raw(raw)
    assert out == {
        (Frame("<module>", "z.py"), Frame("zlib_compress_impl", "zlibmodule.c"),
         Frame("deflate", "libz.so.1"), Frame(UNKNOWN, "libz.so.1")): 5,
        (Frame("<module>", "z.py"), Frame("deflate", "libz.so.1"),
         Frame(UNKNOWN, "libz.so.1")): 2,
    }


def culprit(symbol: str, dso: str) -> Culprit:
    return Culprit(symbol, dso, "n^2", 2.0, None, 0.9, 0.9, 0.9, 0.9, (1.0, 4.0), (symbol,))


def test_interpreter_note_only_for_python_frames() -> None:
    """The note on hidden interpreter C code fires when a Python frame holds the growth."""
    assert is_python_file("q.py") and is_python_file("<string>")
    assert not is_python_file("libz.so.1") and not is_python_file("zlibmodule.c")
    note = interpreter_note([culprit("<listcomp>", "<string>")])
    assert note is not None and note.startswith("<listcomp>'s own time is the interpreter")
    assert interpreter_note([culprit("deflate", "libz.so.1")]) is None
    assert interpreter_note([]) is None


def test_a_native_program_s_start_up_is_the_loader_and_a_negligible_one_is_not_mentioned() -> None:
    """A C program was told 'interpreter start-up … costs about 0 ms' (issue 26)."""
    native = fold_startup([profile(n, 4000) for n in SIZES], interpreted=False)
    assert native.note is not None and native.note.startswith(
        "program start-up (the dynamic loader, before main) costs about 4 ms")
    assert "interpreter" not in native.note
    quiet = fold_startup([profile(n, 400) for n in SIZES], interpreted=False)
    assert quiet.note is None and all((STARTUP,) in p.stacks for p in quiet.profiles)
    assert fold_startup([profile(n, 4000) for n in SIZES]).note.startswith(  # type: ignore[union-attr]
        "interpreter start-up (imports, site, encodings)")
