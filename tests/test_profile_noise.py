"""Per-function classes from sampled profiles: each size's honest error, and no confident
wrong class from one recording per size (`profile.noise`, `attribute._fit_function`)."""

from __future__ import annotations

import math

import pytest

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit
from quadscope.profile.attribute import attribute
from quadscope.profile.noise import LOAD_CV, sampled_sd, samples_per_second
from quadscope.profile.stacks import Frame, StackProfile

MAIN = Frame("main", "/bin/prog")
PAIRS = Frame("pair_count", "/bin/prog")
SCAN = Frame("linear_scan", "/bin/prog")


def _profiles(sizes: tuple[int, ...], pairs_ms: list[float], scan_ms: list[float],
              samples: int) -> list[StackProfile]:
    """One recording per size, `samples` samples each, weights in microseconds of cost."""
    out = []
    for n, p, s in zip(sizes, pairs_ms, scan_ms, strict=True):
        stacks = {(MAIN, PAIRS): round(p * 1000), (MAIN, SCAN): round(s * 1000)}
        out.append(StackProfile(n, stacks, samples, "cpu-clock", (p + s) / 1000))
    return out


def _allows(fit: Fit, cls: str) -> bool:
    """Whether the verdict allows `cls`: settled as it, or a bracket holding it."""
    if fit.cls != INCONCLUSIVE:
        return fit.cls == cls
    if not fit.at_least or not fit.at_most:
        return True
    order = REGISTRY.index
    return order(fit.at_least) <= order(cls) <= order(fit.at_most)


def _fit(sizes: tuple[int, ...], ms: list[float], samples_at_each: int) -> Fit:
    values = [v / 1000 for v in ms]
    rates = [samples_at_each / v for v in values]
    return fit_metric("self time of f", list(sizes), values, sd=list(sampled_sd(values, rates)),
                      strict=True)


def test_sampled_sd_adds_poisson_and_load_errors_in_variance() -> None:
    """v/p from the samples plus (LOAD_CV·v)²; an unseen size has one sample's error; an
    unknown rate leaves the load part alone."""
    v, p = 0.05, 10_000.0  # 500 samples
    sd = sampled_sd([v, 0.0, v], [p, p, 0.0])
    assert sd[0] == pytest.approx(math.sqrt(v / p + (LOAD_CV * v) ** 2), rel=1e-9)
    assert sd[1] == pytest.approx(1 / p, rel=1e-9)
    assert sd[2] == pytest.approx(LOAD_CV * v, rel=1e-9)
    # Few samples: sampling dominates the load floor.
    assert sampled_sd([0.001], [4000.0])[0] > 2 * LOAD_CV * 0.001
    with pytest.raises(ValueError):
        sampled_sd([1.0, 2.0], [1.0])


def test_samples_per_second_is_samples_over_the_scaled_cost() -> None:
    prof = StackProfile(10, {(MAIN, PAIRS): 3}, 600, "cpu-clock", 0.06)
    assert samples_per_second(prof) == pytest.approx(10_000.0)
    assert samples_per_second(StackProfile(10, {}, 0, "cpu-clock", 0.06)) == 0.0


def test_the_ci_failure_does_not_settle_n3() -> None:
    """pair_count (truly n²) sampled at 1.3, 2.2, 9.1, 56.8 ms, the top recording slowed 1.6×
    by load: with one recording per size it read "n³" with k in [2.76, 2.93]. Weighted by
    each size's honest error it is a bracket that holds n², with the exponent kept."""
    sizes = (1000, 2000, 4000, 8000)
    profs = _profiles(sizes, [1.3, 2.2, 9.1, 56.8], [1.0, 2.0, 4.0, 8.0], samples=600)
    first = attribute(profs).culprits[0]
    assert first.symbol == "pair_count"
    assert first.self_class != "n^3"
    assert first.self_class in ("n^2", INCONCLUSIVE)
    assert first.self_exponent is not None and first.self_exponent > 2.5
    assert first.self_exponent_ci is not None
    assert first.self_exponent_ci[0] <= 2.0 <= first.self_exponent_ci[1]
    fit = _fit(sizes, [1.3, 2.2, 9.1, 56.8], 600)
    assert _allows(fit, "n^2") and fit.cls != "n^3"


