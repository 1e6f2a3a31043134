"""Gates with three outcomes: pass on the bracket's at_most, fail on its at_least, else undecided."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from quadscope.analyse.analysis import Analysis
from quadscope.analyse.gate import FAIL, PASS, UNDECIDED, judge, judge_gates, parse_gates, worst_exit
from quadscope.api import assert_scales
from quadscope.classes import INCONCLUSIVE
from quadscope.commands.gates import check_gates, junit_cases
from quadscope.errors import UsageError
from quadscope.model import Fit, Sweep


def fit(metric: str, cls: str, lo: str = "", hi: str = "", decide_n: int | None = None) -> Fit:
    return Fit(metric=metric, cls=cls, exponent=1.0, exponent_ci=(0.9, 1.1),
               coefficients={"a": 0.0, "b": 1.0}, r2=1.0, candidates=(), n_points=12,
               reason="n and n log n fit about equally well", decide_n=decide_n,
               best=cls if cls != INCONCLUSIVE else lo,
               at_least=lo or (cls if cls != INCONCLUSIVE else ""),
               at_most=hi or (cls if cls != INCONCLUSIVE else ""))


def test_a_bracket_within_the_limit_passes() -> None:
    """A sweep bracketed n … n log n passes a gate on n log n: at_most is within it."""
    out = judge(fit("wall_s", INCONCLUSIVE, "n", "n log n"), "n log n")
    assert (out.outcome, out.exit_code) == (PASS, 0)
    assert out.sentence == "gate passed: wall_s grows as n … n log n, within n log n"


def test_a_bracket_wholly_above_the_limit_fails() -> None:
    """n² … n³ against a limit of n: even the slowest supported class is faster, exit 8."""
    out = judge(fit("wall_s", INCONCLUSIVE, "n^2", "n^3"), "n")
    assert (out.outcome, out.exit_code) == (FAIL, 8)
    assert out.sentence == "gate failed: wall_s grows as n² … n³, faster than the allowed n"


def test_a_bracket_straddling_the_limit_is_undecided_and_names_the_deciding_n() -> None:
    """n … n log n against a limit of n: exit 9, naming the n the fit says would decide."""
    out = judge(fit("wall_s", INCONCLUSIVE, "n", "n log n", decide_n=1_700_000), "n")
    assert (out.outcome, out.exit_code, out.decide_n) == (UNDECIDED, 9, 1_700_000)
    assert out.sentence == ("gate undecided: wall_s grows as n … n log n, which may or may not "
                            "exceed n; measure up to n = 1700000 to decide")


def test_a_settled_class_is_its_own_bracket() -> None:
    """A confident n² passes a gate on n², fails one on n log n."""
    assert judge(fit("wall_s", "n^2"), "n^2").outcome == PASS
    assert judge(fit("wall_s", "n^2"), "n log n").outcome == FAIL


def test_no_bracket_is_undecided() -> None:
    """A fit that rules nothing out never passes silently."""
    out = judge(fit("wall_s", INCONCLUSIVE), "n^2")
    assert out.outcome == UNDECIDED
    assert out.sentence.startswith("gate undecided: wall_s's growth is not settled (n and n log n")


def _analysis(fits: dict[str, Fit]) -> Analysis:
    sweep = Sweep(id=1, name="t", mode="sizes", command=("p", "{n}"))
    return Analysis(sweep=sweep, runs=(), fits={"A": fits}, verdict="", failures=())


def test_a_gate_without_a_metric_judges_the_headline_time_only(
        capsys: pytest.CaptureFixture[str]) -> None:
    """--fail-above n ignores a superlinear peak memory: it gates wall time, the headline."""
    fits = {"wall_s": fit("wall_s", "n"), "max_rss_bytes": fit("max_rss_bytes", "n^2")}
    args = argparse.Namespace(fail_above=["n"], strict_gate=False)
    assert check_gates(args, _analysis(fits)) == 0
    args = argparse.Namespace(fail_above=["n", "max_rss_bytes=n"], strict_gate=False)
    assert check_gates(args, _analysis(fits)) == 8
    assert "gate failed: max_rss_bytes grows as n²" in capsys.readouterr().err


def test_failed_outranks_undecided_and_strict_turns_undecided_into_failed() -> None:
    """Exit 8 beats 9 beats 0; --strict-gate makes an undecided gate exit 8."""
    fits = {"wall_s": fit("wall_s", INCONCLUSIVE, "n", "n log n"),
            "sys_s": fit("sys_s", "n^2")}
    undecided = argparse.Namespace(fail_above=["n"], strict_gate=False)
    assert check_gates(undecided, _analysis(fits)) == 9
    both = argparse.Namespace(fail_above=["n", "sys_s=n"], strict_gate=False)
    assert check_gates(both, _analysis(fits)) == 8
    strict = argparse.Namespace(fail_above=["n"], strict_gate=True)
    assert check_gates(strict, _analysis(fits)) == 8


def test_gates_are_judged_from_values_without_argparse_or_printing(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The judge takes the option's values and returns typed outcomes; it prints nothing."""
    fits = {"wall_s": fit("wall_s", INCONCLUSIVE, "n", "n log n"), "sys_s": fit("sys_s", "n^2")}
    gates = parse_gates(["n", "sys_s=n", "instructions=n"])
    assert [(g.metric, g.limit) for g in gates] == [(None, "n"), ("sys_s", "n"),
                                                   ("instructions", "n")]
    outcomes = judge_gates(gates, _analysis(fits))
    assert [(o.outcome, o.exit_code) for o in outcomes] == [(UNDECIDED, 9), (FAIL, 8),
                                                           (UNDECIDED, 9)]
    assert outcomes[2].sentence == ("gate undecided: instructions was not measured, so nothing "
                                    "says it stays within n")
    strict = judge_gates(gates[:1], _analysis(fits), strict=True)
    assert (strict[0].outcome, strict[0].exit_code) == (UNDECIDED, 8)
    assert worst_exit(o.exit_code for o in outcomes) == 8
    assert worst_exit([]) == 0
    assert capsys.readouterr().err == ""


