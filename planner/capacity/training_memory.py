"""The memory steps of a training estimate: parameters, weights and optimizer states, activations,
sharding. Each records its formula on the Trail and returns exact bytes (sources: training.py)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import gb, num, whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.units import BYTES_PER_GB, CapacityInputError, exact
from planner.capacity.validation import positive, whole_number

METHODS: Final[tuple[str, ...]] = ("full", "lora", "qlora")
LORA_TARGETS: Final[tuple[str, ...]] = ("attention", "all_linear")
FULL_WEIGHT_BYTES: Final = Fraction(2)
QLORA_WEIGHT_BYTES: Final = Fraction(1, 2)
# Bits per parameter of QLoRA's double-quantised constants: 8/64 + 32/(64*256), in bytes.
QLORA_CONSTANT_BYTES: Final = (Fraction(8, 64) + Fraction(32, 64 * 256)) / 8
# Mixed-precision Adam per trainable parameter: gradients (bf16 2, or fp32 4) + fp32 master
# weights, first and second moments (4 + 4 + 4): 16 or 18 bytes with the 2-byte weights.
ADAM_BYTES: Final[dict[int, tuple[Fraction, Fraction]]] = {
    16: (Fraction(2), Fraction(12)),
    18: (Fraction(4), Fraction(12)),
}
ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN: Final = 34
CHECKPOINT_BYTES_PER_LAYER_TOKEN_HIDDEN: Final = 2
LOGIT_BYTES: Final = 4  # fp32 logits kept for the cross-entropy backward
DEFAULT_LORA_RANK: Final = 16


@dataclass(frozen=True, slots=True)
class States:
    trainable: Fraction
    weights: Fraction  # frozen base (+ constants) + trainable weights
    constants: Fraction
    gradients: Fraction
    optimizer: Fraction


def parameters(params_b: float | Decimal | None, spec: ModelSpec | None) -> Fraction:
    """The parameter count: given in billions, or the model's."""
    given = positive(params_b, "params_b")
    if given is None:
        if spec is None:
            raise CapacityInputError("params_b", "give the parameters in billions or a model")
        given = exact(spec.params_b)
    return given * BYTES_PER_GB


def adam_bytes(value: int | None, trail: Trail) -> tuple[Fraction, Fraction]:
    if value is None:
        trail.assume("adam_bytes", "16 (bf16 gradients; 18 with fp32 gradients)")
        return ADAM_BYTES[16]
    if value not in ADAM_BYTES:
        raise CapacityInputError("adam_bytes", "use 16 (bf16 gradients) or 18 (fp32 gradients).")
    return ADAM_BYTES[value]


def full_states(params: Fraction, adam: tuple[Fraction, Fraction], trail: Trail) -> States:
    grad, opt = adam
    per_param = FULL_WEIGHT_BYTES + grad + opt
    trail.formula(
        "Weights, gradients, optimizer (mixed-precision Adam)",
        f"parameters × (2 + {grad} + {opt}) bytes",
        f"{num(params / BYTES_PER_GB)} B × {per_param} bytes = {gb(params * per_param)}",
    )
    return States(params, params * FULL_WEIGHT_BYTES, Fraction(0), params * grad, params * opt)


def adapter_states(
    method: str,
    params: Fraction,
    trainable: Fraction,
    adam: tuple[Fraction, Fraction],
    trail: Trail,
) -> States:
    grad, opt = adam
    billions = num(params / BYTES_PER_GB)
    constants = Fraction(0)
    if method == "lora":
        base = params * FULL_WEIGHT_BYTES
        trail.formula(
            "Frozen base weights (bf16)", "parameters × 2 bytes", f"{billions} B × 2 = {gb(base)}"
        )
    else:
        base = params * QLORA_WEIGHT_BYTES
        constants = params * QLORA_CONSTANT_BYTES
        trail.formula(
            "Frozen base weights (4-bit NF4 + constants)",
            "parameters × (0.5 + 0.127/8) bytes",
            f"{billions} B × 0.5 + {billions} B × {num(QLORA_CONSTANT_BYTES, 5)} = {gb(base + constants)}",
        )
    per_param = FULL_WEIGHT_BYTES + grad + opt
    trail.formula(
        "Adapter weights, gradients, optimizer",
        f"trainable × (2 + {grad} + {opt}) bytes",
        f"{whole(trainable)} × {per_param} bytes = {gb(trainable * per_param)}",
    )
    weights = base + constants + trainable * FULL_WEIGHT_BYTES
    return States(trainable, weights, constants, trainable * grad, trainable * opt)


