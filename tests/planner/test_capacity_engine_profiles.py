"""The profiled batch, activation peak and non-torch memory of vLLM's generations, against
hand-worked values from the defaults and profile runs read in those wheels
(planner/capacity/engine_profiles.py)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

from planner.capacity import Accelerator, ServingInputs, default_catalogue, estimate_serving
from planner.capacity.engine_profiles import (
    ProfileBatch,
    engine_profile,
    non_torch_gib,
    profile_batch,
)
from planner.capacity.units import CapacityInputError

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
        # v0.8.0-0.8.3 arg_utils.py: "h100" or "h200" in the device name -> 8,192 tokens, else
        # 2,048; max_num_seqs 1,024 on every device.
        ("vllm-v1-0.8", "h100-sxm", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8", "h200", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8", "l40s", ProfileBatch(2048, 1024)),
        ("vllm-v1-0.8", "a100-80gb", ProfileBatch(2048, 1024)),
        # v0.8.4: the sequences by name too.
        ("vllm-v1-0.8.4", "h100-sxm", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8.4", "l40s", ProfileBatch(2048, 256)),
        ("vllm-v1-0.8.4", "a100-80gb", ProfileBatch(2048, 256)),
        # v0.8.5: by device memory (>= 70 GiB), the A100 80GB included.
        ("vllm-v1-0.8.5", "h100-sxm", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8.5", "a100-80gb", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.8.5", "l40s", ProfileBatch(2048, 256)),
        # v0.7.0: the same tokens, but max_num_seqs 1,024 under V1 on every GPU.
        ("vllm-v1-0.7", "h100-sxm", ProfileBatch(8192, 1024)),
        ("vllm-v1-0.7", "l40s", ProfileBatch(2048, 1024)),
    ],
)
def test_vllm_0_7_and_0_8_size_their_batch_by_gpu_name_or_memory(
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
    8,192 x 55,296 x 2 = 905,969,664), and on an L40S under 0.8.0-0.8.3 (1,024 sequences
    everywhere); 256 x 128,256 x 39 = 1,280,507,904 B on an L40S under 0.8.4 and 0.8.5."""
    assert activation_peak("h100-sxm", "llama-3.1-8b", "vllm-v1-0.8") == 5_122_031_616
    assert activation_peak("l40s", "llama-3.1-8b", "vllm-v1-0.8") == 5_122_031_616
    assert activation_peak("l40s", "llama-3.1-8b", "vllm-v1-0.8.4") == 1_280_507_904
    assert activation_peak("l40s", "llama-3.1-8b", "vllm-v1-0.8.5") == 1_280_507_904


def test_without_peer_to_peer_tensor_parallelism_adds_no_non_torch_memory() -> None:
    """V0 at TP 2: 3.58 GiB of non-torch memory per GPU with P2P, the TP-1 figure, 0.16 GiB,
    without. For the two GPUs: 2 x 3.58 x 2^30 = 7,687,991,459.84 B and 2 x 0.16 x 2^30 =
    343,597,383.68 B, and the KV pool grows by the difference, 7,344,394,076 B (whole bytes)."""
    l40s = CAT.accelerator("l40s")

    def tp2(gpu: Accelerator) -> tuple[int, int]:
        est = estimate_serving(
            ServingInputs(
                accelerator=gpu,
                model=CAT.model("llama-3.1-8b"),
                context_tokens=8192,
                tensor_parallel=2,
                engine_profile="vllm-v0",
            )
        )
        non_torch = int(est.to_dict()["overhead_parts_bytes"]["non_torch"])
        return non_torch, int(est.available_for_cache_bytes)

    (with_p2p, pool_with), (without_p2p, pool_without) = (
        tp2(l40s),
        tp2(replace(l40s, peer_to_peer=False)),
    )
    assert (with_p2p, without_p2p) == (7_687_991_460, 343_597_384)
    assert pool_without - pool_with == 7_344_394_076
    assert non_torch_gib(engine_profile("vllm-v1-0.9"), 4, peer_to_peer=False) == Fraction("0.13")
    assert non_torch_gib(engine_profile("vllm-v1-0.9"), 4) == Fraction("0.55")


def l40s_8b(**given: Any) -> dict[str, Any]:
    est = estimate_serving(
        ServingInputs(
            accelerator=CAT.accelerator("l40s"),
            model=CAT.model("llama-3.1-8b"),
            context_tokens=32768,
            engine_profile="vllm-v1-0.8.4",
            **given,
        )
    )
    return est.to_dict()


def test_max_num_seqs_replaces_the_default_sequences() -> None:
    """vLLM 0.8.4 on an L40S samples 256 rows by default; --max-num-seqs 1024 makes it
    1,024 x 128,256 x 39 = 5,122,031,616 B; --max-num-seqs 1 leaves the forward of 2,048 tokens,
    2,048 x (3 x 14,336 + 3 x 4,096) x 2 = 226,492,416 B, above one row's 5,001,984."""
    default = l40s_8b()
    assert default["overhead_parts_bytes"]["activation_peak"] == 1_280_507_904
    assert {"field": "max_num_seqs", "assumed": "256 (vLLM 0.8.4 (V1)'s default on this GPU)"} in (
        default["assumptions"]
    )
    assert l40s_8b(max_num_seqs=1024)["overhead_parts_bytes"]["activation_peak"] == 5_122_031_616
    assert l40s_8b(max_num_seqs=1)["overhead_parts_bytes"]["activation_peak"] == 226_492_416
    assert l40s_8b(max_num_seqs=1024)["kv_cache_tokens"] < default["kv_cache_tokens"]


def test_more_sequences_than_batched_tokens_is_refused_as_vllm_does() -> None:
    with pytest.raises(CapacityInputError) as raised:
        l40s_8b(max_num_seqs=2049)  # vllm serve on an L40S batches 2,048 tokens
    assert raised.value.field == "max_num_seqs" and "2,048" in str(raised.value)


def test_every_generation_defaults_to_vllms_0_9_utilization() -> None:
    """--gpu-memory-utilization defaults to 0.90 in every catalogued vLLM generation (arg_utils.py
    EngineArgs, later CacheConfig); the estimate assumes the default generation's."""
    from fractions import Fraction

    from planner.capacity.engine_profiles import ENGINE_PROFILES
    from planner.capacity.overhead import DEFAULT_GPU_MEMORY_UTILIZATION

    assert {p.default_utilization for p in ENGINE_PROFILES.values()} == {Fraction(9, 10)}
    assert DEFAULT_GPU_MEMORY_UTILIZATION == Fraction(9, 10)
