"""A calculated template's hand formula: plain arithmetic over the prompt's numbers, nothing else."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizzes.hand import HandError, hand_names, hand_parse, hand_value, shown_number


def test_arithmetic_functions_and_checks_work_with_the_shown_numbers() -> None:
    tree = hand_parse("floor((memory_gb - weights_gb) / kv_gb)")
    assert hand_names(tree) == {"memory_gb", "weights_gb", "kv_gb"}
    assert hand_value(tree, {"memory_gb": 24, "weights_gb": 16.06, "kv_gb": 1.074}) == 7
    assert hand_value(hand_parse("sqrt(2 * 2 * 1440 / 4)"), {}) == pytest.approx(math.sqrt(1440))
    assert hand_value(hand_parse("a < b <= c"), {"a": 1, "b": 2, "c": 2}) is True
    assert hand_value(hand_parse("x if x > 0 else 0"), {"x": -3}) == 0


@pytest.mark.parametrize(
    ("formula", "reason"),
    [
        ("__import__('os')", "may call only"),
        ("params.__class__", "Attribute"),
        ("[1, 2]", "List"),
        ("lambda: 1", "Lambda"),
        ("'text'", "only numbers and names"),
        ("2 ** 100000", "beyond a hand's reach"),
        ("a +", "is not a formula"),
        ("", "must be 1 to"),
        ("1 / zero", "cannot be worked"),
        ("missing * 2", "names missing"),
    ],
)
def test_anything_but_arithmetic_is_refused_with_a_reason(formula: str, reason: str) -> None:
    with pytest.raises(HandError) as caught:
        hand_value(hand_parse(formula), {"zero": 0})
    assert reason in str(caught.value)


def test_numbers_are_read_as_the_prompt_shows_them() -> None:
    assert shown_number("8,192") == 8192
    assert shown_number("16.06") == 16.06
    assert shown_number("NVIDIA L4") is None
    assert shown_number("inf") is None


@given(
    a=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    b=st.floats(min_value=0.001, max_value=1e6, allow_nan=False),
)
def test_a_formula_gives_what_python_gives(a: float, b: float) -> None:
    """Over random numbers, the evaluator agrees with Python's own arithmetic."""
    tree = hand_parse("(a * 2 - b) / b + max(a, b) - floor(b)")
    assert hand_value(tree, {"a": a, "b": b}) == pytest.approx(
        (a * 2 - b) / b + max(a, b) - math.floor(b)
    )
