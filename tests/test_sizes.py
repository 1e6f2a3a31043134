"""--sizes specs: lists, geometric and linear ranges, and the refusals."""

import re

import pytest

from quadscope.errors import SizesError
from quadscope.run.sizes import given_sizes, parse_size, parse_sizes


def test_list_is_sorted_and_distinct() -> None:
    """A list comes back sorted with duplicates removed."""
    assert parse_sizes("400,100,200,100,800") == (100, 200, 400, 800)


def test_geometric_doubling_includes_the_end() -> None:
    """`a..b` doubles from a and keeps b when it lands on it."""
    assert parse_sizes("1e3..16e3") == (1000, 2000, 4000, 8000, 16000)


def test_geometric_doubling_ends_at_the_end() -> None:
    """`1e3..1e4` doubles while below the end, then measures the end itself."""
    assert parse_sizes("1e3..1e4") == (1000, 2000, 4000, 8000, 10000)


def test_doubling_to_a_million_ends_at_a_million() -> None:
    """`1e3..1e6` ends at 1e6, not at 512000."""
    assert parse_sizes("1e3..1e6")[-2:] == (512000, 1000000)


def test_geometric_factor() -> None:
    """`a..b*4` multiplies by 4 and ends at the end."""
    assert parse_sizes("1e3..1e6*4") == (1000, 4000, 16000, 64000, 256000, 1000000)


def test_sizes_are_read_exactly_not_through_a_float() -> None:
    """Sizes up to 2^63 - 1 are kept exactly; past it, or two a double cannot part, are refused."""
    assert parse_sizes("1,2,3,9007199254740991")[-1] == 9007199254740991
    assert parse_sizes("1,2,3,9007199254740993")[-1] == 9007199254740993
    assert parse_sizes("1,2,3,9223372036854775807")[-1] == 2**63 - 1
    with pytest.raises(SizesError, match="past 2\\^63"):
        parse_sizes("1,2,3,9223372036854775808")
    with pytest.raises(SizesError, match="the same number to a fit"):
        parse_sizes("1,2,9007199254740992,9007199254740993")


def test_a_near_one_factor_is_refused_not_truncated() -> None:
    """A factor that would make more than MAX_SIZES sizes is refused, not cut short silently."""
    with pytest.raises(SizesError, match="more than 10000 sizes"):
        parse_sizes("1..1e6*1.0001")


def test_parse_size_reads_the_sizes_notation() -> None:
    """`--start 1e4` means 10000."""
    assert parse_size("1e4", "--start") == 10000


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
        ("nan,1,2,3", "not a finite number"), ("1..1e3*inf", "not a finite number"),
        ("1e400,1,2,3", "past 2^63"), ("1..1e3*x", "'x' is not a number"),
        # Decimal alone read these as 1,2,... , 1000 and 10: each item is named instead.
        ("1,,2,3,4", "item 2 of the list is empty"), ("1,2,3,4,", "item 5 of the list is empty"),
        ("1_000,2000,3000,4000", "'1_000' is not a number; write sizes without separators"),
        ("\uff11\uff10,20,30,40", "'\uff11\uff10' is not a number; it holds U+FF11 "
                                  "(FULLWIDTH DIGIT ONE)"),
        ("\u0663..100", "U+0663 (ARABIC-INDIC DIGIT THREE)"),
        ("1\x1b[31m,2,3,4", "'1\\x1b[31m' is not a number"),  # escaped, never raw
    ],
)
def test_bad_specs_say_why(spec: str, words: str) -> None:
    """Each bad spec is refused with a sentence naming the problem."""
    with pytest.raises(SizesError, match=None) as info:
        parse_sizes(spec)
    assert words in str(info.value)


@pytest.mark.parametrize(("values", "phrase"), [
    ([-1, 2, 3, 4], "'-1' is negative"),
    ("abc", "must be a list of whole numbers"),
    (None, "must be a list of whole numbers"),
    ([], "is empty"),
    ([1.5, 2, 3, 4], "'1.5' is not an integer"),
    ([True, 2, 3, 4], "True is not a whole number"),
    (["1", 2, 3, 4], "'1' is not a whole number"),
    ([float("nan"), 1, 2, 3], "'nan' is not a finite number"),
    ([1e30, 1, 2, 3], "past 2^63 - 1"),
])
def test_given_sizes_refuse_what_the_cli_would_refuse(values: object, phrase: str) -> None:
    """The API's sizes= meet the rules of --sizes: one sentence, never int()'s ValueError
    or a ZeroDivisionError later (sizes=[] once divided by zero in the plan)."""
    with pytest.raises(SizesError, match=re.escape(phrase)):
        given_sizes(values, "sizes=")


def test_given_sizes_sort_and_merge_and_take_numpy_numbers() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(SizesError, match=r"gives 3 distinct size\(s\) \[1, 2, 3\]; at least 4"):
        given_sizes([3, 2, 1], "sizes=", least=4)
    assert given_sizes([8000, 1e3, 4000, 2000, 2000], "sizes=") == (1000, 2000, 4000, 8000)
    assert given_sizes(np.arange(1, 5) * 10, "sizes=") == (10, 20, 30, 40)


def test_the_api_refuses_bad_sizes_before_sweeping(tmp_path: object) -> None:
    from quadscope.api import assert_scales, sweep_function, sweep_sizes

    with pytest.raises(SizesError, match="sweep_function's sizes= is empty"):
        sweep_function(sorted, sizes=[], db=f"{tmp_path}/a.db")
    with pytest.raises(SizesError, match="assert_scales' sizes=: '-1' is negative"):
        assert_scales(sorted, at_most="n", sizes=[-1, 2, 3, 4], db=f"{tmp_path}/a.db")
    with pytest.raises(SizesError, match=r"sweep_sizes' sizes\['m'\] must be a list"):
        sweep_sizes(lambda n, m: 0, sizes={"n": [1, 2, 3, 4], "m": "ab"}, db=f"{tmp_path}/a.db")


@pytest.mark.parametrize(("target", "phrase"), [
    ("./prog {n}", "takes a command as a list of arguments, e.g. ['./prog', '{n}']"),
    (42, "is a function or a command's argv"),
    (["./prog", 7], "is a function or a command's argv"),
])
def test_assert_scales_names_a_target_it_cannot_run(target: object, phrase: str) -> None:
    """A string target once became one argument per character; an int, 'not iterable'."""
    from quadscope.api import assert_scales
    from quadscope.errors import UsageError

    with pytest.raises(UsageError, match=re.escape(phrase)):
        assert_scales(target, at_most="n", sizes=[1, 2, 3, 4])  # type: ignore[arg-type]


def test_parse_size_and_axes_refuse_other_digits_too() -> None:
    """--start, --predict and a named axis read sizes through the same check."""
    from quadscope.run.axes import parse_axes

    with pytest.raises(SizesError, match="U\\+FF15"):
        parse_size("\uff15", "--start")
    with pytest.raises(SizesError, match="'2_0' is not a number"):
        parse_axes(["n=1..100", "m=1,2,2_0,40"])
    assert parse_size(" 1e3\t", "--start") == 1000


def test_plain_decimal_reads_ascii_numbers_only() -> None:
    from decimal import Decimal

    from quadscope.run.sizes import plain_decimal

    assert plain_decimal("1e3") == Decimal(1000) and plain_decimal("-2.5") == Decimal("-2.5")
    assert [plain_decimal(t) for t in ("1_000", "\uff11", "", "1e", "0x10", "\u00a01")] == [
        None] * 6
