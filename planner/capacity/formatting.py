"""Number formatting for substituted formulas (plain text, no locale)."""

from __future__ import annotations

from fractions import Fraction

from planner.capacity.units import BYTES_PER_GB


def num(value: Fraction | float | int, places: int = 3) -> str:
    """A figure with up to `places` decimals and at least one (7 -> "7.0", 0.6 -> "0.6")."""
    if places == 0:
        return f"{round(float(value)):,}"
    text = f"{float(value):,.{places}f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def plain(value: Fraction | float | int) -> str:
    """A small exact figure without a forced decimal (2 -> "2", 1/2 -> "0.5")."""
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else num(value, 6)


def whole(value: int | Fraction) -> str:
    return f"{int(value):,}"


def money(value: Fraction | float | int) -> str:
    return f"${float(value):,.2f}"


def gb(value_bytes: Fraction | int, places: int = 3) -> str:
    return f"{num(Fraction(value_bytes) / BYTES_PER_GB, places)} GB"
