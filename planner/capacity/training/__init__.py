"""Training and fine-tuning memory, speed and cost: full mixed-precision Adam, LoRA and QLoRA.

Sources for the formulas:
- Full fine-tuning with mixed-precision Adam keeps 16 bytes per parameter: 2 (bf16/fp16 weights)
  + 2 (gradients) + 12 (fp32 master weights 4, Adam first moment 4, second moment 4).
  Rajbhandari et al. 2020, "ZeRO", section 3.1 ("2Ψ + 2Ψ + 12Ψ = 16Ψ bytes"); 18 with fp32
  gradients (as PyTorch AMP keeps them). ZeRO stage 1/2/3 (FSDP) shards optimizer states,
  gradients and weights over the data-parallel GPUs (the same paper, section 5).
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
  activation checkpointing only each layer's input is kept (2·s·b·h per layer; none when
  offloaded to CPU RAM) and one layer's activations are live during its recomputation
  (+34·s·b·h), beside its backward's MLP gradients (6·s·b·i). The logits of the fp32
  cross-entropy add 16·s·b·vocab bytes (none with a fused loss), which for a 128k vocabulary
  exceeds the rest (planner.capacity.training.activations). Checked against QLoRA's published
  fit, a 65 B model on one 48 GB GPU (Dettmers et al. 2023, abstract), and against Unsloth's
  longest contexts per GPU size for Llama-3.1-8B: bench/training_memory.py.
- Every CUDA process holds a context before it allocates anything: vLLM found 0.61 GiB of an H100
  in use at start-up ("Free memory on device (78.57/79.18 GiB) on startup",
  llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md); the total counts it.
- Training FLOPs ≈ 6 × parameters per token (forward 2N, backward 4N; Kaplan et al. 2020,
  "Scaling Laws", section 2.1). With frozen base weights (LoRA, QLoRA) the weight-gradient half of
  the backward pass is skipped: ≈ 4N. Checkpointing recomputes the forward: + 2N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction

from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.formatting import gb
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.training.activations import StepShape, activation_coefficient, activations
from planner.capacity.training.lora import lora_adapter_params, lora_trainable
from planner.capacity.training.memory import (
    CUDA_CONTEXT_BYTES,
    LORA_TARGETS,
    METHODS,
    States,
    adam_bytes,
    adapter_states,
    full_states,
    parameters,
    sharded,
    sharding,
    step_shape,
)
from planner.capacity.training.results import TrainingEstimate
from planner.capacity.training.speed import training_speed
from planner.capacity.units import BYTES_PER_GB, CapacityInputError
from planner.capacity.validation import given_or_catalogue, whole_number

__all__ = [
    "LORA_TARGETS",
    "METHODS",
    "TrainingEstimate",
    "TrainingInputs",
    "estimate_training",
    "lora_adapter_params",
]


@dataclass(frozen=True, slots=True)
class TrainingInputs:
    params_b: float | Decimal | None = None
    method: str = "full"
    lora_rank: int | None = None
    lora_targets: str | None = None
    batch_size: int | None = None  # sequences per step on each GPU
    seq_len: int | None = None
    checkpointing: bool | None = None
    activation_offload: bool | None = None  # checkpointed layer inputs in CPU RAM (Unsloth)
    fused_loss: bool | None = None  # a loss that never materialises the logits (CCE, Liger)
    hidden_size: int | None = None
    layers: int | None = None
    vocab_size: int | None = None
    adam_bytes: int | None = None  # 16 (bf16 gradients), 18 (fp32 gradients) or 6 (8-bit AdamW)
    gpus: int | None = None  # data-parallel GPUs
    zero_stage: int | None = None  # 0-3; 3 is FSDP's full sharding
    gpu_memory_gb: float | Decimal | None = None
    tokens_per_s: float | Decimal | None = None
    mfu: float | Decimal | None = None
    steps: int | None = None
    price_per_hour: float | Decimal | None = None
    accelerator: Accelerator | None = None
    model: ModelSpec | None = None


def estimate_training(inputs: TrainingInputs) -> TrainingEstimate:
    """Run the steps: parameters, states, activations, sharding, the fit, speed and cost."""
    spec, acc = inputs.model, inputs.accelerator
    trail = Trail()
    if inputs.method not in METHODS:
        raise CapacityInputError(
            "method", f"unknown method {inputs.method!r}; use full, lora or qlora"
        )
    params = parameters(inputs.params_b, spec)
    hidden = whole_number(inputs.hidden_size, "hidden_size") or (spec.hidden_size if spec else None)
    layers = whole_number(inputs.layers, "layers") or (spec.layers if spec else None)
    vocab = whole_number(inputs.vocab_size, "vocab_size") or (spec.vocab_size if spec else None)
    gpus, stage = sharding(inputs.gpus, inputs.zero_stage)
    states = _states(inputs, params, hidden, layers, trail)
    checkpointing, tokens = step_shape(
        inputs.batch_size, inputs.seq_len, inputs.checkpointing, hidden, layers, trail
    )
    acts = activations(_step(inputs, tokens, hidden, layers, vocab, checkpointing), trail)
    per_gpu = sharded(states, gpus, stage, trail)
    total = _total(per_gpu, acts, gpus, trail)
    memory = given_or_catalogue(
        inputs.gpu_memory_gb, "gpu_memory_gb", acc.memory_gb if acc else None
    )
    memory_bytes = memory * BYTES_PER_GB if memory is not None else None
    fits = None if memory_bytes is None else total <= memory_bytes
    if fits is False and memory_bytes is not None:
        _does_not_fit(inputs, hidden, layers, total, memory_bytes, trail)
    flops = (6 if inputs.method == "full" else 4) * params + (2 * params if checkpointing else 0)
    speed = training_speed(inputs, params, flops, tokens, gpus, trail)
    return TrainingEstimate(
        method=inputs.method,
        params=math.floor(params),
        trainable_params=math.floor(states.trainable),
        weights_bytes=math.ceil(per_gpu.weights),
        quantisation_constants_bytes=math.ceil(per_gpu.constants),
        gradients_bytes=math.ceil(per_gpu.gradients),
        optimizer_state_bytes=math.ceil(per_gpu.optimizer),
        activations_bytes=math.ceil(acts) if acts is not None else None,
        cuda_context_bytes=math.ceil(CUDA_CONTEXT_BYTES),
        total_bytes=math.ceil(total),
        gpu_memory_bytes=math.floor(memory_bytes) if memory_bytes is not None else None,
        fits=fits,
        checkpointing=checkpointing,
        gpus=gpus,
        zero_stage=stage,
        tokens_per_step=tokens,
        flops_per_token=math.ceil(flops),
        **speed,
        accelerator_id=acc.id if acc else None,
        model_id=spec.id if spec else None,
        active_params_b=spec.active_params_b if spec else None,
        warnings=trail.warnings,
        assumptions=trail.assumptions,
        formulas=trail.formulas,
    )


def _total(per_gpu: States, acts: Fraction | None, gpus: int, trail: Trail) -> Fraction:
    """Weights, gradients, optimizer and activations, and the process's CUDA context."""
    total = per_gpu.weights + per_gpu.gradients + per_gpu.optimizer + (acts or 0)
    total += CUDA_CONTEXT_BYTES
    trail.formula(
        "Total" + (" per GPU" if gpus > 1 else ""),
        "weights + gradients + optimizer + activations + CUDA context",
        f"{gb(per_gpu.weights)} + {gb(per_gpu.gradients)} + {gb(per_gpu.optimizer)} + "
        f"{gb(acts or 0)} + {gb(CUDA_CONTEXT_BYTES)} = {gb(total)}",
    )
    return total


