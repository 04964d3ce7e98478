"""Training speed and cost: measured tokens per second, or peak TFLOPS × MFU ÷ FLOPs per token
(6N per token for full training, 4N with a frozen base, + 2N when checkpointing recomputes)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from planner.capacity.formatting import money, num, whole
from planner.capacity.results import Trail
from planner.capacity.units import SECONDS_PER_HOUR, CapacityInputError, as_float, exact
from planner.capacity.validation import given_or_catalogue, positive, whole_number

if TYPE_CHECKING:
    from planner.capacity.training import TrainingInputs

DEFAULT_MFU = Fraction(2, 5)  # 40 % model FLOPs utilisation: a common, achievable figure


def training_speed(
    inputs: TrainingInputs,
    params: Fraction,
    flops: Fraction,
    tokens: int | None,
    gpus: int,
    trail: Trail,
) -> dict[str, float | None]:
    """Tokens per second (measured, or TFLOPS × MFU ÷ FLOPs per token), steps, hours and cost."""
    acc = inputs.accelerator
    rate = positive(inputs.tokens_per_s, "tokens_per_s")
    if rate is None and acc is not None and acc.dense_bf16_tflops:
        mfu = positive(inputs.mfu, "mfu")
        if mfu is None:
            mfu = DEFAULT_MFU
            trail.assume("mfu", "0.4")
        if mfu > 1:
            raise CapacityInputError("mfu", "is a fraction of peak: at most 1")
        rate = gpus * exact(acc.dense_bf16_tflops) * 10**12 * mfu / flops
        trail.formula(
            "Tokens per second",
            "GPUs × peak TFLOPS × MFU ÷ FLOPs per token",
            f"{gpus} × {num(acc.dense_bf16_tflops)} TFLOPS × {num(mfu)} ÷ {num(flops / params)}N = {num(rate, 0)} tokens/s",
        )
    steps_per_s = rate / (tokens * gpus) if rate is not None and tokens else None
    if steps_per_s is not None:
        trail.formula(
            "Steps per second",
            "tokens per second ÷ (batch × sequence × GPUs)",
            f"{num(rate or 0, 0)} ÷ ({whole(tokens or 0)} × {gpus}) = {num(steps_per_s, 4)}",
        )
    price = given_or_catalogue(
        inputs.price_per_hour, "price_per_hour", acc.price_per_hour_usd if acc else None
    )
    steps = whole_number(inputs.steps, "steps")
    hours = (
        Fraction(steps) / steps_per_s / SECONDS_PER_HOUR
        if steps is not None and steps_per_s
        else None
    )
    cost = hours * price * gpus if hours is not None and price is not None else None
    if cost is not None:
        trail.formula(
            "Cost per run",
            "steps ÷ steps per second ÷ 3600 × price per hour × GPUs",
            f"{whole(steps or 0)} ÷ {num(steps_per_s or 0, 4)} ÷ 3600 × {money(price or 0)} × {gpus} = {money(cost)}",
        )
    return {
        "tokens_per_s": as_float(rate, 1) if rate is not None else None,
        "steps_per_s": as_float(steps_per_s, 6) if steps_per_s is not None else None,
        "hours_per_run": as_float(hours, 3) if hours is not None else None,
        "cost_per_run_usd": as_float(cost, 2) if cost is not None else None,
        "price_per_hour_usd": as_float(price, 4) if price is not None else None,
    }