def test_without_the_errors_the_same_numbers_claim_a_narrow_interval() -> None:
    """The cause, pinned so a regression shows: fitted on their own scatter, the four values
    leave one degree of freedom and k's interval is under a tenth of a unit either side."""
    sizes = [1000, 2000, 4000, 8000]
    blind = fit_metric("self time of f", sizes, [1.3e-3, 2.2e-3, 9.1e-3, 56.8e-3])
    honest = _fit(tuple(sizes), [1.3, 2.2, 9.1, 56.8], 600)
    assert blind.exponent_ci is not None and honest.exponent_ci is not None
    blind_w = blind.exponent_ci[1] - blind.exponent_ci[0]
    honest_w = honest.exponent_ci[1] - honest.exponent_ci[0]
    assert blind_w < 0.3
    assert honest_w > 4 * blind_w


def test_a_clean_quadratic_with_plenty_of_samples_still_settles_n2() -> None:
    """At the profiler's five default sizes, 3000 samples each, n² rules out n log n and n³
    by more than a recording's slowdown: the class settles (not "never decide")."""
    sizes = (1000, 2000, 4000, 8000, 16000)
    pairs = [0.2 + (n / 1000) ** 2 for n in sizes]
    profs = _profiles(sizes, pairs, [n / 1000 for n in sizes], samples=3000)
    first = attribute(profs).culprits[0]
    assert (first.symbol, first.self_class) == ("pair_count", "n^2")
    assert first.self_exponent == pytest.approx(2.0, abs=0.1)


@pytest.mark.parametrize(("law", "cost"), [
    ("n", lambda n: n / 1000),
    ("n log n", lambda n: n / 1000 * math.log(n)),
])
def test_linear_and_n_log_n_are_never_settled_as_a_neighbour(law: str, cost) -> None:  # type: ignore[no-untyped-def]
    """n and n log n sampled at five sizes: the verdict is the law or a bracket holding it,
    never a neighbour settled, and k stays near 1."""
    sizes = (1000, 2000, 4000, 8000, 16000)
    fit = _fit(sizes, [cost(n) for n in sizes], 3000)
    assert _allows(fit, law), (fit.cls, fit.at_least, fit.at_most)
    assert fit.exponent is not None and 0.8 < fit.exponent < 1.4


def test_a_slowed_top_recording_of_a_linear_function_is_not_settled_superlinear() -> None:
    """A linear function whose largest size's recording ran 1.6× slow (load): k rises, but
    no class beyond n is settled and n stays in the bracket."""
    sizes = (1000, 2000, 4000, 8000)
    ms = [1.0, 2.0, 4.0, 8.0 * 1.6]
    fit = _fit(sizes, ms, 600)
    assert fit.cls in ("n", INCONCLUSIVE)
    assert _allows(fit, "n")


def test_a_slowed_middle_recording_does_not_settle_a_linear_cost_as_constant() -> None:
    """One recording at a middle size slowed 3× breaks the ranks of a linear cost over five
    sizes and inflates every model's misfit; the ends, far apart beyond their errors, still
    rule out "1" settled."""
    sizes = (1000, 2000, 4000, 8000, 16000)
    ms = [1.0, 2.0, 4.0 * 3.0, 8.0, 16.0]
    fit = _fit(sizes, ms, 600)
    assert fit.cls != "1"
    assert _allows(fit, "n")


def test_a_settled_class_lies_inside_k_s_interval_as_for_a_time() -> None:
    """A cost per element that rises through the caches (15 → 400 ns over 4k-1M) reads
    k ≈ 1.7 with an interval short of 2: a self time is a time, so n² (which its name,
    no registered time metric, once let settle 0.3 outside the interval) stays open."""
    sizes = (4000, 10040, 63246, 398422, 1000000)
    per_element_ns = (15, 20, 80, 300, 400)
    chase = [n * ns * 1e-6 for n, ns in zip(sizes, per_element_ns, strict=True)]
    profs = _profiles(sizes, chase, [0.01 * n / 1000 for n in sizes], samples=1500)
    first = attribute(profs).culprits[0]
    assert first.self_exponent_ci is not None and first.self_exponent_ci[1] < 1.95
    assert first.self_class == INCONCLUSIVE
