"""Exact counts fitted as sums of growth terms (`analyse.exactfit`): the class is the fastest
term really there, a small one is reported early, and no term is invented on a single law."""

from __future__ import annotations

import numpy as np
import pytest

from quadscope.analyse.analysis import analyse, fit_runs
from quadscope.analyse.exactfit import MIN_SHARE, counts, fit_exact
from quadscope.analyse.fitting import fit_metric
from quadscope.analyse.headline import work_note
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Measurement, Run, Sweep
from quadscope.render.terminal import TerminalRenderer

SIZES = [1000 * 2**i for i in range(7)]  # 1k … 64k


def counted(law: str, *, extra: str = "", share: float = 0.0, start_up: float = 0.3,
            sizes: list[int] = SIZES, jitter: float = 1e-4, seed: int = 0,
            top: float = 1e9) -> tuple[list[float], list[float]]:
    """Counts of `law` (and `extra` worth `share` of the work at the top), a start-up term
    that is `start_up` of the smallest count, jittered by ± `jitter`, each size twice."""
    rng = np.random.default_rng(seed)
    n = np.asarray(sizes, dtype=float)
    f = REGISTRY[law].f(n) / REGISTRY[law].f(n[-1:])[0]
    a = start_up * f[0] / (1 - start_up)
    y = a + f
    if extra:
        h = REGISTRY[extra].f(n) / REGISTRY[extra].f(n[-1:])[0]
        y = y + share * y[-1] / (1 - share) * h
    y = np.round(y / y[-1] * top * (1 + rng.uniform(-jitter, jitter, n.size)))
    return np.repeat(n, 2).tolist(), np.repeat(y, 2).tolist()


def checks(fit_doubts: tuple[object, ...]) -> list[str]:
    return [d.check for d in fit_doubts]  # type: ignore[attr-defined]


@pytest.mark.parametrize("law", ["1", "log n", "sqrt n", "n", "n log n", "n^2", "n^3"])
@pytest.mark.parametrize("start_up", [0.0, 0.8])
def test_a_single_law_settles_as_itself_with_no_term_invented(law: str, start_up: float) -> None:
    """Each class alone, with start-up and jitter: settled, no second term, no note."""
    fit = fit_exact("instructions", *counted(law, start_up=start_up, seed=3), n_boot=30)
    assert fit is not None
    assert (fit.cls, fit.at_least, fit.at_most) == (law, law, law)
    assert fit.doubts == () and fit.reason == ""


def test_a_two_percent_quadratic_under_a_linear_term_is_the_class_and_is_said() -> None:
    """n + n² with n² worth 2% of the work at 64k: the class is n² (asymptotic), k is the
    local exponent (≈ 1), and the note gives the share and where n² takes over."""
    fit = fit_exact("instructions", *counted("n", extra="n^2", share=0.02), n_boot=30)
    assert fit is not None and fit.cls == "n^2"
    assert fit.exponent is not None and 0.95 < fit.exponent < 1.1
    note = next(d for d in fit.doubts if d.check == "work_terms")
    assert note.numbers["settled"] == 1
    assert note.numbers["share"] == pytest.approx(0.02, rel=0.05)
    assert note.at_least == "n" and note.at_most == "n^2"
    # Where n² is half of the work: 0.02·(n/64k)² = 0.98·(n/64k) ⇒ n ≈ 49 × 64k ≈ 3.1M.
    assert note.decide_n is not None and 2.8e6 < note.decide_n < 3.6e6
    assert fit.reason.startswith("the n² term is 2% of the work at n = 64000 and dominates "
                                 "beyond n ≈ ")
    assert fit.reason.endswith("; the linear term does most of the work at the sizes measured")
    assert fit.decide_n is None  # settled: nothing to decide


def test_a_dominant_faster_term_settles_with_how_the_work_divides() -> None:
    """n + n² with n² already 60% of the work: n², settled, its note says how the work
    divides (nothing to take over, no size to name); a single law carries no note."""
    fit = fit_exact("instructions", *counted("n", extra="n^2", share=0.6), n_boot=30)
    assert fit is not None and fit.cls == "n^2" and fit.decide_n is None
    (note,) = fit.doubts
    assert note.check == "work_terms" and note.decide_n is None
    assert (note.numbers["term1"], note.numbers["term2"]) == ("n", "n^2")
    assert note.numbers["share"] == pytest.approx(0.6, rel=0.05)
    assert fit.reason.startswith("the n² term does 60% of the work at n = ")
    assert ", a linear term " in fit.reason and " and the start-up " in fit.reason
    alone = fit_exact("instructions", *counted("n^2"), n_boot=30)
    assert alone is not None and alone.cls == "n^2" and alone.doubts == ()


