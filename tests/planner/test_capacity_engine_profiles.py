"""The profiled batch and activation peak of vLLM 0.7 and 0.8 (V1), against hand-worked values
from the defaults and profile runs read at those tags (planner/capacity/engine_profiles.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from planner.capacity import ServingInputs, default_catalogue, estimate_serving
from planner.capacity.engine_profiles import ProfileBatch, engine_profile, profile_batch

CAT = default_catalogue()
GIB = 2**30


def activation_peak(accelerator: str, model: str, engine: str, precision: str = "bf16") -> int:
    est = estimate_serving(
        ServingInputs(
            accelerator=CAT.accelerator(accelerator),
            model=CAT.model(model),
            weight_precision=precision,
            context_tokens=2048,
            users=1,
            engine_profile=engine,
        )
    )
    return int(est.to_dict()["overhead_parts_bytes"]["activation_peak"])


@pytest.mark.parametrize(
    ("engine", "accelerator", "batch"),
    [
        # v0.8.0-0.8.4 arg_utils.py: "h100" or "h200" in the device name -> 8,192 and 1,024.
        ("vllm-v1-0.8", "h100-sxm", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8", "h200", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8", "l40s", ProfileBatch(2048, 256)),
        ("vllm-v1-0.8", "a100-80gb", ProfileBatch(2048, 256)),
        # v0.7.0: the same tokens, but max_num_seqs 1,024 under V1 on every GPU.
        ("vllm-v1-0.7", "h100-sxm", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.7", "l40s", ProfileBatch(2048, 1024)),
    ],
)
def test_vllm_0_7_and_0_8_size_their_batch_by_gpu_name(
    engine: str, accelerator: str, batch: ProfileBatch
) -> None:
    gpu = CAT.accelerator(accelerator)
    usable = Fraction(str(gpu.usable_memory_gib)) * GIB
    assert (
        profile_batch(
            engine_profile(engine), usable=usable, accelerator_id=gpu.id, max_model_len=2048
        )
        == batch
    )


def test_vllm_0_7_0_profiles_the_logits_of_every_batched_token() -> None:
    """Llama-3.1-70B on an H100: logits of 8,192 tokens beside their hidden states,
    8,192 x (128,256 + 8,192) x 2 = 2,235,564,032 B, outweigh the forward's
    8,192 x (3 x 28,672 + 3 x 8,192) x 2 = 1,811,939,328 B; on an L40S, 2,048 tokens of
    Llama-3.1-8B: 2,048 x (128,256 + 4,096) x 2 = 542,113,792 B."""
    assert activation_peak("h100-sxm", "llama-3.1-70b", "vllm-v1-0.7", "int8") == 2_235_564_032
    assert activation_peak("l40s", "llama-3.1-8b", "vllm-v1-0.7") == 542_113_792


def test_vllm_0_8_samples_one_row_per_sequence() -> None:
    """Llama-3.1-8B: 1,024 x 128,256 x 39 = 5,122,031,616 B on an H100 (above the forward's
    8,192 x 55,296 x 2 = 905,969,664); 256 x 128,256 x 39 = 1,280,507,904 B on an L40S."""
    assert activation_peak("h100-sxm", "llama-3.1-8b", "vllm-v1-0.8") == 5_122_031_616
    assert activation_peak("l40s", "llama-3.1-8b", "vllm-v1-0.8") == 1_280_507_904
