"""The speed targets of a serving estimate (minimum decode rate, time to first token, answer
latency), checked against the prediction, with the warnings when it misses them."""

from __future__ import annotations

from fractions import Fraction

from planner.capacity.formatting import num, whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving.inputs import ServingInputs
from planner.capacity.serving.speed import Speed
from planner.capacity.validation import positive, whole_number


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
