"""The growth-class registry: each class's data, its curve, and fitting against another registry."""

from __future__ import annotations

import numpy as np
import pytest

from quadscope.analyse.fitting import bootstrap_class, fit_metric
from quadscope.classes import (
    INCONCLUSIVE,
    NAMES,
    REGISTRY,
    GrowthClass,
    Registry,
    UnknownClassError,
)
from quadscope.render.terminal import class_style

N_1_5 = GrowthClass("n^1.5", "n¹·⁵", "n to the 1.5", (1.5, 0.0),
                    lambda n: np.asarray(n, dtype=float) ** 1.5,
                    inverse=lambda u: u ** (2 / 3), total="K^2.5")


def test_builtin_classes_simplest_first_with_their_properties() -> None:
    """The built-in names, in order, and which of them grow, are sublinear or superlinear."""
    assert NAMES == ("1", "log n", "sqrt n", "n", "n log n", "n^2", "n^3", "c^n")
    assert [c.name for c in REGISTRY if c.growing] == list(NAMES[1:])
    assert [c.name for c in REGISTRY if c.sublinear] == ["1", "log n", "sqrt n"]
    assert [c.name for c in REGISTRY if c.linear_or_slower] == ["1", "log n", "sqrt n", "n"]
    assert [c.name for c in REGISTRY if c.superlinear] == ["n^2", "n^3", "c^n"]
    assert [c.name for c in REGISTRY if c.outgrows_powers] == ["c^n"]
    assert [c.n_coef for c in REGISTRY] == [1, 2, 2, 2, 2, 2, 2, 3]  # a, b (and the base c)
    assert {c.name: c.settling_span for c in REGISTRY if c.settling_span} == {
        "1": 1000.0, "log n": 1000.0, "sqrt n": 100.0, "n": 100.0, "n log n": 100.0}
    assert [c.total for c in REGISTRY] == ["K", "K log K", "K^1.5", "K²", "K² log K", "K³", "K⁴",
                                           "c^K"]


def test_names_rename_only_the_size_variable() -> None:
    """named("i") renames the word n and nothing else; rename leaves non-classes alone."""
    assert [c.named("i") for c in REGISTRY] == ["1", "log i", "sqrt i", "i", "i log i", "i^2",
                                                "i^3", "c^i"]
    assert REGISTRY.rename("n log n", "K") == "K log K"
    assert REGISTRY.rename(INCONCLUSIVE, "i") == INCONCLUSIVE
    assert REGISTRY.rename("", "i") == ""


def test_styles_follow_the_properties() -> None:
    """The terminal paints sublinear green, n to n log n cyan, superlinear red, inconclusive yellow."""
    assert {c: class_style(c) for c in (*NAMES, INCONCLUSIVE, "")} == {
        "1": "green", "log n": "green", "sqrt n": "green", "n": "cyan", "n log n": "cyan",
        "n^2": "bold red", "n^3": "bold red", "c^n": "bold red", INCONCLUSIVE: "yellow", "": ""}


def test_evaluate_is_vectorised_and_safe_for_2n() -> None:
    """a + b·f(n) broadcasts over a and b, and b·2^n stays finite where 2^n alone overflows."""
    n = np.array([1.0, 2.0, 3.0])
    assert REGISTRY["n^2"].evaluate(1.0, 2.0, n).tolist() == [3.0, 9.0, 19.0]
    assert REGISTRY["n"].evaluate(np.array([0.0, 1.0]), np.array([1.0, 2.0]), n).tolist() == [
        [1.0, 2.0, 3.0], [3.0, 5.0, 7.0]]
    assert REGISTRY["1"].evaluate(4.0, 0.0, n).tolist() == [4.0, 4.0, 4.0]
    far = REGISTRY["c^n"].evaluate(0.0, 2.0**-1000, np.array([1100.0]))[0]
    assert far == pytest.approx(2.0**100, rel=1e-12)
    assert REGISTRY["c^n"].evaluate(1.0, 0.0, np.array([5000.0])).tolist() == [1.0]


def test_normalised_refuses_2n_out_of_range_or_as_a_step() -> None:
    """2^n is not fitted past n = 1000, nor when fewer than 3 sizes are visible next to n_max."""
    assert REGISTRY["c^n"].normalised(np.array([10.0, 500.0, 1001.0]), 1001.0) is None
    assert REGISTRY["c^n"].normalised(np.array([10.0, 20.0, 100.0]), 100.0) is None
    g, f_ref = REGISTRY["c^n"].normalised(np.array([8.0, 9.0, 10.0]), 10.0) or (None, 0.0)
    assert g is not None and g.tolist() == [0.25, 0.5, 1.0] and f_ref == 1024.0
    g, f_ref = REGISTRY["n^2"].normalised(np.array([1.0, 2.0, 4.0]), 4.0) or (None, 0.0)
    assert g is not None and g.tolist() == [1 / 16, 0.25, 1.0] and f_ref == 16.0


@pytest.mark.parametrize("growth", [c for c in REGISTRY if c.growing], ids=lambda c: c.name)
def test_linearise_inverts_each_class(growth: GrowthClass) -> None:
    """linearise maps a + b·f(n) back to n for every growing class."""
    n = np.array([2.0, 5.0, 10.0, 40.0])
    y = 3.0 + 0.5 * growth.f(n)
    assert growth.linearise(3.0, 0.5, y) == pytest.approx(n, rel=1e-9)


