"""The start-up measured apart (issue 25): runs at n = 1 beside a fixed grid, so the
offset a is measured rather than traded off against k.

Each rule pinned with fakes and pure fits: the start-up size is planned (every round,
its repeats as the others', warm-ups left on the grid), stored and shown; it is used by
the fit where it agrees with the other sizes, and ignored where it is another regime;
failed start-up runs are dropped with one note, never failing the sweep; `--startup-n
off` (and the cases with no start-up to measure) plan none; counting never counts it.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence

import pytest

from quadscope.analyse.analysis import analyse
from quadscope.analyse.fitting import fit_metric
from quadscope.classes import REGISTRY
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.run.plan import plan_runs
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec, startup_size
from quadscope.store import Store

GRID = (2000, 4000, 8000, 16000, 32000)


def _runs(cost: Callable[[int], float], sizes: Sequence[int], *, repeat: int = 3,
          noise: float = 0.04, seed: int = 1) -> tuple[list[float], list[float]]:
    """Interleaved rounds of `sizes`, each run cost(n) times log-normal noise."""
    rng = random.Random(seed)
    xs: list[float] = []
    ys: list[float] = []
    for _ in range(repeat):
        order = list(sizes)
        rng.shuffle(order)
        for n in order:
            xs.append(float(n))
            ys.append(cost(n) * rng.lognormvariate(0.0, noise))
    return xs, ys


def _width(ci: tuple[float, float] | None) -> float:
    assert ci is not None
    return ci[1] - ci[0]


def _without(xs: list[float], ys: list[float], n0: float) -> tuple[list[float], list[float]]:
    keep = [i for i, x in enumerate(xs) if x != n0]
    return [xs[i] for i in keep], [ys[i] for i in keep]


# --- which sweeps measure the start-up apart ----------------------------------------


def test_a_fixed_grid_of_a_program_gets_the_start_up_size() -> None:
    assert startup_size(SweepSpec(command=("prog", "{n}"), sizes=GRID)) == 1
    assert startup_size(SweepSpec(command=("prog", "{n}"), sizes=GRID, startup_n=10)) == 10


@pytest.mark.parametrize("spec", [
    SweepSpec(command=("prog", "{n}"), sizes=GRID, startup_n=None),  # --startup-n off
    SweepSpec(command=("prog", "{n}"), sizes=(1, 10, 100)),  # the grid already starts there
    SweepSpec(command=("prog", "{n}"), mode="adaptive"),  # starts at --start itself
    SweepSpec(command=("prog", "{i}"), mode="accumulate", runs=10),
    SweepSpec(command=("python:mod:f", "{n}"), sizes=GRID),  # in-process: no start-up
    SweepSpec(command=("prog", "{n}"), sizes=GRID, meter="instructions"),  # exact
    SweepSpec(command=("prog", "{n}", "{m}"), sizes=GRID, axes=(("n", GRID), ("m", (1, 2)))),
])
def test_no_start_up_size_where_there_is_none_to_measure(spec: SweepSpec) -> None:
    assert startup_size(spec) is None


def test_the_option_reads_a_size_or_off() -> None:
    from quadscope.commands.run import read_startup
    from quadscope.errors import UsageError

    assert read_startup(argparse.Namespace(startup_n="1")) == 1
    assert read_startup(argparse.Namespace(startup_n="1e2")) == 100
    assert read_startup(argparse.Namespace(startup_n="off")) is None
    with pytest.raises(UsageError):
        read_startup(argparse.Namespace(startup_n="soon"))


# --- planned like any size ------------------------------------------------------------


def test_the_start_up_size_is_in_every_round_and_the_warm_ups_stay_on_the_grid() -> None:
    plan = plan_runs(GRID, repeat=3, warmup=2, seed=5, startup_n=1)
    warm = [p for p in plan if p.warmup]
    assert [p.size_n for p in warm] == [2000, 4000]
    timed = [p for p in plan if not p.warmup]
    assert len(timed) == 3 * (len(GRID) + 1)
    for r in range(3):
        assert sorted(p.size_n for p in timed if p.repeat == r) == [1, *GRID]
    # Without it the plan is the one it always was.
    assert plan_runs(GRID, repeat=3, warmup=2, seed=5, startup_n=None) == \
        plan_runs(GRID, repeat=3, warmup=2, seed=5)


def _measurement(wall: float, exit_code: int = 0) -> Measurement:
    return Measurement(wall_s=wall, user_s=0.9 * wall, sys_s=0.1 * wall, exit_code=exit_code)


def _executor(clock: FakeClock, cost: Callable[[int], float], seed: int = 3,
              fail_at: int | None = None) -> FakeExecutor:
    rng = random.Random(seed)

    def run(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        return _measurement(cost(n) * rng.lognormvariate(0.0, 0.03),
                            exit_code=2 if n == fail_at else 0)
    return FakeExecutor(run, clock)


def _startup_cost(n: int) -> float:
    """A Python-like program: 60 ms of start-up, then 2e-10·n² of work."""
    return 0.06 + 2e-10 * n * n


def test_a_sweep_runs_stores_and_shows_the_start_up(store: Store) -> None:
    clock = FakeClock(1000.0)
    executor = _executor(clock, _startup_cost)
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=GRID, repeat=3, warmup=1),
                      executor=executor, clock=clock, store=store)
    assert sweep.startup_n == 1 and sweep.sizes == GRID
    runs = store.runs(sweep.id)
    assert sum(1 for r in runs if r.size_n == 1 and not r.warmup) == 3
    assert [r.size_n for r in runs if r.warmup] == [2000]
    analysis = analyse(sweep, runs)
    assert analysis.fits["A"]["cpu_s"].startup == "used"
    assert not analysis.failures
    # Stored and exported with the sweep (and left out of the export when not set).
    assert store.get_sweep(sweep.id).startup_n == 1
    from quadscope.render.terminal import _sweep_line

    assert "n 1 (start-up), 2k..32k (5 sizes)" in _sweep_line(analysis, 200).plain
    from quadscope.render.plotdata import _facts

    assert ("sizes", "5: 2000, 4000, 8000, 16000, 32000 (and 1: the start-up)") in \
        _facts(analysis)


def test_off_plans_no_start_up_runs(store: Store) -> None:
    clock = FakeClock(1000.0)
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=GRID, repeat=3, warmup=0,
                                startup_n=None),
                      executor=_executor(clock, _startup_cost), clock=clock, store=store)
    assert sweep.startup_n is None
    assert "startup_n" not in sweep.to_dict()
    assert min(r.size_n for r in store.runs(sweep.id)) == 2000


def test_a_program_failing_at_the_start_up_size_is_fitted_without_it(store: Store) -> None:
    clock = FakeClock(1000.0)
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=GRID, repeat=3, warmup=0),
                      executor=_executor(clock, _startup_cost, fail_at=1), clock=clock,
                      store=store)
    runs = store.runs(sweep.id)
    assert sum(1 for r in runs if r.size_n == 1 and not r.measurement.ok) == 3
    analysis = analyse(sweep, runs)
    assert not analysis.failures  # not the program's failure at a size it was asked about
    said = [n for n in analysis.notes if "start-up runs at n = 1 failed" in n]
    assert len(said) == 1 and "exit codes [2]" in said[0]
    fit = analysis.fits["A"]["cpu_s"]
    assert fit.startup == ""
    good = [r for r in runs if r.size_n != 1]
    alone = fit_metric("cpu_s", [r.size_n for r in good], [r.value("cpu_s") for r in good])
    assert (fit.cls, fit.at_least, fit.at_most) == (alone.cls, alone.at_least, alone.at_most)
    assert fit.exponent == pytest.approx(alone.exponent, rel=1e-9)


def test_too_few_sizes_names_the_start_up_apart(store: Store) -> None:
    """Runs that succeed only at n = 1 and 2000 are one size beside the start-up, not two
    sizes "[1, 2000]" of the three a class needs (it once read "cover only 3 size(s) [1,
    100, 200]: a growth class needs at least 3"); the failures are listed by `show -v`."""
    from quadscope.analyse.analysis import refuse_if_nothing
    from quadscope.errors import FitRefusedError

    clock = FakeClock(1000.0)
    rng = random.Random(3)

    def run(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        return _measurement(_startup_cost(n) * rng.lognormvariate(0.0, 0.03),
                            exit_code=134 if n > 2000 else 0)
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=GRID, repeat=1, warmup=0),
                      executor=FakeExecutor(run, clock), clock=clock, store=store)
    with pytest.raises(FitRefusedError) as caught:
        refuse_if_nothing(analyse(sweep, store.runs(sweep.id)))
    assert str(caught.value) == (
        "4 runs failed (exit codes [134]) and the 2 that succeeded cover only 1 size(s) "
        "[2000] beside the start-up runs at n = 1: a growth class needs at least 3; "
        "`quadscope show -v` lists the failures")


