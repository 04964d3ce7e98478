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

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from planner.capacity import speed_model as sm
from planner.capacity.catalogue import Accelerator
from planner.capacity.formatting import gb, money, num, whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving_inputs import ServingInputs
from planner.capacity.serving_memory import Weights
from planner.capacity.serving_pool import Pool
from planner.capacity.units import BYTES_PER_GB, as_float, exact
from planner.capacity.validation import given_or_catalogue, positive, whole_number

BANDWIDTH_EFFICIENCY: Final = Fraction(1)  # the roofline bound: 100 % of the datasheet bandwidth
# The bound's prefill MFU, kept for callers that priced a forward pass with it (the prediction
# uses planner.capacity.speed_model.ACHIEVED_MFU).
PREFILL_MFU: Final = Fraction(1, 2)


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


@dataclass(frozen=True, slots=True)
class _Shape:
    """What the prediction needs beyond the pool: active share, layers, hidden size, lengths."""

    active: Fraction
    layers: int | None
    hidden: int | None
    prompt: int | None
    output: int | None


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
    kv = _kv_at_mean_context(pool, shape, trail)
    bound, ceiling = _roofline(inputs, weights, kv, n, bandwidth, batch, shape, trail)
    model = _decode_model(inputs, weights, kv, n, bandwidth, shape, trail)
    step = model.step(batch)
    prefill = _prefill(model, shape, n, trail)
    share = _arrivals_share(arrivals, prefill, trail)
    per_user = (1 - share) / step.total if share < 1 else None
    _decode_formulas(model, step, batch, share, per_user, n, trail)
    aggregate = per_user * batch if per_user is not None else None
    burst_wait = _burst_wait(model, prefill, burst, shape, trail)
    slots = _slots(pool, shape)
    ttft = _first_token(inputs, prefill, burst_wait, share, users, slots, per_user, shape, trail)
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


def _shape(inputs: ServingInputs, weights: Weights) -> _Shape:
    spec = inputs.model
    active = Fraction(1)
    if spec is not None and spec.active_params_b and inputs.model_gb is None:
        active = exact(spec.active_params_b) / exact(spec.params_b)
    layers = whole_number(inputs.layers, "layers") or (spec.layers if spec else None)
    hidden = whole_number(inputs.hidden_size, "hidden_size") or (spec.hidden_size if spec else None)
    prompt = whole_number(inputs.prompt_tokens, "prompt_tokens")
    output = whole_number(inputs.output_tokens, "output_tokens")
    return _Shape(active, layers, hidden, prompt, output)


