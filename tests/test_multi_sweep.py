"""Several sizes end to end on fakes: --sizes read, the spec checked, the plan run, the runs
stored with their axes, the report, gates and outputs (no real process)."""

from __future__ import annotations

import argparse
import json

import pytest
from tests.conftest import measurement

from quadscope.analyse.multi_sweep import analyse_multi, judge_axis_gates, parse_axis_gates
from quadscope.commands.multi import read_sizes
from quadscope.errors import SizesError, UsageError
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.render.multi import terminal, to_json
from quadscope.render.multi_html import html
from quadscope.run.axes import fill, parse_axes
from quadscope.run.design import Axis, design
from quadscope.run.plan import plan_points
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec, check_spec, size_padding
from quadscope.store import Store

AXES = (Axis("n", (100, 200, 400, 800)), Axis("m", (10, 20, 40, 80)))


def _spec(command=("prog", "{n}", "{m}"), **kw) -> SweepSpec:
    return SweepSpec(command=command, sizes=AXES[0].sizes, repeat=3, warmup=1,
                     axes=tuple((a.name, a.sizes) for a in AXES), points=design(AXES), **kw)


def _args(*sizes: str) -> argparse.Namespace:
    return argparse.Namespace(sizes=list(sizes) if sizes else None)


def test_read_sizes_keeps_one_size_as_it_was():
    """`--sizes 1e3..1e5` (and `n=1e3..1e5`) are today's one-size sweep; two axes are several."""
    for one in (["1e3..1e5"], ["n=1e3..1e5"]):
        args = _args(*one)
        read_sizes(args)
        assert args.sizes == "1e3..1e5" and args.axes == ()
    args = _args("n=1e3..1e5", "m=10..1000")
    read_sizes(args)
    assert args.sizes is None and [a.name for a in args.axes] == ["n", "m"]
    assert args.axes[1].sizes[0] == 10 and args.axes[1].sizes[-1] == 1000


@pytest.mark.parametrize(("sizes", "words"), [
    (("n=1..8", "n=1..16"), "names the axis 'n' twice"),
    (("rows=1..8",), "a sweep over one size uses {n}"),
    (("9x=1..8", "m=1..8"), "an axis name is a word"),
    (("i=1..8", "m=1..8"), "launch index"),
])
def test_bad_sizes_are_one_sentence(sizes, words):
    with pytest.raises((SizesError, UsageError), match=words):
        read_sizes(_args(*sizes))


def test_an_unused_axis_or_a_placeholder_without_sizes_is_refused():
    with pytest.raises(UsageError, match=r"--sizes gives m but `prog \{n\}` has no \{m\}"):
        check_spec(_spec(command=("prog", "{n}")))
    with pytest.raises(UsageError, match=r"holds \{k\} but no --sizes gives it"):
        check_spec(_spec(command=("prog", "{n}", "{m}", "{k}")))
    with pytest.raises(UsageError, match="adaptive mode"):
        check_spec(_spec(mode="adaptive"))
    check_spec(_spec())


def test_fill_and_padding_use_every_axis():
    assert fill(["p", "--rows={n}", "{m}x{m}", "{other}"], {"n": 5, "m": 70}) == \
        ["p", "--rows=5", "70x70", "{other}"]
    (_, pad), = size_padding(("p", "{n}", "{m}"), 5, {"n": 5, "m": 70})
    (_, pad2), = size_padding(("p", "{n}", "{m}"), 500, {"n": 500, "m": 7000})
    assert len(pad) + 1 + 2 == len(pad2) + 3 + 4


def test_plan_points_rounds_every_point_once_per_repeat():
    plan = plan_points(("n", "m"), [(1, 10), (2, 20), (1, 20)], repeat=2, warmup=1, seed=3)
    assert plan[0].warmup and plan[0].size_n == 1 and plan[0].axes == (("m", 10),)
    measured = [(p.size_n, p.axes, p.repeat) for p in plan if not p.warmup]
    assert sorted(measured) == sorted((n, (("m", m),), r) for r in (0, 1)
                                      for n, m in [(1, 10), (2, 20), (1, 20)])


def _cost(argv):
    n, m = int(argv[1]), int(argv[2])
    return measurement(1e-3 + 1e-9 * n * n * m)


def test_sweep_stores_runs_with_their_axes_and_reads_the_truth(store: Store, clock: FakeClock):
    """n²·m on the fake executor: every point run, stored with m, and read back as such."""
    ex = FakeExecutor(_cost, clock)
    sweep = run_sweep(_spec(), executor=ex, clock=clock, store=store)
    runs = store.runs(sweep.id)
    assert len(runs) == 16 * 3 + 1
    assert {(r.size_n, dict(r.axes)["m"]) for r in runs if not r.warmup} == set(sweep.points)
    assert all(call[1:] == (str(r.size_n), str(dict(r.axes)["m"]))
               for call, r in zip(ex.calls, runs, strict=True))
    report = analyse_multi(store.get_sweep(str(sweep.id)), runs)
    assert report.verdict is not None
    assert report.verdict.sentence.startswith(
        "quadratic in n, linear in m; the cost is not separable: n²·m fits better than n²")
    text = terminal(report, 80)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "quadratic in n, linear in m" in text
    doc = json.loads(to_json(report))
    assert [a["class"] for a in doc["axes"]] == ["n^2", "n"] and doc["separable"] == "no"
    page = html(report).decode()
    assert page.count("<svg") == 3 and "not separable" in page


