"""`compare A B` and `run --vs` over several sizes, on fakes (no real process): each size's
class and exponent in A and B, B/A at the shared points, `--fail-on` per size (8 fail, 9
undecided, 0 pass), mismatched sizes refused in one sentence, readable at 80 columns."""

from __future__ import annotations

import dataclasses
import json

import pytest
from tests.conftest import measurement
from tests.test_multi_sweep import AXES, _spec

from quadscope.analyse.ab_gate import exit_code, parse_fail_on
from quadscope.analyse.multi import AxisVerdict
from quadscope.analyse.multi_compare import (
    BETTER,
    SAME,
    UNCLEAR,
    WORSE,
    _direction,
    check_axes,
    compare_multi,
    decide,
)
from quadscope.analyse.multi_sweep import analyse_multi
from quadscope.analyse.multiclass import AxisClass
from quadscope.cli import main
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.render.multi_compare import terminal, to_json
from quadscope.run.design import Axis, design
from quadscope.run.runner import run_sweep
from quadscope.store import Store


def _linear(argv):  # n·m
    return measurement(1e-3 + 1e-7 * int(argv[1]) * int(argv[2]))


def _quadratic(argv):  # n²·m
    return measurement(1e-3 + 1e-9 * int(argv[1]) ** 2 * int(argv[2]))


def _slower(argv):  # n·m, twice the cost
    return measurement(2e-3 + 2e-7 * int(argv[1]) * int(argv[2]))


def _stored(store: Store, clock: FakeClock, cost, **kw) -> int:
    return run_sweep(_spec(**kw), executor=FakeExecutor(cost, clock), clock=clock,
                     store=store).id


def _compare(store, a: int, b: int):
    sa, sb = store.get_sweep(str(a)), store.get_sweep(str(b))
    return compare_multi(analyse_multi(sa, store.runs(a)), analyse_multi(sb, store.runs(b)))


def test_a_size_that_became_quadratic_is_worse_and_the_other_unchanged(store, clock):
    comp = _compare(store, _stored(store, clock, _linear), _stored(store, clock, _quadratic))
    assert [(c.axis, c.direction) for c in comp.axes] == [("n", WORSE), ("m", SAME)]
    assert comp.direction == WORSE
    assert comp.summary.startswith("B changed the growth: n: n → n² (k 1.00 → 2.00), "
                                   "m unchanged (m, k 1.00 → 1.00); B/A ")
    assert len(comp.ratios) == 16
    corner = next(r for r in comp.ratios if r.sizes == (800, 80))
    want = (1e-3 + 1e-9 * 800 ** 2 * 80) / (1e-3 + 1e-7 * 800 * 80)
    assert corner.ratio == pytest.approx(want, rel=1e-6) and corner.lo <= corner.ratio <= corner.hi
    rules = parse_fail_on(["class"])
    outcomes = decide(comp, rules)
    assert [o.outcome for o in outcomes] == ["fail", "pass"] and exit_code(outcomes) == 8
    assert outcomes[0].sentence.startswith("n: B grows faster than A (A n, k 1.00")
    back = compare_multi(comp.b, comp.a)  # the fix, read the other way
    assert [c.direction for c in back.axes] == [BETTER, SAME]
    assert exit_code(decide(back, rules)) == 0


def test_only_a_constant_factor_passes_the_class_gate_and_fails_slower(store, clock):
    comp = _compare(store, _stored(store, clock, _linear), _stored(store, clock, _slower))
    assert comp.summary.startswith("B grows as A: n unchanged")
    assert exit_code(decide(comp, parse_fail_on(["class"]))) == 0
    slower = decide(comp, parse_fail_on(["slower=1.5"]))
    assert [o.outcome for o in slower] == ["fail"]
    assert "at n = 800, m = 80 is 2" in slower[0].sentence
    assert exit_code(decide(comp, parse_fail_on(["slower=2.5"]))) == 0


def _axis(name: str, at_least: str, at_most: str, k: float, lo: float, hi: float) -> AxisVerdict:
    settled = at_least if at_least == at_most else None
    return AxisVerdict(name, (10, 100, 1000), k, (lo, hi), AxisClass(name, settled, at_least,
                                                                     at_most))


def test_overlapping_brackets_are_undecided_and_the_rule_is_one_sided():
    """An A bracketed n … n log n and a B bracketed n log n … n²: neither surely grows
    faster (undecided, 9); a B surely above A's upper end fails even though A is open."""
    a = _axis("n", "n", "n log n", 1.1, 0.95, 1.25)
    assert _direction(a, _axis("n", "n log n", "n^2", 1.3, 1.1, 1.8)) == UNCLEAR
    assert _direction(a, _axis("n", "n^2", "n^2", 2.0, 1.9, 2.1)) == WORSE
    assert _direction(a, _axis("n", "1", "1", 0.0, -0.02, 0.02)) == BETTER


