"""The snapshot comparator: tolerant of a float's last digits, strict about words, classes and counts."""

from __future__ import annotations

import pytest

from approx import same, same_text


def test_a_ninth_digit_move_and_a_flipped_rounding_pass() -> None:
    """A fitted float 4e-9 apart, and a printed exponent one unit off in its last digit, are the same."""
    same({"k": 1.1344942687278894, "verdict": "k = 1.99 ± 0.02"},
         {"k": 1.1344942733779249, "verdict": "k = 1.98 ± 0.02"})


@pytest.mark.parametrize(("got", "want"), [
    ("k = 1.97 ± 0.02", "k = 1.99 ± 0.02"),  # two units off in the last digit
    ("at n = 8001", "at n = 8000"),  # an integer: exact
    ("grows as n²", "grows as n³"),
    ("quadratic", "cubic"),
    ("a 1 b", "a 1 b 2"),
])
def test_text_that_differs_in_words_counts_or_more_than_rounding_fails(got: str, want: str) -> None:
    """Words, integers and numbers more than one printed unit apart are differences."""
    with pytest.raises(AssertionError):
        same_text(got, want)


@pytest.mark.parametrize(("got", "want"), [
    ({"k": 1.0001}, {"k": 1.0}),
    ({"n": 2}, {"n": 3}),
    ({"n": 2}, {"n": 2, "m": 1}),
    ({"cls": None}, {"cls": "n"}),
    ([1, 2], [1, 2, 3]),
])
def test_values_that_differ_beyond_the_tolerance_fail(got: object, want: object) -> None:
    """A float 1e-4 apart, an integer, a key, a None or a length is a difference."""
    with pytest.raises(AssertionError):
        same(got, want)
