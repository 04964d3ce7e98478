"""What a training estimate returns: memory per GPU, speed and cost, and its JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from planner.capacity.results import (
    Assumption,
    EstimateNotes,
    EstimateWarning,
    FormulaLine,
    Gigabytes,
)
from planner.capacity.units import bytes_to_gb


@dataclass(frozen=True, slots=True)
class TrainingEstimate(EstimateNotes):
    """Memory per GPU; speed and cost for the whole run."""

    NOT_MODELLED: ClassVar[tuple[str, ...]] = (
        "Tensor and pipeline parallelism; only data parallelism with ZeRO/FSDP sharding.",
        "Allocator fragmentation and communication buffers (add 1-3 GB per GPU).",
        "Sequence packing; offloading optimizer states or weights to CPU RAM.",
    )
    method: str
    params: int
    trainable_params: int
    weights_bytes: int
    quantisation_constants_bytes: int
    gradients_bytes: int
    optimizer_state_bytes: int
    activations_bytes: int | None
    cuda_context_bytes: int
    total_bytes: int
    gpu_memory_bytes: int | None
    fits: bool | None
    checkpointing: bool
    gpus: int
    zero_stage: int
    tokens_per_step: int | None
    flops_per_token: int
    tokens_per_s: float | None
    steps_per_s: float | None
    hours_per_run: float | None
    cost_per_run_usd: float | None
    price_per_hour_usd: float | None
    accelerator_id: str | None
    model_id: str | None
    # A mixture of experts' parameters one token reads (billions); None for a dense model.
    active_params_b: float | None = None
    warnings: list[EstimateWarning] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    formulas: list[FormulaLine] = field(default_factory=list)

    weights_gb = Gigabytes("weights_bytes")
    gradients_gb = Gigabytes("gradients_bytes")
    optimizer_state_gb = Gigabytes("optimizer_state_bytes")
    total_gb = Gigabytes("total_bytes")

    @property
    def activations_gb(self) -> float | None:
        return None if self.activations_bytes is None else bytes_to_gb(self.activations_bytes)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "estimate": "training",
            "accelerator": self.accelerator_id,
            "model": self.model_id,
        }
        for name in _JSON_FIGURES:
            if name.endswith("_bytes") and name not in {"quantisation_constants_bytes"}:
                out[name.removesuffix("_bytes") + "_gb"] = (
                    None if getattr(self, name) is None else bytes_to_gb(getattr(self, name))
                )
            out[name] = getattr(self, name)
        return {**out, **self.notes_dict()}


_JSON_FIGURES = (
    "method",
    "params",
    "active_params_b",
    "trainable_params",
    "weights_bytes",
    "quantisation_constants_bytes",
    "gradients_bytes",
    "optimizer_state_bytes",
    "activations_bytes",
    "cuda_context_bytes",
    "total_bytes",
    "gpu_memory_bytes",
    "fits",
    "checkpointing",
    "gpus",
    "zero_stage",
    "tokens_per_step",
    "flops_per_token",
    "tokens_per_s",
    "steps_per_s",
    "hours_per_run",
    "cost_per_run_usd",
    "price_per_hour_usd",
)
