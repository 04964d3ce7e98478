"""Reading a list of (re)learning steps in minutes through core.bounds: the course model's
validation and the instructor's settings both read steps here."""

from __future__ import annotations

from decimal import Decimal

from core.bounds import BoundError, bounded_number
from core.ranges import MAX_STEPS, STEP_MINUTES, STEP_TOO_LONG

MINUTES_A_DAY = Decimal(1440)
# Only to tell "a day or more" from junk in an error message; the bound itself is stricter.
MAX_TEXT = 60


def bounded_steps(raw: object, *, field: str) -> list[int | float]:
    """`raw` (a list of numbers or numeric strings) as minutes, each within STEP_MINUTES; a step
    of a day or more is refused with the reason. Raises BoundError naming `field`."""
    if not isinstance(raw, list | tuple):
        raise BoundError(field, "must be a list of minutes, e.g. 1, 10.")
    if len(raw) > MAX_STEPS:
        raise BoundError(field, f"at most {MAX_STEPS} steps.")
    steps: list[int | float] = []
    for value in raw:
        if isinstance(value, float):
            # repr keeps what was typed (0.1, not 0.1000000000000000055...); nan and inf too.
            value = Decimal(repr(value))
        number = _step(value, field)
        steps.append(int(number) if number == number.to_integral_value() else float(number))
    return steps


def _step(value: object, field: str) -> Decimal:
    try:
        return bounded_number(value, field=field, bound=STEP_MINUTES)
    except BoundError:
        if isinstance(value, int) and not isinstance(value, bool):
            number: Decimal | None = MINUTES_A_DAY if value >= MINUTES_A_DAY else None
        else:
            try:
                number = Decimal(str(value).strip()[:MAX_TEXT])
            except ArithmeticError:
                number = None
        if number is not None and number.is_finite() and number >= MINUTES_A_DAY:
            raise BoundError(
                field,
                f"each step must be under {MINUTES_A_DAY} minutes: {STEP_TOO_LONG}.",
            ) from None
        raise
