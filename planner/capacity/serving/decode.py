"""The decode model of a serving estimate: what one GPU reads and computes per decode step (the
weights, every stream's KV at its mean context, the all-reduces), with each term's formula.

planner.capacity.serving.speed runs it; the constants live in planner.capacity.speed_model.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from planner.capacity import speed_model as sm
from planner.capacity.catalogue import Accelerator
from planner.capacity.formatting import gb, num, whole
from planner.capacity.results import Trail
from planner.capacity.serving.inputs import ServingInputs
from planner.capacity.serving.memory import Weights
from planner.capacity.serving.pool import Pool
from planner.capacity.units import BYTES_PER_GB


@dataclass(frozen=True, slots=True)
class Shape:
    """What the prediction needs beyond the pool: active share, layers, hidden size, lengths."""

    active: Fraction
    layers: int | None
    hidden: int | None
    prompt: int | None
    output: int | None


def decode_model(
    inputs: ServingInputs,
    weights: Weights,
    kv: Fraction,
    n: int,
    bandwidth: Fraction,
    shape: Shape,
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
    attention = Fraction(0)
    if acc is not None and weights.params is not None:
        flops = sm.achieved_flops(acc, weights.precision)
        flops_per_token = 2 * sm.matmul_params(inputs.model, weights.params) * shape.active / n
        attention = sm.attention_flops_per_pair(inputs.model, n)
        _flops_formulas(inputs, weights, shape, n, flops_per_token, attention, trail)
        if flops is not None:
            precision = sm.compute_precision(acc, weights.precision)
            trail.formula(
                "Achieved compute per GPU",
                f"dense {precision} TFLOPS × achieved MFU",
                f"{num(flops / sm.achieved_mfu(acc, precision) / 10**12)} TFLOPS × "
                f"{num(sm.achieved_mfu(acc, precision), 2)} = {num(flops / 10**12)} TFLOPS",
            )
    per_token, latency = _all_reduce_terms(acc, shape, n, trail)
    fixed = sm.decode_step_fixed(acc)
    return sm.DecodeModel(
        dense,
        expert,
        experts,
        kv,
        achieved,
        flops_per_token,
        flops,
        per_token,
        latency,
        fixed,
        attention,
        sm.expert_read_share(acc),
    )


def _flops_formulas(
    inputs: ServingInputs,
    weights: Weights,
    shape: Shape,
    n: int,
    per_token: Fraction,
    attention: Fraction,
    trail: Trail,
) -> None:
    """The matmul FLOPs a token (2 x parameters less the embedding lookup) and, for a prompt,
    attention's (2 x layers x prompt x d_attn a token): 2 x parameters is the short-prompt
    approximation."""
    assert weights.params is not None
    trail.formula(
        "Matmul FLOPs per token per GPU",
        "2 × (parameters read − the input embedding, a lookup) ÷ GPUs",
        f"2 × {num(sm.matmul_params(inputs.model, weights.params) * shape.active / 10**9, 3)} B "
        f"÷ {n} = {num(per_token / 10**9, 2)} GFLOPs",
    )
    if not attention or shape.prompt is None:
        return
    mean = attention * Fraction(shape.prompt, 2)
    trail.formula(
        "Attention FLOPs per prompt token per GPU (causal: T ÷ 2 keys on average)",
        "4 × layers × heads × head dim ÷ GPUs × prompt ÷ 2 = 2 × layers × prompt × d_attn ÷ GPUs",
        f"{num(attention, 0)} × {whole(shape.prompt)} ÷ 2 = {num(mean / 10**9, 2)} GFLOPs "
        f"({num(mean / per_token * 100, 0)} % on top of the matmuls)",
    )


def kv_at_mean_context(pool: Pool, shape: Shape, trail: Trail) -> Fraction:
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
    inputs: ServingInputs, weights: Weights, n: int, shape: Shape
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
    acc: Accelerator | None, shape: Shape, n: int, trail: Trail
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


def decode_formulas(
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