def test_a_term_too_small_to_settle_leaves_a_bracket() -> None:
    """A real n² term worth 0.2% (under MIN_SHARE) is seen but settles nothing: n … n²,
    and the sentence names where it would be 1%."""
    assert MIN_SHARE > 0.002
    fit = fit_exact("instructions", *counted("n", extra="n^2", share=0.002), n_boot=30)
    assert fit is not None and fit.cls == INCONCLUSIVE
    assert (fit.at_least, fit.at_most) == ("n", "n^2")
    assert "work_terms" in checks(fit.doubts)
    assert "the n² term is only 0.2% of the work at n = 64000" in fit.reason
    assert "where it would be 1%" in fit.reason


def test_one_size_that_alone_asks_for_a_faster_term_does_not_settle_it() -> None:
    """A linear count 0.6% higher at the top size alone (a bookkeeping step) is no n³."""
    n, y = counted("n", jitter=0.0)
    y = [v * 1.006 if s == SIZES[-1] else v for s, v in zip(n, y, strict=True)]
    fit = fit_exact("instructions", n, y, n_boot=30)
    assert fit is not None and fit.cls == INCONCLUSIVE
    assert REGISTRY.index(fit.at_least) <= REGISTRY.index("n")
    assert "exact_tie" in checks(fit.doubts)
    assert "only the count at n = 64000 asks for" in fit.reason


def test_counts_that_follow_no_two_term_law_are_left_to_the_ordinary_fit() -> None:
    """A cost per element that steps up ×4 at 8k (a change of regime) fits no a + c·f + b·h
    with a ≥ 0 within 0.1%: None, and fit_runs fits it as any metric."""
    n = np.asarray(SIZES, dtype=float)
    y = np.where(n <= 8000, 1000 * n, 1000 * 8000 + 4000 * (n - 8000)) + 1e6
    assert fit_exact("instructions", np.repeat(n, 2).tolist(), np.repeat(y, 2).tolist()) is None
    runs = [Run(sweep_id=1, seq=i, variant="A", size_n=int(s), repeat=0, warmup=False,
                started_at=0.0, measurement=Measurement({"wall_s": 1e-3, "instructions": v},
                                                        exit_code=0))
            for i, (s, v) in enumerate(zip(np.repeat(n, 2), np.repeat(y, 2), strict=True))]
    fits, _ = fit_runs(runs, metrics=("instructions",), exact=("instructions",), n_boot=30)
    plain = fit_metric("instructions", np.repeat(n, 2).tolist(), np.repeat(y, 2).tolist(),
                       n_boot=30)
    assert fits["instructions"].cls == plain.cls
    assert fits["instructions"].at_most == plain.at_most


def test_repeats_that_disagree_widen_sigma() -> None:
    """σ is the jitter of the count, or the half-range of its repeats when larger, never
    below one instruction."""
    c = counts("instructions", [10, 10, 20, 20, 40], [1e6, 1e6 + 2000, 2e6, 2e6, 3.0])
    assert c.sigma.tolist() == pytest.approx([1000.0, 200.0, 1.0])


def test_cpython_global_append_counts_settle_quadratic() -> None:
    """Counts of CPython 3.11 `s += "x"` (module level, 10k–80k, Valgrind): start-up, a linear
    and a quadratic term (the copy), over 3 octaves: n², k ≈ 1.96 (the growing part's local
    exponent at 80k: the linear term is the rest; with the start-up in, it read 1.90)."""
    sizes = [10000, 20000, 40000, 80000]
    values = [179002778, 345694425, 978320707, 3440063900]
    fit = fit_exact("instructions", np.repeat(sizes, 2).tolist(), np.repeat(values, 2).tolist(),
                    n_boot=30)
    assert fit is not None and fit.cls == "n^2"
    assert fit.exponent == pytest.approx(1.959, abs=0.01)


