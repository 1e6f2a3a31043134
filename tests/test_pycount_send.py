"""A function object reaches the counting child Python by name, or by value (measure.pycount)."""

from __future__ import annotations

import functools
import glob
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import measurement

from quadscope.measure import pycount
from quadscope.measure.clock import FakeClock
from quadscope.measure.exact import Callgrind, InstructionMeter
from quadscope.measure.launcher import FakeExecutor, Job
from quadscope.measure.pycount import BY_VALUE, CannotSend, Sent, check_loads, send, staged
from quadscope.meters import Cost, Measuring
from quadscope.model import Measurement
from quadscope.run.counting import Counting, Refused
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store


def module_level(xs: list[int]) -> int:
    return len(xs)


def _locked() -> Callable[[list[int]], None]:
    lock = threading.Lock()

    def under_lock(xs: list[int]) -> None:
        with lock:
            xs.sort()
    return under_lock


def _sent_folders() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "quadscope-send-*")))


def test_a_module_level_function_goes_by_name_and_the_rest_by_value() -> None:
    """By name only when the name leads back to the object itself: a lambda, a closure, a
    nested def, a bound method, a partial go by value, and load back as working functions."""
    assert send(module_level) == Sent("module_level", ref=f"{__name__}:module_level")
    assert send(sorted).ref == "builtins:sorted"
    seen: list[int] = []

    def nested(xs: list[int]) -> int:
        return sum(xs) + len(seen)

    class Box:
        def size(self, xs: list[int]) -> int:
            return len(xs) + 1

    for func, xs, want in [(lambda xs: max(xs), [3, 9, 2], 9), (nested, [1, 2], 3),
                           (Box().size, [1, 2], 3), (functools.partial(pow, 2), 5, 32)]:
        sent = send(func)
        assert sent.by_value and sent.data
        assert pickle.loads(sent.data)(xs) == want


def test_an_unpicklable_closure_is_one_sentence_naming_why() -> None:
    """A closure over a lock cannot be sent: one sentence naming the variable and the type."""
    with pytest.raises(CannotSend) as caught:
        send(_locked())
    assert str(caught.value) == (
        "cannot count `_locked.<locals>.under_lock`: its closure's `lock` is a _thread.lock, "
        "which cannot be sent to the counting process")
    nested = {"lock": threading.RLock()}
    with pytest.raises(CannotSend, match=r"its default argument holds a _thread.RLock, which"):
        send(lambda xs, held=nested: xs)
    with pytest.raises(CannotSend, match=r"the global `_GLOBAL_LOCK` it reads is a _thread.lock"):
        send(lambda xs: _GLOBAL_LOCK.locked())


_GLOBAL_LOCK = threading.Lock()


def test_staged_writes_what_is_sent_by_value_and_removes_it_however_the_block_ends() -> None:
    """The pickle lives in a private folder for the block alone; gone after it, also on
    Ctrl-C; a function sent by name needs no folder."""
    before = _sent_folders()
    by_value = send(lambda xs: xs)
    with staged(by_value, send(module_level)) as (func, setup):
        assert setup == f"{__name__}:module_level" and func.startswith(BY_VALUE)
        path = Path(func.removeprefix(BY_VALUE))
        assert pickle.loads(path.read_bytes())([1]) == [1]
        assert (path.parent.stat().st_mode & 0o777) == 0o700
    assert not path.parent.exists()
    with pytest.raises(KeyboardInterrupt), staged(by_value, None) as (func, _):
        raise KeyboardInterrupt
    assert not Path(func.removeprefix(BY_VALUE)).parent.exists()
    with staged(send(module_level), None) as refs:
        assert refs == (f"{__name__}:module_level", "")
    assert _sent_folders() == before


class _Runner(FakeExecutor):
    """Valgrind's runner, faked: looks at the pickle the argv names while it runs."""

    def __init__(self, clock: FakeClock, interrupt: bool = False) -> None:
        super().__init__(self._look, clock)
        self.seen: list[tuple[str, bool]] = []
        self.interrupt = interrupt

    def _look(self, argv: Sequence[str]) -> Measurement:
        ref = next(a for a in argv if a.startswith(BY_VALUE))
        path = ref.removeprefix(BY_VALUE)
        self.seen.append((path, os.path.exists(path)))
        if self.interrupt:
            raise KeyboardInterrupt
        return measurement(1.0)


