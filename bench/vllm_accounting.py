"""The engine's KV pool and concurrency beside vLLM's own start-up reports.

Each row is one published vLLM start-up log (memory profile, "# GPU blocks", "GPU KV cache size",
"Maximum concurrency"), cited below. The engine is given only what the person launching vLLM
chose (GPU, model, precision, tensor parallelism, gpu_memory_utilization, max_model_len) and no
overhead, so it uses its own accounting (planner/capacity/overhead.py). Per row it prints the KV
pool per GPU (GiB) and the tokens / maximum concurrency, engine beside measured, with the relative
error; the target is 5 % or 1 GiB per GPU. Rows marked "fit" supplied a constant of the
accounting (in-sample); the others are checks.

Run: `.venv/bin/python bench/vllm_accounting.py` (pure Python, under a second).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.capacity import ModelSpec, ServingInputs, default_catalogue, estimate_serving

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
    gpu: str
    model: ModelSpec
    precision: str
    tp: int
    utilization: float
    context: int
    pool_gib: float  # per GPU, as logged (or from the logged blocks)
    tokens: int | None = None  # "GPU KV cache size" or blocks x 16
    role: str = "check"


MEASUREMENTS = (
    Measurement(
        "Llama-3-8B, H100, TP 1",
        "github.com/vllm-project/vllm/pull/10511 (memory profiling results)",
        "h100-sxm",
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        8192,
        53.29,
        role="fit",
    ),
    Measurement(
        "Llama-3-8B, H100, TP 2",
        "github.com/vllm-project/vllm/pull/10511 (71.29 − 7.48 − 3.58 − 1.26 GiB logged)",
        "h100-sxm",
        LLAMA_8B,
        "bf16",
        2,
        0.90,
        8192,
        58.97,
        role="fit",
    ),
    Measurement(
        "Llama-3.1-70B w8a8, H100, util 0.98",
        "github.com/vllm-project/vllm/pull/12569 (1,381 blocks, 10.79x at 2,048)",
        "h100-sxm",
        LLAMA_70B,
        "int8",
        1,
        0.98,
        2048,
        1381 * 16 * 327_680 / GIB,
        tokens=1381 * 16,
    ),
    Measurement(
        "Llama-3.1-8B, L40S (V1)",
        "github.com/vllm-project/vllm/pull/17122 (158,656 tokens, 4.84x at 32,768)",
        "l40s",
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        32768,
        158_656 * 131_072 / GIB,
        tokens=158_656,
    ),
    Measurement(
        "Llama-2-7B, A100 80GB",
        "github.com/vllm-project/vllm/pull/2031 (7,351 GPU blocks)",
        "a100-80gb",
        LLAMA_2_7B,
        "bf16",
        1,
        0.90,
        4096,
        7351 * 16 * 524_288 / GIB,
        tokens=7351 * 16,
    ),
    Measurement(
        "Llama-2-70B, 4x A100 80GB (vLLM 0.2, 2023)",
        "github.com/vllm-project/vllm/pull/2031 (20,865 GPU blocks)",
        "a100-80gb",
        LLAMA_2_70B,
        "bf16",
        4,
        0.90,
        4096,
        20865 * 16 * 81_920 / GIB,
        tokens=20865 * 16,
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
    ),
)


def engine_row(m: Measurement) -> tuple[float, int | None, float | None]:
    est = estimate_serving(
        ServingInputs(
            accelerator=CAT.accelerator(m.gpu),
            model=m.model,
            weight_precision=m.precision,
            kv_precision="bf16",
            tensor_parallel=m.tp,
            gpu_memory_utilization=m.utilization,
            context_tokens=m.context,
            users=1,
        )
    )
    pool = est.available_for_cache_bytes / m.tp / GIB
    tokens = est.kv_cache_tokens
    return pool, tokens, (tokens / m.context if tokens is not None else None)


def rel(engine: float, measured: float) -> float:
    return (engine - measured) / measured * 100


def main() -> None:
    print(
        "| run | role | KV pool per GPU, engine (GiB) | measured (GiB) | error | tokens, engine | measured | max concurrency, engine | measured | within 5 % or 1 GiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    hits = 0
    for m in MEASUREMENTS:
        pool, tokens, conc = engine_row(m)
        ok = abs(rel(pool, m.pool_gib)) <= 5 or abs(pool - m.pool_gib) <= 1
        hits += ok
        measured_conc = f"{m.tokens / m.context:.2f}x" if m.tokens else "–"
        print(
            f"| {m.label} | {m.role} | {pool:.2f} | {m.pool_gib:.2f} | {rel(pool, m.pool_gib):+.1f} % | "
            f"{tokens:,} | {f'{m.tokens:,}' if m.tokens else '–'} | {conc:.2f}x | {measured_conc} | {'yes' if ok else 'no'} |"
        )
    print(f"\n{hits} of {len(MEASUREMENTS)} within target.\n\nSources:")
    for m in MEASUREMENTS:
        print(f"- {m.label}: {m.source}")


if __name__ == "__main__":
    main()
