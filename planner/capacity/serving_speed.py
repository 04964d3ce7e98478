"""The speed steps of a serving estimate: decode under batching, prefill, the targets, the cost.

Sources:
- Decode is memory-bound: at B concurrent streams each step reads every weight once plus all B
  KV caches, so per-user tokens/s <= bandwidth x efficiency / (weights ÷ N + B x KV per user ÷ N)
  per GPU (the roofline of Williams et al. 2009 applied to LLM decoding, Pope et al. 2022,
  "Efficiently Scaling Transformer Inference"). A mixture of experts reads its active experts.
- Every token costs about 2 x parameters FLOPs (Kaplan et al. 2020), so the aggregate rate is
  also capped by the devices' dense TFLOPS, and prefill (the prompt, compute-bound) takes
  prompt tokens x 2 x parameters ÷ (TFLOPS x MFU): the time to first token, before queueing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.formatting import gb, money, num, whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving_inputs import ServingInputs
from planner.capacity.serving_memory import Weights
from planner.capacity.serving_pool import Pool
from planner.capacity.units import BYTES_PER_GB, as_float, exact
from planner.capacity.validation import given_or_catalogue, positive, whole_number

BANDWIDTH_EFFICIENCY: Final = Fraction(1)  # an upper bound: real kernels reach 60-80 %
PREFILL_MFU: Final = Fraction(1, 2)  # prefill is compute-bound; 40-60 % of peak is typical


@dataclass(frozen=True, slots=True)
class Speed:
    bandwidth: Fraction | None
    batch: int
    per_user: Fraction | None  # tokens/s for each stream
    aggregate: Fraction | None  # tokens/s for the whole batch
    compute_ceiling: Fraction | None
    ttft_s: Fraction | None
    cost_per_million: Fraction | None


def _tflops(inputs: ServingInputs, precision: str | None) -> Fraction | None:
    acc = inputs.accelerator
    if acc is None:
        return None
    figure = {"fp8": acc.dense_fp8_tflops, "int8": acc.dense_int8_tops}.get(precision or "")
    figure = figure or acc.dense_bf16_tflops
    return exact(figure) if figure else None


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
    spec = inputs.model
    active = Fraction(1)
    if spec is not None and spec.active_params_b and inputs.model_gb is None:
        active = exact(spec.active_params_b) / exact(spec.params_b)
    ttft = prefill(inputs, weights, n, active, trail)
    if bandwidth is None or pool.free_after_weights < 0:
        return Speed(bandwidth, batch, None, None, None, ttft, None)
    read = weights.bytes * active / n + batch * pool.per_user_gpu
    per_user = BANDWIDTH_EFFICIENCY * bandwidth * BYTES_PER_GB / read
    trail.formula(
        "Decode rate per user" + (f" at a batch of {batch}" if batch > 1 else ""),
        "bandwidth × efficiency ÷ (weights read per GPU + batch × KV cache per user per GPU)",
        f"{num(bandwidth)} GB/s × {num(BANDWIDTH_EFFICIENCY)} ÷ ({gb(weights.bytes * active / n)} + "
        f"{batch} × {gb(pool.per_user_gpu)}) = {num(per_user, 1)} tokens/s",
    )
    aggregate = per_user * batch
    tflops = _tflops(inputs, weights.precision)
    ceiling = None
    if tflops is not None and weights.params is not None:
        ceiling = n * tflops * 10**12 / (2 * weights.params * active)
        if aggregate > ceiling:
            aggregate, per_user = ceiling, ceiling / batch
        trail.formula(
            "Compute ceiling",
            "GPUs × dense TFLOPS ÷ (2 × parameters read per token)",
            f"{n} × {num(tflops)} TFLOPS ÷ (2 × {num(weights.params * active / BYTES_PER_GB)} B) = {num(ceiling, 0)} tokens/s",
        )
    cost = _cost(inputs, aggregate, n, trail)
    return Speed(bandwidth, batch, per_user, aggregate, ceiling, ttft, cost)


def prefill(
    inputs: ServingInputs, weights: Weights, n: int, active: Fraction, trail: Trail
) -> Fraction | None:
    prompt = whole_number(inputs.prompt_tokens, "prompt_tokens")
    if prompt is None:
        if inputs.ttft_target_ms is not None:
            trail.assume("prompt_tokens", "unknown: the time to first token was not estimated")
        return None
    tflops = _tflops(inputs, weights.precision)
    if tflops is None or weights.params is None:
        trail.assume(
            "prompt_tokens",
            "given, but without the parameters and the GPU's TFLOPS the prefill time is unknown",
        )
        return None
    seconds = prompt * 2 * weights.params * active / (n * tflops * 10**12 * PREFILL_MFU)
    trail.formula(
        "Time to first token (prefill, no queueing)",
        "prompt tokens × 2 × parameters ÷ (GPUs × TFLOPS × MFU)",
        f"{whole(prompt)} × 2 × {num(weights.params * active / BYTES_PER_GB)} B ÷ ({n} × {num(tflops)} TFLOPS × "
        f"{num(PREFILL_MFU)}) = {num(seconds * 1000, 1)} ms",
    )
    return seconds


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
    """The decode rate the targets need (the stricter wins); warnings when the bounds miss them."""
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
        trail.warn(
            WarningCode.MEMORY_BOUND,
            Severity.ERROR,
            f"Memory-bound: at most {num(speed.per_user, 1)} tokens/s per stream at a batch of {speed.batch} from "
            f"{num(speed.bandwidth)} GB/s, below the {num(rate)} tokens/s {why}. "
            "More FLOPS will not help; fewer bytes per token (quantisation, shorter context, a smaller batch) or more bandwidth will.",
        )
    return rate


def _check_ttft(ttft_s: Fraction | None, target_ms: Fraction | None, trail: Trail) -> None:
    if target_ms is None or ttft_s is None:
        return
    if ttft_s * 1000 > target_ms:
        trail.warn(
            WarningCode.PREFILL_TOO_SLOW,
            Severity.ERROR,
            f"Prefill alone takes about {num(ttft_s * 1000, 0)} ms, over the {num(target_ms, 0)} ms "
            "time-to-first-token target (before any queueing). Shorten the prompt or add compute.",
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
