"""Training and fine-tuning memory, speed and cost: full mixed-precision Adam, LoRA and QLoRA.

Sources for the formulas:
- Full fine-tuning with mixed-precision Adam keeps 16 bytes per parameter: 2 (bf16/fp16 weights)
  + 2 (gradients) + 12 (fp32 master weights 4, Adam first moment 4, second moment 4).
  Rajbhandari et al. 2020, "ZeRO", section 3.1 ("2Ψ + 2Ψ + 12Ψ = 16Ψ bytes").
- LoRA trains r × (d_in + d_out) parameters per adapted d_in × d_out matrix while the base weights
  stay frozen in bf16 (Hu et al. 2021, "LoRA", section 4); the trainable adapters cost the same
  16 bytes per parameter under mixed-precision Adam.
- QLoRA stores the frozen base in 4-bit NormalFloat (0.5 bytes per parameter) plus quantisation
  constants: one fp8 constant per 64 weights and one fp32 constant per 256 of those ("double
  quantisation": 8/64 + 32/(64 × 256) = 0.127 bits per parameter). Dettmers et al. 2023, "QLoRA",
  section 3.
- Activations per transformer layer, 16-bit, no tensor parallelism: s·b·h·(34 + 5·a·s/h) bytes
  (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
  eq. 1). We assume a fused attention kernel (FlashAttention, Dao et al. 2022) that does not keep
  the s × s score matrices, which drops the 5·a·s/h term: 34·s·b·h per layer. With full
  activation checkpointing only each layer's input is kept (2·s·b·h per layer) and one layer's
  activations are live during its recomputation (+34·s·b·h).
- Training FLOPs ≈ 6 × parameters per token (forward 2N, backward 4N; Kaplan et al. 2020,
  "Scaling Laws", section 2.1). With frozen base weights (LoRA, QLoRA) the weight-gradient half of
  the backward pass is skipped: ≈ 4N. Checkpointing recomputes the forward: + 2N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.formatting import gb, money, num, whole
from planner.capacity.results import (
    Assumption,
    EstimateNotes,
    EstimateWarning,
    FormulaLine,
    Gigabytes,
    Severity,
    WarningCode,
)
from planner.capacity.units import (
    BYTES_PER_GB,
    SECONDS_PER_HOUR,
    CapacityInputError,
    as_float,
    bytes_to_gb,
    exact,
)
from planner.capacity.validation import given_or_catalogue, positive, whole_number

Method = Literal["full", "lora", "qlora"]
METHODS: tuple[str, ...] = ("full", "lora", "qlora")
LORA_TARGETS: tuple[str, ...] = ("attention", "all_linear")

FULL_WEIGHT_BYTES = Fraction(2)
FULL_GRADIENT_BYTES = Fraction(2)
FULL_OPTIMIZER_BYTES = Fraction(12)
QLORA_WEIGHT_BYTES = Fraction(1, 2)
# Bits per parameter of QLoRA's double-quantised constants: 8/64 + 32/(64*256), in bytes.
QLORA_CONSTANT_BYTES = (Fraction(8, 64) + Fraction(32, 64 * 256)) / 8
ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN = 34
CHECKPOINT_BYTES_PER_LAYER_TOKEN_HIDDEN = 2
DEFAULT_LORA_RANK = 16
DEFAULT_MFU = Fraction(2, 5)  # 40 % model FLOPs utilisation: a common, achievable figure


@dataclass(frozen=True, slots=True)
class TrainingInputs:
    params_b: float | Decimal | None = None
    method: str = "full"
    lora_rank: int | None = None
    lora_targets: str | None = None
    batch_size: int | None = None
    seq_len: int | None = None
    checkpointing: bool | None = None
    hidden_size: int | None = None
    layers: int | None = None
    gpu_memory_gb: float | Decimal | None = None
    tokens_per_s: float | Decimal | None = None
    mfu: float | Decimal | None = None
    steps: int | None = None
    price_per_hour: float | Decimal | None = None
    accelerator: Accelerator | None = None
    model: ModelSpec | None = None


@dataclass(frozen=True, slots=True)
class TrainingEstimate(EstimateNotes):
    method: str
    params: int
    trainable_params: int
    weights_bytes: int
    quantisation_constants_bytes: int
    gradients_bytes: int
    optimizer_state_bytes: int
    activations_bytes: int | None
    total_bytes: int
    gpu_memory_bytes: int | None
    fits: bool | None
    checkpointing: bool
    tokens_per_step: int | None
    flops_per_token: int
    tokens_per_s: float | None
    steps_per_s: float | None
    hours_per_run: float | None
    cost_per_run_usd: float | None
    price_per_hour_usd: float | None
    accelerator_id: str | None
    model_id: str | None
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
        return {
            "estimate": "training",
            "accelerator": self.accelerator_id,
            "model": self.model_id,
            "method": self.method,
            "params": self.params,
            "trainable_params": self.trainable_params,
            "weights_gb": self.weights_gb,
            "weights_bytes": self.weights_bytes,
            "quantisation_constants_bytes": self.quantisation_constants_bytes,
            "gradients_gb": self.gradients_gb,
            "gradients_bytes": self.gradients_bytes,
            "optimizer_state_gb": self.optimizer_state_gb,
            "optimizer_state_bytes": self.optimizer_state_bytes,
            "activations_gb": self.activations_gb,
            "activations_bytes": self.activations_bytes,
            "total_gb": self.total_gb,
            "total_bytes": self.total_bytes,
            "gpu_memory_gb": None
            if self.gpu_memory_bytes is None
            else bytes_to_gb(self.gpu_memory_bytes),
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "fits": self.fits,
            "checkpointing": self.checkpointing,
            "tokens_per_step": self.tokens_per_step,
            "flops_per_token": self.flops_per_token,
            "tokens_per_s": self.tokens_per_s,
            "steps_per_s": self.steps_per_s,
            "hours_per_run": self.hours_per_run,
            "cost_per_run_usd": self.cost_per_run_usd,
            "price_per_hour_usd": self.price_per_hour_usd,
            **self.notes_dict(),
        }


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


def estimate_training(inputs: TrainingInputs) -> TrainingEstimate:
    spec, acc = inputs.model, inputs.accelerator
    assumptions: list[Assumption] = []
    warnings: list[EstimateWarning] = []
    formulas: list[FormulaLine] = []
    method = inputs.method
    if method not in METHODS:
        raise CapacityInputError("method", f"unknown method {method!r}; use full, lora or qlora")

    params_b = positive(inputs.params_b, "params_b")
    if params_b is None:
        if spec is None:
            raise CapacityInputError("params_b", "give the parameters in billions or a model")
        params_b = exact(spec.params_b)
    params = params_b * BYTES_PER_GB  # 10^9 parameters per "B"
    hidden = whole_number(inputs.hidden_size, "hidden_size") or (spec.hidden_size if spec else None)
    layers = whole_number(inputs.layers, "layers") or (spec.layers if spec else None)

    constants = Fraction(0)
    if method == "full":
        trainable = params
        weights = params * FULL_WEIGHT_BYTES
        formulas.append(
            FormulaLine(
                "Weights, gradients, optimizer (mixed-precision Adam)",
                "parameters × (2 + 2 + 12) bytes",
                f"{num(params_b)} B × 16 bytes = {gb(params * 16)}",
            )
        )
    else:
        rank = whole_number(inputs.lora_rank, "lora_rank")
        if rank is None:
            rank = DEFAULT_LORA_RANK
            assumptions.append(Assumption("lora_rank", str(DEFAULT_LORA_RANK)))
        targets = inputs.lora_targets or "attention"
        if targets not in LORA_TARGETS:
            raise CapacityInputError("lora_targets", "use attention or all_linear")
        if hidden is None or layers is None:
            raise CapacityInputError(
                "model",
                "LoRA needs the architecture: pick a model, or give the hidden size and layers",
            )
        if spec is not None and inputs.hidden_size is None:
            q_out, kv_out = spec.attention_heads * spec.head_dim, spec.kv_heads * spec.head_dim
            ff: int | None = spec.intermediate_size
        else:
            q_out, kv_out, ff = hidden, hidden, None
            assumptions.append(Assumption("kv_heads", "as many as attention heads (no GQA)"))
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
        formulas.append(
            FormulaLine(
                "LoRA adapter parameters",
                "layers × Σ rank × (d_in + d_out) over "
                + ("q, k, v, o" if targets == "attention" else "q, k, v, o, gate, up, down"),
                f"{layers} layers × rank {rank} → {whole(trainable)} trainable parameters",
            )
        )
        if method == "lora":
            base = params * FULL_WEIGHT_BYTES
            formulas.append(
                FormulaLine(
                    "Frozen base weights (bf16)",
                    "parameters × 2 bytes",
                    f"{num(params_b)} B × 2 = {gb(base)}",
                )
            )
        else:
            base = params * QLORA_WEIGHT_BYTES
            constants = params * QLORA_CONSTANT_BYTES
            formulas.append(
                FormulaLine(
                    "Frozen base weights (4-bit NF4 + constants)",
                    "parameters × (0.5 + 0.127/8) bytes",
                    f"{num(params_b)} B × 0.5 + {num(params_b)} B × {num(QLORA_CONSTANT_BYTES, 5)} = {gb(base + constants)}",
                )
            )
        weights = base + constants + trainable * FULL_WEIGHT_BYTES
    gradients = trainable * FULL_GRADIENT_BYTES
    optimizer = trainable * FULL_OPTIMIZER_BYTES
    if method != "full":
        formulas.append(
            FormulaLine(
                "Adapter weights, gradients, optimizer",
                "trainable × (2 + 2 + 12) bytes",
                f"{whole(trainable)} × 16 bytes = {gb(trainable * 16)}",
            )
        )

    # Activations.
    batch = whole_number(inputs.batch_size, "batch_size")
    seq = whole_number(inputs.seq_len, "seq_len")
    checkpointing = inputs.checkpointing
    if checkpointing is None:
        checkpointing = False
        assumptions.append(Assumption("checkpointing", "off"))
    if batch is None:
        assumptions.append(Assumption("batch_size", "unknown: activations not counted"))
    if seq is None:
        assumptions.append(Assumption("seq_len", "unknown: activations not counted"))
    if hidden is None or layers is None:
        assumptions.append(Assumption("model", "unknown architecture: activations not counted"))
    activations: Fraction | None = None
    tokens_per_step = batch * seq if batch and seq else None
    if tokens_per_step is not None and hidden is not None and layers is not None:
        sbh = tokens_per_step * hidden
        if checkpointing:
            activations = Fraction(
                CHECKPOINT_BYTES_PER_LAYER_TOKEN_HIDDEN * sbh * layers
                + ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN * sbh
            )
            formulas.append(
                FormulaLine(
                    "Activations (checkpointed)",
                    "2·s·b·h·layers + 34·s·b·h",
                    f"2 × {seq} × {batch} × {hidden} × {layers} + 34 × {seq} × {batch} × {hidden} = {gb(activations)}",
                )
            )
        else:
            activations = Fraction(ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN * sbh * layers)
            formulas.append(
                FormulaLine(
                    "Activations",
                    "34·s·b·h·layers",
                    f"34 × {seq} × {batch} × {hidden} × {layers} = {gb(activations)}",
                )
            )
    else:
        warnings.append(
            EstimateWarning(
                WarningCode.ACTIVATIONS_NOT_COUNTED,
                Severity.WARNING,
                "Activations are not counted: give the batch size, sequence length and a model (or hidden size and layers).",
            )
        )
    total = weights + gradients + optimizer + (activations or 0)
    formulas.append(
        FormulaLine(
            "Total",
            "weights + gradients + optimizer + activations",
            f"{gb(weights)} + {gb(gradients)} + {gb(optimizer)} + {gb(activations or 0)} = {gb(total)}",
        )
    )

    memory = given_or_catalogue(
        inputs.gpu_memory_gb, "gpu_memory_gb", acc.memory_gb if acc else None
    )
    memory_bytes = memory * BYTES_PER_GB if memory is not None else None
    fits = None if memory_bytes is None else total <= memory_bytes
    if fits is False and memory_bytes is not None:
        lighter = ""
        if method != "qlora" and hidden is not None and layers is not None:
            alternatives = []
            for other in METHODS[METHODS.index(method) + 1 :]:
                alt = estimate_training(
                    replace(inputs, method=other, gpu_memory_gb=None, accelerator=None)
                )
                alternatives.append(f"{other} needs {gb(alt.total_bytes)}")
            lighter = " " + "; ".join(alternatives) + "."
        warnings.append(
            EstimateWarning(
                WarningCode.TRAINING_DOES_NOT_FIT,
                Severity.ERROR,
                f"{method} training needs {gb(total)}; the device has {gb(memory_bytes)}.{lighter}",
            )
        )

    # Speed and cost.
    flops_per_token = (6 if method == "full" else 4) * params + (2 * params if checkpointing else 0)
    tokens_per_s = positive(inputs.tokens_per_s, "tokens_per_s")
    if tokens_per_s is None and acc is not None and acc.dense_bf16_tflops:
        mfu = positive(inputs.mfu, "mfu")
        if mfu is None:
            mfu = DEFAULT_MFU
            assumptions.append(Assumption("mfu", "0.4"))
        if mfu > 1:
            raise CapacityInputError("mfu", "is a fraction of peak: at most 1")
        tokens_per_s = exact(acc.dense_bf16_tflops) * 10**12 * mfu / flops_per_token
        formulas.append(
            FormulaLine(
                "Tokens per second",
                "peak TFLOPS × MFU ÷ FLOPs per token",
                f"{num(acc.dense_bf16_tflops)} TFLOPS × {num(mfu)} ÷ {num(flops_per_token / params)}N = {num(tokens_per_s, 0)} tokens/s",
            )
        )
    steps_per_s = None
    if tokens_per_s is not None and tokens_per_step:
        steps_per_s = tokens_per_s / tokens_per_step
        formulas.append(
            FormulaLine(
                "Steps per second",
                "tokens per second ÷ (batch × sequence)",
                f"{num(tokens_per_s, 0)} ÷ ({batch} × {seq}) = {num(steps_per_s, 4)}",
            )
        )
    price = given_or_catalogue(
        inputs.price_per_hour, "price_per_hour", acc.price_per_hour_usd if acc else None
    )
    steps = whole_number(inputs.steps, "steps")
    hours = cost = None
    if steps is not None and steps_per_s:
        hours = Fraction(steps) / steps_per_s / SECONDS_PER_HOUR
        if price is not None:
            cost = hours * price
            formulas.append(
                FormulaLine(
                    "Cost per run",
                    "steps ÷ steps per second ÷ 3600 × price per hour",
                    f"{whole(steps)} ÷ {num(steps_per_s, 4)} ÷ 3600 × {money(price)} = {money(cost)}",
                )
            )

    return TrainingEstimate(
        method=method,
        params=math.floor(params),
        trainable_params=math.floor(trainable),
        weights_bytes=math.ceil(weights),
        quantisation_constants_bytes=math.ceil(constants),
        gradients_bytes=math.ceil(gradients),
        optimizer_state_bytes=math.ceil(optimizer),
        activations_bytes=math.ceil(activations) if activations is not None else None,
        total_bytes=math.ceil(total),
        gpu_memory_bytes=math.floor(memory_bytes) if memory_bytes is not None else None,
        fits=fits,
        checkpointing=checkpointing,
        tokens_per_step=tokens_per_step,
        flops_per_token=math.ceil(flops_per_token),
        tokens_per_s=as_float(tokens_per_s, 1) if tokens_per_s is not None else None,
        steps_per_s=as_float(steps_per_s, 6) if steps_per_s is not None else None,
        hours_per_run=as_float(hours, 3) if hours is not None else None,
        cost_per_run_usd=as_float(cost, 2) if cost is not None else None,
        price_per_hour_usd=as_float(price, 4) if price is not None else None,
        accelerator_id=acc.id if acc else None,
        model_id=spec.id if spec else None,
        warnings=warnings,
        assumptions=assumptions,
        formulas=formulas,
    )
