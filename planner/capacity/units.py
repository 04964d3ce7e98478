"""Units and exact arithmetic for the capacity engine.

GB means 10^9 bytes (SI, as vendors' datasheets and the course use it), never GiB. Every figure is
computed as an exact fraction of bytes so the source's baseline (24 - 14 - 3 = 7.0 GB, 7.0 // 0.6 = 11
users) cannot fall foul of binary floating point (in floats, 7.0 // 0.6 == 11.0 but
(24 - 14 - 3) // 0.6 and friends drift for other inputs such as 0.7 // 0.1 == 6.0).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Final

BYTES_PER_GB: Final = 10**9
BYTES_PER_GIB: Final = 2**30  # what serving engines and the CUDA runtime report
SECONDS_PER_HOUR: Final = 3600

# Bytes per element for each storage precision. int4 packs two values per byte; quantisation
# constants (scales) are counted separately where the method says so (QLoRA).
BYTES_PER_ELEMENT: Final[dict[str, Fraction]] = {
    "fp32": Fraction(4),
    "bf16": Fraction(2),
    "fp16": Fraction(2),
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "int4": Fraction(1, 2),
    # OCP Microscaling MXFP4: 32 4-bit E2M1 values share one 8-bit E8M0 scale, 4.25 bits a value
    # (OCP Microscaling Formats (MX) Specification v1.0, 2023; gpt-oss stores its experts so).
    "mxfp4": Fraction(17, 32),
}
PRECISIONS: Final = tuple(BYTES_PER_ELEMENT)
# From the widest to the narrowest, for "which precision would fit" (fp8 and int8 are the same
# size: the hint offers whichever the hardware computes).
PRECISIONS_WIDEST_FIRST: Final = ("fp32", "bf16", "fp8", "int8", "int4")
# Bytes per weight of a quantised checkpoint as stored, scales included. AWQ and GPTQ int4 keep one
# fp16 scale and one 4-bit zero point per group of 128 weights: 4 + 20/128 = 4.156 bits (AWQ,
# Lin et al. 2023; GPTQ, Frantar et al. 2022). fp8/int8 checkpoints keep one scale per output
# channel, well under 0.1 % of the weights, so they count as 1 byte.
QUANTISED_BYTES_PER_WEIGHT: Final[dict[str, Fraction]] = {
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "int4": Fraction(1, 2) + Fraction(20, 128 * 8),
    "mxfp4": Fraction(17, 32),  # the scales are in the format's 4.25 bits
}

Number = float | int | Decimal | Fraction


class CapacityInputError(ValueError):
    """An input the engine cannot work with; `field` names it (CLI option or form field)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def exact(value: Number) -> Fraction:
    """The decimal the user typed, as an exact fraction (0.6 -> 3/5, not 0.59999...)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise TypeError("a bool is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Decimal):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return Fraction(repr(value))
    raise TypeError(f"not a number: {value!r}")


def gb_to_bytes(value_gb: Number) -> Fraction:
    return exact(value_gb) * BYTES_PER_GB


def bytes_to_gb(value_bytes: Fraction | int) -> float:
    """GB for display and JSON, rounded to 6 decimals (1 kB resolution)."""
    return round(float(Fraction(value_bytes) / BYTES_PER_GB), 6)


def whole_bytes(value_bytes: Fraction | int) -> int:
    """Exact byte counts are integers; a fractional byte (int4 of an odd count) rounds up."""
    return math.ceil(value_bytes)


def bytes_per_element(precision: str, field: str) -> Fraction:
    try:
        return BYTES_PER_ELEMENT[precision]
    except KeyError:
        raise CapacityInputError(
            field, f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}"
        ) from None


def as_float(value: Fraction, places: int = 6) -> float:
    return round(float(value), places)
