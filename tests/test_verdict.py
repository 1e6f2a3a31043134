"""The verdict as an ordered list of checks: doubts are typed records, folded one way, worded in text."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from quadscope.analyse import text
from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.verdict import CHECKS, Evidence, Hidden, Slopes, Tie, fold, run_checks
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


# Effective exponents over three decades as `evidence.exponents` finds them (rounded): the
# coherence rule reads these, never the classes' nominal exponents.
EXPONENTS = (("1", 0.0), ("log n", 0.1), ("sqrt n", 0.5), ("n", 1.0), ("n log n", 1.15),
             ("n^2", 2.0), ("n^3", 3.0), ("c^n", 4.0))


def test_a_bracket_never_holds_a_class_that_ks_interval_excludes() -> None:
    """Issue 25: CPython's l.insert(0, i) read "√n … n²" beside k = 1.96 [1.92, 1.99], and
    "√n … n³" beside k = 2.44 [1.67, 3.20] on a loaded machine, where leaving a size out
    left √n standing. The bracket is cut to the classes enclosing k's interval."""
    ev = _evidence(chosen="n^2", best="n^2", k=1.96, k_ci=(1.92, 1.99), leading=("n^2",),
                   loo_leading=("sqrt n", "n", "n^2"), k_supported=(), exponents=EXPONENTS,
                   shaky=("sqrt n",), loo_tie=Tie("n^2", "sqrt n", 2000.0, 32000.0, None, None))
    verdict = fold(ev, run_checks(ev))
    assert (verdict.cls, verdict.at_least, verdict.at_most) == (INCONCLUSIVE, "n log n", "n^2")
    wide = replace(ev, k=2.44, k_ci=(1.67, 3.2), leading=("n^2", "n^3"), other="n^3",
                   tie_by="rival", tie=Tie("n^2", "n^3", 2000.0, 32000.0, 40000, None))
    verdict = fold(wide, run_checks(wide))
    assert (verdict.at_least, verdict.at_most) == ("n log n", "n^3")


def test_a_bracket_the_doubts_built_outside_ks_interval_becomes_the_classes_around_it() -> None:
    """Leaving a size out left only classes below k's interval standing: the bracket is the
    interval's enclosing classes."""
    ev = _evidence(chosen="n^3", best="n^3", k=2.7, k_ci=(2.62, 2.80), leading=("n^3",),
                   loo_leading=("n", "n log n"), k_supported=(), exponents=EXPONENTS,
                   shaky=("n",), loo_tie=Tie("n^3", "n", 1000.0, 128000.0, None, None))
    verdict = fold(ev, run_checks(ev))
    assert (verdict.at_least, verdict.at_most) == ("n^2", "n^3")


def test_when_the_best_classes_lie_outside_ks_interval_no_bracket_is_given() -> None:
    """n and n log n tie on every size while k = 2.30 [2.20, 2.40], beyond both even with the
    bracket's slack: the two lenses disagree, so the verdict gives no bracket and says why.
    Where one of the best classes lies within, the noise leaves many standing and the cut
    keeps those: with k = 1.36 [1.25, 1.46] (calibration's ×4 step) "n or n log n" stays."""
    ev = _evidence(other="n log n", tie_by="rival", leading=("n", "n log n"), k=2.3,
                   k_ci=(2.2, 2.4), tie=Tie("n", "n log n", 1000.0, 512000.0, None, None),
                   exponents=EXPONENTS)
    verdict = fold(ev, run_checks(ev))
    assert (verdict.cls, verdict.at_least, verdict.at_most) == (INCONCLUSIVE, "", "")
    assert verdict.reason.startswith("the free exponent k = 2.30 (95% interval 2.20–2.40) "
                                     "excludes n and n log n, which fit best")
    near = fold(replace(ev, k=1.36, k_ci=(1.25, 1.46)), run_checks(ev))
    assert (near.at_least, near.at_most) == ("n", "n log n")
    noisy = replace(ev, k=0.24, k_ci=(0.0, 0.49), leading=("log n", "sqrt n", "n", "n^3"))
    verdict = fold(noisy, run_checks(noisy))
    assert (verdict.at_least, verdict.at_most) == ("log n", "sqrt n")


def test_a_second_term_and_the_local_slopes_reach_beyond_k_and_say_why() -> None:
    """A second growth term fitted beside the first is the class for larger n, which one k over
    these sizes cannot see: it may raise the bracket past k's interval (its sentence gives
    the term's share); so may the upper half's local slopes lower it."""
    term = Doubt("second_term", "n", "n^2", 4096, numbers={
        "class": "n^2", "first": "n", "share": 0.2, "n_max": 128000.0})
    ev = _evidence(k=1.07, k_ci=(1.05, 1.09), exponents=EXPONENTS, second_term=term)
    verdict = fold(ev, run_checks(ev))
    assert (verdict.at_least, verdict.at_most) == ("n", "n^2")


def test_a_flat_bracket_keeps_1_and_is_cut_at_ks_ceiling() -> None:
    """Nothing rises (a hidden growth up to n³): the bracket runs from "1", its top cut to the
    slowest class at or above k's interval; without exponents it reaches the hidden class."""
    hidden = (Hidden("log n", 0.3, None), Hidden("sqrt n", 0.2, None), Hidden("n^3", 0.16, None))
    ev = _evidence(chosen="1", best="1", leading=("1",), loo_leading=("1",), k=0.2,
                   k_ci=(0.1, 0.45), hidden=hidden, exponents=EXPONENTS)
    verdict = fold(ev, run_checks(ev))
    assert (verdict.cls, verdict.at_least, verdict.at_most) == (INCONCLUSIVE, "1", "sqrt n")
    assert fold(replace(ev, exponents=()), run_checks(ev)).at_most == "n^3"