def test_junit_cases_carry_each_gates_sentence_and_strict_fails_an_undecided_one() -> None:
    """One case per --fail-above value, named as given, its message the gate's sentence;
    --strict-gate turns an undecided gate into a failure there too, as in the exit code."""
    fits = {"wall_s": fit("wall_s", INCONCLUSIVE, "n", "n log n")}
    args = argparse.Namespace(fail_above=["n", "n log n"], strict_gate=False)
    cases = junit_cases(args, _analysis(fits))
    assert [(c.name, c.outcome) for c in cases] == [("t: --fail-above n", "undecided"),
                                                   ("t: --fail-above n log n", "passed")]
    assert cases[0].message == judge(fits["wall_s"], "n").sentence
    strict = junit_cases(argparse.Namespace(fail_above=["n"], strict_gate=True), _analysis(fits))
    assert strict[0].outcome == "failed"


def test_fail_above_reads_every_spelling_quadscope_prints() -> None:
    """`--fail-above` takes the class as the report printed it: n², quadratic, O(n log n)…"""
    gates = parse_gates(["n²", "quadratic", "O(n log n)", "nlogn", "linear", "wall_s=√n",
                         "max_rss_bytes=O(1)"])
    assert [(g.metric, g.limit) for g in gates] == [
        (None, "n^2"), (None, "n^2"), (None, "n log n"), (None, "n log n"), (None, "n"),
        ("wall_s", "sqrt n"), ("max_rss_bytes", "1")]
    assert judge(fit("wall_s", "n^2"), "n²").outcome == PASS
    assert judge(fit("wall_s", "n^2"), "O(n log n)").outcome == FAIL


def test_fail_above_refuses_an_unknown_spelling_in_one_sentence() -> None:
    with pytest.raises(UsageError) as err:
        parse_gates(["nlog"])
    assert str(err.value).startswith("--fail-above 'nlog': 'nlog' is not a class")
    assert "n log n" in str(err.value) and "\n" not in str(err.value)


def test_assert_scales_refuses_an_unknown_class_before_the_sweep(tmp_path: Path) -> None:
    """A misspelt at_most is a ValueError before the target is called once."""
    calls: list[int] = []
    with pytest.raises(ValueError, match="'nlog' is not a class"):
        assert_scales(calls.append, at_most="nlog", sizes=[10, 20, 40], db=tmp_path / "r.db")
    assert calls == []
    assert not (tmp_path / "r.db").exists()


def test_the_pytest_fixture_refuses_an_unknown_class_before_the_sweep(tmp_path: Path) -> None:
    """`scaling.check(f, at_most=...)` and a marker's at_most go through the same parser."""
    from quadscope.pytest_plugin import Scaling

    calls: list[int] = []
    with pytest.raises(ValueError, match="'O n' is not a class"):
        Scaling(tmp_path, strict=False, defaults={"at_most": "O n"}).check(calls.append,
                                                                          sizes=[10, 20, 40])
    assert calls == []
