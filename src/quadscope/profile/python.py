"""Python programs: show Python functions, not just the interpreter's C loop.

Contract: `python_argv(argv)` says whether a command runs a Python
interpreter (`python3 script.py`, `/usr/bin/python3.11 -m mod`).
For such a command `driver.choose_sampler(argv, setup)` picks, in order: perf
with `-X perf` (CPython 3.12+ perf trampolines, so perf sees `py::func:file`
frames), then py-spy (`PySpySampler`, folded stacks of Python frames, paired
with perf by `native.PythonNativeSampler` when perf works), else perf on the
interpreter's C functions with a sentence saying why; this module gives it
`python_version`, `find_pyspy` and `pyspy_native_works`. `parse_pyspy_raw`
reads py-spy's `--format raw` output (folded, `func (file:line)` frames). Line
numbers are dropped so one function is one frame; an unsymbolised native
address (`0x7f.. (libz.so)`) is that object's unknown code, one frame per
object, not one per address.

py-spy runs with `--native` when `pyspy_native_works` (one short probe
recording of the same interpreter: it needs ptrace and an unwinder, which some
containers deny), so the C functions of extension modules (zlib's `deflate`,
numpy's loops) appear under the Python frame that called them; else without
it, and the sampler's name and notes say which was used. py-spy never shows
the interpreter's own C functions (libpython: `list.insert`'s loop), only C
outside it: `driver.choose_sampler` therefore pairs py-spy with perf when perf
works (`native.PythonNativeSampler`, which places perf's C chains under the
Python frame), and `interpreter_note` says so when a Python frame still holds
the growth.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from quadscope.profile.child import cut_note, run_bounded
from quadscope.profile.faults import FaultReport
from quadscope.profile.records import Culprit
from quadscope.profile.sampler import Overhead
from quadscope.profile.stacks import UNKNOWN, Frame, Stack, StackProfile, parse_folded
from quadscope.profile.startup import NO_PYTHON_FRAME
from quadscope.scratch import scratch_dir

_PY = re.compile(r"^python(\d(\.\d+)?)?$")
_PYSPY_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def python_argv(argv: Sequence[str]) -> bool:
    return bool(argv) and bool(_PY.match(os.path.basename(argv[0])))


def python_version(interpreter: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([interpreter, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, check=False, timeout=30).stdout
        major, minor = out.split()
        return int(major), int(minor)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def find_pyspy() -> str | None:
    here = Path(sys.executable).parent / "py-spy"
    return str(here) if here.exists() else shutil.which("py-spy")


def parse_pyspy_raw(lines: Iterable[str]) -> dict[Stack, int]:
    return parse_folded(lines, _pyspy_stack)


def _pyspy_stack(names: list[str]) -> Stack:
    """One raw line's frames (`func (file:line)`, root first) as a stack."""
    frames = []
    for name in names:
        if not name:
            continue
        m = _PYSPY_FRAME.match(name)
        if m is None:
            frames.append(Frame(name, "[python]"))
        elif m.group("func").startswith("0x"):
            frames.append(Frame(UNKNOWN, m.group("file")))
        else:
            frames.append(Frame(m.group("func"), m.group("file")))
    # py-spy --native starts each stack at libc's unsymbolised entry (__libc_start_call_main):
    # a frame that says nothing and would only add a level to every stack.
    while len(frames) > 1 and not frames[0].known:
        frames.pop(0)
    # An empty stack is a sample taken while no Python frame existed: the interpreter
    # starting up or shutting down (startup.py folds it when it does not grow).
    return tuple(frames) or (NO_PYTHON_FRAME,)


NATIVE_FAILED = ("py-spy's --native mode does not work here (it needs ptrace and stack "
                 "unwinding): only Python frames are shown, not the C functions under them")


