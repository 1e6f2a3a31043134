"""The verdict as an ordered list of checks: doubts are typed records, folded one way, worded in text."""

from __future__ import annotations

import json

import numpy as np

from quadscope.analyse import text
from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.verdict import CHECKS, Evidence, Slopes, Tie, fold, run_checks
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Doubt, Fit


def _runs(law: str, sizes: list[int], noise: float, seed: int, a: float = 0.0,
          repeats: int = 3) -> tuple[list[float], list[float]]:
    """a + f(n)/f(n_max) with multiplicative Gaussian noise, `repeats` runs per size in rounds."""
    rng = np.random.default_rng(seed)
    growth = REGISTRY[law]
    top = float(growth.f(np.array([float(sizes[-1])]))[0])
    n = np.tile(np.asarray(sizes, dtype=float), repeats)
    true = a + growth.f(n) / top
    return n.tolist(), (true * (1 + noise * rng.standard_normal(n.size))).tolist()


def _evidence(**kw: object) -> Evidence:
    base: dict[str, object] = dict(
        metric="wall_s", registry=REGISTRY, settle=True, chosen="n", best="n", lo_n=1000.0,
        hi_n=128000.0, k=1.0, k_ci=(0.9, 1.1), k_at_top=False, leading=("n",), loo_leading=("n",),
        k_supported=("n",))
    base.update(kw)
    return Evidence(**base)  # type: ignore[arg-type]


def test_a_settled_fit_has_no_doubts_and_its_bracket_is_itself() -> None:
    """Clean n² over two decades: no check doubts it, so the class, bracket and reason are plain."""
    fit = fit_metric("wall_s", *_runs("n^2", [1000 * 2**i for i in range(8)], 0.01, 1))
    assert (fit.cls, fit.at_least, fit.at_most, fit.reason, fit.doubts) == (
        "n^2", "n^2", "n^2", "", ())


def test_every_doubt_of_a_fit_is_worded_by_the_text_module() -> None:
    """A constant over less than a decade: a short_span doubt, and the reason is its sentence."""
    fit = fit_metric("wall_s", *_runs("1", [1000, 2000, 3000, 4000, 5000], 0.01, 2))
    assert fit.cls == INCONCLUSIVE
    checks = [d.check for d in fit.doubts]
    assert "short_span" in checks
    first = fit.doubts[0]
    assert fit.reason == text.doubt_text(first, REGISTRY)
    assert fit.decide_n == first.decide_n == 10000


def test_doubts_travel_in_the_fits_json_and_back() -> None:
    """Fit.to_dict writes the doubts as plain JSON; from_dict reads the same records back."""
    fit = fit_metric("wall_s", *_runs("1", [1000, 2000, 3000, 4000, 5000], 0.01, 2))
    assert fit.doubts
    again = Fit.from_dict(json.loads(json.dumps(fit.to_dict())))
    assert again == fit
    old = fit.to_dict()
    del old["doubts"]  # an export written before doubts existed reads as none
    assert Fit.from_dict(old).doubts == ()


def test_the_fold_unsettles_on_any_doubt_and_a_negligible_growth_replaces_the_reason() -> None:
    """A tie gives the reason; a negligible growth replaces it and flattens the bracket to "1" … it."""
    tie = Tie("n", "n log n", 1000.0, 128000.0, 512000, None)
    ev = _evidence(other="n log n", tie_by="rival", tie=tie, leading=("n", "n log n"))
    tied = fold(ev, run_checks(ev))
    assert tied.cls == INCONCLUSIVE and (tied.at_least, tied.at_most) == ("n", "n log n")
    assert tied.reason == text.tie(tie.numbers(), 512000, REGISTRY) and tied.decide_n == 512000
    flat = _evidence(other="n log n", tie_by="rival", tie=tie, grower="n", negligible=(0.05, None))
    verdict = fold(flat, run_checks(flat))
    assert [d.check for d in verdict.doubts] == ["tie", "negligible"]
    assert verdict.reason.startswith("the runs grow as n by at most 5% of the cost")
    assert (verdict.at_least, verdict.at_most, verdict.decide_n) == ("1", "n", None)


def test_the_slopes_sentence_names_the_deciding_size_after_the_earlier_checks() -> None:
    """Slopes after a tie: the sentences join with "; ", the bracket reaches down to the slopes'
    slowest class, and the size named is the larger of the two."""
    tie = Tie("n^2", "n^3", 1000.0, 128000.0, 5_000_000, None)
    swing = Slopes("n^2", "n", 1.1, 1.9, (64000.0, 128000.0), (1000.0, 2000.0), 1_300_000)
    ev = _evidence(chosen="n^2", best="n^2", other="n^3", tie_by="rival", tie=tie,
                   leading=("n^2", "n^3"), loo_leading=(), k_supported=(), slopes=swing)
    verdict = fold(ev, run_checks(ev))
    assert verdict.decide_n == 5_000_000
    assert verdict.reason.count("; ") >= 1 and "grow n to 5000000 to see where" in verdict.reason
    assert (verdict.at_least, verdict.at_most) == ("n", "n^3")


def test_a_check_added_to_the_registry_unsettles_the_verdict_through_the_fold() -> None:
    """The checks are a tuple: a caller's extra check's doubt makes the class a bracket."""
    def extra_term(ev: Evidence) -> tuple[Doubt, ...]:
        return (Doubt("second_term", "n", "n^2", 4096, numbers={
            "class": "n^2", "first": "n", "share": 0.1, "n_max": ev.hi_n}),)

    ev = _evidence()
    assert fold(ev, run_checks(ev)).cls == "n"
    verdict = fold(ev, run_checks(ev, (*CHECKS, extra_term)))
    assert (verdict.cls, verdict.at_least, verdict.at_most) == (INCONCLUSIVE, "n", "n^2")
    assert verdict.reason.startswith("a quadratic term is present but small at these n (10% ")


def test_every_check_of_the_registry_has_a_sentence() -> None:
    """No check can raise a doubt the text module cannot word."""
    names = {check.__name__ for check in CHECKS}
    for name in names:
        assert text._TEXTS[name]
