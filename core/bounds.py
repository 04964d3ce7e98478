"""One bounded way to read a number a person, a file or a command line gives.

Every number has a physical range and its text a length limit, both checked before any exact
arithmetic: `Decimal("1e-10000000")` is cheap, but turning it into a Fraction or an int is not
(millions of digits), so the range is checked on the Decimal first and nothing else ever sees an
unbounded value. Errors name the field and its range.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

# Longer than any honest figure ("123456789.123456789" is 19); refused before parsing.
MAX_INPUT_CHARS = 40
# Wider ints are refused before they are turned into text.
MAX_INT_BITS = 128
# Below this a positive figure is a typo (or an attack), whatever its unit.
SMALLEST_POSITIVE = Decimal("1e-9")
POSITIVE = "must be greater than zero."


class BoundError(ValueError):
    """A number outside its field's range, or no number at all; `field` names the input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Bound:
    """The physical range of one input: (minimum, maximum], or [0, maximum] with allow_zero."""

    maximum: Decimal
    allow_zero: bool = False
    integer: bool = False
    minimum: Decimal = SMALLEST_POSITIVE

    def describe(self) -> str:
        low = "0" if self.allow_zero else format(self.minimum, "f")
        if self.integer:
            low = "0" if self.allow_zero else "1"
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} from {low} to {self.maximum:,f}"

    def check(self, value: Decimal, field: str) -> Decimal:
        """`value` if it is finite and in range, else a BoundError naming `field` and the range."""
        if not value.is_finite():
            raise BoundError(field, f"must be {self.describe()}.")
        if self.integer and value != value.to_integral_value():
            raise BoundError(field, f"must be {self.describe()}.")
        if value < 0:
            raise BoundError(field, "must not be negative." if self.allow_zero else POSITIVE)
        if value == 0 and not self.allow_zero:
            raise BoundError(field, POSITIVE)
        if value > self.maximum or (0 < value < self.minimum):
            raise BoundError(field, f"must be {self.describe()}.")
        return value


def bounded_number(raw: object, *, field: str, bound: Bound) -> Decimal:
    """Parse `raw` (text, int, float or Decimal) into a Decimal within `bound`."""
    if isinstance(raw, bool):
        raise BoundError(field, "Enter a number.")
    if isinstance(raw, int) and raw.bit_length() > MAX_INT_BITS:
        # str() of such an int is itself slow (and refused past 4300 digits).
        raise BoundError(field, f"must be {bound.describe()}.")
    text = str(raw).strip()
    if not text or len(text) > MAX_INPUT_CHARS:
        raise BoundError(
            field, f"must be {bound.describe()} (at most {MAX_INPUT_CHARS} characters)."
        )
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise BoundError(field, "Enter a number.") from None
    return bound.check(value, field)