def test_mismatched_sizes_are_refused_in_one_sentence(tmp_path, store, clock, capsys):
    a = _stored(store, clock, _linear)
    other = (Axis("n", AXES[0].sizes), Axis("k", AXES[1].sizes))
    b = run_sweep(dataclasses.replace(
        _spec(command=("prog", "{n}", "{k}")), axes=tuple((x.name, x.sizes) for x in other),
        points=design(other)), executor=FakeExecutor(_linear, clock), clock=clock, store=store).id
    assert check_axes(("n", "m"), ("m", "n")) is None
    db = str(tmp_path / "results.db")
    code = main(["compare", "--db", db, str(a), str(b)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("quadscope:") == 1 and "Traceback" not in err
    assert "A is a sweep over n, m and B over n, k: compare sweeps over the same sizes" in err


def test_cli_compare_prints_at_80_columns_writes_json_and_gates(tmp_path, store, clock, capsys):
    a, b = _stored(store, clock, _linear), _stored(store, clock, _quadratic)
    db = str(tmp_path / "results.db")
    code = main(["compare", "--db", db, str(a), str(b), "--fail-on", "class",
                 "--json", str(tmp_path / "c.json")])
    out, err = capsys.readouterr()
    assert code == 8
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert "wall_s: B changed the growth: n: n → n²" in out
    assert "B/A of wall_s per shared point (n down, m across):" in out
    assert "gate fail: n: B grows faster than A" in err and "gate pass: m:" in err
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["format"] == "quadscope.multi-compare/1" and doc["change"] == "worse"
    assert [c["change"] for c in doc["axes"]] == ["worse", "same"]
    assert main(["compare", "--db", db, str(a), str(b), "--png", str(tmp_path / "png")]) == 2
    assert "writes --json, --html and --csv, not --png yet; `quadscope show A` and `show B` " \
        "write each side's --png" in capsys.readouterr().err
    assert main(["compare", "--db", db, str(a), str(b), "--csv", str(tmp_path / "c.csv")]) == 0
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert rows[0].startswith("sweep_id,seq,variant,size_n,size_m,")
    assert {r.split(",")[0] for r in rows[1:]} == {str(a), str(b)} and len(rows) == 1 + 2 * 49
    assert main(["compare", "--db", db, str(a), str(b), "--html", str(tmp_path / "c.html")]) == 0
    page = (tmp_path / "c.html").read_text()
    change = page.index("<p class=\"change change-worse\" id=\"change\">wall_s: B changed")
    assert change < page.index("id=\"verdict\">A: wall_s: linear in n") < page.index(
        "id=\"verdict-b\">B: wall_s: quadratic in n") < page.index("id=\"plots\"") < page.index(
        "How each size changed")
    assert page.count("<svg") == 3 and "Content-Security-Policy" in page
    assert main(["compare", "--db", db, str(a), str(a)]) == 0  # no gate: the report alone


def test_terminal_keeps_commands_visible(store, clock):
    """Text from a foreign store: control characters shown as escapes, nothing raw."""
    comp = _compare(store, _stored(store, clock, _linear,
                                   command=("prog\x1b[31m", "{n}", "{m}")),
                    _stored(store, clock, _quadratic))
    text = terminal(comp, 80)
    assert "\x1b" not in text and "prog\\x1b[31m" in text
    assert json.loads(to_json(comp))["a"]["sweep"]["command"][0] == "prog\x1b[31m"


def test_run_vs_over_several_sizes_compares_a_with_b(tmp_path, store, clock, capsys):
    """A sweep run with --vs holds both commands' runs at every point: show compares them,
    and `list` keeps the change."""
    import argparse

    from quadscope.commands.multi_compare import brief, finish_vs

    def both(argv):
        return _quadratic(argv) if argv[0] == "fast" else _linear(argv)

    sweep = run_sweep(_spec(vs_command=("fast", "{n}", "{m}")),
                      executor=FakeExecutor(both, clock), clock=clock, store=store)
    assert {r.variant for r in store.runs(sweep.id)} == {"A", "B"}
    db = str(tmp_path / "results.db")
    code = main(["show", "--db", db, str(sweep.id), "--fail-above", "m=n"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "B: sweep 1 (--vs): fast {n} {m}" in out and "n: n → n²" in out
    assert "gate m ≤ m: pass" in err
    # `run --vs --fail-on class` ends here after its sweep.
    code = finish_vs(argparse.Namespace(fail_on=["class"]), store, sweep)
    assert code == 8
    assert "gate fail: n: B grows faster than A" in capsys.readouterr().err
    said = brief(sweep, store.runs(sweep.id))
    assert said.direction == "worse" and said.text == "worse: n·m → n²·m"
