"""The memory steps of a training estimate: parameters, weights and optimizer states, activations,
sharding. Each records its formula on the Trail and returns exact bytes (sources: training.py)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import gb, num, whole
from planner.capacity.results import Trail
from planner.capacity.units import BYTES_PER_GB, BYTES_PER_GIB, CapacityInputError, exact
from planner.capacity.validation import positive, whole_number

METHODS: Final[tuple[str, ...]] = ("full", "lora", "qlora")
LORA_TARGETS: Final[tuple[str, ...]] = ("attention", "all_linear")
FULL_WEIGHT_BYTES: Final = Fraction(2)
QLORA_WEIGHT_BYTES: Final = Fraction(1, 2)
# Bits per parameter of QLoRA's double-quantised constants: 8/64 + 32/(64*256), in bytes.
QLORA_CONSTANT_BYTES: Final = (Fraction(8, 64) + Fraction(32, 64 * 256)) / 8
# Mixed-precision Adam per trainable parameter: gradients (bf16 2, or fp32 4) + fp32 master
# weights, first and second moments (4 + 4 + 4): 16 or 18 bytes with the 2-byte weights. 6: 8-bit
# AdamW (bitsandbytes' AdamW8bit, Dettmers et al. 2022, "8-bit Optimizers via Block-wise
# Quantization": both moments in 8 bits, 2 bytes) updating 16-bit weights with 16-bit gradients,
# no fp32 master copy: 2 + 2 + 2, the adapters' set-up in Unsloth's notebooks (optim="adamw_8bit").
ADAM_BYTES: Final[dict[int, tuple[Fraction, Fraction]]] = {
    16: (Fraction(2), Fraction(12)),
    18: (Fraction(4), Fraction(12)),
    6: (Fraction(2), Fraction(2)),
}
DEFAULT_LORA_RANK: Final = 16
# The CUDA context and driver state of one process on an H100 (training.py cites the log).
CUDA_CONTEXT_BYTES: Final = Fraction("0.61") * BYTES_PER_GIB


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
        raise CapacityInputError(
            "adam_bytes", "use 16 (bf16 gradients), 18 (fp32 gradients) or 6 (8-bit AdamW)."
        )
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
    embeddings: Fraction = Fraction(0),
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
        base, constants = qlora_base(params, embeddings, trail)
    per_param = FULL_WEIGHT_BYTES + grad + opt
    trail.formula(
        "Adapter weights, gradients, optimizer",
        f"trainable × (2 + {grad} + {opt}) bytes",
        f"{whole(trainable)} × {per_param} bytes = {gb(trainable * per_param)}",
    )
    weights = base + constants + trainable * FULL_WEIGHT_BYTES
    return States(trainable, weights, constants, trainable * grad, trainable * opt)


def qlora_base(params: Fraction, embeddings: Fraction, trail: Trail) -> tuple[Fraction, Fraction]:
    """The frozen base of QLoRA: the linear layers in 4-bit NF4 with their double-quantised
    constants; the embedding table and the LM head stay 16-bit (bitsandbytes replaces nn.Linear
    layers only, and transformers' get_keys_to_not_convert leaves the output embedding out)."""
    quantised = params - embeddings
    base = quantised * QLORA_WEIGHT_BYTES + embeddings * FULL_WEIGHT_BYTES
    constants = quantised * QLORA_CONSTANT_BYTES
    q, e = num(quantised / BYTES_PER_GB), num(embeddings / BYTES_PER_GB)
    trail.formula(
        "Frozen base weights (4-bit NF4 + constants; embeddings and LM head 16-bit)",
        "(parameters − embeddings) × (0.5 + 0.127/8) bytes + embeddings × 2 bytes",
        f"{q} B × (0.5 + {num(QLORA_CONSTANT_BYTES, 5)}) + {e} B × 2 = {gb(base + constants)}",
    )
    return base, constants


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
