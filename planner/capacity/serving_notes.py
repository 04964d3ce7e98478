"""What a serving estimate bounds rather than models: named warnings, and the standing list."""

from __future__ import annotations

from planner.capacity.formatting import whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving_inputs import ServingInputs

SERVING_NOT_MODELLED = (
    "Prefix caching (shared prompts stored once) and speculative decoding.",
    "Memory fragmentation and CUDA graphs captured after profiling.",
    "Pipeline and expert parallelism; only tensor parallelism over GPUs of one kind.",
    "Queueing: the time to first token is prefill alone, at an assumed MFU.",
    "Sliding-window and MLA attention: their KV cache is counted in full (an upper bound).",
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
        trail.warn(
            WarningCode.SLIDING_WINDOW_UPPER_BOUND,
            Severity.WARNING,
            f"{spec.name} keeps only {whole(spec.sliding_window)} tokens on its sliding-window layers; "
            "the KV cache here counts every layer in full, an upper bound.",
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
