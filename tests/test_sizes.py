"""--sizes specs: lists, geometric and linear ranges, and the refusals."""

import pytest

from quadscope.errors import SizesError
from quadscope.run.sizes import parse_sizes


def test_list_is_sorted_and_distinct() -> None:
    """A list comes back sorted with duplicates removed."""
    assert parse_sizes("400,100,200,100,800") == (100, 200, 400, 800)


def test_geometric_doubling_includes_the_end() -> None:
    """`a..b` doubles from a and keeps b when it lands on it."""
    assert parse_sizes("1e3..16e3") == (1000, 2000, 4000, 8000, 16000)


def test_geometric_doubling_stops_below_the_end() -> None:
    """`1e3..1e4` doubles up to the last size not beyond the end."""
    assert parse_sizes("1e3..1e4") == (1000, 2000, 4000, 8000)


def test_geometric_factor() -> None:
    """`a..b*4` multiplies by 4."""
    assert parse_sizes("1e3..1e6*4") == (1000, 4000, 16000, 64000, 256000)


def test_linear_step() -> None:
    """`a..b+s` steps linearly, both ends included."""
    assert parse_sizes("0..1000+250") == (0, 250, 500, 750, 1000)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("100,200,400", "3 distinct size"),
        ("1.5,2,3,4", "not an integer"),
        ("abc", "not a number"),
        ("1e3..1e2", "ends (100) before it starts"),
        ("0..1e3", "must start above 0"),
        ("1..100*1", "greater than 1"),
        ("1..100+0", "must be positive"),
        ("-5,1,2,3", "negative"),
        ("", "empty"),
        ("1..2..3", "'2..3' is not a number"), ("1e3..", "does not parse"),
    ],
)
def test_bad_specs_say_why(spec: str, words: str) -> None:
    """Each bad spec is refused with a sentence naming the problem."""
    with pytest.raises(SizesError, match=None) as info:
        parse_sizes(spec)
    assert words in str(info.value)