def _step(
    inputs: TrainingInputs,
    tokens: int | None,
    hidden: int | None,
    layers: int | None,
    vocab: int | None,
    checkpointing: bool,
) -> StepShape:
    """How the step is run: the architecture, checkpointing, offloading and the loss kernel."""
    offload = bool(inputs.activation_offload)
    if offload and not checkpointing:
        raise CapacityInputError(
            "activation_offload",
            "offloading moves the checkpointed layer inputs to CPU RAM: turn checkpointing on.",
        )
    spec = inputs.model if inputs.hidden_size is None else None
    return StepShape(
        tokens=tokens,
        hidden=hidden,
        layers=layers,
        vocab=vocab,
        intermediate=spec.intermediate_size if spec is not None else None,
        coefficient=activation_coefficient(inputs.model, inputs.hidden_size),
        checkpointing=checkpointing,
        offload=offload,
        fused_loss=bool(inputs.fused_loss),
    )


def _states(
    inputs: TrainingInputs, params: Fraction, hidden: int | None, layers: int | None, trail: Trail
) -> States:
    adam = adam_bytes(whole_number(inputs.adam_bytes, "adam_bytes"), trail)
    if inputs.method == "full":
        return full_states(params, adam, trail)
    return adapter_states(
        inputs.method,
        params,
        lora_trainable(
            inputs.model,
            inputs.lora_rank,
            inputs.lora_targets,
            inputs.hidden_size,
            hidden,
            layers,
            trail,
        ),
        adam,
        trail,
        _embeddings(inputs, params),
    )


def _embeddings(inputs: TrainingInputs, params: Fraction) -> Fraction:
    """The embedding table plus an untied LM head (vocabulary × hidden each), if known."""
    spec = inputs.model
    vocab = whole_number(inputs.vocab_size, "vocab_size") or (spec.vocab_size if spec else None)
    hidden = whole_number(inputs.hidden_size, "hidden_size") or (spec.hidden_size if spec else None)
    if vocab is None or hidden is None:
        return Fraction(0)
    tied = spec.tie_word_embeddings if spec is not None else False
    embeddings = Fraction(vocab * hidden * (1 if tied else 2))
    return embeddings if embeddings < params else Fraction(0)


def _does_not_fit(
    inputs: TrainingInputs,
    hidden: int | None,
    layers: int | None,
    total: Fraction,
    memory: Fraction,
    trail: Trail,
) -> None:
    lighter = ""
    if inputs.method != "qlora" and hidden is not None and layers is not None:
        alternatives = []
        for other in METHODS[METHODS.index(inputs.method) + 1 :]:
            alt = estimate_training(
                replace(inputs, method=other, gpu_memory_gb=None, accelerator=None)
            )
            alternatives.append(f"{other} needs {gb(alt.total_bytes)}")
        lighter = " " + "; ".join(alternatives) + "."
    trail.warn(
        WarningCode.TRAINING_DOES_NOT_FIT,
        Severity.ERROR,
        f"{inputs.method} training needs {gb(total)}; the device has {gb(memory)}.{lighter}",
    )