def _roofline(
    inputs: ServingInputs,
    weights: Weights,
    kv: Fraction,
    n: int,
    bandwidth: Fraction,
    batch: int,
    shape: _Shape,
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


def _decode_model(
    inputs: ServingInputs,
    weights: Weights,
    kv: Fraction,
    n: int,
    bandwidth: Fraction,
    shape: _Shape,
    trail: Trail,
) -> sm.DecodeModel:
    acc = inputs.accelerator
    efficiency = sm.bandwidth_efficiency(acc, weights.precision)
    achieved = bandwidth * BYTES_PER_GB * efficiency
    trail.formula(
        "Achieved bandwidth per GPU",
        f"bandwidth × efficiency ({sm.device_class(acc)}, {sm.weight_format(weights.precision)} weights)",
        f"{num(bandwidth)} GB/s × {num(efficiency, 2)} = {num(achieved / BYTES_PER_GB)} GB/s",
    )
    dense, expert, experts = _weight_parts(inputs, weights, n, shape)
    flops_per_token = flops = None
    if acc is not None and weights.params is not None:
        flops = sm.achieved_flops(acc, weights.precision)
        flops_per_token = 2 * weights.params * shape.active / n
        if flops is not None:
            precision = sm.compute_precision(acc, weights.precision)
            trail.formula(
                "Achieved compute per GPU",
                f"dense {precision} TFLOPS × achieved MFU",
                f"{num(flops / sm.achieved_mfu(acc, precision) / 10**12)} TFLOPS × "
                f"{num(sm.achieved_mfu(acc, precision), 2)} = {num(flops / 10**12)} TFLOPS",
            )
    per_token, latency = _all_reduce_terms(acc, shape, n, trail)
    fixed = sm.DECODE_STEP_FIXED_S
    return sm.DecodeModel(
        dense, expert, experts, kv, achieved, flops_per_token, flops, per_token, latency, fixed
    )


def _kv_at_mean_context(pool: Pool, shape: _Shape, trail: Trail) -> Fraction:
    """A stream's KV cache grows from its prompt to prompt + output: on average prompt + output/2."""
    if pool.per_token_gpu is None or shape.prompt is None or shape.output is None:
        return pool.per_user_gpu
    mean = Fraction(2 * shape.prompt + shape.output, 2)
    kv = pool.per_token_gpu * mean
    trail.formula(
        "KV cache per stream during decode (mean context)",
        "KV bytes per token per GPU × (prompt + output ÷ 2)",
        f"{whole(pool.per_token_gpu)} bytes × ({whole(shape.prompt)} + {whole(shape.output)} ÷ 2) = {gb(kv)}",
    )
    return kv


def _weight_parts(
    inputs: ServingInputs, weights: Weights, n: int, shape: _Shape
) -> tuple[Fraction, Fraction, tuple[int, int] | None]:
    """Per GPU: the weights every token reads, one expert's weights, and (experts, per token).
    With E experts of x weights each, k per token: total = D + E·x, active = D + k·x."""
    per_gpu = weights.bytes / n
    experts = sm.moe_experts(inputs.model) if shape.active < 1 else None
    if experts is None:
        return per_gpu * shape.active, Fraction(0), None
    total, routed = experts
    expert = per_gpu * (1 - shape.active) / (total - routed)
    return per_gpu * shape.active - routed * expert, expert, experts


def _all_reduce_terms(
    acc: Accelerator | None, shape: _Shape, n: int, trail: Trail
) -> tuple[Fraction, Fraction]:
    """Seconds per step: (per token streamed, fixed latency) of 2 all-reduces per layer."""
    if n <= 1:
        return Fraction(0), Fraction(0)
    if shape.layers is None or shape.hidden is None:
        trail.formula(
            "Tensor-parallel all-reduces",
            "2 per layer per step",
            "not counted: the layers and hidden size are unknown",
        )
        return Fraction(0), Fraction(0)
    count = sm.ALL_REDUCES_PER_LAYER * shape.layers
    latency = count * sm.all_reduce_latency(acc, n)
    one_token = count * (
        sm.all_reduce_seconds(acc, 1, shape.hidden, n) - sm.all_reduce_latency(acc, n)
    )
    link = sm.link_bytes_per_s(acc) / BYTES_PER_GB
    trail.formula(
        "Tensor-parallel all-reduces per step",
        "2 × layers × (2⌈log₂ N⌉ steps × step latency + 2(N−1)/N × tokens × hidden × 2 bytes ÷ "
        "link bandwidth)",
        f"2 × {shape.layers} × ({num(sm.all_reduce_latency(acc, n) * 10**6, 1)} µs + "
        f"{num(Fraction(2 * (n - 1), n), 2)} × tokens × {whole(shape.hidden)} × 2 bytes ÷ {num(link)} GB/s)"
        f" = {num(latency * 1000, 2)} ms + {num(one_token * 10**6, 2)} µs per token",
    )
    return one_token, latency


def _decode_formulas(
    model: sm.DecodeModel,
    step: sm.StepParts,
    batch: int,
    share: Fraction,
    per_user: Fraction | None,
    n: int,
    trail: Trail,
) -> None:
    if model.experts is not None:
        experts, routed = model.experts
        read = sm.experts_read(experts, routed, batch)
        trail.formula(
            f"Experts read per step at a batch of {batch}",
            "E × (1 − (1 − k ÷ E)^batch)",
            f"{experts} × (1 − (1 − {routed} ÷ {experts})^{batch}) = {num(read, 2)} of {experts} experts",
        )
    trail.formula(
        "Decode step" + (f" at a batch of {batch}" if batch > 1 else ""),
        "(weights read + batch × KV per stream) ÷ achieved bandwidth + batch × FLOPs per token ÷ "
        "achieved FLOP/s" + (" + all-reduces" if n > 1 else "") + " + fixed step cost",
        f"{gb(step.read_bytes)} ÷ {num(model.bandwidth / BYTES_PER_GB)} GB/s = {num(step.memory * 1000, 2)} ms"
        f" + {num(step.compute * 1000, 2)} ms compute"
        + (f" + {num(step.all_reduce * 1000, 2)} ms all-reduce" if n > 1 else "")
        + f" + {num(step.fixed * 1000, 2)} ms = {num(step.total * 1000, 2)} ms",
    )
    if per_user is None:
        return
    carried = f" × (1 − {num(share, 3)} of the time on new prompts)" if share else ""
    trail.formula(
        "Decode rate per stream (predicted)",
        "1 ÷ step"
        + (" × (1 − share of time prefilling arrivals)" if share else "")
        + "; aggregate = batch × per stream",
        f"1 ÷ {num(step.total * 1000, 2)} ms{carried} = {num(per_user, 1)} tokens/s; "
        f"{batch} × {num(per_user, 1)} = {num(per_user * batch, 1)} tokens/s",
    )


def _prefill(model: sm.DecodeModel, shape: _Shape, n: int, trail: Trail) -> Fraction | None:
    """One forward pass over the prompt, seconds."""
    if shape.prompt is None:
        return None
    parts = model.prefill(shape.prompt)
    if model.flops is None:
        trail.formula(
            "Prefill",
            "prompt FLOPs ÷ achieved FLOP/s",
            "not estimated: the GPU's TFLOPS or the parameters are unknown",
        )
        return None
    trail.formula(
        "Prefill (one prompt)",
        "weights read ÷ achieved bandwidth + prompt tokens × FLOPs per token ÷ achieved FLOP/s"
        + (" + all-reduces" if n > 1 else ""),
        f"{num(parts.memory * 1000, 2)} ms + {whole(shape.prompt)} × "
        f"{num(model.flops_per_token or 0, 0)} FLOPs ÷ {num(model.flops / 10**12)} TFLOPS = "
        f"{num(parts.compute * 1000, 2)} ms"
        + (f" + {num(parts.all_reduce * 1000, 2)} ms" if n > 1 else "")
        + f" = {num(parts.total * 1000, 1)} ms",
    )
    return parts.total


def _arrivals_share(arrivals: Fraction | None, prefill: Fraction | None, trail: Trail) -> Fraction:
    """The share of the GPUs' time new requests' prefills take: arrival rate × one prefill."""
    if not arrivals or prefill is None:
        return Fraction(0)
    share = arrivals * prefill
    trail.formula(
        "Time spent prefilling new arrivals",
        "arrival rate × prefill time",
        f"{num(arrivals)} per s × {num(prefill * 1000, 1)} ms = {num(share * 100, 1)} % of the time",
    )
    if share >= 1:
        trail.warn(
            WarningCode.ARRIVALS_EXCEED_PREFILL,
            Severity.ERROR,
            f"{num(arrivals)} new requests a second need {num(share * 100, 0)} % of the GPUs' time "
            "for their prompts alone: the queue grows without end. Add replicas or shorten the prompts.",
        )
    return share


def _slots(pool: Pool, shape: _Shape) -> int:
    """Streams the KV pool holds at once while serving: an engine allocates KV blocks as tokens
    arrive (PagedAttention, Kwon et al. 2023), so a stream holds prompt + output ÷ 2 tokens on
    average; the pool's max users (each at the full context) when the lengths are unknown."""
    if pool.kv_cache_tokens is None or shape.prompt is None or shape.output is None:
        return pool.max_users
    return max(
        pool.max_users,
        math.floor(pool.kv_cache_tokens / Fraction(2 * shape.prompt + shape.output, 2)),
    )


def _burst_wait(
    model: sm.DecodeModel,
    prefill: Fraction | None,
    burst: int | None,
    shape: _Shape,
    trail: Trail,
) -> Fraction:
    """Requests that arrive together are prefilled together (the engine admits them into the same
    prefill steps), so every first token of the burst waits for all of its prompts: one forward
    pass over burst x prompt tokens, the weights read once. A mean that is also the worst."""
    if prefill is None or shape.prompt is None or not burst or burst < 2:
        return Fraction(0)
    together = model.prefill(burst * shape.prompt).total
    trail.formula(
        f"Prefill of a burst of {burst} arrivals",
        "weights read ÷ achieved bandwidth + burst × prompt tokens × FLOPs per token ÷ achieved FLOP/s",
        f"{whole(burst)} × {whole(shape.prompt)} tokens in one pass = {num(together * 1000, 1)} ms, "
        f"{num((together - prefill) * 1000, 1)} ms more than one prompt alone",
    )
    return together - prefill


def _first_token(
    inputs: ServingInputs,
    prefill: Fraction | None,
    burst_wait: Fraction,
    share: Fraction,
    users: int | None,
    max_users: int,
    per_user: Fraction | None,
    shape: _Shape,
    trail: Trail,
) -> Fraction | None:
    """The mean time to first token: fixed cost + prefill + the mean queueing of each cause."""
    if prefill is None:
        if shape.prompt is None and inputs.ttft_target_ms is not None:
            trail.assume("prompt_tokens", "unknown: the time to first token was not estimated")
        return None
    if share >= 1:
        return None
    base = sm.FIRST_TOKEN_FIXED_S + prefill
    arrival_wait = share * prefill / (2 * (1 - share))  # M/D/1 (Pollaczek-Khinchine)
    slot_wait = _slot_wait(users, max_users, base, per_user, shape.output, trail)
    ttft = base + burst_wait + arrival_wait + slot_wait
    trail.formula(
        "Time to first token (mean)",
        "fixed cost + prefill + the rest of a burst's prefill + arrivals' queue ρ × prefill ÷ "
        "2(1 − ρ) + wait for a KV slot",
        f"{num(sm.FIRST_TOKEN_FIXED_S * 1000, 1)} + {num(prefill * 1000, 1)} + "
        f"{num(burst_wait * 1000, 1)} + {num(arrival_wait * 1000, 1)} + {num(slot_wait * 1000, 1)} ms = "
        f"{num(ttft * 1000, 1)} ms",
    )
    return ttft


def _slot_wait(
    users: int | None,
    max_users: int,
    base: Fraction,
    per_user: Fraction | None,
    output: int | None,
    trail: Trail,
) -> Fraction:
    """Users beyond the KV pool's slots wait: the k-th waits ⌈k ÷ slots⌉ requests; the mean over
    all users."""
    if not users or users <= max_users or max_users < 1 or per_user is None or output is None:
        return Fraction(0)
    request = base + output / per_user
    waiting = users - max_users
    rounds, extra = divmod(waiting, max_users)
    total = max_users * rounds * (rounds + 1) // 2 + extra * (rounds + 1)
    mean = Fraction(total, users) * request
    trail.formula(
        "Waiting for a KV slot (mean over users)",
        "Σ ⌈k ÷ slots⌉ over the waiting users × request time ÷ users",
        f"{whole(waiting)} users beyond {whole(max_users)} slots, requests of {num(request, 2)} s: "
        f"{num(mean * 1000, 0)} ms",
    )
    return mean


def _curve(
    model: sm.DecodeModel,
    max_users: int,
    bandwidth: Fraction,
    weights: Weights,
    n: int,
    shape: _Shape,
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


def speed_targets(inputs: ServingInputs, speed: Speed, trail: Trail) -> Fraction | None:
    """The decode rate the targets need (the stricter wins); warnings when the prediction misses."""
    min_decode = positive(inputs.min_decode_tokens_per_s, "min_decode_tokens_per_s")
    latency_ms = positive(inputs.latency_target_ms, "latency_target_ms")
    ttft_target = positive(inputs.ttft_target_ms, "ttft_target_ms")
    output_tokens = whole_number(inputs.output_tokens, "output_tokens")
    _check_ttft(speed.ttft_s, ttft_target, trail)
    from_latency = _rate_for_latency(latency_ms, output_tokens, speed.ttft_s, trail)
    targets = [(r, why) for r, why in ((min_decode, "target"), from_latency) if r is not None]
    if not targets:
        return None
    rate, why = max(targets, key=lambda t: t[0])
    if speed.bandwidth is None:
        trail.assume("memory_bandwidth_gb_s", "unknown: the speed target was not checked")
    elif speed.per_user is not None and speed.per_user < rate:
        _decode_warning(speed, rate, why, trail)
    return rate


def _decode_warning(speed: Speed, rate: Fraction, why: str, trail: Trail) -> None:
    bound = f" (roofline bound {num(speed.per_user_bound, 1)})" if speed.per_user_bound else ""
    predicted = (
        f"about {num(speed.per_user or 0, 1)} tokens/s per stream predicted{bound} at a batch "
        f"of {speed.batch}"
    )
    if speed.memory_dominated:
        trail.warn(
            WarningCode.MEMORY_BOUND,
            Severity.ERROR,
            f"Memory-bound: {predicted} from {num(speed.bandwidth or 0)} GB/s, below the "
            f"{num(rate)} tokens/s {why}. More FLOPS will not help; fewer bytes per token "
            "(quantisation, shorter context, a smaller batch) or more bandwidth will.",
        )
        return
    trail.warn(
        WarningCode.DECODE_TOO_SLOW,
        Severity.ERROR,
        f"Compute-bound: {predicted}, below the {num(rate)} tokens/s {why}: the batch's FLOPs take "
        "longer than reading the weights. A smaller batch per GPU, more GPUs or faster tensor cores will help.",
    )


def _check_ttft(ttft_s: Fraction | None, target_ms: Fraction | None, trail: Trail) -> None:
    if target_ms is None or ttft_s is None:
        return
    if ttft_s * 1000 > target_ms:
        trail.warn(
            WarningCode.PREFILL_TOO_SLOW,
            Severity.ERROR,
            f"The first token takes about {num(ttft_s * 1000, 0)} ms (fixed cost, prefill and "
            f"queueing), over the {num(target_ms, 0)} ms time-to-first-token target. Shorten the "
            "prompt, spread the arrivals or add compute.",
        )


def _rate_for_latency(
    latency_ms: Fraction | None, output_tokens: int | None, ttft_s: Fraction | None, trail: Trail
) -> tuple[Fraction, str] | tuple[None, str]:
    """A whole-answer latency target: the output tokens stream out after the first token."""
    if latency_ms is None:
        return None, ""
    if output_tokens is None:
        trail.assume(
            "output_tokens", "unknown: the latency target was not turned into a decode speed"
        )
        return None, ""
    seconds = latency_ms / 1000 - (ttft_s or 0)
    if seconds <= 0:
        trail.warn(
            WarningCode.PREFILL_TOO_SLOW,
            Severity.ERROR,
            f"The first token alone takes longer than the {num(latency_ms, 0)} ms answer latency target.",
        )
        return None, ""
    rate = output_tokens / seconds
    minus = f" − {num(ttft_s * 1000, 1)} ms to first token" if ttft_s else ""
    trail.formula(
        "Decode speed the latency target needs",
        "output tokens ÷ (latency target − time to first token)",
        f"{whole(output_tokens)} tokens ÷ ({num(latency_ms / 1000)} s{minus}) = {num(rate, 1)} tokens/s",
    )
    return rate, f"that {whole(output_tokens)} output tokens in {num(latency_ms, 0)} ms need"


def rounded(value: Fraction | None, places: int = 2) -> float | None:
    return as_float(value, places) if value is not None else None
