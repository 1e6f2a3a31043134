"""Advice after counting: a sweep that counted the work never tells its times to count it."""

from __future__ import annotations

import numpy as np
import pytest

from quadscope.analyse import decide, text
from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.gate import judge
from quadscope.analyse.verdict import counted_doubts
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, Measurement, Run
from quadscope.workloads.synthetic import Scenario, simulate, truth_for

SIZES = [1000 * 2**i for i in range(8)]
ADVICE = "count the work instead"


def _tie() -> tuple[int, list[int], list[float]]:
    """A time where n and n log n tie (a start-up cost of ⅘ of the smallest run)."""
    truth = truth_for("n", SIZES, 0.8)
    for seed in range(40):
        n, y = simulate(truth, Scenario(cv=0.05), SIZES, 3, np.random.default_rng(seed))
        fit = fit_metric("wall_s", n, y, seed=seed)
        if not fit.confident and any(d.check == "tie" for d in fit.doubts):
            return seed, n, y
    raise AssertionError("no tie in 40 seeds")


def test_counted_doubts_drop_the_meter_and_name_the_counted_metric() -> None:
    advised = Doubt("tie", "", "", None, "instructions", numbers={"first": "n"})
    sized = Doubt("tie", "", "", 64000, "", numbers={"first": "n"})
    assert counted_doubts((advised, sized), "") == (advised, sized)
    after, same = counted_doubts((advised, sized), "instructions")
    assert (after.meter, after.numbers["counted"]) == ("", "instructions")
    assert same == sized  # a doubt a size decides keeps its size and says nothing of counting


def test_every_sentence_that_advised_the_meter_points_to_the_work_when_counted() -> None:
    numbers = {"first": "n", "second": "n log n", "lo_n": 1000.0, "hi_n": 128000.0,
               "growing_share": None, "counted": "instructions"}
    said = text.tie(numbers, None, REGISTRY, "")
    assert ADVICE not in said and "--meter" not in said
    assert said.endswith(text.counted_instead("instructions"))
    hidden = Doubt("hidden", "1", "log n", None, "", numbers={
        "class": "log n", "share": 0.3, "hi_n": 128000.0, "counted": "instructions"})
    assert text.counted_instead("instructions") in text.doubt_text(hidden, REGISTRY)
    second = Doubt("second_term", "n", "n^2", None, "", numbers={
        "first": "n", "class": "n^2", "share": 0.05, "n_max": 64000.0,
        "counted": "instructions"})
    assert text.doubt_text(second, REGISTRY).endswith(text.counted_instead("instructions"))


def test_a_counted_sweeps_time_fit_advises_no_meter_and_names_the_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same tied time: uncounted it advises `--meter instructions`; in a sweep that counted
    the work its reason points to the work's verdict, and a gate on it names no meter."""
    seed, n, y = _tie()
    monkeypatch.setattr(decide, "COST_MULTIPLE", 1e-9)  # no affordable size: the meter advice
    alone = fit_metric("wall_s", n, y, seed=seed)
    assert ADVICE in alone.reason
    fit = fit_metric("wall_s", n, y, seed=seed, counted="instructions")
    assert fit.cls == INCONCLUSIVE and fit.decide_n is None
    assert ADVICE not in fit.reason and "--meter" not in fit.reason
    assert text.counted_instead("instructions") in fit.reason
    assert all(d.meter == "" for d in fit.doubts)
    assert "--meter" not in judge(fit, "n").sentence
    assert (fit.cls, fit.at_least, fit.at_most) == (alone.cls, alone.at_least, alone.at_most)


def _runs(n: list[int], y: list[float], counts: bool) -> list[Run]:
    return [Run(sweep_id=1, seq=i, variant="A", size_n=s, repeat=i, warmup=False, started_at=0.0,
                measurement=Measurement(wall_s=v, exit_code=0,
                                        values={"instructions": 1000 * s} if counts else {}))
            for i, (s, v) in enumerate(zip(n, y, strict=True))]


def test_fit_runs_passes_the_counted_work_to_the_time_fits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs whose work was counted (an exact meter's sweep): the time's reason names the work,
    not the meter; the same times without counts still advise counting."""
    seed, n, y = _tie()
    monkeypatch.setattr(decide, "COST_MULTIPLE", 1e-9)
    fits, _ = fit_runs(_runs(n, y, True), seed=seed, metrics=("wall_s", "instructions"),
                       exact=("instructions",))
    assert ADVICE not in fits["wall_s"].reason
    assert text.counted_instead("instructions") in fits["wall_s"].reason
    assert fits["instructions"].cls == "n"
    timed, _ = fit_runs(_runs(n, y, False), seed=seed, metrics=("wall_s",))
    assert ADVICE in timed["wall_s"].reason


def test_timed_launches_whose_work_was_counted_apart_advise_no_meter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Accumulate mode counts every 2^k-th launch in place and fits those counts apart, so
    the timed launches carry no counts of their own: told the work was counted
    (`work_counted`), their time's reason names the work, not `--meter instructions`
    (`make demo`'s first demo said "count the work instead" beside its counted work)."""
    seed, n, y = _tie()
    monkeypatch.setattr(decide, "COST_MULTIPLE", 1e-9)
    fits, _ = fit_runs(_runs(n, y, False), seed=seed, metrics=("wall_s",),
                       exact=("instructions",), work_counted="instructions")
    assert ADVICE not in fits["wall_s"].reason
    assert text.counted_instead("instructions") in fits["wall_s"].reason