def activation_coefficient(spec: ModelSpec | None, hidden_given: int | None) -> Fraction:
    """Bytes per token per hidden unit one layer keeps for the backward pass, in bf16.

    A Llama-style block (RMSNorm, GQA with FlashAttention, a fused SwiGLU) keeps: the two norm
    inputs and outputs (4 × 2h), Q and O (2 × 2·q), K and V (2 × 2·kv) for FlashAttention's
    backward, and gate, up and their product (3 × 2·i): (8h + 4q + 4kv + 6i) / h. For Llama-3.1-8B
    that is 34, Korthikanti et al.'s GPT figure, which stands in when the architecture is unknown.
    """
    if spec is None or hidden_given is not None:
        return Fraction(ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN)
    h, q = spec.hidden_size, spec.attention_heads * spec.head_dim
    kv, i = spec.kv_heads * spec.head_dim, spec.intermediate_size
    return Fraction(8 * h + 4 * q + 4 * kv + 6 * i, h)


def activations(
    tokens: int | None,
    hidden: int | None,
    layers: int | None,
    vocab: int | None,
    checkpointing: bool,
    trail: Trail,
    coefficient: Fraction = Fraction(ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN),
) -> Fraction | None:
    """c·s·b·h per layer (activation_coefficient; with checkpointing 2·s·b·h kept per layer + one
    layer live), plus the logits: 4 bytes × s·b × vocabulary."""
    if tokens is None or hidden is None or layers is None:
        trail.warn(
            WarningCode.ACTIVATIONS_NOT_COUNTED,
            Severity.WARNING,
            "Activations are not counted: give the batch size, sequence length and a model (or hidden size and layers).",
        )
        return None
    sbh = tokens * hidden
    if checkpointing:
        body = CHECKPOINT_BYTES_PER_LAYER_TOKEN_HIDDEN * sbh * layers + coefficient * sbh
        trail.formula(
            "Activations (checkpointed)",
            "2·s·b·h·layers + c·s·b·h (c per layer: see the module)",
            f"2 × {whole(tokens)} × {hidden} × {layers} + {num(coefficient, 2)} × {whole(tokens)} × {hidden} = {gb(body)}",
        )
    else:
        body = coefficient * sbh * layers
        trail.formula(
            "Activations",
            "c·s·b·h·layers (c: bytes a layer keeps per token and hidden unit)",
            f"{num(coefficient, 2)} × {whole(tokens)} × {hidden} × {layers} = {gb(body)}",
        )
    if vocab is None:
        trail.assume("vocab_size", "unknown: the logits are not counted")
        return body
    logits = Fraction(LOGIT_BYTES * tokens * vocab)
    trail.formula(
        "Logits",
        "4 bytes × s·b × vocabulary",
        f"4 × {whole(tokens)} × {whole(vocab)} = {gb(logits)}",
    )
    return body + logits


def sharded(states: States, gpus: int, stage: int, trail: Trail) -> States:
    """ZeRO (Rajbhandari et al. 2020): stage 1 shards the optimizer states over the data-parallel
    GPUs, stage 2 the gradients too, stage 3 (= FSDP full sharding) the weights as well."""
    if gpus == 1 or stage == 0:
        return states
    optimizer = states.optimizer / gpus
    gradients = states.gradients / gpus if stage >= 2 else states.gradients
    weights = states.weights / gpus if stage >= 3 else states.weights
    trail.formula(
        f"ZeRO-{stage} over {gpus} GPUs (per GPU)",
        "optimizer ÷ N"
        + (", gradients ÷ N" if stage >= 2 else "")
        + (", weights ÷ N" if stage >= 3 else ""),
        f"{gb(states.optimizer)} → {gb(optimizer)}, {gb(states.gradients)} → {gb(gradients)}, "
        f"{gb(states.weights)} → {gb(weights)}",
    )
    return States(states.trainable, weights, states.constants, gradients, optimizer)


def sharding(gpus: int | None, stage: int | None) -> tuple[int, int]:
    n = whole_number(gpus, "gpus") or 1
    zero = whole_number(stage, "zero_stage", allow_zero=True)
    if zero is None:
        zero = 3 if n > 1 else 0
    if zero > 3:
        raise CapacityInputError("zero_stage", "use 0, 1, 2 or 3 (3 is FSDP's full sharding).")
    return n, zero


def step_shape(
    batch_size: int | None,
    seq_len: int | None,
    checkpointing: bool | None,
    hidden: int | None,
    layers: int | None,
    trail: Trail,
) -> tuple[bool, int | None]:
    """Whether activations are checkpointed, and the tokens of one step (batch × sequence)."""
    batch = whole_number(batch_size, "batch_size")
    seq = whole_number(seq_len, "seq_len")
    if checkpointing is None:
        checkpointing = False
        trail.assume("checkpointing", "off")
    if batch is None:
        trail.assume("batch_size", "unknown: activations not counted")
    if seq is None:
        trail.assume("seq_len", "unknown: activations not counted")
    if hidden is None or layers is None:
        trail.assume("model", "unknown architecture: activations not counted")
    return checkpointing, batch * seq if batch and seq else None