@pytest.fixture
def no_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client-request library is not built: the fakes never run it."""
    monkeypatch.setattr(pycount, "marks_library", lambda: "/nonexistent/marks.so")


def test_the_counted_child_reads_the_pickle_which_is_gone_after_the_run(no_marks: None) -> None:
    """Each counted run writes the pickle before the child starts and removes it after, one
    run or many under one start, and after a Ctrl-C in the middle of a count."""
    clock = FakeClock()
    func, setup = send(lambda xs: xs.sort()), send(lambda n: list(range(n)))
    runner = _Runner(clock)
    meter = InstructionMeter(FakeExecutor(lambda argv: measurement(0.1), clock), runner,
                             Callgrind(), command=pycount.count_command(func, setup),
                             many=pycount.count_many_command(func, setup))
    meter.execute(["python:t:f", "100"], None)
    meter.count_many([["python:t:f", "100"], ["python:t:f", "200"]], None)
    assert [seen for _, seen in runner.seen] == [True, True]
    assert not any(os.path.exists(os.path.dirname(p)) for p, _ in runner.seen)
    argv = runner.calls[0]
    assert argv[argv.index(sys.executable) + 1] == "-c"  # the same interpreter
    assert argv[-1] == "[100]" and runner.calls[1][-1] == "[[100], [200]]"
    interrupted = _Runner(clock, interrupt=True)
    meter = InstructionMeter(FakeExecutor(lambda argv: measurement(0.1), clock), interrupted,
                             Callgrind(), command=pycount.count_command(func, setup))
    with pytest.raises(KeyboardInterrupt):
        meter.execute(["python:t:f", "100"], None)
    path, seen = interrupted.seen[0]
    assert seen and not os.path.exists(os.path.dirname(path))


def test_a_child_that_cannot_load_it_is_one_sentence() -> None:
    """The check's child fails to unpickle: the sentence names the function and its last
    stderr line (never the traceback); by-name functions need no check."""
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 1, "", "Traceback (most recent call last):\n"
                                           "  File ...\nModuleNotFoundError: No module named "
                                           "'gone'\n")

    check_loads(send(module_level), None, run=fake_run)
    assert calls == []
    with pytest.raises(CannotSend) as caught:
        check_loads(send(module_level), send(lambda n: [n]), run=fake_run)
    assert str(caught.value) == ("cannot count `test_a_child_that_cannot_load_it_is_one_sentence."
                                 "<locals>.<lambda>`: the counting process cannot load it "
                                 "(ModuleNotFoundError: No module named 'gone')")
    assert calls[0][0] == sys.executable and "Traceback" not in str(caught.value)


def test_auto_counting_refused_keeps_the_sweep_timed_with_the_sentence(store: Store) -> None:
    """Time left open and a function that cannot be sent: nothing is counted, the sweep stays
    timed, and its note is the one sentence ending "time alone decides"."""
    clock = FakeClock(1000.0)
    locked = _locked()

    def make() -> Measuring:
        send(locked)  # raises CannotSend
        raise AssertionError("a closure over a lock was sent")

    counting = Counting(make, "instructions", "instructions", Cost(slowdown=30.0, startup_s=0.3))
    assert isinstance(counting.measuring(), Refused)
    noisy = iter([0.6, 1.4, 0.9, 1.3, 0.7, 1.2] * 10)
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=(1000, 2000, 4000), repeat=2,
                                warmup=0),
                      executor=FakeExecutor(lambda a: measurement(1e-6 * int(a[-1]) * next(noisy)),
                                            clock),
                      clock=clock, store=store, counting=counting)
    assert sweep.meter == "auto"
    assert sweep.counters_note == (
        "cannot count `_locked.<locals>.under_lock`: its closure's `lock` is a _thread.lock, "
        "which cannot be sent to the counting process; time alone decides")
    assert store.get_sweep(sweep.id).counters_note == sweep.counters_note


# A module the parent has and the child cannot import: a lambda calling into it is pickled
# with a reference to it, so the child fails to load the lambda.
_ONLY_HERE = types.ModuleType("quadscope_only_in_the_parent")


def _helper(xs: list[int]) -> int:
    return len(xs)


_helper.__module__ = _ONLY_HERE.__name__
_ONLY_HERE._helper = _helper  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_real_child_loads_what_is_sent_or_says_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain child unpickles a closure with the parent's sys.path; one that refers to
    a module only the parent has is refused in one sentence."""
    items = [1, 2]
    check_loads(send(lambda xs: items.append(xs)), send(lambda n: [n] * n))
    monkeypatch.setitem(sys.modules, _ONLY_HERE.__name__, _ONLY_HERE)
    with pytest.raises(CannotSend, match=r"the counting process cannot load it \(ModuleNotFound"
                                         r"Error: No module named 'quadscope_only_in_the_parent'\)"):
        check_loads(send(lambda xs: _helper(xs)))


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_lambdas_and_closures_are_counted_and_read_their_class(tmp_path: Path) -> None:
    """Counted under Valgrind by value: a closure inserting at the front of a local list
    reads n²; a lambda calling a nested set-based dedup, with a lambda setup, reads n
    (bounded: each count is under a second of Valgrind)."""
    from quadscope.api import sweep_function

    def make_front() -> Callable[[list[int]], None]:
        out: list[int] = []

        def front(xs: list[int]) -> None:
            for x in xs:
                out.insert(0, x)
            out.clear()
        return front

    def dedup(xs: list[int]) -> list[int]:
        seen: set[int] = set()
        out = []
        for x in xs:
            if x not in seen:
                seen.add(x)
                out.append(x)
        return out

    # The set's resizes bend a short span of counts (n and n log n tie over 16×): 64×.
    for func, setup, sizes, cls in [
            (make_front(), lambda n: list(range(n)), [1000, 2000, 4000, 8000], "n^2"),
            (lambda xs: dedup(xs), lambda n: [(i * 7919) % n // 2 for i in range(n)],
             [2000, 8000, 32000, 128000], "n")]:
        analysis = sweep_function(func, setup=setup, sizes=sizes, repeat=2, warmup=0,
                                  timeout_s=60, meter="instructions", db=tmp_path / "r.db")
        assert (analysis.sweep.meter, analysis.sweep.counters) == ("instructions", "valgrind")
        counts = {r.size_n: r.value("instructions") for r in analysis.measured()}
        assert all(counts[n] for n in sizes)
        # Real counts: never confidently wrong, and the class read (settled, or the
        # bracket's slower end: a cubic term of 2% at 8000 may stay open where the child's
        # allocator moved a count by 0.1%) is the true one.
        f = analysis.fits["A"]["instructions"]
        assert f.cls in (cls, "inconclusive") and f.at_least == cls, (counts, f.reason)


@pytest.mark.slow
def test_an_undecided_gate_says_why_counting_did_not_decide(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    """assert_scales on a closure over a lock, with time left open: the work cannot be
    counted, and the undecided message carries the one sentence, no traceback."""
    from quadscope.api import assert_scales
    from quadscope.run import counting

    monkeypatch.setattr(counting, "open_reason", lambda sweep, runs, **_: "time left it open")
    result = assert_scales(_locked(), "n log n", sizes=[1000, 2000, 4000], repeat=1,
                           metric="instructions", undecided="pass", db=tmp_path / "r.db",
                           setup=lambda n: list(range(n)), report=tmp_path / "r.html")
    assert result.outcome == "undecided" and result.analysis.sweep.meter == "auto"
    assert ("counting: cannot count `_locked.<locals>.under_lock`: its closure's `lock` is a "
            "_thread.lock, which cannot be sent to the counting process; time alone decides"
            ) in result.message.splitlines()
    assert "Traceback" not in result.message


def test_counts_of_several_sizes_are_keyed_by_every_size(tmp_path: Path, no_marks: None) -> None:
    """Over several sizes the child gets all of a run's sizes (setup(n, m)), and each dump's
    count is keyed by them all: points sharing their last size do not collide. A dump
    without its closing totals line (its writer killed mid-write) is left out."""
    for pid, said, count in [(1, "1000,20", 500), (2, "2000,20", 900), (3, "x,20", 7)]:
        (tmp_path / f"callgrind.{pid}.out").write_text(
            f"desc: Trigger: Client Request: n={said}\nsummary: {count}\nfn=x\ntotals: {count}\n")
    (tmp_path / "callgrind.4.out").write_text(
        "desc: Trigger: Client Request: n=4000,20\nsummary: 1700\nfn=x\n")
    assert Callgrind().by_size(str(tmp_path)) == {(1000, 20): 500, (2000, 20): 900}
    with pycount.count_command()(["python:m:f:setup", "1000", "20"]) as argv:
        assert argv[-3:] == ["m:f", "m:setup", "[1000, 20]"]


class _CutShort(FakeExecutor):
    """Valgrind's runner counting many calls, faked: each call costs `call_s`, and a call
    that would end past the start's timeout is cut off with the start (no dump of it)."""

    def __init__(self, clock: FakeClock, call_s: float) -> None:
        super().__init__(lambda argv: measurement(0.0), clock)
        self.call_s = call_s
        self.timeouts: list[float | None] = []

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        self.timeouts.append(timeout_s)
        out = next(a.split("=", 1)[1] for a in argv if a.startswith("--callgrind-out-file="))
        spent = 0.0
        for pid, (n,) in enumerate(json.loads(argv[-1])):
            if timeout_s is not None and spent + self.call_s > timeout_s:
                return Measurement({"wall_s": timeout_s}, exit_code=-9, timed_out=True)
            spent += self.call_s
            Path(out.replace("%p", str(pid))).write_text(
                f"desc: Trigger: Client Request: n={n}\nsummary: {n * n}\nfn=f\ntotals: {n * n}\n")
        return measurement(spent)


def test_a_start_cut_short_at_its_timeouts_keeps_the_calls_it_counted(no_marks: None) -> None:
    """The start counting a batch gets what its jobs' timeouts add up to (the budget the
    plan shares among them, less what their timed calls took); cut short there, the calls
    whose dumps were written are counted and the rest are None, nothing counted lost."""
    clock = FakeClock()
    runner = _CutShort(clock, call_s=3.0)
    meter = InstructionMeter(FakeExecutor(lambda argv: measurement(0.01), clock), runner,
                             Callgrind(), many=pycount.count_many_command(send(module_level)))
    jobs = [Job(("python:t:f", str(n)), 2.5) for n in (100, 200, 400)]
    got = [m.value("instructions") for m in meter.execute_many(jobs)]
    assert got == [100 * 100, 200 * 200, None]
    assert runner.timeouts[0] is not None and runner.timeouts[0] <= 7.5
