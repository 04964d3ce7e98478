"""core.bounds: every number is read within its physical range, before any exact arithmetic."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bounds import MAX_INPUT_CHARS, Bound, BoundError, bounded_number

GB = Bound(maximum=Decimal("10000"))
COUNT = Bound(maximum=Decimal(10**8), allow_zero=True, integer=True)


def test_in_range_values_come_back_exact() -> None:
    assert bounded_number("0.6", field="kv", bound=GB) == Decimal("0.6")
    assert bounded_number(" 24 ", field="kv", bound=GB) == Decimal(24)
    assert bounded_number("0", field="users", bound=COUNT) == 0
    assert bounded_number(100_000_000, field="users", bound=COUNT) == 10**8


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("1e-10000000", "must be a number from 0.000000001 to 10,000."),
        ("1e400", "must be a number from 0.000000001 to 10,000."),
        ("nan", "must be a number from 0.000000001 to 10,000."),
        ("-inf", "must be a number from 0.000000001 to 10,000."),
        ("10000.0001", "must be a number from 0.000000001 to 10,000."),
        ("0", "must be greater than zero."),
        ("-3", "must be greater than zero."),
        ("3e", "Enter a number."),
        ("9" * 5000, "(at most 40 characters)"),
    ],
)
def test_out_of_range_is_refused_naming_the_field_and_range(raw: str, message: str) -> None:
    with pytest.raises(BoundError) as err:
        bounded_number(raw, field="kv_per_user_gb", bound=GB)
    assert err.value.field == "kv_per_user_gb"
    assert message in err.value.message


@pytest.mark.parametrize("raw", ["2.5", "1e9", "-1", "1e-3"])
def test_counts_are_whole_numbers_in_range(raw: str) -> None:
    with pytest.raises(BoundError):
        bounded_number(raw, field="users", bound=COUNT)


def test_the_stall_value_is_refused_in_well_under_a_millisecond_each() -> None:
    """`1e-10000000` as a Fraction has ten million digits; it must never get that far."""
    start = time.process_time()
    for _ in range(100):
        with pytest.raises(BoundError):
            bounded_number("1e-10000000", field="kv", bound=GB)
    # 100 refusals; a single Fraction conversion of this value takes seconds.
    assert time.process_time() - start < 1.0


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=60), st.floats(), st.integers(), st.decimals()))
def test_any_input_is_a_bounded_decimal_or_a_bound_error(raw: object) -> None:
    try:
        value = bounded_number(raw, field="f", bound=GB)
    except BoundError as err:
        assert err.field == "f"
        return
    assert Decimal("1e-9") <= value <= Decimal(10000)
    assert len(str(raw).strip()) <= MAX_INPUT_CHARS