# --- used where it agrees, ignored where it does not ---------------------------------


def test_the_start_up_narrows_k_where_it_dominates_the_smallest_size() -> None:
    """60 ms of start-up against 0.8 ms of work at the smallest size: left to the fit,
    a and k trade off; measured at n = 1, k's interval narrows and the class is n²."""
    xs, ys = _runs(_startup_cost, (1, *GRID), noise=0.03, seed=7)
    used = fit_metric("cpu_s", xs, ys, startup_n=1)
    ignored = fit_metric("cpu_s", *_without(xs, ys, 1.0))
    assert used.startup == "used"
    assert _width(used.exponent_ci) < 0.8 * _width(ignored.exponent_ci)
    lo, hi = used.exponent_ci or (0.0, 0.0)
    assert lo <= 2.0 <= hi


def test_a_start_up_that_is_another_regime_is_ignored() -> None:
    """At n = 1 the program takes a shortcut: 5 ms, where the grid's offset is 60 ms.
    Anchored there the fit would read the jump as growth; the start-up is left out and
    the verdict is the grid's own."""
    def cost(n: int) -> float:
        return 0.005 if n == 1 else _startup_cost(n)

    xs, ys = _runs(cost, (1, *GRID), noise=0.03, seed=7)
    used = fit_metric("cpu_s", xs, ys, startup_n=1)
    alone = fit_metric("cpu_s", *_without(xs, ys, 1.0))
    assert used.startup == "ignored"
    assert (used.cls, used.at_least, used.at_most) == (alone.cls, alone.at_least, alone.at_most)
    assert used.exponent == pytest.approx(alone.exponent, rel=1e-9)


