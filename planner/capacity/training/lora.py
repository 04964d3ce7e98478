"""LoRA's trainable parameters: r × (d_in + d_out) per adapted matrix (Hu et al. 2021, section 4)."""

from __future__ import annotations

from fractions import Fraction

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import whole
from planner.capacity.results import Trail
from planner.capacity.training.memory import DEFAULT_LORA_RANK, LORA_TARGETS
from planner.capacity.units import CapacityInputError
from planner.capacity.validation import whole_number


def lora_adapter_params(
    *,
    rank: int,
    layers: int,
    hidden_size: int,
    q_out: int,
    kv_out: int,
    intermediate_size: int | None,
    targets: str,
) -> int:
    """Σ r × (d_in + d_out) over the adapted matrices of every layer (Hu et al. 2021)."""
    h = hidden_size
    per_layer = rank * ((h + q_out) + 2 * (h + kv_out) + (q_out + h))  # q, k, v, o
    if targets == "all_linear":
        if intermediate_size is None:
            raise CapacityInputError(
                "lora_targets", "all_linear needs the model's intermediate size: pick a model"
            )
        per_layer += rank * (
            2 * (h + intermediate_size) + (intermediate_size + h)
        )  # gate, up, down
    return layers * per_layer


def lora_trainable(
    spec: ModelSpec | None,
    lora_rank: int | None,
    lora_targets: str | None,
    hidden_given: int | None,
    hidden: int | None,
    layers: int | None,
    trail: Trail,
) -> Fraction:
    """The adapters' trainable parameters for the model (or the given hidden size and layers)."""
    rank = whole_number(lora_rank, "lora_rank")
    if rank is None:
        rank = DEFAULT_LORA_RANK
        trail.assume("lora_rank", str(DEFAULT_LORA_RANK))
    targets = lora_targets or "attention"
    if targets not in LORA_TARGETS:
        raise CapacityInputError("lora_targets", "use attention or all_linear")
    if hidden is None or layers is None:
        raise CapacityInputError(
            "model", "LoRA needs the architecture: pick a model, or give the hidden size and layers"
        )
    if spec is not None and hidden_given is None:
        q_out, kv_out = spec.attention_heads * spec.head_dim, spec.kv_heads * spec.head_dim
        ff: int | None = spec.intermediate_size
    else:
        q_out, kv_out, ff = hidden, hidden, None
        trail.assume("kv_heads", "as many as attention heads (no GQA)")
    trainable = Fraction(
        lora_adapter_params(
            rank=rank,
            layers=layers,
            hidden_size=hidden,
            q_out=q_out,
            kv_out=kv_out,
            intermediate_size=ff,
            targets=targets,
        )
    )
    matrices = "q, k, v, o" if targets == "attention" else "q, k, v, o, gate, up, down"
    trail.formula(
        "LoRA adapter parameters",
        f"layers × Σ rank × (d_in + d_out) over {matrices}",
        f"{layers} layers × rank {rank} → {whole(trainable)} trainable parameters",
    )
    return trainable