def test_mawk_counts_across_its_memcpy_switch_are_left_to_the_ordinary_fit() -> None:
    """mawk `s = s "x"` under Valgrind: above ~8 KiB glibc copies with `rep movsb`, which
    Valgrind counts per byte, so the counts change regime at 6250–12500 (×7.8 for ×2).
    No law of ≤ 2 terms with a start-up ≥ 0 holds: the ordinary fit decides."""
    sizes = [6250, 12500, 25000, 50000]
    values = [7555061, 58879098, 304120728, 1263355659]
    assert fit_exact("instructions", np.repeat(sizes, 2).tolist(),
                     np.repeat(values, 2).tolist()) is None


def test_counts_that_wobble_a_little_about_a_law_settle_on_it() -> None:
    """A C builder calling `strcat` on fields of `i % 10000`, counted under Valgrind: the
    best pair (start-up, n, n²) misses the counts by ~0.15% (ĉ ≈ 276, a periodic wobble in
    the string's length), far from a change of regime (10⁶ and more): n², with its terms."""
    sizes = [5000, 10000, 20000, 40000, 80000]
    values = [8903113, 27425784, 92919247, 338390257, 1287776287]
    fit = fit_exact("instructions", np.repeat(sizes, 2).tolist(), np.repeat(values, 2).tolist(),
                    n_boot=30)
    assert fit is not None and fit.cls == "n^2" and "work_terms" in checks(fit.doubts)
    assert fit.exponent_ci is not None and 1.9 < fit.exponent_ci[0] <= fit.exponent_ci[1] < 2.0


def _sweep_runs(meter: str) -> tuple[Sweep, list[Run]]:
    n, y = counted("n", extra="n^2", share=0.02)
    runs = [Run(sweep_id=1, seq=i, variant="A", size_n=int(s), repeat=i % 2, warmup=False,
                started_at=0.0,
                measurement=Measurement({"wall_s": 1e-3 + s * 1e-7 * (1 + 0.01 * (i % 3 - 1)),
                                         "instructions": v}, exit_code=0))
            for i, (s, v) in enumerate(zip(n, y, strict=True))]
    return Sweep(id=1, name="x", mode="sizes", command=("z", "{n}"), meter=meter), runs


def test_an_instruction_meter_sweep_leads_with_the_class_and_says_the_term() -> None:
    """The headline names n² for the work; the terminal's next line is the term's sentence;
    the JSON fit carries it as a work_terms doubt."""
    sweep, runs = _sweep_runs("instructions")
    analysis = analyse(sweep, runs)
    assert analysis.verdict.startswith("quadratic: the work grows as n² (instructions, exact, k = ")
    note = work_note(analysis.fits["A"], "instructions")
    assert note.startswith("the n² term is 2% of the work at n = 64000")
    shown = TerminalRenderer().render(analysis).decode().splitlines()
    assert " ".join(shown[1:4]).find("the n² term is 2% of the work") >= 0
    doubts = analysis.to_dict()["fits"]["instructions"]["doubts"]
    assert [d["check"] for d in doubts] == ["work_terms"]
    assert doubts[0]["numbers"]["terms"] == "n + n^2"


def test_a_timed_sweep_fits_its_instructions_as_any_metric() -> None:
    """Without the exact meter the same counts go through the ordinary fit: no terms note."""
    sweep, runs = _sweep_runs("time")
    analysis = analyse(sweep, runs)
    fit = analysis.fits["A"]["instructions"]
    assert "work_terms" not in checks(fit.doubts)
    assert work_note(analysis.fits["A"], None) == ""


def test_mawk_counts_settle_linear_and_a_hidden_quadratic() -> None:
    """Real mawk counts under Valgrind, 8k–64k: a loop of additions is exactly linear (547
    instructions per pass): n; with a nested loop every 128 passes it is n², the note giving
    its share (43% at 64k) and where it dominates."""
    sizes = [8000, 16000, 32000, 64000]
    linear = fit_exact("instructions", sizes, [4681661, 9057691, 17809691, 35313691], n_boot=30)
    assert linear is not None and linear.cls == "n" and linear.doubts == ()
    nested = fit_exact("instructions", sizes, [6552774, 13908355, 31905980, 81119980], n_boot=30)
    assert nested is not None and nested.cls == "n^2"
    assert nested.reason.startswith("the n² term is 43% of the work at n = 64000 and dominates")


