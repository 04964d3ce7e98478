"""Input checks every estimate shares: positive quantities, whole counts, catalogue fallbacks.

Each failure raises `CapacityInputError` naming the input, so the CLI, the API and the page can say
which option or field is wrong.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import overload

from planner.capacity.units import CapacityInputError, exact

Quantity = float | int | Decimal | Fraction


def _sign_message(allow_zero: bool) -> str:
    return "must not be negative" if allow_zero else "must be greater than zero"


@overload
def positive(value: Quantity, field: str, *, allow_zero: bool = False) -> Fraction: ...
@overload
def positive(value: None, field: str, *, allow_zero: bool = False) -> None: ...
def positive(value: Quantity | None, field: str, *, allow_zero: bool = False) -> Fraction | None:
    """The value as an exact fraction, greater than zero (or zero or more); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise CapacityInputError(field, "must be a number")
    out = exact(value)
    if out < 0 or (out == 0 and not allow_zero):
        raise CapacityInputError(field, _sign_message(allow_zero))
    return out


@overload
def whole_number(value: int, field: str, *, allow_zero: bool = False) -> int: ...
@overload
def whole_number(value: None, field: str, *, allow_zero: bool = False) -> None: ...
def whole_number(value: int | None, field: str, *, allow_zero: bool = False) -> int | None:
    """A count (layers, users, items): an int greater than zero (or zero or more); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise CapacityInputError(field, "must be a whole number")
    if value < 0 or (value == 0 and not allow_zero):
        raise CapacityInputError(field, _sign_message(allow_zero))
    return value


def given_or_catalogue(
    value: Quantity | None, field: str, catalogue_value: Quantity | None
) -> Fraction | None:
    """The caller's figure when given (checked), else the catalogue row's, else None."""
    if value is not None:
        return positive(value, field)
    return exact(catalogue_value) if catalogue_value is not None else None
