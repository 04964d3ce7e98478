"""The published vLLM start-up logs that bench/vllm_accounting.py runs the engine against.

Each Measurement is one log (memory profile, "# GPU blocks", "GPU KV cache size", "Maximum
concurrency") with its source, what the person launching vLLM chose, the vLLM generation that wrote
it (engine_profile: planner/capacity/engine_profiles.py) and what it measured. Devices and models
that are not catalogue rows are built here from the figures the logs print or the model's config.
tests/planner/test_capacity_vllm_logs.py takes its devices and models from here too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.capacity import Accelerator, ModelSpec, default_catalogue

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
    peer_to_peer=False,  # the GeForce driver offers no P2P between RTX 4090s
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
    # A --max-num-seqs the log does not show but that would explain it: printed as a what-if
    max_num_seqs_if: int | None = None


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
        "github.com/vllm-project/vllm/pull/17122 (158,656 tokens, 4.84x at 32,768). Miss: 5.75 GiB besides weights and KV against 1.93 modelled. The log's line numbers (kv_cache_utils.py:634/637 as in the v0.8.4 and v0.8.5 wheels, gpu_model_runner.py:1316 between 0.8.4's 1291 and 0.8.5's 1347, backends.py:420/430) date its build between v0.8.4 and v0.8.5, whose arg_utils.py _set_default_args_v1 gives an L40S 256 sequences (by name at 0.8.4, by memory at 0.8.5; 2,048 tokens for vllm serve, 8,192 for the LLM class, whose forward, 0.84 GiB, stays below the 256-row sampler's 1.19 GiB). 1,024 sequences (v0.8.0-v0.8.3's default on every GPU, or --max-num-seqs 1024) would give 4.77 + 0.74 = 5.51 GiB (the what-if below); the PR does not show its flags. Not fitted",
        "l40s",
        LLAMA_8B,
        "bf16",
        1,
        0.90,
        32768,
        158_656 * 131_072 / GIB,
        tokens=158_656,
        engine="vllm-v1-0.8.4",
        max_num_seqs_if=1024,
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
        "github.com/vllm-project/vllm/pull/2031 (20,865 GPU blocks). Miss, not modelled: v0.2.5's worker.py profile_num_available_blocks takes peak = total - free right after the profile run (no empty_cache), so the CUDA context, PyTorch's cached blocks and NCCL's buffers all count. The run itself is small (model_runner.py profile_run: 256 sequences over max(max_model_len, 2,048) = 4,096 tokens, 0.35 GiB of forward per GPU at TP 4), and the PR's own figures (31,615 -> 20,865 blocks) put 13.1 GiB per GPU outside PyTorch's allocations at TP 4 against 0.77 GiB (98 blocks) at TP 1: what held it is not in vLLM's code (the PR guesses NCCL) and no other log of that profiler at TP > 1 was found",
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
        "github.com/vllm-project/vllm/issues/13061 (weights 13.9476 GB, non_torch 0.25 GiB, activation peak 0.19 GiB, KV cache 8.69 GiB per GPU, max_model_len 131,072). GeForce cards have no GPU peer-to-peer access, so vLLM turns custom all-reduce off and NCCL keeps its buffers in host memory (SHM): the non-torch memory stays at the TP-1 figure, 0.16 GiB (planner/capacity/engine_profiles.py)",
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