def test_a_faster_term_that_could_hide_at_one_percent_unsettles() -> None:
    """Linear counts over a span of 1.2×: an n log n (or faster) term of 1% could hide, so
    the class is a bracket from n, with the sentence naming the term and the share."""
    sizes = [1000, 1100, 1200, 1300]
    fit = fit_exact("instructions", sizes, [1e6 + 500 * n for n in sizes], n_boot=30)
    assert fit is not None and fit.cls == INCONCLUSIVE and fit.at_least == "n"
    assert "exact_hidden" in checks(fit.doubts)
    assert "cannot be ruled out at these sizes" in fit.reason


def test_the_calibrations_exact_slice_names_every_term_and_invents_none() -> None:
    """A fixed-seed slice of `bench/calibration.py --protocol exact`: over 8 sizes, each
    single law settles as itself and a faster term at 1% of the work is named."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from calibration import LAWS, SHARES, _exact

    singles = [_exact(law, i, 7, "exact") for law in LAWS for i in (0, 1, 2)]
    assert [o for o in singles if o.kind != "right" or o.faster] == []
    small = [_exact(law, i, 7, "exact") for law in SHARES if SHARES[law][2] == 0.01
             for i in (0, 1, 2)]
    assert [o for o in small if o.faster != "named"] == []


def test_three_sizes_are_left_to_the_ordinary_fit() -> None:
    """Over three sizes a two-coefficient law leaves one residual: a linear count with a
    wobble of a few instructions in 10⁴ must not read as a sure n log n (a CPython loop did)."""

    sizes = [1000.0, 2000.0, 4000.0]
    values = [50_000 + 30 * n + w for n, w in zip(sizes, (0.0, 9.0, -7.0), strict=True)]
    assert fit_exact("instructions", sizes, values) is None


def test_a_small_fast_term_is_not_settled_where_the_law_misses_the_counts() -> None:
    """Real sqlite3 counts (an indexed self-join, truth n log n with a B-tree's steps) under
    Valgrind, 6250..50000: the best law, n + n³, misses them by 4× the bookkeeping (ĉ = 18)
    and its n³ term is 3% of the work: not settled, the bracket holds n log n."""
    sizes = [6250, 12500, 25000, 50000]
    fit = fit_exact("instructions", sizes, [47959026, 94683724, 189298786, 386425089], n_boot=30)
    assert fit is not None and not fit.confident
    assert "exact_misfit" in checks(fit.doubts)
    order = REGISTRY.index
    assert order(fit.at_least) <= order("n log n") <= order(fit.at_most)


def test_counts_that_follow_no_law_are_held_to_their_exponent_interval() -> None:
    """Real mawk `s = s "x"` counts, 2500..20000 (the copy's cost per byte changes at glibc's
    `rep movsb` threshold): no law of two terms; the ordinary fit read n³ beside k = 2.83
    [2.79, 2.87]. Held to k's interval, it is the bracket n² … n³, holding the truth, n²."""
    counts_ = {2500: 2661575, 5000: 5777635, 10000: 28604194, 20000: 187277916}
    runs = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                started_at=0.0, measurement=Measurement(wall_s=0.01, instructions=v, exit_code=0))
            for i, (n, v) in enumerate(counts_.items())]
    fits, _ = fit_runs(runs, metrics=("instructions",), exact=("instructions",), n_boot=30)
    fit = fits["instructions"]
    assert not fit.confident and (fit.at_least, fit.at_most) == ("n^2", "n^3")