def _coherent(fit: Fit) -> bool:
    """The reader's check: a settled power class lies in k's interval, and a bracket's ends lie
    no further out than the powers enclosing it (log factors read between the powers)."""
    if fit.exponent_ci is None or fit.regime_n is not None or any(
            d.check in ("slopes", "second_term") for d in fit.doubts):
        return True
    lo, hi = fit.exponent_ci
    power = {"sqrt n": 0.5, "n": 1.0, "n^2": 2.0, "n^3": 3.0}
    if fit.confident:
        return fit.cls not in power or lo - 0.005 <= power[fit.cls] <= hi + 0.005
    ends = [power.get(fit.at_least), power.get(fit.at_most)]
    below = max((p for p in power.values() if p <= lo + 0.005), default=0.0)
    above = min((p for p in power.values() if p >= hi - 0.005), default=4.0)
    return ((ends[0] is None or ends[0] >= below - 1e-9)
            and (ends[1] is None or ends[1] <= above + 1e-9))


def test_verdicts_are_coherent_with_their_exponent_interval_on_simulated_sweeps() -> None:
    """mawk read "cubic: n³ (k = 2.71 ± 0.09)": over power laws between the classes, with
    offsets and 1–20% noise, no settled class and no bracket contradicts k's interval."""
    sizes = [100 * 2**i for i in range(8)]
    for seed, (p, noise, a) in enumerate([(2.7, 0.01, 0.0), (2.7, 0.05, 0.3), (1.5, 0.02, 0.1),
                                          (0.3, 0.05, 0.5), (2.0, 0.2, 0.2), (1.0, 0.01, 0.8),
                                          (3.0, 0.05, 0.0), (0.5, 0.02, 0.3)]):
        rng = np.random.default_rng(seed)
        n = np.tile(np.asarray(sizes, dtype=float), 3)
        y = (a + (n / sizes[-1]) ** p) * np.exp(noise * rng.standard_normal(n.size))
        fit = fit_metric("wall_s", n.tolist(), y.tolist(), seed=seed)
        assert _coherent(fit), (p, noise, a, fit.cls, fit.at_least, fit.at_most, fit.exponent_ci)
        if p == 2.7 and noise == 0.01:  # a settled n³ would be the mawk verdict
            assert (fit.cls, fit.at_least, fit.at_most) == (INCONCLUSIVE, "n^2", "n^3")


def test_a_second_term_already_carrying_most_of_the_cost_is_not_called_small() -> None:
    """A term at 78% of the cost is not "small", and "would dominate from n = X" beyond the
    sizes would contradict it: the sentence says it already carries the cost."""
    from quadscope.analyse.text import doubt_text
    from quadscope.analyse.verdict import Doubt
    from quadscope.classes import REGISTRY

    d = Doubt("second_term", "sqrt n", "n^2", 140000,
              numbers={"class": "n^2", "first": "sqrt n", "share": 0.78, "n_max": 65536.0,
                       "gain": 5.0})
    text = doubt_text(d, REGISTRY)
    assert "already 78% of the cost at n = 65,536" in text or "already 78% of the cost at n = 65536" in text
    assert "small" not in text and "would dominate" not in text


def test_the_rank_tests_sentence_says_what_tau_means_and_keeps_the_numbers() -> None:
    """"Kendall τ = 0.41" alone told a user nothing: the sentence says it in words first."""
    d = Doubt("rising", decide_n=8000, numbers={
        "first": "1", "second": "n^2", "lo_n": 100.0, "hi_n": 1000.0, "tau": 0.412,
        "p": 0.0031, "k": 0.3, "k_lo": -0.1, "k_hi": 0.7})
    said = text.doubt_text(d, REGISTRY)
    assert said.startswith("values rise with n beyond chance: of any two runs, the one at the "
                           "larger n is more often the higher (Kendall τ = 0.41: 0 would be no "
                           "trend, 1 always higher; p = 0.003), though no growth class clearly "
                           "beats a constant: 1 and n² fit about equally well"), said


def test_a_rise_drops_the_constant_from_a_bracket_only_where_k_reads_growth() -> None:
    """A constant chosen while the rank test finds the runs rising (p < 0.001): the bracket
    leaves "1" out where k reads growth, and keeps it where k itself reads none (the
    constant workload under busy in adaptive mode, its runs rising with the machine's
    drift: "log n … n³" beside k = 0.01 [0.00, 4.00])."""
    tie = Tie("1", "log n", 1000.0, 3.4e16, None, None)
    ev = _evidence(chosen="1", best="1", leading=("1", "log n", "n^3"),
                   loo_leading=("1", "log n", "n^3"), k_supported=("1", "log n", "n^3"),
                   k=0.6, k_ci=(0.0, 4.0), trend=(0.17, 0.0002), rising_tie=tie)
    rising = fold(ev, run_checks(ev))
    assert rising.cls == INCONCLUSIVE and rising.at_least == "log n"
    flat = fold(replace(ev, k=0.01), run_checks(replace(ev, k=0.01)))
    assert flat.cls == INCONCLUSIVE and flat.at_least == "1"
