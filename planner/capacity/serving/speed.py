"""The speed steps of a serving estimate: decode under batching, first token, targets, cost.

Two figures side by side:
- The roofline bound: at B concurrent streams each step reads every weight once plus all B KV
  caches, so per-stream tokens/s <= bandwidth / (weights ÷ N + B x KV per user ÷ N) per GPU (the
  roofline of Williams et al. 2009 applied to LLM decoding, Pope et al. 2022, "Efficiently
  Scaling Transformer Inference"), and the aggregate <= GPUs x TFLOPS ÷ (2 x parameters).
- The prediction (planner.capacity.speed_model): a decode step = (weights read + every stream's KV
  at its mean context, prompt + output/2) ÷ achieved bandwidth + the step's FLOPs ÷ achieved
  FLOP/s (compute adds to memory time) + a fixed per-step cost + for tensor parallelism two
  all-reduces per layer; per stream = 1 ÷ step, aggregate = batch ÷ step. A mixture of experts
  reads E x (1 - (1 - k/E)^B) experts at batch B. The first token = a fixed cost + one forward
  pass over the prompt + queueing (a burst's prompts prefilled together, a KV slot, arrivals'
  prefills).
Speed targets are checked against the prediction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from planner.capacity import speed_model as sm
from planner.capacity.formatting import gb, money, num, whole
from planner.capacity.results import Trail
from planner.capacity.serving.decode import Shape, decode_formulas, decode_model, kv_at_mean_context
from planner.capacity.serving.first_token import (
    arrivals_share,
    burst_extra_wait,
    first_token_seconds,
    kv_slots,
    prefill_seconds,
)
from planner.capacity.serving.inputs import ServingInputs
from planner.capacity.serving.memory import Weights
from planner.capacity.serving.pool import Pool
from planner.capacity.units import BYTES_PER_GB, as_float, exact
from planner.capacity.validation import given_or_catalogue, positive, whole_number

BANDWIDTH_EFFICIENCY: Final = Fraction(1)  # the roofline bound: 100 % of the datasheet bandwidth


@dataclass(frozen=True, slots=True)
class Speed:
    bandwidth: Fraction | None
    batch: int
    per_user: Fraction | None  # predicted tokens/s for each stream
    aggregate: Fraction | None  # predicted tokens/s for the whole batch
    per_user_bound: Fraction | None  # the roofline
    compute_ceiling: Fraction | None
    ttft_s: Fraction | None  # predicted: fixed cost + prefill + queueing
    cost_per_million: Fraction | None
    compute_bound_batch: int | None = None
    memory_dominated: bool = True
    curve: list[dict[str, Any]] = field(default_factory=list)


def decode(
    inputs: ServingInputs, weights: Weights, pool: Pool, users: int | None, n: int, trail: Trail
) -> Speed:
    acc = inputs.accelerator
    bandwidth = given_or_catalogue(
        inputs.memory_bandwidth_gb_s,
        "memory_bandwidth_gb_s",
        acc.memory_bandwidth_gb_s if acc else None,
    )
    batch = whole_number(inputs.decode_batch, "decode_batch") or users or 1
    if inputs.decode_batch is None and users and users > 1:
        trail.assume("decode_batch", f"{users} (the target users decode together)")
    shape = _shape(inputs, weights)
    arrivals = positive(inputs.arrival_rate_per_s, "arrival_rate_per_s", allow_zero=True)
    burst = whole_number(inputs.burst_arrivals, "burst_arrivals")
    if bandwidth is None or pool.free_after_weights < 0:
        if shape.prompt is not None and inputs.ttft_target_ms is not None:
            trail.assume(
                "prompt_tokens",
                "given, but without the bandwidth the first token was not estimated",
            )
        return Speed(bandwidth, batch, None, None, None, None, None, None)
    kv = kv_at_mean_context(pool, shape, trail)
    bound, ceiling = _roofline(inputs, weights, kv, n, bandwidth, batch, shape, trail)
    model = decode_model(inputs, weights, kv, n, bandwidth, shape, trail)
    step = model.step(batch)
    prefill = prefill_seconds(model, shape, n, trail)
    share = arrivals_share(arrivals, prefill, trail)
    per_user = (1 - share) / step.total if share < 1 else None
    decode_formulas(model, step, batch, share, per_user, n, trail)
    aggregate = per_user * batch if per_user is not None else None
    waits = burst_extra_wait(model, prefill, burst, shape, trail)
    slots = kv_slots(pool, shape)
    ttft = first_token_seconds(inputs, prefill, waits, share, users, slots, per_user, shape, trail)
    knee = model.compute_bound_batch()
    if knee is not None:
        trail.formula(
            "Batch at which decode turns compute-bound",
            "⌈(weights ÷ achieved bandwidth) ÷ (FLOPs per token ÷ achieved FLOP/s − KV per stream ÷ achieved bandwidth)⌉",
            f"{whole(knee)} streams",
        )
    cost = _cost(inputs, aggregate, n, trail) if aggregate else None
    curve = _curve(model, pool.max_users, bandwidth, weights, n, shape, ceiling)
    return Speed(
        bandwidth,
        batch,
        per_user,
        aggregate,
        bound,
        ceiling,
        ttft,
        cost,
        knee,
        step.memory >= step.compute,
        curve,
    )


def _shape(inputs: ServingInputs, weights: Weights) -> Shape:
    spec = inputs.model
    active = Fraction(1)
    if spec is not None and spec.active_params_b and inputs.model_gb is None:
        active = exact(spec.active_params_b) / exact(spec.params_b)
    layers = whole_number(inputs.layers, "layers") or (spec.layers if spec else None)
    hidden = whole_number(inputs.hidden_size, "hidden_size") or (spec.hidden_size if spec else None)
    prompt = whole_number(inputs.prompt_tokens, "prompt_tokens")
    output = whole_number(inputs.output_tokens, "output_tokens")
    return Shape(active, layers, hidden, prompt, output)


def _roofline(
    inputs: ServingInputs,
    weights: Weights,
    kv: Fraction,
    n: int,
    bandwidth: Fraction,
    batch: int,
    shape: Shape,
    trail: Trail,
) -> tuple[Fraction, Fraction | None]:
    """The bound: 100 % of the bandwidth, no fixed costs, no compute time below the ceiling."""
    read = weights.bytes * shape.active / n + batch * kv
    per_user = BANDWIDTH_EFFICIENCY * bandwidth * BYTES_PER_GB / read
    trail.formula(
        "Decode upper bound per stream (roofline)"
        + (f" at a batch of {batch}" if batch > 1 else ""),
        "bandwidth ÷ (weights read per GPU + batch × KV cache per user per GPU)",
        f"{num(bandwidth)} GB/s ÷ ({gb(weights.bytes * shape.active / n)} + "
        f"{batch} × {gb(kv)}) = {num(per_user, 1)} tokens/s",
    )
    tflops = _tflops(inputs, weights.precision)
    ceiling = None
    if tflops is not None and weights.params is not None:
        ceiling = n * tflops * 10**12 / (2 * weights.params * shape.active)
        per_user = min(per_user, ceiling / batch)
        trail.formula(
            "Compute ceiling",
            "GPUs × dense TFLOPS ÷ (2 × parameters read per token)",
            f"{n} × {num(tflops)} TFLOPS ÷ (2 × {num(weights.params * shape.active / BYTES_PER_GB)} B) "
            f"= {num(ceiling, 0)} tokens/s",
        )
    return per_user, ceiling


def _tflops(inputs: ServingInputs, precision: str | None) -> Fraction | None:
    acc = inputs.accelerator
    if acc is None:
        return None
    return sm.peak_tflops(acc, sm.compute_precision(acc, precision))


def _curve(
    model: sm.DecodeModel,
    max_users: int,
    bandwidth: Fraction,
    weights: Weights,
    n: int,
    shape: Shape,
    ceiling: Fraction | None,
) -> list[dict[str, Any]]:
    """Per-stream and aggregate rates at batch 1, 2, 4, ... up to the pool's max users."""
    out = []
    for batch in sm.speed_curve_batches(max_users):
        per_user = 1 / model.step(batch).total
        read = weights.bytes * shape.active / n + batch * model.kv_bytes
        bound = bandwidth * BYTES_PER_GB / read
        if ceiling is not None:
            bound = min(bound, ceiling / batch)
        out.append(
            {
                "batch": batch,
                "decode_tokens_per_s": rounded(per_user),
                "decode_tokens_per_s_upper_bound": rounded(bound),
                "aggregate_tokens_per_s": rounded(per_user * batch, 1),
            }
        )
    return out


def _cost(inputs: ServingInputs, aggregate: Fraction, n: int, trail: Trail) -> Fraction | None:
    acc = inputs.accelerator
    if acc is None or not acc.price_per_hour_usd or aggregate <= 0:
        return None
    hourly = exact(acc.price_per_hour_usd) * n
    cost = hourly / (aggregate * 3600) * 10**6
    trail.formula(
        "Cost per million output tokens",
        "price per hour × GPUs ÷ (aggregate tokens/s × 3,600) × 10⁶",
        f"{money(hourly)} ÷ ({num(aggregate, 1)} × 3,600) × 10⁶ = {money(cost)}",
    )
    return cost


def rounded(value: Fraction | None, places: int = 2) -> float | None:
    return as_float(value, places) if value is not None else None