def pyspy_native_works(pyspy: str, interpreter: str) -> bool:
    """Whether `py-spy record --native` records `interpreter` running a short loop here."""
    with scratch_dir("pyspy") as tmp:
        out = Path(tmp) / "probe.txt"
        try:
            done = subprocess.run(
                [pyspy, "record", "--native", "-r", "200", "-f", "raw", "-o", str(out), "--",
                 interpreter, "-c", "sum(range(3_000_000))"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                check=False, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and out.exists() and out.stat().st_size > 0


def is_python_file(dso: str) -> bool:
    """Whether a py-spy frame's file is Python source (`q.py`, `<string>`), not a C object."""
    return dso.endswith(".py") or (dso.startswith("<") and dso.endswith(">"))


def interpreter_note(culprits: Sequence[Culprit]) -> str | None:
    """A sentence when the top culprit is a Python frame: its C work inside libpython is hidden."""
    if not culprits or not is_python_file(culprits[0].dso):
        return None
    return (f"{culprits[0].symbol}'s own time is the interpreter running it: bytecode, or "
            "built-ins such as list.insert whose C functions py-spy does not show; under "
            "Python 3.12+ quadscope profiles through perf -X perf, which names them")


class PySpySampler:
    """py-spy record at `rate_hz`, repeated until `target_samples` (weights are sample counts)."""

    def __init__(self, pyspy: str, *, target_samples: int = 1000, max_rate_hz: int = 1000,
                 timeout_s: float | None = 600.0, timeout_why: str = "",
                 notes: tuple[str, ...] = (),
                 max_runs: int = 10, native: bool = False) -> None:
        self.native = native
        self.name = "py-spy --native" if native else "py-spy"
        self.max_runs = max_runs
        self.pyspy = pyspy
        self.target_samples = target_samples
        self.max_rate_hz = max_rate_hz
        self.timeout_s = timeout_s
        self.timeout_why = timeout_why  # why the limit is what it is, said when one is met
        self.notes = notes

    def sample(self, argv: Sequence[str], *, size_n: int, reference_s: float | None,
               out_dir: Path) -> StackProfile:
        out_dir.mkdir(parents=True, exist_ok=True)
        rate = self.max_rate_hz
        if reference_s:
            rate = int(min(self.max_rate_hz, max(100, 1.5 * self.target_samples / reference_s)))
        merged: dict[Stack, int] = {}
        samples, wall_total, runs, cut = 0, 0.0, 0, False
        while runs < self.max_runs:
            raw = out_dir / f"pyspy-n{size_n}-{runs}.txt"
            done = run_bounded([*self._record(rate), "-o", str(raw), "--", *argv], self.timeout_s)
            wall_total += done.wall_s
            runs += 1
            if raw.exists():
                for st, w in parse_pyspy_raw(raw.read_text().splitlines()).items():
                    merged[st] = merged.get(st, 0) + w
                    samples += w
                raw.unlink()
            cut = done.timed_out
            if samples >= self.target_samples or cut:  # one deadline is enough
                break
        ref = reference_s if reference_s else samples / rate / max(runs, 1)
        return StackProfile(size_n, merged, samples, "py-spy", ref, wall_s=wall_total / runs,
                            repeats=runs, extra={"frequency_hz": rate},
                            notes=(cut_note(size_n, self.timeout_s, self.timeout_why),) if cut
                            else ())

    def sample_faults(self, argv: Sequence[str], *, size_n: int, expected_faults: int | None,
                      out_dir: Path) -> FaultReport | None:
        return None

    def _record(self, rate_hz: int) -> list[str]:
        native = ["--native"] if self.native else []
        return [self.pyspy, "record", *native, "-r", str(rate_hz), "-f", "raw"]

    def overhead(self, argv: Sequence[str], *, size_n: int) -> Overhead | None:
        def timed(cmd: Sequence[str]) -> float:
            return run_bounded(cmd, self.timeout_s).wall_s

        with scratch_dir("pyspy") as tmp:
            rec = [*self._record(self.max_rate_hz), "-o", f"{tmp}/o.txt", "--"]
            startup = timed([*rec, "true"])
            plain = timed(argv)
            profiled = timed([*rec, *argv])
        return Overhead(size_n, plain, profiled, startup)