def test_linearise_clips_and_refuses_constant() -> None:
    """Below the offset linearise gives 0; for "1", which has no inverse, it gives NaN."""
    assert REGISTRY["n^2"].linearise(3.0, 0.5, np.array([1.0])).tolist() == [0.0]
    assert np.isnan(REGISTRY["1"].linearise(3.0, 0.0, np.array([1.0]))).all()


def test_registry_refuses_misordered_or_missing_constant() -> None:
    """A registry must start with "1", keep names distinct and grow strictly along its order."""
    with pytest.raises(ValueError, match="constant"):
        Registry(REGISTRY.classes[1:])
    with pytest.raises(ValueError, match="must grow faster than n\\^2"):
        Registry((*REGISTRY.classes[:6], N_1_5, *REGISTRY.classes[6:]))
    with pytest.raises(ValueError, match="distinct"):
        Registry((*REGISTRY.classes, REGISTRY["n"]))


def test_one_entry_adds_a_class_that_fitting_selects() -> None:
    """With n^1.5 added, fit_metric picks it for a + b·n^1.5 data, which the built-ins leave undecided."""
    extended = REGISTRY.with_class(N_1_5)
    assert extended.names == ("1", "log n", "sqrt n", "n", "n log n", "n^1.5", "n^2", "n^3", "c^n")
    rng = np.random.default_rng(7)
    sizes = np.repeat(np.unique(np.round(np.logspace(1, 4, 12))), 5)
    values = (0.01 + 1e-6 * sizes**1.5) * (1 + 0.02 * rng.standard_normal(sizes.size))
    fit = fit_metric("wall_s", sizes, values, registry=extended, predict_n=100_000)
    assert fit.cls == "n^1.5"
    assert tuple(c.cls for c in fit.candidates) == extended.names
    assert fit.coefficients["b"] == pytest.approx(1e-6, rel=0.1)
    assert fit.prediction is not None
    assert fit.prediction.value == pytest.approx(0.01 + 1e-6 * 1e5**1.5, rel=0.1)
    builtin = fit_metric("wall_s", sizes, values)
    assert (builtin.cls, builtin.best) == (INCONCLUSIVE, "n log n")
    _, b, _, _ = bootstrap_class("n^1.5", sizes, values, registry=extended)
    assert b == pytest.approx(1e-6, rel=0.1)


def test_normalised_bases_is_with_base_normalised_row_by_row() -> None:
    """The batched base search sees exactly what one base at a time would."""
    exp = REGISTRY["c^n"]
    for n in (np.arange(10.0, 26.0, 2.0), np.array([1000.0, 2000.0, 4000.0])):
        cs = np.array(exp.bases)
        g, ok = exp.normalised_bases(n, float(n[-1]), cs)
        for row, flag, c in zip(g, ok, cs, strict=True):
            one = exp.with_base(float(c)).normalised(n, float(n[-1]))
            assert flag == (one is not None)
            if one is not None:
                assert np.allclose(row, one[0], rtol=1e-12, atol=0)


@pytest.mark.parametrize(("text", "name"), [
    ("1", "1"), ("constant", "1"), ("O(1)", "1"),
    ("log n", "log n"), ("logarithmic", "log n"), ("O(log n)", "log n"),
    ("√n", "sqrt n"), ("sqrt n", "sqrt n"), ("sqrt(n)", "sqrt n"), ("square root", "sqrt n"),
    ("n", "n"), ("linear", "n"), ("O(n)", "n"),
    ("n log n", "n log n"), ("nlogn", "n log n"), ("O(n log n)", "n log n"),
    ("n·log n", "n log n"), ("linearithmic", "n log n"), ("N LOG N", "n log n"),
    ("n²", "n^2"), ("n^2", "n^2"), ("n**2", "n^2"), ("quadratic", "n^2"), ("O(n^2)", "n^2"),
    ("O(n²)", "n^2"), (" n ^ 2 ", "n^2"),
    ("n³", "n^3"), ("n^3", "n^3"), ("cubic", "n^3"),
    ("cⁿ", "c^n"), ("c^n", "c^n"), ("2^n", "c^n"), ("exponential", "c^n"), ("O(2^n)", "c^n"),
])
def test_parse_reads_every_spelling_quadscope_prints(text: str, name: str) -> None:
    """Every name, label, word and O(...) form of a class reads back as that class."""
    assert REGISTRY.parse(text).name == name


def test_parse_accepts_each_class_as_printed() -> None:
    """Whatever a class prints (name, label, words, phrase-free) parses back to it."""
    for growth in REGISTRY:
        for spelling in (growth.name, growth.label, growth.words, f"O({growth.label})"):
            assert REGISTRY.parse(spelling) is growth


@pytest.mark.parametrize("text", ["nlog", "", "n^4", "fast", "O()", "inconclusive"])
def test_parse_refuses_an_unknown_spelling_in_one_sentence_with_examples(text: str) -> None:
    with pytest.raises(UnknownClassError) as err:
        REGISTRY.parse(text)
    message = str(err.value)
    assert message.startswith(f"{text!r} is not a class")
    assert "n log n" in message and "n²" in message and "quadratic" in message
    assert "\n" not in message and message.replace("e.g. ", "").count(". ") == 0


def test_parse_reads_a_custom_class_label_with_a_fractional_superscript() -> None:
    """"n¹·⁵" (the label's "·" is a decimal point inside a superscript) reads as "n^1.5"."""
    extended = REGISTRY.with_class(N_1_5)
    assert extended.parse("n¹·⁵").name == extended.parse("O(n^1.5)").name == "n^1.5"
