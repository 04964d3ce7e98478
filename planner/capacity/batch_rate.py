"""A batch worker's rate from its hardware when nobody measured one: achieved forward tokens per
second (about 2 x parameters FLOPs per token, Kaplan et al. 2020, at the speed model's MFU) ÷
tokens per item."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from planner.capacity.formatting import num, whole
from planner.capacity.results import Trail
from planner.capacity.speed_model import (
    achieved_mfu,
    compute_precision,
    forward_tokens_per_s,
    peak_tflops,
)
from planner.capacity.units import BYTES_PER_GB, exact
from planner.capacity.validation import positive, whole_number

if TYPE_CHECKING:
    from planner.capacity.batch import BatchInputs


def hardware_items_per_s(inputs: BatchInputs, trail: Trail) -> Fraction | None:
    """One worker's rate from its device: forward tokens per second ÷ tokens per item (None
    without a device with a compute figure, the parameters, or the tokens per item)."""
    acc = inputs.accelerator
    tokens_in = whole_number(inputs.tokens_per_item, "tokens_per_item")
    tokens_out = whole_number(
        inputs.output_tokens_per_item, "output_tokens_per_item", allow_zero=True
    )
    if inputs.params_b is not None:
        params = positive(inputs.params_b, "params_b") * BYTES_PER_GB
    elif inputs.model is not None:
        params = exact(inputs.model.params_b) * BYTES_PER_GB
    else:
        return None
    if acc is None or tokens_in is None:
        return None
    precision = compute_precision(acc, "bf16")
    tflops = peak_tflops(acc, precision)
    if tflops is None:
        return None
    tokens = tokens_in + (tokens_out or 0)
    per_item = forward_tokens_per_s(acc, params, "bf16") / tokens
    trail.formula(
        "Items per second per worker (from the hardware)",
        "TFLOPS × MFU ÷ (2 × parameters) ÷ tokens per item",
        f"{num(tflops)} TFLOPS × {num(achieved_mfu(acc, precision))} ÷ "
        f"(2 × {num(params / BYTES_PER_GB)} B) ÷ "
        f"{whole(tokens)} tokens = {num(per_item, 2)} items/s on one {acc.name}",
    )
    return per_item
