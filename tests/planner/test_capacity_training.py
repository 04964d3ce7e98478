"""Training memory (full Adam, LoRA, QLoRA), activations, speed and cost, by hand."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

from planner.capacity import (
    CapacityInputError,
    TrainingInputs,
    WarningCode,
    default_catalogue,
    estimate_training,
    lora_adapter_params,
)

CAT = default_catalogue()
# One process's CUDA context on an H100: 0.61 GiB (planner/capacity/training/__init__.py cites the log).
CUDA_CONTEXT = math.ceil(Fraction("0.61") * 2**30)
LLAMA8 = CAT.model("llama-3.1-8b")


def test_full_adam_is_sixteen_bytes_per_parameter() -> None:
    """7 B params: 14 GB weights, 14 GB gradients, 84 GB optimizer = 112 GB (not the 56 GB of
    half-counting calculators), plus the process's CUDA context."""
    est = estimate_training(TrainingInputs(params_b=7, method="full"))
    assert est.weights_bytes == 14_000_000_000
    assert est.gradients_bytes == 14_000_000_000
    assert est.optimizer_state_bytes == 84_000_000_000
    assert est.total_bytes == 112_000_000_000 + CUDA_CONTEXT
    assert est.activations_gb is None
    assert WarningCode.ACTIVATIONS_NOT_COUNTED in [w.code for w in est.warnings]
    assert {"batch_size", "seq_len", "checkpointing"} <= set(est.missing_assumptions)


def test_lora_adapter_count_for_llama_3_1_8b_rank_16() -> None:
    """q (4096+4096) + k, v (4096+1024) each + o (4096+4096), × 16 × 32 layers = 13,631,488."""
    n = lora_adapter_params(
        rank=16,
        layers=32,
        hidden_size=4096,
        q_out=4096,
        kv_out=1024,
        intermediate_size=14336,
        targets="attention",
    )
    assert n == 13_631_488
    est = estimate_training(TrainingInputs(model=LLAMA8, method="lora", lora_rank=16))
    assert est.trainable_params == 13_631_488
    assert est.weights_bytes == 16_060_000_000 + 2 * 13_631_488
    assert est.gradients_bytes == 2 * 13_631_488
    assert est.optimizer_state_bytes == 12 * 13_631_488


def test_lora_all_linear_adds_mlp_adapters() -> None:
    est = estimate_training(
        TrainingInputs(model=LLAMA8, method="lora", lora_rank=16, lora_targets="all_linear")
    )
    mlp = 16 * 32 * (2 * (4096 + 14336) + (14336 + 4096))
    assert est.trainable_params == 13_631_488 + mlp


def test_qlora_base_is_four_bits_plus_double_quantised_constants() -> None:
    """The linear layers in 4 bits plus 0.126953125/8 bytes of constants; the embedding table and
    the LM head (2 × 128,256 × 4,096 = 1,050,673,152 parameters) stay 16-bit."""
    est = estimate_training(TrainingInputs(model=LLAMA8, method="qlora", lora_rank=16))
    embeddings = 2 * 128_256 * 4096
    assert embeddings == 1_050_673_152
    quantised = 8_030_000_000 - embeddings
    constants = quantised * 0.126953125 / 8
    base = quantised // 2 + 2 * embeddings
    assert base == 5_591_009_728
    assert est.quantisation_constants_bytes == pytest.approx(constants, abs=1)
    assert est.weights_bytes == pytest.approx(base + constants + 2 * 13_631_488, abs=1)


