"""The engine's KV pool against vLLM start-up logs it was not fitted to (bench/vllm_accounting.py
prints the whole table, misses included): each within 5 % or 1 GiB per GPU, run with the engine
generation that wrote the log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

# The published runs' devices and models: one definition, the bench's (bench/_vllm_published.py).
from bench._vllm_published import (
    H100_LLMD,
    LLAMA_8B,
    QWEN3_06B,
    R1_DISTILL_QWEN_14B,
    RTX_3090,
    RTX_4090,
)
from planner.capacity import (
    Accelerator,
    ModelSpec,
    ServingInputs,
    default_catalogue,
    estimate_serving,
)
from planner.capacity.hf.config import model_from_config

CAT = default_catalogue()
GIB = 2**30
LLMD = "llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md"
QWEN3_32B_CONFIG = model_from_config(
    (Path(__file__).resolve().parent / "data" / "configs" / "qwen3-32b.json").read_text()
)


def pool_gib(
    gpu: Accelerator,
    model: ModelSpec,
    context: int,
    engine: str,
    tp: int = 1,
    precision: str = "bf16",
    utilization: float = 0.9,
) -> float:
    est = estimate_serving(
        ServingInputs(
            accelerator=gpu,
            model=model,
            weight_precision=precision,
            kv_precision="bf16",
            gpu_memory_utilization=utilization,
            context_tokens=context,
            tensor_parallel=tp,
            engine_profile=engine,
        )
    )
    return est.available_for_cache_bytes / tp / GIB


@pytest.mark.parametrize(
    ("source", "gpu", "model", "context", "engine", "measured_gib"),
    [
        # vllm pull 10511: "available_kv_cache_memory 53.29GiB" (V0, its TP-2 run is a fit row).
        ("pull 10511", CAT.accelerator("h100-sxm"), LLAMA_8B, 8192, "vllm-v0", 53.29),
        # vllm pull 2031: Llama-2-7B, A100 80GB: 7,351 blocks x 16 x 524,288 B (the 2023 profiler).
        (
            "pull 2031",
            CAT.accelerator("a100-80gb"),
            replace(
                LLAMA_8B, params_b=6.74, kv_heads=32, vocab_size=32000, intermediate_size=11008
            ),
            4096,
            "vllm-v0",
            7351 * 16 * 524_288 / GIB,
        ),
        # vllm issue 10517: RTX 3090, "kv_cache_size=3.81GiB" at 20,000 and 2.89 at 29,000 tokens.
        ("issue 10517, 20k", RTX_3090, LLAMA_8B, 20000, "vllm-v0", 1952 * 16 * 131_072 / GIB),
        ("issue 10517, 29k", RTX_3090, LLAMA_8B, 29000, "vllm-v0", 1478 * 16 * 131_072 / GIB),
        # llm-d's V1 logs on an H100 (its Llama-3.1-8B row is a fit row).
        (LLMD, H100_LLMD, QWEN3_06B, 16000, "vllm-v1-0.9", 64.45),
        (LLMD, H100_LLMD, CAT.model("qwen3-32b"), 16000, "vllm-v1-0.9", 4.45),
        # The same run with the model read from its config.json (tests/planner/data/configs).
        (LLMD, H100_LLMD, QWEN3_32B_CONFIG, 16000, "vllm-v1-0.9", 4.45),
    ],
)
def test_pool_matches_a_published_vllm_log(
    source: str,
    gpu: Accelerator,
    model: ModelSpec,
    context: int,
    engine: str,
    measured_gib: float,
) -> None:
    engine_gib = pool_gib(gpu, model, context, engine)
    assert abs(engine_gib - measured_gib) <= max(0.05 * measured_gib, 1.0), (source, engine_gib)


def test_pool_matches_two_rtx_4090s_without_peer_to_peer() -> None:
    """vllm issue 13061 (V0, TP 2, gpu_memory_utilization 0.98): "KV Cache is 8.69GiB" per GPU.
    Without P2P the non-torch memory stays at the TP-1 figure (0.16 GiB, 0.25 logged), not the
    3.58 GiB of two NVLinked H100s."""
    engine_gib = pool_gib(RTX_4090, R1_DISTILL_QWEN_14B, 131072, "vllm-v0", tp=2, utilization=0.98)
    assert abs(engine_gib - 8.69) <= max(0.05 * 8.69, 1.0), engine_gib


def test_pool_matches_vllm_0_7_0s_log_of_llama_70b_w8a8() -> None:
    """vllm pull 12569 (V1, v0.7.0, gpu_memory_utilization 0.98): 1,381 blocks x 16 tokens x
    327,680 B. The 0.7.0 profile's logits over all 8,192 batched tokens explain its overhead."""
    measured = 1381 * 16 * 327_680 / GIB
    engine_gib = pool_gib(
        CAT.accelerator("h100-sxm"),
        CAT.model("llama-3.1-70b"),
        2048,
        "vllm-v1-0.7",
        precision="int8",
        utilization=0.98,
    )
    assert abs(engine_gib - measured) <= max(0.05 * measured, 1.0), engine_gib


def test_a_config_json_model_holds_the_pool_vllm_logged_within_one_block() -> None:
    """llm-d's Qwen3-32B on an H100 (vllm-v1-0.9): 4.45 GiB of KV cache, 18,227 tokens of 262,144
    bytes; the model read from its config.json, weights counted tensor by tensor, lands within
    one 16-token block (a learner's flags without the MLP width gave 34,624)."""
    est = estimate_serving(
        ServingInputs(
            accelerator=H100_LLMD,
            model=QWEN3_32B_CONFIG,
            context_tokens=16000,
            users=1,
            kv_precision="bf16",
            engine_profile="vllm-v1-0.9",
        )
    )
    assert est.kv_cache_tokens is not None and abs(est.kv_cache_tokens - 18_227) <= 16