def test_counts_at_three_sizes_that_grew_are_not_read_as_constant() -> None:
    """Three exact counts (a Python's start-up plus list.insert(0)'s growth): the ordinary
    fit's small-sample penalty picks "1"; the counts rose 18%, so the bracket starts above
    it and the reason names what is missing, not "no growth detected"."""
    from quadscope.analyse.analysis import few_counts
    from quadscope.analyse.fitting import fit_metric

    sizes, values = [256, 1024, 4096], [140425465, 142425162, 165176763]
    fit = few_counts(fit_metric("instructions", sizes, values), sizes, values, 4)
    assert not fit.confident and fit.at_least not in ("", "1")
    assert "counted at 3 sizes" in fit.reason and "grew 18%" in fit.reason
    assert [d.check for d in fit.doubts] == ["few_counts"]  # not "no growth detected"
    # Settled "1" by the ordinary fit (counts of a loaded run): not constant either.
    sizes2, values2 = [64, 1024, 4096], [140213568, 142464494, 165216091]
    plain2 = fit_metric("instructions", sizes2, values2)
    fit2 = few_counts(plain2, sizes2, values2, 4)
    assert not fit2.confident and fit2.at_least not in ("", "1") and fit2.at_most == "c^n"
    # Naive fib's counts at n = 1, 4, 16 (start-up, then 2k calls): nothing above is ruled out.
    sizes3, values3 = [1, 4, 16], [143.0e6, 143.1e6, 144.9e6]
    fit3 = few_counts(fit_metric("instructions", sizes3, values3), sizes3, values3, 4)
    assert not fit3.confident and fit3.at_most == "c^n"
    flat = [140425465, 140425470, 140425468]  # constant counts stay as the fit read them
    plain = fit_metric("instructions", sizes, flat)
    assert few_counts(plain, sizes, flat, 4) == plain
    # Flat at n = 2, 5, 20 (a 143M start-up hiding `x in list`'s n²): no "constant".
    small, counts3 = [2, 5, 20], [143.0e6, 143.0e6 + 3, 143.0e6 + 40]
    fit4 = few_counts(fit_metric("instructions", small, counts3), small, counts3, 4)
    assert not fit4.confident and (fit4.at_least, fit4.at_most) == ("1", "c^n")


def test_flat_counts_over_a_short_span_do_not_settle_constant() -> None:
    """A Python's 354M-instruction start-up with `sum(range(n))` counted at n = 1..25 (the
    budget spent on 0.75 s runs): flat to the count's jitter, yet a linear term of 100
    instructions per n would be half the work at 10^7. Over 1..2^24 the same counts are
    a constant."""
    short = [1, 4, 10, 25]
    fit = fit_exact("instructions", short, [354.0e6 + 90 * n for n in short])
    assert fit is not None and not fit.confident
    assert (fit.at_least, fit.at_most) != ("1", "1") and fit.at_least == "1"
    assert any(d.check == "exact_hidden" for d in fit.doubts)
    wide = [1, 16, 256, 4096, 65536, 2**20, 2**24]
    fit = fit_exact("instructions", wide, [354.0e6 + (n % 7) for n in wide])
    assert fit is not None and fit.cls == "1"


def test_a_faster_term_is_weighed_against_the_work_that_grows_not_the_start_up() -> None:
    """CPython's `l[0] = l[0] + "x"`: 140M of start-up, ~100 instructions a step and a copy
    of n/64 (n²/64 in all). At 256..4096 the growing terms are 0.5% of the count, so a
    quadratic term as large as the linear one was under 1% of the whole and read "not
    quadratic"; against the growing work it cannot be ruled out."""
    sizes = [256, 512, 1024, 2048, 4096]
    fit = fit_exact("instructions", sizes, [140e6 + 100 * n + n * n / 64 for n in sizes])
    assert fit is not None and not fit.confident
    assert REGISTRY.index(fit.at_most) >= REGISTRY.index("n^2")


def _argv_digits(start_up: float, per_digit: float, sizes: list[int]) -> list[float]:
    """A constant program's exact counts: its start-up plus a few instructions for each digit
    of n in argv (the C suite's `constant` counted 145394 + 19 a digit)."""
    return [start_up + per_digit * len(str(n)) for n in sizes]


@pytest.mark.parametrize("per_digit", [8.0, 19.0])
@pytest.mark.parametrize("step", [2, 4, 8])
def test_a_few_instructions_of_growth_over_a_huge_span_do_not_open_the_bracket(
        per_digit: float, step: int) -> None:
    """The `constant` workload counted at n = 1000..4·10⁹ and beyond: the digits of n grow
    the count by ~100 instructions, a log n term of 0.1% the chosen explanation holds. A
    cubic term of 2σ (34 instructions at 4·10⁹, 10⁻⁸ a unit of n) was 19% of that growing
    part and read "1 … n³"; no loop costs so little a step, so it is "1 or log n"."""
    sizes = [1000 * step**k for k in range(int(np.log(1.2e10 / 1000) / np.log(step)))]
    fit = fit_exact("instructions", sizes, _argv_digits(145394.0, per_digit, sizes), n_boot=20)
    assert fit is not None and fit.at_least == "1"
    assert fit.cls == "1" or fit.at_most in ("1", "log n")
    assert "exact_hidden" not in checks(fit.doubts)


