"""The engine's KV pool and concurrency beside vLLM's own start-up reports.

Each row is one published vLLM start-up log (memory profile, "# GPU blocks", "GPU KV cache size",
"Maximum concurrency"), cited below. The engine is given only what the person launching vLLM
chose (GPU, model, precision, tensor parallelism, gpu_memory_utilization, max_model_len), the vLLM
generation that wrote the log (engine_profile: planner/capacity/engine_profiles.py) and no overhead,
so it uses its own accounting (planner/capacity/overhead.py). Per row it prints the KV
pool per GPU (GiB) and the tokens / maximum concurrency, engine beside measured, with the relative
error; the target is 5 % or 1 GiB per GPU. Rows marked "fit" supplied a constant of the
accounting (in-sample: the non-torch memory, or a family's activation peak); the others are checks.

Run: `.venv/bin/python bench/vllm_accounting.py` (pure Python, under a second).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.capacity import (
    Accelerator,
    ModelSpec,
    ServingInputs,
    default_catalogue,
    estimate_serving,
)

GIB = 2**30
CAT = default_catalogue()
LLAMA_8B = CAT.model("llama-3.1-8b")
LLAMA_70B = CAT.model("llama-3.1-70b")
LLAMA_2_7B = replace(
    LLAMA_8B,
    id="llama-2-7b",
    name="Llama 2 7B",
    params_b=6.74,
    kv_heads=32,
    vocab_size=32000,
    intermediate_size=11008,
    max_context_tokens=4096,
)
LLAMA_2_70B = replace(
    LLAMA_70B,
    id="llama-2-70b",
    name="Llama 2 70B",
    params_b=68.98,
    vocab_size=32000,
    max_context_tokens=4096,
)
QWEN3_235B = ModelSpec(
    id="qwen3-235b-a22b",
    name="Qwen3 235B A22B",
    params_b=235.09,
    layers=94,
    hidden_size=4096,
    attention_heads=64,
    kv_heads=4,
    head_dim=128,
    intermediate_size=12288,
    max_context_tokens=40960,
    release_precision="bf16",
    vocab_size=151936,
    family="moe",
    active_params_b=22.0,
    source="https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json",
)
# vLLM's own total on an RTX 3090 ("total_gpu_memory=23.58GiB", vllm issue 10517); not a
# catalogue device, so the bench builds it.
RTX_3090 = replace(
    CAT.accelerator("a10g"),
    id="rtx-3090",
    name="NVIDIA GeForce RTX 3090",
    memory_gb=24,
    usable_memory_gib=23.58,
    usable_memory_source="vLLM's memory profile on an RTX 3090, github.com/vllm-project/vllm/issues/10517",
    mig_profiles=(),
)
# The H100 of the llm-d logs reports 79.18 GiB total (79.22 in vllm pull 10511's).
H100_LLMD = replace(CAT.accelerator("h100-sxm"), usable_memory_gib=79.18)
QWEN3_06B = ModelSpec(
    id="qwen3-0.6b",
    name="Qwen3 0.6B",
    params_b=0.6,
    layers=28,
    hidden_size=1024,
    attention_heads=16,
    kv_heads=8,
    head_dim=128,
    intermediate_size=3072,
    max_context_tokens=40960,
    release_precision="bf16",
    vocab_size=151936,
    tie_word_embeddings=True,
    source="https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json",
)
# Qwen2.5-14B's architecture; vllm issue 13061 served it on two RTX 4090s, whose budget it logs
# as 23.08 GiB at utilization 0.98 (the logged parts sum to it), so 23.55 GiB total.
R1_DISTILL_QWEN_14B = ModelSpec(
    id="deepseek-r1-distill-qwen-14b",
    name="DeepSeek R1 Distill Qwen 14B",
    params_b=14.77,
    layers=48,
    hidden_size=5120,
    attention_heads=40,
    kv_heads=8,
    head_dim=128,
    intermediate_size=13824,
    max_context_tokens=131072,
    release_precision="bf16",
    vocab_size=152064,
    source="https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B/blob/main/config.json",
)
RTX_4090 = replace(
    RTX_3090,
    id="rtx-4090",
    name="NVIDIA GeForce RTX 4090",
    usable_memory_gib=23.55,
    usable_memory_source="vllm issue 13061: 23.08 GiB budget at gpu_memory_utilization 0.98",
)
LLAMA_32_11B_VISION = ModelSpec(
    id="llama-3.2-11b-vision",
    name="Llama 3.2 11B Vision",
    params_b=10.67,
    layers=40,
    hidden_size=4096,
    attention_heads=32,
    kv_heads=8,
    head_dim=128,
    intermediate_size=14336,
    max_context_tokens=131072,
    release_precision="bf16",
    vocab_size=128256,
    family="multimodal",
    source="https://huggingface.co/meta-llama/Llama-3.2-11B-Vision/blob/main/config.json",
)


@dataclass(frozen=True)
class Measurement:
    label: str
    source: str
    gpu: str | Accelerator
    model: ModelSpec
    precision: str
    tp: int
    utilization: float
    context: int
    pool_gib: float  # per GPU, as logged (or from the logged blocks)
    tokens: int | None = None  # "GPU KV cache size" or blocks x 16
    role: str = "check"
    engine: str = "vllm-v1"  # the vLLM generation that wrote the log


MEASUREMENTS = (
    Measurement(
        "Llama-3-8B, H100, TP 1 (V0, 0.6.5)",
        "github.com/vllm-project/vllm/pull/10511 (memory profiling results: 1.26 GiB activation, 1.79 GiB non-torch logged)",
        "h100-sxm",
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        8192,
        53.29,
        role="check",
        engine="vllm-v0",
    ),
    Measurement(
        "Llama-3-8B, H100, TP 2 (V0, 0.6.5)",
        "github.com/vllm-project/vllm/pull/10511 (71.29 − 7.48 − 3.58 − 1.26 GiB logged)",
        "h100-sxm",
        LLAMA_8B,
        "bf16",
        2,
        0.90,
        8192,
        58.97,
        role="fit",
        engine="vllm-v0",
    ),
    Measurement(
        "Llama-3.1-70B w8a8, H100, util 0.98 (V1, 0.7.0)",
        "github.com/vllm-project/vllm/pull/12569 (VLLM_USE_V1=1, v0.7.0; 67.72 GiB weights, 1,381 blocks, 10.79x at 2,048; 3.18 GiB besides weights and KV). Run as vllm serve: v0.7.0's arg_utils.py gives an H100 8,192 batched tokens there (16,384 for the LLM class), and its gpu_model_runner.py profile_run takes the 16-bit logits of all 8,192 tokens with no sampler run: 8,192 x (128,256 + 8,192) x 2 B = 2.08 GiB, plus 0.74 GiB non-torch",
        "h100-sxm",
        LLAMA_70B,
        "int8",
        1,
        0.98,
        2048,
        1381 * 16 * 327_680 / GIB,
        tokens=1381 * 16,
        engine="vllm-v1-0.7",
    ),
    Measurement(
        "Llama-3.1-8B, L40S (V1, April 2025)",
        "github.com/vllm-project/vllm/pull/17122 (158,656 tokens, 4.84x at 32,768). Miss: 5.75 GiB besides weights and KV against 1.93 modelled. vLLM's defaults at the v0.8.4 and v0.8.5 tags (arg_utils.py _set_default_args_v1) give an L40S 256 sequences in either usage context (2,048 tokens for vllm serve, 8,192 for the LLM class, whose forward, 0.84 GiB, stays below the 256-row sampler's 1.19 GiB), so no default explains it; 1,024 sequences (the H100 default, or --max-num-seqs 1024) would give 4.77 + 0.74 = 5.51 GiB. The PR's launch flags and version were not found; not fitted",
        "l40s",
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        32768,
        158_656 * 131_072 / GIB,
        tokens=158_656,
        engine="vllm-v1-0.8",
    ),
    Measurement(
        "Llama-2-7B, A100 80GB (vLLM 0.2.5, 2023)",
        "github.com/vllm-project/vllm/pull/2031 (7,351 GPU blocks; the 2023 profiler, batch as V0)",
        "a100-80gb",
        LLAMA_2_7B,
        "bf16",
        1,
        0.90,
        4096,
        7351 * 16 * 524_288 / GIB,
        tokens=7351 * 16,
        engine="vllm-v0",
    ),
    Measurement(
        "Llama-2-70B, 4x A100 80GB (vLLM 0.2, 2023)",
        "github.com/vllm-project/vllm/pull/2031 (20,865 GPU blocks). Miss: the PR moved the profile to total − free after the run, NCCL buffers and the allocator's cache included; by its own figures (31,615 -> 20,865 blocks) that took 13.1 GiB per GPU at TP 4 (98 blocks, 0.77 GiB, at TP 1). The v0.2.5 worker could not be read for this bench (no 0.2 release on the package index reached, the repository snapshot too large to fetch), so its batch and attention buffers are unexplained; not modelled, not fitted",
        "a100-80gb",
        LLAMA_2_70B,
        "bf16",
        4,
        0.90,
        4096,
        20865 * 16 * 81_920 / GIB,
        tokens=20865 * 16,
        engine="vllm-v0",
    ),
    Measurement(
        "DeepSeek-R1-Distill-Qwen-14B, 2x RTX 4090, util 0.98 (V0, Feb 2025)",
        "github.com/vllm-project/vllm/issues/13061 (weights 13.9476 GB, non_torch 0.25 GiB, activation peak 0.19 GiB, KV cache 8.69 GiB per GPU, max_model_len 131,072). Miss: V0's non-torch memory at TP 2 is held at pull 10511's H100 figure, 3.58 GiB; these PCIe cards logged 0.25. One TP-2 figure does not fit both, and neither log says what the memory was (NCCL or custom all-reduce buffers are the likely difference, not verified)",
        RTX_4090,
        R1_DISTILL_QWEN_14B,
        "bf16",
        2,
        0.98,
        131072,
        8.69,
        engine="vllm-v0",
    ),
    Measurement(
        "Qwen3-235B-A22B-FP8, 4x H100",
        "github.com/vllm-project/vllm/issues/21348 (8.11 GiB, 178,880 tokens)",
        "h100-sxm",
        QWEN3_235B,
        "fp8",
        4,
        0.90,
        40960,
        8.11,
        tokens=178_880,
        role="fit",
        engine="vllm-v1-0.9",
    ),
    Measurement(
        "Llama-3.2-11B-Vision, H100",
        "github.com/vllm-project/vllm/pull/12126 (14.65 GiB, 6,001 blocks)",
        "h100-sxm",
        LLAMA_32_11B_VISION,
        "bf16",
        1,
        0.90,
        65536,
        14.65,
        tokens=6001 * 16,
        role="fit",
        engine="vllm-v0",
    ),
    Measurement(
        "Llama-3.1-8B, RTX 3090, 20,000 tokens (V0)",
        "github.com/vllm-project/vllm/issues/10517 (kv_cache_size=3.81GiB, 1,952 blocks; non_torch 0.35 GiB logged)",
        RTX_3090,
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        20000,
        1952 * 16 * 131_072 / GIB,
        tokens=1952 * 16,
        engine="vllm-v0",
    ),
    Measurement(
        "Llama-3.1-8B, RTX 3090, 29,000 tokens (V0)",
        "github.com/vllm-project/vllm/issues/10517 (kv_cache_size=2.89GiB, 1,478 blocks)",
        RTX_3090,
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        29000,
        1478 * 16 * 131_072 / GIB,
        tokens=1478 * 16,
        engine="vllm-v0",
    ),
    Measurement(
        "Llama-3.1-8B, RTX 3090, 35,000 tokens (V0, chunked prefill)",
        "github.com/vllm-project/vllm/issues/10517 (23.58 × 0.9 − peak_torch 15.05 − non_torch 0.35 GiB, from the logged figures)",
        RTX_3090,
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        35000,
        23.58 * 0.9 - 15.05 - 0.35,
        engine="vllm-v0",
        role="fit",
    ),
    Measurement(
        "Llama-3.1-8B, H100, 16,000 tokens (V1, llm-d)",
        "github.com/llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (4.76 GiB peak activation, 0.13 GiB non-torch, 51.38 GiB KV)",
        H100_LLMD,
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        16000,
        51.38,
        role="fit",
        engine="vllm-v1-0.9",
    ),
    Measurement(
        "Qwen3-0.6B, H100, 16,000 tokens (V1, llm-d)",
        "github.com/llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (5.56 GiB peak activation, 64.45 GiB KV)",
        H100_LLMD,
        QWEN3_06B,
        "bf16",
        1,
        0.90,
        16000,
        64.45,
        engine="vllm-v1-0.9",
    ),
    Measurement(
        "Qwen3-32B, H100, 16,000 tokens (V1, llm-d)",
        "github.com/llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (5.64 GiB peak activation, 4.45 GiB KV)",
        H100_LLMD,
        CAT.model("qwen3-32b"),
        "bf16",
        1,
        0.90,
        16000,
        4.45,
        engine="vllm-v1-0.9",
    ),
    Measurement(
        "Llama-3.3-70B FP8, 2x H100, 16,000 tokens (V1, llm-d)",
        "github.com/llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (4.84 GiB peak activation, 0.55 GiB non-torch, 32.0 GiB KV per GPU)",
        H100_LLMD,
        CAT.model("llama-3.3-70b"),
        "fp8",
        2,
        0.90,
        16000,
        32.0,
        role="fit",
        engine="vllm-v1-0.9",
    ),
)


def engine_row(m: Measurement) -> tuple[float, int | None, float | None]:
    est = estimate_serving(
        ServingInputs(
            accelerator=m.gpu if isinstance(m.gpu, Accelerator) else CAT.accelerator(m.gpu),
            model=m.model,
            weight_precision=m.precision,
            kv_precision="bf16",
            tensor_parallel=m.tp,
            gpu_memory_utilization=m.utilization,
            context_tokens=m.context,
            users=1,
            engine_profile=m.engine,
        )
    )
    pool = est.available_for_cache_bytes / m.tp / GIB
    tokens = est.kv_cache_tokens
    return pool, tokens, (tokens / m.context if tokens is not None else None)


def rel(engine: float, measured: float) -> float:
    return (engine - measured) / measured * 100


def main() -> None:
    print(
        "| run | role | engine | KV pool per GPU, engine (GiB) | measured (GiB) | error | tokens, engine | measured | max concurrency, engine | measured | within 5 % or 1 GiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    hits = 0
    for m in MEASUREMENTS:
        pool, tokens, conc = engine_row(m)
        ok = abs(rel(pool, m.pool_gib)) <= 5 or abs(pool - m.pool_gib) <= 1
        hits += ok
        measured_conc = f"{m.tokens / m.context:.2f}x" if m.tokens else "–"
        print(
            f"| {m.label} | {m.role} | {m.engine} | {pool:.2f} | {m.pool_gib:.2f} | {rel(pool, m.pool_gib):+.1f} % | "
            f"{tokens:,} | {f'{m.tokens:,}' if m.tokens else '–'} | {conc:.2f}x | {measured_conc} | {'yes' if ok else 'no'} |"
        )
    print(f"\n{hits} of {len(MEASUREMENTS)} within target.\n\nSources:")
    for m in MEASUREMENTS:
        print(f"- {m.label}: {m.source}")


if __name__ == "__main__":
    main()