def test_activations_with_and_without_checkpointing() -> None:
    """34·s·b·h·L without; 2·s·b·h·L + 34·s·b·h with checkpointing (Korthikanti et al.); both
    plus one layer's backward, 6·s·b·i (i = 14,336), and the fp32 cross-entropy's 16·s·b·vocab
    (Llama 3.1's 128,256 tokens: 16.8 GB here)."""
    s, b, h, L, V, i = 2048, 4, 4096, 32, 128_256, 14_336
    off = estimate_training(
        TrainingInputs(
            model=LLAMA8, method="lora", lora_rank=16, batch_size=b, seq_len=s, checkpointing=False
        )
    )
    on = estimate_training(
        TrainingInputs(
            model=LLAMA8, method="lora", lora_rank=16, batch_size=b, seq_len=s, checkpointing=True
        )
    )
    backward, logits = 6 * s * b * i, 16 * s * b * V
    assert logits == 16_810_770_432
    assert off.activations_bytes == 34 * s * b * h * L + backward + logits
    assert on.activations_bytes == 2 * s * b * h * L + 34 * s * b * h + backward + logits
    assert on.total_bytes < off.total_bytes
    assert "checkpointing" not in on.missing_assumptions


def test_steps_per_second_and_cost_from_measured_throughput() -> None:
    """8,192 tokens/s over 4 × 2048-token steps = 1 step/s; 3,600 steps = 1 h; at $2/h, $2."""
    est = estimate_training(
        TrainingInputs(
            params_b=7,
            method="full",
            batch_size=4,
            seq_len=2048,
            tokens_per_s=8192,
            steps=3600,
            price_per_hour=2,
        )
    )
    assert est.steps_per_s == 1.0
    assert est.hours_per_run == 1.0
    assert est.cost_per_run_usd == 2.0


def test_throughput_from_tflops_and_mfu() -> None:
    """Full training: 6N FLOPs per token; 312 TFLOPS × 0.5 ÷ (6 × 8.03e9) tokens/s."""
    est = estimate_training(
        TrainingInputs(
            model=LLAMA8,
            method="full",
            batch_size=1,
            seq_len=1024,
            accelerator=CAT.accelerator("a100-80gb"),
            mfu=0.5,
        )
    )
    assert est.tokens_per_s == pytest.approx(312e12 * 0.5 / (6 * 8.03e9), abs=0.1)
    assert "mfu" not in est.missing_assumptions


def test_training_does_not_fit_suggests_lighter_methods() -> None:
    """Full fine-tuning of 8 B on 80 GB fails (128.5 GB before activations) and names LoRA/QLoRA."""
    est = estimate_training(
        TrainingInputs(model=LLAMA8, method="full", accelerator=CAT.accelerator("a100-80gb"))
    )
    assert est.fits is False
    warning = next(w for w in est.warnings if w.code == WarningCode.TRAINING_DOES_NOT_FIT)
    assert "lora needs" in warning.message and "qlora needs" in warning.message
    lora = estimate_training(
        TrainingInputs(model=LLAMA8, method="lora", accelerator=CAT.accelerator("a100-80gb"))
    )
    assert lora.fits is True


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"params_b": -7}, "params_b"),
        ({"params_b": 7, "method": "dpo"}, "method"),
        ({"params_b": 7, "batch_size": 0}, "batch_size"),
        ({"params_b": 7, "method": "lora"}, "model"),
        ({"model": LLAMA8, "method": "lora", "lora_rank": -4}, "lora_rank"),
    ],
)
def test_bad_training_inputs_name_their_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(CapacityInputError) as err:
        estimate_training(TrainingInputs(**kwargs))  # type: ignore[arg-type]
    assert err.value.field == field


def test_adam_with_fp32_gradients_is_eighteen_bytes() -> None:
    est = estimate_training(TrainingInputs(params_b=7, method="full", adam_bytes=18))
    assert est.gradients_bytes == 28_000_000_000
    assert est.total_bytes == 126_000_000_000 + CUDA_CONTEXT
    with pytest.raises(CapacityInputError) as err:
        estimate_training(TrainingInputs(params_b=7, adam_bytes=17))
    assert err.value.field == "adam_bytes"