def test_a_term_that_costs_a_loop_step_stays_hidden_beside_a_small_growing_part() -> None:
    """The same rule keeps what a loop could hide: a Python's 140M start-up with ~100
    instructions a step at 256..4096, a quadratic's bound costs ~70 instructions a unit of
    n there (`step_cost`), so it stays a doubt, while an n³ term's bound is a few hundredths
    of an instruction a run of its innermost loop (`run_cost`), which no loop is: the bracket
    reaches n², no further; and a flat count over n = 1..25 under 354M still reaches cⁿ (`flat_reach`:
    a term of PER_N a unit of n would not have shown)."""
    from quadscope.analyse.exactfit import PER_N, decide, hidden, hidden_bound, run_cost, step_cost

    sizes = [256, 512, 1024, 2048, 4096]
    c = counts("instructions", sizes, [140e6 + 100 * n for n in sizes])
    d = decide(c)
    assert d is not None and len(d.chosen.terms) == 1
    quad = REGISTRY["n^2"]
    upper = hidden_bound(d.chosen, quad, c, d.c_hat)
    assert PER_N < step_cost(quad, upper, 4096.0) < 1e4
    assert hidden(d.chosen, quad, c, d.c_hat) >= 0.01
    cube = REGISTRY["n^3"]
    assert run_cost(cube, hidden_bound(d.chosen, cube, c, d.c_hat), 4096.0) < 1.0
    assert d.at_most == "n^2"
    short = [1, 4, 10, 25]
    flat = fit_exact("instructions", short, _argv_digits(354e6, 19.0, short), n_boot=20)
    assert flat is not None and (flat.at_least, flat.at_most) == ("1", "c^n")


def test_a_terms_cost_a_step_is_read_per_step_below_n_and_per_unit_of_n_above() -> None:
    """`step_cost`: a √n term of 44 instructions at 4·10⁹ costs 44/63246 a step; an n³ term
    of 34 there adds 3·34/4·10⁹ a unit of n; an n²/64 term at 4096 adds 2·4096/64 = 128."""
    from quadscope.analyse.exactfit import step_cost

    assert step_cost(REGISTRY["sqrt n"], 44.0, 4e9) == pytest.approx(44 / 4e9**0.5, rel=1e-6)
    assert step_cost(REGISTRY["n^3"], 34.0, 4e9) == pytest.approx(3 * 34 / 4e9, rel=1e-3)
    assert step_cost(REGISTRY["n^2"], 4096.0**2 / 64, 4096.0) == pytest.approx(128, rel=1e-3)
    assert step_cost(REGISTRY["n log n"], 0.0, 4096.0) == 0.0


def test_a_rival_whose_fastest_term_is_no_loop_does_not_widen_the_bracket() -> None:
    """8 instructions a digit at n = 1000..4·10⁹ (×4): single n, n log n and √n lines through
    the counts (8·10⁻⁹ instructions a unit of n) fit within SELECT of the chosen log n and
    read "1 … n log n"; their terms cost no loop's step, so the bracket is "1 … log n"."""
    from quadscope.analyse.exactfit import decide, working_top

    sizes = [1000 * 4**k for k in range(12)]
    d = decide(counts("instructions", sizes, _argv_digits(145394.0, 8.0, sizes)))
    assert d is not None and (d.at_least, d.at_most) == ("1", "log n")
    near = [e for e in d.rivals if e.top in ("n", "n log n")]
    assert near and all(working_top(e, float(sizes[-1])) == "1" for e in near)


def test_counts_that_do_not_repeat_and_stay_flat_are_not_read_as_constant() -> None:
    """node's instructions for `a.includes` in a loop (n²) under Valgrind, one count at each
    of n = 8, 32, 128, 512: V8's threads move the count by ~1% from run to run (516.6M to
    520.5M at n = 8 alone), so no law of two terms fits and the ordinary fit read them;
    it settled "constant", where the 4·n² instructions at 512 are 0.2% of the count and a
    term of 10 a unit of n would not have shown. The same counts with n = 2048 grew 12%:
    a bracket above "1"."""
    counts_ = {8: 527930775, 32: 517005540, 128: 514447340, 512: 523151923}

    def fitted(by_n: dict[int, int]) -> Fit:
        runs = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                    started_at=0.0, measurement=Measurement(wall_s=0.1, instructions=v,
                                                            exit_code=0))
                for i, (n, v) in enumerate(by_n.items())]
        fits, _ = fit_runs(runs, metrics=("instructions",), exact=("instructions",), n_boot=30)
        return fits["instructions"]

    flat = fitted(counts_)
    assert not flat.confident and (flat.at_least, flat.at_most) == ("1", "c^n")
    assert "a term of 10 a unit of n would not show" in flat.reason
    grown = fitted({**counts_, 2048: 576719776})
    assert not grown.confident and grown.at_least != "1"
    assert REGISTRY.index(grown.at_most) >= REGISTRY.index("n^2")


