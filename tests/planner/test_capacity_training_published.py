"""The training estimate against published measurements (bench/training_memory.py prints them all,
misses included): Unsloth's longest Llama-3.1-8B QLoRA contexts on 48 and 80 GB, with its set-up
(unslothai/unsloth README: 4-bit QLoRA on all linear layers, rank 32, batch 1)."""

from __future__ import annotations

import pytest

from planner.capacity import TrainingInputs, default_catalogue, estimate_training

LLAMA8 = default_catalogue().model("llama-3.1-8b")
HF = {"checkpointing": True, "adam_bytes": 6}
UNSLOTH = {**HF, "activation_offload": True, "fused_loss": True}


def fits(memory_gb: int, seq_len: int, how: dict[str, object]) -> bool:
    est = estimate_training(
        TrainingInputs(
            model=LLAMA8,
            method="qlora",
            lora_rank=32,
            lora_targets="all_linear",
            batch_size=1,
            seq_len=seq_len,
            gpu_memory_gb=memory_gb,
            **how,  # type: ignore[arg-type]
        )
    )
    return bool(est.fits)


@pytest.mark.parametrize(
    ("memory_gb", "published", "how"),
    [
        (48, 15_502, HF),  # Hugging Face + FA2
        (80, 28_454, HF),
        (48, 191_728, UNSLOTH),  # Unsloth: offloaded checkpoints, fused loss
        (80, 342_733, UNSLOTH),
    ],
)
def test_published_longest_context_fits_and_ten_percent_more_does_not(
    memory_gb: int, published: int, how: dict[str, object]
) -> None:
    assert fits(memory_gb, int(published * 0.9), how)
    assert not fits(memory_gb, int(published * 1.1), how)