@pytest.mark.parametrize(
    ("stage", "per_gpu"),
    [
        (0, 112_000_000_000),
        (1, 14_000_000_000 + 14_000_000_000 + 84_000_000_000 // 8),
        (2, 14_000_000_000 + (14_000_000_000 + 84_000_000_000) // 8),
        (3, 112_000_000_000 // 8),
    ],
)
def test_zero_stages_shard_states_over_the_gpus(stage: int, per_gpu: int) -> None:
    """ZeRO over 8 GPUs: stage 1 the optimizer, 2 the gradients too, 3 (FSDP) the weights too;
    each GPU also holds its own CUDA context."""
    est = estimate_training(TrainingInputs(params_b=7, method="full", gpus=8, zero_stage=stage))
    assert est.total_bytes == per_gpu + CUDA_CONTEXT
    assert (est.gpus, est.zero_stage) == (8, stage)


def test_qlora_65b_fits_one_48_gb_gpu_as_published() -> None:
    """QLoRA's headline (Dettmers et al. 2023): a 65 B LLaMA fine-tunes on one 48 GB GPU. LLaMA-65B:
    80 layers, hidden 8,192, vocabulary 32,000; rank 64 on q, k, v, o; one 512-token sequence,
    checkpointed. Full fine-tuning of the same model needs over a terabyte."""
    common: dict[str, Any] = {
        "params_b": 65.2,
        "hidden_size": 8192,
        "layers": 80,
        "vocab_size": 32_000,
    }
    qlora = estimate_training(
        TrainingInputs(
            **common,
            method="qlora",
            lora_rank=64,
            batch_size=1,
            seq_len=512,
            checkpointing=True,
            gpu_memory_gb=48,
        )
    )
    assert qlora.fits is True
    assert 35e9 < qlora.total_bytes < 48e9
    full = estimate_training(TrainingInputs(**common, method="full"))
    assert full.total_bytes > 1e12


def test_activation_count_for_llama_style_blocks() -> None:
    """(8h + 4q + 4kv + 6i) / h bytes per token per layer: 34 for Llama-3.1-8B (GQA 1,024-wide
    K/V, SwiGLU 14,336), 44.29 for Qwen2.5-7B's wider MLP (18,944 on a 3,584 hidden size)."""
    from fractions import Fraction

    from planner.capacity.training.activations import activation_coefficient

    assert activation_coefficient(LLAMA8, None) == 34
    qwen = CAT.model("qwen2.5-7b")
    assert activation_coefficient(qwen, None) == Fraction(
        8 * 3584 + 4 * 3584 + 4 * 512 + 6 * 18944, 3584
    )
    est = estimate_training(
        TrainingInputs(model=qwen, method="lora", batch_size=1, seq_len=1024, checkpointing=False)
    )
    logits = 16 * 1024 * 152_064
    assert est.activations_bytes == 158_720 * 1024 * 28 + 6 * 1024 * 18_944 + logits


def test_offloaded_checkpoints_and_a_fused_loss_leave_one_layer_on_the_gpu() -> None:
    """Unsloth's way: the checkpointed layer inputs wait in CPU RAM and the loss keeps no logits,
    so one 32,768-token sequence of Llama-3.1-8B costs 34 × 32,768 × 4,096 + 6 × 32,768 × 14,336
    bytes of activations: 7.38 GB."""
    s = 32_768
    est = estimate_training(
        TrainingInputs(
            model=LLAMA8,
            method="qlora",
            batch_size=1,
            seq_len=s,
            checkpointing=True,
            activation_offload=True,
            fused_loss=True,
        )
    )
    assert est.activations_bytes == 34 * s * 4096 + 6 * s * 14_336 == 7_381_975_040


def test_offloading_needs_checkpointing() -> None:
    with pytest.raises(CapacityInputError) as err:
        estimate_training(
            TrainingInputs(
                model=LLAMA8, method="qlora", batch_size=1, seq_len=1024, activation_offload=True
            )
        )
    assert err.value.field == "activation_offload"


def test_eight_bit_adamw_keeps_six_bytes_per_adapter_parameter() -> None:
    """bitsandbytes' AdamW8bit: 16-bit weights and gradients, two 8-bit moments: 2 + 2 + 2."""
    est = estimate_training(TrainingInputs(model=LLAMA8, method="lora", lora_rank=16, adam_bytes=6))
    assert est.gradients_bytes == 2 * 13_631_488
    assert est.optimizer_state_bytes == 2 * 13_631_488
