"""What a serving estimate bounds rather than models: named warnings, and the standing list."""

from __future__ import annotations

from fractions import Fraction

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving.inputs import ServingInputs

SERVING_NOT_MODELLED = (
    "Prefix caching (shared prompts stored once) and speculative decoding.",
    "Memory fragmentation and CUDA graphs captured after profiling.",
    "Pipeline and expert parallelism; only tensor parallelism over GPUs of one kind.",
    "Queueing beyond three means: a burst's earlier prefills, a wait for a KV slot, and steady "
    "arrivals' prefills (M/D/1); no tail latencies, no engine's chunked-prefill schedule.",
    "Attention FLOPs of long prompts, speculative decoding and each engine's own kernels: the "
    "speed is a fitted model (efficiencies, MFU, fixed costs in planner.capacity.speed_model).",
    "Sliding-window attention: its layers' KV cache is counted in full (an upper bound; the warning gives the windowed figure).",
)


def model_notes(inputs: ServingInputs, context: int | None, trail: Trail) -> None:
    """Named warnings for what the estimate bounds rather than models."""
    spec = inputs.model
    if spec is None:
        return
    if context is not None and context > spec.max_context_tokens:
        trail.warn(
            WarningCode.CONTEXT_EXCEEDS_MODEL,
            Severity.WARNING,
            f"{whole(context)} tokens is longer than {spec.name}'s {whole(spec.max_context_tokens)}-token context.",
        )
    if spec.sliding_window and context is not None and context > spec.sliding_window:
        _sliding_window_note(spec, context, trail)
    if spec.mla_latent_dim is not None and inputs.kv_heads is None and inputs.head_dim is None:
        trail.warn(
            WarningCode.MLA_LATENT_CACHE,
            Severity.WARNING,
            f"{spec.name} uses multi-head latent attention: each layer caches one "
            f"{spec.mla_latent_dim}-element latent per token (kv_lora_rank + qk_rope_head_dim), "
            f"not K and V per head: {2 * spec.kv_heads * spec.head_dim / spec.mla_latent_dim:.1f}× "
            f"less than 2 × {spec.kv_heads} KV heads × {spec.head_dim} would count. Every "
            "tensor-parallel GPU keeps the whole latent, so more GPUs do not shrink it.",
        )
    if spec.family == "moe":
        trail.warn(
            WarningCode.MOE_ALL_EXPERTS_RESIDENT,
            Severity.WARNING,
            f"{spec.name} is a mixture of experts: every expert stays in memory ({spec.params_b:g} B "
            f"parameters), but decode reads only the active ones ({spec.active_params_b or spec.params_b:g} B).",
        )
    if spec.family == "multimodal":
        trail.warn(
            WarningCode.MULTIMODAL_ACTIVATIONS,
            Severity.WARNING,
            "A multimodal model's encoder profile depends on its image limits; the activation peak is one logged run.",
        )


def _sliding_window_note(spec: ModelSpec, context: int, trail: Trail) -> None:
    """The windowed figure beside the full count: windowed layers hold at most the window."""
    window = spec.sliding_window or context
    windowed = spec.sliding_window_layers or spec.layers
    full = spec.layers - windowed
    share = Fraction(full * context + windowed * min(context, window), spec.layers * context)
    layers = f"{windowed} of its {spec.layers} layers" if windowed < spec.layers else "every layer"
    trail.warn(
        WarningCode.SLIDING_WINDOW_UPPER_BOUND,
        Severity.WARNING,
        f"{spec.name} keeps only {whole(window)} tokens on {layers}; the KV cache here counts "
        f"every layer in full, an upper bound. With the window, {whole(context)} tokens need "
        f"{float(share):.0%} of it (vLLM's V1 hybrid KV-cache manager allocates the windowed "
        "layers so; engines without it allocate every layer in full).",
    )


def precision_notes(inputs: ServingInputs, weight_precision: str | None, trail: Trail) -> None:
    """Weights in a precision the device does not compute in run weight-only: they save memory,
    not time (e.g. fp8 on an A100, T4 or TPU v5e)."""
    acc = inputs.accelerator
    if acc is None or weight_precision is None or acc.supports(weight_precision):
        return
    trail.warn(
        WarningCode.PRECISION_NOT_NATIVE,
        Severity.WARNING,
        f"The {acc.name} has no {weight_precision} tensor cores: engines run such weights "
        "weight-only (unpacked to 16-bit for each matrix multiply), so they save memory but "
        f"compute at 16-bit speed. It computes in {', '.join(acc.precisions)}.",
    )