def test_a_start_up_above_the_grid_s_offset_is_ignored() -> None:
    """At n = 1 the program does something slow the grid never does (a first-run cache
    fill): 0.3 s against an offset of 60 ms, which no a + b·n^k through the grid meets."""
    def cost(n: int) -> float:
        return 0.3 if n == 1 else _startup_cost(n)

    xs, ys = _runs(cost, (1, *GRID), noise=0.03, seed=11)
    assert fit_metric("cpu_s", xs, ys, startup_n=1).startup == "ignored"


def test_the_fit_without_start_up_runs_is_unchanged() -> None:
    xs, ys = _runs(_startup_cost, GRID, noise=0.03, seed=7)
    plain = fit_metric("cpu_s", xs, ys)
    asked = fit_metric("cpu_s", xs, ys, startup_n=1)  # none at n = 1: nothing to use
    assert asked.startup == "" and asked.exponent == plain.exponent


def test_an_ignored_start_up_is_said_once_for_the_times(store: Store) -> None:
    clock = FakeClock(1000.0)

    def cost(n: int) -> float:
        return 0.005 if n == 1 else _startup_cost(n)

    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=GRID, repeat=3, warmup=0),
                      executor=_executor(clock, cost), clock=clock, store=store)
    analysis = analyse(sweep, store.runs(sweep.id))
    said = [n for n in analysis.notes if "start-up runs at n = 1 were left out" in n]
    assert len(said) == 1 and "cpu_s" in said[0]
    assert REGISTRY.index(analysis.fits["A"]["cpu_s"].at_most or "n^2") >= REGISTRY.index("n^2")


# --- counting never counts the start-up -------------------------------------------------


def test_counting_leaves_the_start_up_size_out(store: Store) -> None:
    from quadscope.meters import Cost, Measuring
    from quadscope.run.counting import Counting

    clock = FakeClock(1000.0)
    rng = random.Random(4)

    def timed(argv: Sequence[str]) -> Measurement:  # time scattered ±60%: left open
        n = int(argv[-1])
        return _measurement((1e-9 * n * n + 0.01) * (1 + 0.6 * (2 * rng.random() - 1)))

    def counted(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        return Measurement({**_measurement(0.05).values, "instructions": 3 * n * n},
                           exit_code=0)

    counter = FakeExecutor(counted, clock)
    counting = Counting(lambda: Measuring(counter, "valgrind", "counted under a fake"),
                        "instructions", "instructions", Cost(slowdown=30.0, startup_s=0.3))
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=GRID, repeat=3, warmup=0),
                      executor=FakeExecutor(timed, clock), clock=clock, store=store,
                      counting=counting)
    assert counter.calls, "the open time verdict was counted"
    assert all(int(argv[-1]) != 1 for argv in counter.calls)
    assert sweep.startup_n == 1


def test_a_start_up_that_would_widen_the_verdict_is_ignored() -> None:
    """The verdict with the start-up must lie inside the verdict without it (one noisy
    start-up run widens k's interval, `fitting._inside`)."""
    from quadscope.analyse.fitting import _inside
    from quadscope.classes import INCONCLUSIVE
    from quadscope.model import Fit

    def fit(cls: str, lo: str = "", hi: str = "") -> Fit:
        return Fit("cpu_s", cls, 2.0, (1.5, 2.5), {}, None, (), 9, at_least=lo, at_most=hi)

    free = fit(INCONCLUSIVE, "n log n", "n^3")
    assert _inside(fit("n^2", "n^2", "n^2"), free, REGISTRY)
    assert _inside(fit(INCONCLUSIVE, "n^2", "n^3"), free, REGISTRY)
    assert not _inside(fit(INCONCLUSIVE, "n", "n^3"), free, REGISTRY)
    assert not _inside(fit(INCONCLUSIVE), free, REGISTRY)  # a bare "?" allows every class
    assert not _inside(fit("n log n", "n log n", "n log n"), fit("n^2", "n^2", "n^2"), REGISTRY)


def test_a_bad_start_up_size_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    from quadscope.cli import main

    assert main(["run", "--sizes", "10,20,40,80", "--startup-n", "soon", "--", "true",
                 "{n}"]) == 2
    err = capsys.readouterr().err
    assert "--startup-n" in err and "Traceback" not in err


def test_the_option_is_in_run_s_help_at_80_columns(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from quadscope.cli import main

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--startup-n N|off" in out
    assert max(len(line) for line in out.splitlines()) <= 80