def test_gates_per_axis(store: Store, clock: FakeClock):
    sweep = run_sweep(_spec(), executor=FakeExecutor(_cost, clock), clock=clock, store=store)
    report = analyse_multi(sweep, store.runs(sweep.id))
    gates = parse_axis_gates(["n=n log n", "m=n", "n^2"], ("n", "m"))
    got = [(o.axis, o.outcome) for o in judge_axis_gates(report, gates)]
    assert got == [("n", "fail"), ("m", "pass"), ("n", "pass"), ("m", "pass")]
    with pytest.raises(UsageError, match="this sweep's sizes are n, m"):
        parse_axis_gates(["k=n"], ("n", "m"))


def test_too_few_points_with_runs_is_refused_in_a_sentence(store: Store, clock: FakeClock):
    def failing(argv):
        return measurement(1.0, exit_code=1 if int(argv[1]) > 100 else 0)
    sweep = run_sweep(_spec(), executor=FakeExecutor(failing, clock), clock=clock, store=store)
    report = analyse_multi(sweep, store.runs(sweep.id))
    assert report.verdict is None and "only 4 of 16 points" in report.refusal
    assert "nothing fitted" in terminal(report)


def test_parse_axes_names_and_order():
    axes = parse_axes(["rows=1..8", "cols=10,20,30,40"])
    assert [(a.name, a.sizes) for a in axes] == [("rows", (1, 2, 4, 8)), ("cols", (10, 20, 30, 40))]


def test_list_brief_names_the_model_that_fits(store: Store, clock: FakeClock):
    from quadscope.analyse.multi_sweep import brief_text

    sweep = run_sweep(_spec(), executor=FakeExecutor(_cost, clock), clock=clock, store=store)
    assert brief_text(analyse_multi(sweep, store.runs(sweep.id))) == "n²·m"


def test_interrupted_sweep_over_several_sizes_resumes_the_missing_points(store: Store,
                                                                         clock: FakeClock):
    """Ctrl-C after 7 runs keeps them; --resume runs exactly the missing (point, repeat)s."""
    from tests.test_sweep import _Interrupting

    from quadscope.run.runner import resume_sweep

    with pytest.raises(KeyboardInterrupt):
        run_sweep(_spec(), executor=_Interrupting(FakeExecutor(_cost, clock), limit=7),
                  clock=clock, store=store)
    sweep = store.list_sweeps()[0][0]
    assert len(store.runs(sweep.id)) == 7
    again = FakeExecutor(_cost, clock)
    resume_sweep(sweep, executor=again, clock=clock, store=store)
    runs = store.runs(sweep.id)
    assert len(again.calls) == 16 * 3 + 1 - 7
    assert sorted((r.size_n, r.axes, r.repeat) for r in runs if not r.warmup) == sorted(
        (n, (("m", m),), k) for n, m in design(AXES) for k in range(3))


def test_setup_runs_once_per_point_with_every_axis_filled(store: Store, clock: FakeClock):
    ex = FakeExecutor(_cost, clock)
    run_sweep(_spec(setup="make {n} {m}"), executor=ex, clock=clock, store=store)
    setups = [argv[-1] for what, argv in ex.untimed_calls if what == "--setup"]
    assert sorted(setups) == sorted(f"make {n} {m}" for n, m in design(AXES))


@pytest.mark.parametrize(("argv", "words"), [
    (["--sizes", "1..8", "--", "/bin/true", "{n}", "{m}"], "holds {m} but no --sizes gives it"),
    (["--sizes", "n=1..8", "--sizes", "m=1..8", "--", "/bin/true", "{n}"], "has no {m}"),
    (["--sizes", "n=1..8", "--sizes", "n=1..8", "--", "/bin/true", "{n}"], "twice"),
    (["--sizes", "n=1..8", "--sizes", "m=1..8", "--fail-above", "k=n", "--", "/bin/true", "{n}",
      "{m}"], "this sweep's sizes are n, m"),
    (["--sizes", "n=1..8", "--sizes", "m=1..8", "--speedscope", "x.json", "--", "/bin/true", "{n}",
      "{m}"], "does not take --speedscope yet"),
])
def test_cli_refuses_bad_several_sizes_in_one_sentence(tmp_path, capsys, argv, words):
    from quadscope.cli import main

    code = main(["run", "--db", str(tmp_path / "x.db"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("quadscope:") == 1, err
