"""Property tests of core.bounds: any string, float, int or Decimal is read in range or refused,
naming the field, and each answer comes within a bound whatever its exponent or size."""

from __future__ import annotations

import math
import time
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bounds import Bound, BoundError, bounded_number
from core.ranges import STEP_MINUTES

KV = Bound(maximum=Decimal(1000))
STEPS = Bound(minimum=Decimal(1), maximum=Decimal(1439), integer=True)


def _read(raw: object, bound: Bound, field: str) -> Decimal | None:
    started = time.perf_counter()
    try:
        return bounded_number(raw, field=field, bound=bound)
    except BoundError as refused:
        assert refused.field == field
        assert str(refused).startswith(f"{field}: ")
        return None
    finally:
        assert time.perf_counter() - started < 0.05


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_read_in_range_or_refused(text: str) -> None:
    value = _read(text, KV, "kv_per_user_gb")
    assert value is None or Decimal("1e-9") <= value <= 1000


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.decimals())
def test_any_float_int_or_decimal_is_read_in_range_or_refused(raw: object) -> None:
    value = _read(raw, STEPS, "step")
    assert value is None or (1 <= value <= 1439 and value == value.to_integral_value())
    assert value is None or not isinstance(raw, float) or math.isfinite(raw)


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"\A-?[0-9]{0,8}(\.[0-9]{0,8})?[eE][+-]?[0-9]{1,9}\Z"))
def test_any_exponent_is_answered_at_once(text: str) -> None:
    _read(text, STEP_MINUTES, "learning step")


@pytest.mark.parametrize(
    "raw",
    [True, False, 2**20000, -(2**200), float("nan"), float("-inf"), None, [], "sNaN"],
    ids=lambda raw: "huge int" if isinstance(raw, int) and abs(raw) > 2**64 else repr(raw),
)
def test_values_that_are_not_numbers_are_refused(raw: object) -> None:
    assert _read(raw, KV, "kv_per_user_gb") is None


def test_the_stall_value_is_refused_a_thousand_times_in_well_under_a_second() -> None:
    started = time.perf_counter()
    for _ in range(1000):
        assert _read("1e-10000000", KV, "kv_per_user_gb") is None
        assert _read(Decimal("1e+10000000"), KV, "kv_per_user_gb") is None
    assert time.perf_counter() - started < 1.0
