"""The whole pipeline under a fake executor, pinned as a snapshot (as hyperfine's scheduler test is).

plan -> runs (FakeExecutor, FakeClock) -> store -> fits -> analysis -> JSON and
terminal renderers. Every output is compared with `tests/snapshots/` (words,
classes and counts exactly, floats within `approx`'s stated tolerance, so
another CPU or numpy release passes), so a change anywhere in the chain shows
up here. After a change
that is meant to alter the output, regenerate with
`QUADSCOPE_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_pipeline_snapshot.py`
and read the diff before committing it.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from approx import same, same_text
from quadscope.analyse.analysis import analyse
from quadscope.host import Host
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.render import get_renderer
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _noisy(cost_s: Callable[[str, int], float], seed: int) -> Callable[[Sequence[str]], Measurement]:
    """A deterministic workload: cost_s(program, n) times log-normal noise of 3%."""
    rng = random.Random(seed)

    def cost(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        wall = cost_s(argv[0], n) * rng.lognormvariate(0.0, 0.03)
        return Measurement(
            wall_s=wall, user_s=0.9 * wall, sys_s=0.1 * wall,
            max_rss_bytes=(2 << 20) + 64 * n, minor_faults=120 + n // 16, major_faults=0,
            voluntary_ctx_switches=1, involuntary_ctx_switches=rng.randint(0, 2),
            exit_code=0, instructions=int(3e9 * wall), cycles=int(2.5e9 * wall),
            page_faults=120 + n // 16, context_switches=1,
        )

    return cost


def _check(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("QUADSCOPE_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert path.exists(), f"no snapshot {path}: run with QUADSCOPE_UPDATE_SNAPSHOTS=1 once"
    if name.endswith(".json"):
        same(json.loads(text), json.loads(path.read_text()), name)
    else:
        same_text(text, path.read_text(), name)


def _text(out: bytes | Mapping[str, bytes]) -> str:
    assert isinstance(out, bytes)
    return out.decode("utf-8")


def _pipeline(tmp_path: Path, spec: SweepSpec, cost: Callable[[Sequence[str]], Measurement],
              stem: str) -> None:
    clock = FakeClock(start=1_700_000_000.0)
    with SqliteStore(tmp_path / "results.db") as store:
        sweep = run_sweep(spec, executor=FakeExecutor(cost, clock), clock=clock, store=store,
                          counters="perf", host=Host(kernel="6.1", cpus=2))
        analysis = analyse(sweep, store.runs(sweep.id))
    _check(f"{stem}.json", _text(get_renderer("json").render(analysis)))
    _check(f"{stem}.txt", _text(get_renderer("terminal", color=False, width=100).render(analysis)))


@pytest.mark.parametrize("stem", ["ab-quadratic-vs-linear"])
def test_ab_sweep_pipeline_matches_snapshot(tmp_path: Path, stem: str) -> None:
    """An A/B sweep (n² against n, both over a start-up offset) renders exactly as pinned."""
    spec = SweepSpec(command=("slow", "{n}"), vs_command=("fast", "{n}"), name="snapshot a/b",
                     sizes=(1000, 2000, 4000, 8000, 16000, 32000), repeat=3, warmup=1, seed=7,
                     predict_n=100000)
    cost = _noisy(lambda prog, n: 2e-3 + (1e-10 * n * n if prog == "slow" else 5e-7 * n), 1)
    _pipeline(tmp_path, spec, cost, stem)


def test_accumulate_pipeline_matches_snapshot(tmp_path: Path) -> None:
    """An accumulate sweep whose launches slow down linearly renders exactly as pinned."""
    spec = SweepSpec(command=("launch", "{i}"), name="snapshot accumulate", mode="accumulate",
                     runs=60, seed=3)
    cost = _noisy(lambda prog, i: 1e-3 + 2e-5 * i, 2)
    _pipeline(tmp_path, spec, cost, "accumulate-linear")
