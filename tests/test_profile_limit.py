"""A recording's deadline without --timeout: the sweep's own measured cost bounds it (a
program hanging under `profile` once waited 600 s a recording), and a recording it stops
says so in one sentence. On fakes: no process runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from quadscope.commands.profile import MEASURED_FLOOR_S, recording_limit
from quadscope.profile import perf as perf_mod
from quadscope.profile import python as python_mod
from quadscope.profile.child import Finished
from quadscope.profile.perf import PerfSampler, PerfSetup
from quadscope.profile.perfscript import PerfData
from quadscope.profile.python import PySpySampler


def test_the_sweeps_timeout_stretched_bounds_a_recording_when_given() -> None:
    limit, why = recording_limit(2.0, [0.5, 1.0])
    assert limit == pytest.approx(10.0)
    assert "--timeout" in why


def test_without_timeout_ten_times_the_slowest_timed_run_bounds_it() -> None:
    limit, why = recording_limit(None, [0.5, 3.0, 1.5])
    assert limit == pytest.approx(30.0)
    assert why.startswith("no --timeout was given") and "3 s" in why


def test_a_quick_sweep_still_gets_the_floor() -> None:
    limit, _ = recording_limit(None, [0.001, 0.002])
    assert limit == pytest.approx(MEASURED_FLOOR_S)


def test_nothing_measured_or_a_size_beyond_them_keeps_the_samplers_own_limit() -> None:
    assert recording_limit(None, []) == (None, "")
    assert recording_limit(None, [1.0], beyond_measured=True) == (None, "")


def _deadline_met(limits: list[float | None]):  # type: ignore[no-untyped-def]
    def fake(cmd: Sequence[str], timeout_s: float | None, **_kw: object) -> Finished:
        limits.append(timeout_s)
        return Finished(None)
    return fake


def test_pyspy_says_which_recording_its_limit_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limits: list[float | None] = []
    monkeypatch.setattr(python_mod, "run_bounded", _deadline_met(limits))
    limit, why = recording_limit(None, [2.0])
    s = PySpySampler("py-spy", timeout_s=limit, timeout_why=why)
    prof = s.sample(["python3", "x.py", "64"], size_n=64, reference_s=1.0, out_dir=tmp_path)
    assert limits == [20.0]  # one deadline is enough: no second try
    assert prof.notes == ("the recording at n = 64 was stopped after 20 s (no --timeout was "
                          "given: 10× the sweep's slowest timed run, 2 s, at least 10 s): its "
                          "profile holds only what was sampled until then",)


def test_a_finished_recording_says_nothing(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_mod, "run_bounded", lambda *_a, **_k: Finished(0))
    s = PySpySampler("py-spy", timeout_s=20.0, timeout_why="x")
    prof = s.sample(["python3", "x.py", "64"], size_n=64, reference_s=1.0, out_dir=tmp_path)
    assert prof.notes == ()


def test_perf_says_which_recording_its_limit_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limits: list[float | None] = []
    monkeypatch.setattr(perf_mod, "run_bounded", _deadline_met(limits))
    monkeypatch.setattr(PerfSampler, "script", lambda *_a, **_k: PerfData(()))
    setup = PerfSetup("perf", "cpu-clock", False, 10000, None)
    s = PerfSampler(setup, timeout_s=12.0, timeout_why="the sweep's --timeout × 5")
    prof = s.sample(["./prog", "128"], size_n=128, reference_s=None, out_dir=tmp_path)
    assert limits == [12.0]  # stopped once: not re-recorded for too few samples
    assert any(n.startswith("the recording at n = 128 was stopped after 12 s (the sweep's "
                            "--timeout × 5)") for n in prof.notes), prof.notes


def test_every_size_is_recorded_at_the_first_sizes_frequency(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sample's interrupt is charged to the run's clock, so a size recorded faster reads
    more of its time (pair_count at n = 4000: 51-77 ms at 50 kHz, 8 ms at 1 kHz): one
    frequency, at most FREQ_CAP_HZ, for every size, and repeats where a run is shorter."""
    freqs: list[int] = []
    repeats: dict[str, int] = {}  # the first recording's, by size

    def fake(cmd: Sequence[str], timeout_s: float | None, **_kw: object) -> Finished:
        freqs.append(int(cmd[cmd.index("-F") + 1]))
        repeats.setdefault(cmd[-1], int(cmd[cmd.index("-c") + 2]) if "-c" in cmd else 1)
        return Finished(0)

    monkeypatch.setattr(perf_mod, "run_bounded", fake)
    monkeypatch.setattr(PerfSampler, "script", lambda *_a, **_k: PerfData(()))
    s = PerfSampler(PerfSetup("perf", "cpu-clock", False, 50000, None), target_samples=400)
    for n, ref in ((1000, 0.001), (8000, 0.064), (64000, 4.0)):
        s.sample(["./prog", str(n)], size_n=n, reference_s=ref, out_dir=tmp_path)
    assert set(freqs) == {perf_mod.FREQ_CAP_HZ}
    assert repeats == {"1000": 20, "8000": 2, "64000": 1}  # short runs repeated, not long ones
    assert perf_mod.plan_frequency(100.0, 400, 50000, 20, fixed_hz=5000) == (2000, 1)
