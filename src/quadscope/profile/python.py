"""Python programs: show Python functions, not just the interpreter's C loop.

Contract: `python_argv(argv)` says whether a command runs a Python
interpreter (`python3 script.py`, `/usr/bin/python3.11 -m mod`).
`choose_python_sampler(argv, setup)` picks, in order: perf with `-X perf`
(CPython 3.12+ perf trampolines, so perf sees `py::func:file` frames), then
py-spy (`PySpySampler`, folded stacks of Python frames), else perf on the
interpreter's C functions with a sentence saying why. `parse_pyspy_raw`
reads py-spy's `--format raw` output (folded, `func (file:line)` frames). Line
numbers are dropped so one function is one frame.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from quadscope.profile.faults import FaultReport
from quadscope.profile.sampler import Overhead
from quadscope.profile.stacks import Frame, Stack, StackProfile

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
    out: dict[Stack, int] = {}
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        names, _, count = line.rpartition(" ")
        frames = []
        for name in names.split(";"):
            if not name:
                continue
            m = _PYSPY_FRAME.match(name)
            frames.append(Frame(m.group("func"), m.group("file")) if m else Frame(name, "[python]"))
        st = tuple(frames) or (Frame("[idle]", "[python]"),)
        out[st] = out.get(st, 0) + int(count)
    return out


class PySpySampler:
    """py-spy record at `rate_hz`, repeated until `target_samples` (weights are sample counts)."""

    name = "py-spy"

    def __init__(self, pyspy: str, *, target_samples: int = 1000, max_rate_hz: int = 1000,
                 timeout_s: float | None = 600.0, notes: tuple[str, ...] = (),
                 max_runs: int = 10) -> None:
        self.max_runs = max_runs
        self.pyspy = pyspy
        self.target_samples = target_samples
        self.max_rate_hz = max_rate_hz
        self.timeout_s = timeout_s
        self.notes = notes

    def sample(self, argv: Sequence[str], *, size_n: int, reference_s: float | None,
               out_dir: Path) -> StackProfile:
        out_dir.mkdir(parents=True, exist_ok=True)
        rate = self.max_rate_hz
        if reference_s:
            rate = int(min(self.max_rate_hz, max(100, 1.5 * self.target_samples / reference_s)))
        merged: dict[Stack, int] = {}
        samples, wall_total, runs = 0, 0.0, 0
        while runs < self.max_runs:
            raw = out_dir / f"pyspy-n{size_n}-{runs}.txt"
            t0 = time.monotonic()
            subprocess.run([self.pyspy, "record", "-r", str(rate), "-f", "raw", "-o", str(raw),
                            "--", *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, timeout=self.timeout_s)
            wall_total += time.monotonic() - t0
            runs += 1
            if raw.exists():
                for st, w in parse_pyspy_raw(raw.read_text().splitlines()).items():
                    merged[st] = merged.get(st, 0) + w
                    samples += w
                raw.unlink()
            if samples >= self.target_samples:
                break
        ref = reference_s if reference_s else samples / rate / max(runs, 1)
        return StackProfile(size_n, merged, samples, "py-spy", ref, wall_s=wall_total / runs,
                            repeats=runs, extra={"frequency_hz": rate})

    def sample_faults(self, argv: Sequence[str], *, size_n: int, expected_faults: int | None,
                      out_dir: Path) -> FaultReport | None:
        return None

    def overhead(self, argv: Sequence[str], *, size_n: int) -> Overhead | None:
        def timed(cmd: Sequence[str]) -> float:
            t0 = time.monotonic()
            subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, timeout=self.timeout_s)
            return time.monotonic() - t0

        with tempfile.TemporaryDirectory() as tmp:
            rec = [self.pyspy, "record", "-r", str(self.max_rate_hz), "-f", "raw", "-o",
                   f"{tmp}/o.txt", "--"]
            startup = timed([*rec, "true"])
            plain = timed(argv)
            profiled = timed([*rec, *argv])
        return Overhead(size_n, plain, profiled, startup)
