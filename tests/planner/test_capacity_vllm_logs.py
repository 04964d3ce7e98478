"""The engine's KV pool against vLLM start-up logs it was not fitted to (bench/vllm_accounting.py
prints the whole table): each within 5 % or 1 GiB per GPU."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.capacity import ServingInputs, default_catalogue, estimate_serving

CAT = default_catalogue()
GIB = 2**30


def pool_gib(gpu: str, model: object, precision: str, utilization: float, context: int) -> float:
    est = estimate_serving(
        ServingInputs(
            accelerator=CAT.accelerator(gpu),
            model=model,
            weight_precision=precision,  # type: ignore[arg-type]
            kv_precision="bf16",
            gpu_memory_utilization=utilization,
            context_tokens=context,
        )
    )
    return est.available_for_cache_bytes / GIB


@pytest.mark.parametrize(
    ("label", "gpu", "model", "precision", "utilization", "context", "measured_gib"),
    [
        # vllm-project/vllm pull 12569: Llama-3.1-70B w8a8, H100, 0.98: 1,381 blocks x 16 x 327,680 B.
        (
            "70B w8a8 H100",
            "h100-sxm",
            CAT.model("llama-3.1-70b"),
            "int8",
            0.98,
            2048,
            1381 * 16 * 327_680 / GIB,
        ),
        # vllm-project/vllm pull 2031: Llama-2-7B, A100 80GB, 0.9: 7,351 blocks x 16 x 524,288 B.
        (
            "Llama-2-7B A100",
            "a100-80gb",
            replace(CAT.model("llama-3.1-8b"), params_b=6.74, kv_heads=32, vocab_size=32000),
            "bf16",
            0.90,
            4096,
            7351 * 16 * 524_288 / GIB,
        ),
    ],
)
def test_pool_matches_a_published_vllm_log(
    label: str,
    gpu: str,
    model: object,
    precision: str,
    utilization: float,
    context: int,
    measured_gib: float,
) -> None:
    engine = pool_gib(gpu, model, precision, utilization, context)
    assert abs(engine - measured_gib) <= max(0.05 * measured_gib, 1.0), (label, engine)