# Cachegrind's `I refs` of real programs (Valgrind 3.19, glibc's rep strings out of reach),
# counted 2026-12-01 with `--meter instructions`: fixtures, not runs.
SORT_COUNTS = {15625: 44583966, 31250: 95188654, 62500: 202758342, 125000: 430728387,
               250000: 914237666, 500000: 1930483490}  # GNU sort of n random numbers
BYTES_COUNTS = {4000: 149246663, 8000: 158463296, 16000: 181205317,
                32000: 244356213}  # CPython 3.11 `b += b"x"` n times


def test_a_run_of_a_cubic_terms_innermost_loop_costs_its_step_over_n() -> None:
    """`run_cost`: an n³ term of 1M instructions at 32000 adds 3·10⁶/32000 a unit of n
    (`step_cost`) and 3·10⁶/32000² = 0.0029 a run of its innermost loop; n² and slower
    terms cost a run what they cost a step."""
    from quadscope.analyse.exactfit import run_cost, step_cost

    cube, quad = REGISTRY["n^3"], REGISTRY["n^2"]
    assert step_cost(cube, 1e6, 32000.0) == pytest.approx(3e6 / 32000, rel=1e-3)
    assert run_cost(cube, 1e6, 32000.0) == pytest.approx(3e6 / 32000**2, rel=1e-3)
    assert run_cost(quad, 1e6, 32000.0) == step_cost(quad, 1e6, 32000.0)
    assert run_cost(REGISTRY["n log n"], 5e5, 32000.0) == step_cost(REGISTRY["n log n"], 5e5,
                                                                    32000.0)


def test_a_step_in_the_cost_per_element_at_the_top_is_no_cubic_term() -> None:
    """GNU sort counted at 15625..250000: its cost per n·log₂ n steps from 203.5 to 203.9 at
    250000, which the best law reads as n log n + an n³ term of 0.3% of the count (under
    MIN_SHARE; 10⁻⁴ instructions a run of its loop): the class is n log n, not a bracket
    to n³. A size more (500000) agrees."""
    from quadscope.analyse.exactfit import choose, decide, explanations

    sizes = sorted(SORT_COUNTS)[:-1]
    c = counts("instructions", sizes, [SORT_COUNTS[n] for n in sizes])
    found = explanations(c, REGISTRY)
    best, _ = choose(found, c.m, 2.7, REGISTRY)
    assert best.names == ("n log n", "n^3") and best.shares(250000.0)[-1] < MIN_SHARE
    d = decide(c)
    assert d is not None and (d.cls, d.at_least, d.at_most) == ("n log n",) * 3
    wider = fit_exact("instructions", sorted(SORT_COUNTS), list(SORT_COUNTS.values()))
    assert wider is not None and wider.cls == "n log n"


def test_a_hidden_cubic_bound_no_loop_could_cost_leaves_the_quadratic_settled() -> None:
    """CPython `b += b"x"` at 4000..32000: start-up, a linear loop and a quadratic copy of
    0.046 instructions a byte; a hidden n³ term could still be 3.8% of the growing work, but
    that is 0.01 instructions a run of its innermost loop (`run_cost`): n², not "n² … n³"."""
    sizes = sorted(BYTES_COUNTS)
    fit = fit_exact("instructions", sizes, [BYTES_COUNTS[n] for n in sizes])
    assert fit is not None and fit.cls == "n^2"
    assert "exact_hidden" not in checks(fit.doubts)


def test_a_cubic_term_of_one_percent_is_still_named_beside_a_linear_one() -> None:
    """The rules above spare what the counts show at MIN_SHARE and more: n + n³ with the n³
    term 1% of the count at the top (8 sizes, as calibration's exact protocol) reads n³."""
    ns, ys = counted("n", extra="n^3", share=0.01, sizes=[1000 * 2**k for k in range(8)])
    fit = fit_exact("instructions", ns, ys)
    assert fit is not None and fit.cls == "n^3"
