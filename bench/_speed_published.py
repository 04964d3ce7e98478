"""The published serving-speed measurements that bench/serving_speed.py runs the speed model against.

Each Run is one published, fully specified measurement: model, GPU and count (tensor parallel),
engine and version, weight and KV precisions, input and output lengths, batch or concurrency, and
what it measured (per-stream decode tokens/s, aggregate output tokens/s, mean time to first
token), with its source. Role "fit" rows set a constant of planner/capacity/speed_model.py; the
others are checks. Every run found is kept, misses included. Modes:
- "static": a fixed batch prefilled together then decoded to the end (TensorRT-LLM's
  gptSessionBenchmark); aggregate = batch x output ÷ (batched prefill + output x step).
- "single": one request alone (batch 1).
- "closed": a closed loop of `batch` concurrent clients (NIM's genai-perf sweeps, LMDeploy's
  profile_generation); a new request arrives when one finishes, so the arrival rate is batch ÷
  request time. Where the clients all start at once (LMDeploy, `burst_start`), the measured mean
  first token is the opening burst's and the per-stream rate a median token latency.
- "ubatch": llama.cpp's pp512 at micro-batch b: b tokens of one sequence per forward pass, the
  arithmetic of a decode step at batch b (context 0 to 512, mean 256).
tests/planner/test_capacity_speed.py asserts the check rows' share within tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bench._vllm_published import CAT, LLAMA_2_7B, LLAMA_2_70B, RTX_3090
from planner.capacity import Accelerator, ModelSpec

TRTLLM_PERF = (
    "TensorRT-LLM docs/source/performance.md (v0.6.1 throughput, v0.5 first-token latency), "
    "github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/source/performance.md"
)
NIM_PERF = (
    "NVIDIA NIM LLM benchmarking, Performance (Llama-3.3-70b-instruct, NIM 1.8.0, 2 x H100 80G, "
    "fp8 TP2), docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance"
)
TRTLLM_H200 = (
    "TensorRT-LLM blog, H200 achieves nearly 12,000 tokens/sec on Llama2-13B (v0.5.0, FP8), "
    "github.com/NVIDIA/TensorRT-LLM/blob/1555478c1b417a0b34de05209862ea5a2ab9add1/docs/source/blogs/H200launch.md"
)
TRTLLM_H100_A100 = (
    "TensorRT-LLM blog, H100 has 4.6x A100 performance (v0.5.0; H100 FP8, A100 FP16, TP1), "
    "github.com/NVIDIA/TensorRT-LLM/blob/15ed78097ea2c14b3831ca017935a32dec54476e/docs/source/blogs/H100vsA100.md"
)
LMDEPLOY_A100 = (
    "LMDeploy docs/en/benchmark/a100_fp16.md (v0.1.0a1, TurboMind, A100-80G, FP16, static "
    "inference benchmark: `batch` clients each sending its next request when one ends), "
    "github.com/InternLM/lmdeploy/blob/3e391df4673326f79363eebe030876861a9b7090/docs/en/benchmark/a100_fp16.md"
)
LLAMACPP_PR = (
    "llama.cpp PR 15802 (CUDA: fastdiv, launch bounds for mmvq + q8_1 quant), llama-bench pp512 "
    "at micro-batch 1-8, master column, github.com/ggml-org/llama.cpp/pull/15802"
)
# An RTX 3090 for speed: 936 GB/s GDDR6X and 71 dense FP16 tensor TFLOPS (NVIDIA Ampere GA102
# whitepaper); _vllm_published's row carries only its memory.
RTX_3090_SPEED = replace(RTX_3090, memory_bandwidth_gb_s=936, dense_bf16_tflops=71)
LLAMA_33_70B = CAT.model("llama-3.3-70b")
LLAMA_3_8B = CAT.model("llama-3.1-8b")
LLAMA_2_13B = replace(
    LLAMA_2_7B,
    id="llama-2-13b",
    name="Llama 2 13B",
    params_b=13.02,
    layers=40,
    hidden_size=5120,
    attention_heads=40,
    kv_heads=40,
    intermediate_size=13824,
    source="https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json",
)
# GPT-J 6B (EleutherAI/gpt-j-6b config.json: n_layer 28, n_embd 4096, n_head 16, head 256,
# vocab 50,400; 6,053,381,344 parameters).
GPT_J_6B = ModelSpec(
    id="gpt-j-6b",
    name="GPT-J 6B",
    params_b=6.05,
    layers=28,
    hidden_size=4096,
    attention_heads=16,
    kv_heads=16,
    head_dim=256,
    intermediate_size=16384,
    max_context_tokens=2048,
    release_precision="fp16",
    vocab_size=50400,
    source="https://huggingface.co/EleutherAI/gpt-j-6b/blob/main/config.json",
)
# llama-bench lists "llama 8B Q4_0, 4.33 GiB": 4.33 x 2^30 bytes = 4.649 GB.
Q4_0_8B_GB = 4.649

# --- Other hardware families: AMD MI300X, Google TPU v5e, Intel Xeon 6 CPUs -----------------------
OCI_MI300X = (
    "Oracle Cloud Infrastructure blog, Serving Llama 3.1 405B model with AMD Instinct MI300X "
    "Accelerators (2024-10-10; BM.GPU.MI300X.8, vLLM on ROCm, Llama 3.1 405B FP8 with FP8 KV, TP8; "
    "benchmark_latency.py 128/128 at batch 1-256 and benchmark_throughput.py), "
    "blogs.oracle.com/cloud-infrastructure/post/serving-llama-31-405b-model-with-amd-mi300x-gpus"
)
SGLANG_XEON6 = (
    "LMSYS blog, Cost Effective Deployment of DeepSeek R1 with Intel Xeon 6 CPU on SGLang "
    "(2025-07-14), Table 1: SGLang CPU backend on 2 x Xeon 6980P (128 cores a socket, MRDIMM "
    "8800), one request, 1,024 in / 1,024 out, TTFT and TPOT; lmsys.org/blog/2025-07-14-intel-xeon-optimization"
)
JETSTREAM_V5E = (
    "JetStream-PyTorch benchmarks/results.md (AI-Hypercomputer/jetstream-pytorch; TPU v5e-8, "
    "ShareGPT, 2,000 prompts, max input 1,024, max output 1,024, cache 2,048; output tokens/s), "
    "github.com/AI-Hypercomputer/jetstream-pytorch/blob/main/benchmarks/results.md"
)
# Llama 3.1 405B (meta-llama/Llama-3.1-405B config.json: 126 layers, hidden 16,384, 128 heads, 8
# KV heads, FFN 53,248, vocab 128,256; 405.85 B parameters).
LLAMA_405B = replace(
    LLAMA_3_8B,
    id="llama-3.1-405b",
    name="Llama 3.1 405B",
    params_b=405.85,
    layers=126,
    hidden_size=16384,
    attention_heads=128,
    kv_heads=8,
    intermediate_size=53248,
    weight_bytes=None,
    source="https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json",
)
# Llama 3.2 3B (config.json: 28 layers, hidden 3,072, 24 heads, 8 KV heads, FFN 8,192, tied
# embeddings; 3.21 B parameters).
LLAMA_32_3B = replace(
    LLAMA_3_8B,
    id="llama-3.2-3b",
    name="Llama 3.2 3B",
    params_b=3.21,
    layers=28,
    hidden_size=3072,
    attention_heads=24,
    kv_heads=8,
    intermediate_size=8192,
    tie_word_embeddings=True,
    weight_bytes=None,
    source="https://huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json",
)
# Qwen3-235B-A22B (config.json: 94 layers, hidden 4,096, 64 heads, 4 KV heads, 128 experts of
# 3 x 4,096 x 1,536, 8 a token, vocab 151,936; 235.09 B parameters, 22.2 B active of which the
# 0.62 B input embedding is a lookup).
QWEN3_235B = replace(
    CAT.model("qwen3-30b-a3b"),
    id="qwen3-235b-a22b",
    name="Qwen3-235B-A22B",
    params_b=235.09,
    active_params_b=21.57,
    routed_params_b=227.09,
    experts=128,
    experts_per_token=8,
    layers=94,
    hidden_size=4096,
    attention_heads=64,
    kv_heads=4,
    head_dim=128,
    weight_bytes=None,
    source="https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json",
)
DEEPSEEK_R1 = CAT.model("deepseek-v3")  # DeepSeek-R1 is DeepSeek-V3's architecture
DISTILL_LLAMA_70B = LLAMA_33_70B  # DeepSeek-R1-Distill-Llama-70B is Llama 3.3 70B's
XEON6_2S = CAT.accelerator("cpu-xeon6-2s")
# One socket of it: half the memory, channels and cores (SGLang ran Llama 3.2 3B on one).
XEON6_1S = replace(
    XEON6_2S,
    id="cpu-xeon6-1s",
    memory_gb=768,
    memory_bandwidth_gb_s=844.8,
    dense_bf16_tflops=262.1,
    dense_int8_tops=524.3,
)
# ShareGPT's mean lengths after JetStream's filter (prompt <= 1,024, prompt + output <= 2,048):
# about 215 prompt and 197 output tokens a request with a Llama tokenizer (vLLM's
# benchmark_serving on ShareGPT V3 prints 215,196 input and 197,296 generated tokens for 1,000
# requests). An approximation: the rows give the dataset, not the lengths.
SHAREGPT_IN, SHAREGPT_OUT = 215, 197


@dataclass(frozen=True)
class Run:
    label: str
    role: str  # "fit" or "check"
    mode: str  # "static" | "single" | "closed" | "ubatch"
    gpu: str | Accelerator
    model: ModelSpec
    tp: int
    precision: str  # weights
    kv_precision: str
    engine: str
    batch: int  # static batch, concurrency or micro-batch
    prompt: int
    output: int
    source: str
    per_stream: float | None = None  # measured decode tokens/s per stream (1000 ÷ ITL)
    aggregate: float | None = None  # measured output tokens/s, all GPUs together
    ttft_ms: float | None = None  # measured mean time to first token
    model_gb: float | None = None
    note: str = ""
    # The measured TTFT is the opening burst's (every client's first request at once), and the
    # per-stream rate a median token latency (a decode step without a prefill in it).
    burst_start: bool = False

    @property
    def accelerator(self) -> Accelerator:
        return self.gpu if isinstance(self.gpu, Accelerator) else CAT.accelerator(self.gpu)


def _trt(
    label: str,
    gpu: str,
    model: ModelSpec,
    tp: int,
    batch: int,
    prompt: int,
    output: int,
    aggregate: float,
    role: str = "check",
    source: str = TRTLLM_PERF,
) -> Run:
    precision = "bf16" if gpu.startswith("a100") else "fp8"
    version = "0.6.1" if source == TRTLLM_PERF and gpu != "l40s" else "0.5"
    return Run(
        label,
        role,
        "static",
        gpu,
        model,
        tp,
        precision,
        precision,
        f"TensorRT-LLM {version} gptSessionBenchmark",
        batch,
        prompt,
        output,
        source,
        aggregate=aggregate * tp,
        note="" if tp == 1 else "table lists tokens/s per GPU",
    )


def _trt_ttft(
    label: str, gpu: str, model: ModelSpec, tp: int, prompt: int, ttft: float, role: str = "check"
) -> Run:
    precision = "bf16" if gpu.startswith("a100") else "fp8"
    return Run(
        label,
        role,
        "single",
        gpu,
        model,
        tp,
        precision,
        precision,
        "TensorRT-LLM 0.5 gptSessionBenchmark",
        1,
        prompt,
        1,
        TRTLLM_PERF,
        ttft_ms=ttft,
        note="in-process (no HTTP), so the fixed first-token cost is smaller than a server's",
    )


def _nim(
    label: str,
    batch: int,
    prompt: int,
    output: int,
    ttft: float,
    itl: float,
    throughput: float,
    role: str = "check",
) -> Run:
    return Run(
        label,
        role,
        "closed" if batch > 1 else "single",
        "h100-sxm",
        LLAMA_33_70B,
        2,
        "fp8",
        "fp8",
        "NVIDIA NIM 1.8.0 (TensorRT-LLM), genai-perf",
        batch,
        prompt,
        output,
        NIM_PERF,
        per_stream=1000 / itl,
        aggregate=throughput,
        ttft_ms=ttft,
        note="fp8 KV cache assumed (NIM's fp8 profiles)",
    )


def _trt_blog(
    label: str,
    gpu: str,
    model: ModelSpec,
    tp: int,
    batch: int,
    prompt: int,
    output: int,
    source: str,
    *,
    aggregate: float | None = None,
    per_stream: float | None = None,
    ttft: float | None = None,
    role: str = "check",
    note: str = "",
) -> Run:
    precision = "bf16" if gpu.startswith("a100") else "fp8"
    return Run(
        label,
        role,
        "static" if batch > 1 else "single",
        gpu,
        model,
        tp,
        precision,
        precision,
        "TensorRT-LLM 0.5.0 gptSessionBenchmark",
        batch,
        prompt,
        output,
        source,
        per_stream=per_stream,
        aggregate=aggregate,
        ttft_ms=ttft,
        note=note,
    )


def _lmdeploy(
    label: str,
    model: ModelSpec,
    tp: int,
    batch: int,
    prompt: int,
    output: int,
    throughput: float,
    ftl_s: float,
    token_latency_s: float,
    role: str = "check",
) -> Run:
    return Run(
        label,
        role,
        "closed" if batch > 1 else "single",
        "a100-80gb",
        model,
        tp,
        "bf16",
        "bf16",
        "LMDeploy 0.1.0a1 (TurboMind), profile_generation",
        batch,
        prompt,
        output,
        LMDEPLOY_A100,
        per_stream=1 / token_latency_s,
        aggregate=throughput,
        ttft_ms=ftl_s * 1000,
        note="per stream from the median token latency, printed to 10 µs; FP16 weights and KV",
        burst_start=True,
    )


def _llamacpp(label: str, ubatch: int, rate: float, role: str = "check") -> Run:
    return Run(
        label,
        role,
        "ubatch",
        RTX_3090_SPEED,
        LLAMA_3_8B,
        1,
        "int4",
        "fp16",
        "llama.cpp (CUDA, master at PR 15802), llama-bench",
        ubatch,
        0,
        512,
        LLAMACPP_PR,
        per_stream=rate if ubatch == 1 else None,
        aggregate=rate,
        model_gb=Q4_0_8B_GB,
        note="GGUF Q4_0 (4.5 bits a weight)",
    )


def _oci(label: str, batch: int, output: int, aggregate: float, role: str = "check") -> Run:
    return Run(
        label,
        role,
        "static",
        "mi300x",
        LLAMA_405B,
        8,
        "fp8",
        "fp8",
        "vLLM on ROCm (2024), benchmark_latency / benchmark_throughput",
        batch,
        128,
        output,
        OCI_MI300X,
        aggregate=aggregate,
        note="benchmark_throughput sends every prompt at once: vLLM's 256 sequences a step",
    )


def _sglang(
    label: str,
    model: ModelSpec,
    precision: str,
    ttft: float,
    tpot: float,
    role: str = "check",
    sockets: int = 2,
) -> Run:
    return Run(
        label,
        role,
        "single",
        XEON6_2S if sockets == 2 else XEON6_1S,
        model,
        1,
        precision,
        "bf16",
        "SGLang CPU backend (AMX), tensor parallel over the NUMA nodes",
        1,
        1024,
        1024,
        SGLANG_XEON6,
        per_stream=1000 / tpot,
        ttft_ms=ttft,
        note="FP8 is weight-only (emulated: unpacked to bf16 for AMX)"
        if precision == "fp8"
        else "",
    )


def _jetstream(
    label: str, model: ModelSpec, precision: str, batch: int, rate: float, role: str = "check"
) -> Run:
    return Run(
        label,
        role,
        "closed",
        "tpu-v5e",
        model,
        8,
        precision,
        precision,
        "JetStream-PyTorch (2024), benchmark_serving on ShareGPT",
        batch,
        SHAREGPT_IN,
        SHAREGPT_OUT,
        JETSTREAM_V5E,
        aggregate=rate,
        note="ShareGPT's mean lengths assumed; int8 rows quantise weights and KV",
    )


RUNS: tuple[Run, ...] = (
    # TensorRT-LLM static batches, H100 SXM, FP8 weights and KV (v0.6.1).
    _trt(
        "TRT H100 Llama-2-7B b768 128/128", "h100-sxm", LLAMA_2_7B, 1, 768, 128, 128, 19694, "fit"
    ),
    _trt("TRT H100 Llama-2-7B b112 128/2048", "h100-sxm", LLAMA_2_7B, 1, 112, 128, 2048, 6818),
    _trt("TRT H100 Llama-2-7B b80 2048/128", "h100-sxm", LLAMA_2_7B, 1, 80, 2048, 128, 2244),
    _trt("TRT H100 Llama-2-7B b48 2048/2048", "h100-sxm", LLAMA_2_7B, 1, 48, 2048, 2048, 2740),
    _trt(
        "TRT H100 Llama-2-70B TP2 b1024 128/128", "h100-sxm", LLAMA_2_70B, 2, 1024, 128, 128, 2657
    ),
    _trt(
        "TRT H100 Llama-2-70B TP4 b480 128/2048", "h100-sxm", LLAMA_2_70B, 4, 480, 128, 2048, 1486
    ),
    _trt("TRT H100 Llama-2-70B TP2 b96 2048/128", "h100-sxm", LLAMA_2_70B, 2, 96, 2048, 128, 306),
    _trt("TRT H100 Llama-2-70B TP2 b64 2048/2048", "h100-sxm", LLAMA_2_70B, 2, 64, 2048, 2048, 547),
    # L40S, FP8 (v0.5 figures).
    _trt("TRT L40S Llama-2-7B b64 128/128", "l40s", LLAMA_2_7B, 1, 64, 128, 128, 3240),
    _trt("TRT L40S Llama-2-7B b64 128/2048", "l40s", LLAMA_2_7B, 1, 64, 128, 2048, 1622),
    _trt("TRT L40S Llama-2-7B b32 2048/128", "l40s", LLAMA_2_7B, 1, 32, 2048, 128, 581),
    _trt("TRT L40S Llama-2-7B b16 2048/2048", "l40s", LLAMA_2_7B, 1, 16, 2048, 2048, 531),
    # A100 SXM 80GB, FP16 weights and KV (v0.6.1).
    _trt("TRT A100 Llama-2-7B b384 128/128", "a100-80gb", LLAMA_2_7B, 1, 384, 128, 128, 5586),
    _trt("TRT A100 Llama-2-7B b60 128/2048", "a100-80gb", LLAMA_2_7B, 1, 60, 128, 2048, 1928),
    _trt("TRT A100 Llama-2-7B b52 2048/128", "a100-80gb", LLAMA_2_7B, 1, 52, 2048, 128, 591),
    _trt("TRT A100 Llama-2-7B TP2 b64 2048/2048", "a100-80gb", LLAMA_2_7B, 2, 64, 2048, 2048, 782),
    _trt(
        "TRT A100 Llama-2-70B TP4 b1280 128/128", "a100-80gb", LLAMA_2_70B, 4, 1280, 128, 128, 670
    ),
    _trt(
        "TRT A100 Llama-2-70B TP4 b240 128/2048", "a100-80gb", LLAMA_2_70B, 4, 240, 128, 2048, 525
    ),
    _trt("TRT A100 Llama-2-70B TP4 b120 2048/128", "a100-80gb", LLAMA_2_70B, 4, 120, 2048, 128, 79),
    # TensorRT-LLM first-token latency at batch 1 (v0.5).
    _trt_ttft("TRT H100 Llama-2-7B TTFT 128", "h100-sxm", LLAMA_2_7B, 1, 128, 7),
    _trt_ttft("TRT H100 Llama-2-7B TTFT 2048", "h100-sxm", LLAMA_2_7B, 1, 2048, 36, "fit"),
    _trt_ttft("TRT H100 Llama-2-70B TP4 TTFT 128", "h100-sxm", LLAMA_2_70B, 4, 128, 26),
    _trt_ttft("TRT H100 Llama-2-70B TP4 TTFT 2048", "h100-sxm", LLAMA_2_70B, 4, 2048, 109),
    _trt_ttft("TRT L40S Llama-2-7B TTFT 128", "l40s", LLAMA_2_7B, 1, 128, 14),
    _trt_ttft("TRT L40S Llama-2-7B TTFT 2048", "l40s", LLAMA_2_7B, 1, 2048, 73),
    _trt_ttft("TRT A100 Llama-2-7B TTFT 128", "a100-80gb", LLAMA_2_7B, 1, 128, 16),
    _trt_ttft("TRT A100 Llama-2-7B TTFT 2048", "a100-80gb", LLAMA_2_7B, 1, 2048, 133, "fit"),
    _trt_ttft("TRT A100 Llama-2-70B TP4 TTFT 128", "a100-80gb", LLAMA_2_70B, 4, 128, 47),
    _trt_ttft("TRT A100 Llama-2-70B TP4 TTFT 2048", "a100-80gb", LLAMA_2_70B, 4, 2048, 377),
    # NIM 1.8.0, Llama 3.3 70B on 2 x H100 SXM, fp8, TP2: concurrency sweeps.
    _nim("NIM H100 TP2 Llama-3.3-70B c1 500/2000", 1, 500, 2000, 47.77, 18.91, 52.85, "fit"),
    _nim("NIM H100 TP2 Llama-3.3-70B c1 5000/500", 1, 5000, 500, 406.77, 18.58, 51.67),
    _nim("NIM H100 TP2 Llama-3.3-70B c5 5000/500", 5, 5000, 500, 546.7, 21.83, 218.48),
    _nim("NIM H100 TP2 Llama-3.3-70B c25 5000/500", 25, 5000, 500, 688.69, 38.75, 623.4),
    _nim("NIM H100 TP2 Llama-3.3-70B c50 5000/500", 50, 5000, 500, 834.51, 59.73, 814.37),
    # TensorRT-LLM 0.5.0 on an H200, FP8 (tokens/s per GPU in the blog's table).
    _trt(
        "TRT H200 Llama-2-13B b1024 128/128",
        "h200",
        LLAMA_2_13B,
        1,
        1024,
        128,
        128,
        11819,
        source=TRTLLM_H200,
    ),
    _trt(
        "TRT H200 Llama-2-13B b128 128/2048",
        "h200",
        LLAMA_2_13B,
        1,
        128,
        128,
        2048,
        4750,
        source=TRTLLM_H200,
    ),
    _trt(
        "TRT H200 Llama-2-13B b64 2048/128",
        "h200",
        LLAMA_2_13B,
        1,
        64,
        2048,
        128,
        1349,
        source=TRTLLM_H200,
    ),
    _trt(
        "TRT H200 Llama-2-70B b512 128/128",
        "h200",
        LLAMA_2_70B,
        1,
        512,
        128,
        128,
        3014,
        source=TRTLLM_H200,
    ),
    _trt(
        "TRT H200 Llama-2-70B TP2 b512 128/2048",
        "h200",
        LLAMA_2_70B,
        2,
        512,
        128,
        2048,
        1654,
        source=TRTLLM_H200,
    ),
    _trt(
        "TRT H200 Llama-2-70B b64 2048/128",
        "h200",
        LLAMA_2_70B,
        1,
        64,
        2048,
        128,
        341,
        source=TRTLLM_H200,
    ),
    _trt(
        "TRT H200 Llama-2-70B b32 2048/128",
        "h200",
        LLAMA_2_70B,
        1,
        32,
        2048,
        128,
        303,
        source=TRTLLM_H200,
    ),
    # TensorRT-LLM 0.5.0, GPT-J 6B on one H100 (FP8) and one A100 (FP16): batch 1 and 64.
    _trt_blog(
        "TRT H100 GPT-J b1 128",
        "h100-sxm",
        GPT_J_6B,
        1,
        1,
        128,
        128,
        TRTLLM_H100_A100,
        per_stream=185,
        ttft=7.1,
        note="output length not given (128 assumed: the batch-64 row's)",
    ),
    _trt_blog(
        "TRT A100 GPT-J b1 128",
        "a100-80gb",
        GPT_J_6B,
        1,
        1,
        128,
        128,
        TRTLLM_H100_A100,
        per_stream=111,
        ttft=12.5,
        note="output length not given (128 assumed: the batch-64 row's)",
    ),
    _trt_blog(
        "TRT H100 GPT-J b64 128/128",
        "h100-sxm",
        GPT_J_6B,
        1,
        64,
        128,
        128,
        TRTLLM_H100_A100,
        aggregate=10907,
        ttft=102,
        note="first token of a batch prefilled together",
    ),
    _trt_blog(
        "TRT A100 GPT-J b64 128/128",
        "a100-80gb",
        GPT_J_6B,
        1,
        64,
        128,
        128,
        TRTLLM_H100_A100,
        aggregate=3679,
        ttft=481,
        note="first token of a batch prefilled together",
    ),
    # LMDeploy 0.1.0a1 on A100-80G, FP16: closed loops of 1-64 clients.
    _lmdeploy(
        "LMDeploy A100 Llama-2-7B c1 128/128", LLAMA_2_7B, 1, 1, 128, 128, 102.21, 0.022, 0.01
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-7B c1 2048/2048", LLAMA_2_7B, 1, 1, 2048, 2048, 93.78, 0.14, 0.011
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-7B c16 128/2048", LLAMA_2_7B, 1, 16, 128, 2048, 1010.62, 0.13, 0.015
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-7B c32 128/128", LLAMA_2_7B, 1, 32, 128, 128, 2125.47, 0.214, 0.012
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-7B c64 128/2048", LLAMA_2_7B, 1, 64, 128, 2048, 1852.06, 0.535, 0.03
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-7B c64 2048/128", LLAMA_2_7B, 1, 64, 2048, 128, 493.46, 6.59, 0.046
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-13B c1 128/128", LLAMA_2_13B, 1, 1, 128, 128, 56.58, 0.04, 0.017
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-13B c32 128/2048",
        LLAMA_2_13B,
        1,
        32,
        128,
        2048,
        860.14,
        0.833,
        0.034,
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-70B TP4 c1 128/128", LLAMA_2_70B, 4, 1, 128, 128, 33.63, 0.074, 0.029
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-70B TP4 c1 2048/2048",
        LLAMA_2_70B,
        4,
        1,
        2048,
        2048,
        31.9,
        0.405,
        0.031,
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-70B TP4 c16 128/2048",
        LLAMA_2_70B,
        4,
        16,
        128,
        2048,
        482.99,
        0.403,
        0.033,
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-70B TP4 c64 128/2048",
        LLAMA_2_70B,
        4,
        64,
        128,
        2048,
        1391.8,
        1.173,
        0.043,
    ),
    _lmdeploy(
        "LMDeploy A100 Llama-2-70B TP4 c64 2048/2048",
        LLAMA_2_70B,
        4,
        64,
        2048,
        2048,
        930.46,
        21.29,
        0.055,
    ),
    # llama.cpp, Llama 3 8B Q4_0 on one RTX 3090, micro-batches 1-8.
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub1", 1, 155.02, "fit"),
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub2", 2, 277.36),
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub4", 4, 468.95),
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub8", 8, 570.67),
    # AMD MI300X: Llama 3.1 405B FP8, TP8, vLLM on ROCm (OCI), static batches of 128/128.
    _oci("OCI MI300X Llama-3.1-405B TP8 b1 128/128", 1, 128, 36.26, "fit"),
    _oci("OCI MI300X Llama-3.1-405B TP8 b2 128/128", 2, 128, 71.45),
    _oci("OCI MI300X Llama-3.1-405B TP8 b4 128/128", 4, 128, 137.12),
    _oci("OCI MI300X Llama-3.1-405B TP8 b8 128/128", 8, 128, 257.67),
    _oci("OCI MI300X Llama-3.1-405B TP8 b16 128/128", 16, 128, 468.11),
    _oci("OCI MI300X Llama-3.1-405B TP8 b32 128/128", 32, 128, 798.44),
    _oci("OCI MI300X Llama-3.1-405B TP8 b64 128/128", 64, 128, 1183.99),
    _oci("OCI MI300X Llama-3.1-405B TP8 b128 128/128", 128, 128, 1584.53),
    _oci("OCI MI300X Llama-3.1-405B TP8 b256 128/128", 256, 128, 1846.1, "fit"),
    _oci("OCI MI300X Llama-3.1-405B TP8 throughput 128/2048", 256, 2048, 2794),
    # Intel Xeon 6980P x 2, SGLang CPU backend, one request of 1,024 in / 1,024 out.
    _sglang("SGLang Xeon6 2S DeepSeek-R1 INT8", DEEPSEEK_R1, "int8", 1885.25, 67.99, "fit"),
    _sglang("SGLang Xeon6 2S DeepSeek-R1 FP8", DEEPSEEK_R1, "fp8", 2235.00, 77.72),
    _sglang("SGLang Xeon6 2S Qwen3-235B-A22B INT8", QWEN3_235B, "int8", 1164.29, 51.84),
    _sglang("SGLang Xeon6 2S Qwen3-235B-A22B FP8", QWEN3_235B, "fp8", 1340.62, 55.88),
    _sglang(
        "SGLang Xeon6 2S R1-Distill-Llama-70B INT8",
        DISTILL_LLAMA_70B,
        "int8",
        2637.84,
        76.53,
        "fit",
    ),
    _sglang("SGLang Xeon6 1S Llama-3.2-3B BF16", LLAMA_32_3B, "bf16", 268.2, 16.98, "fit", 1),
    # Google TPU v5e-8 (8 chips, model-parallel), JetStream-PyTorch on ShareGPT.
    _jetstream("JetStream v5e-8 Llama-2-7B bf16 b96", LLAMA_2_7B, "bf16", 96, 3663, "fit"),
    _jetstream("JetStream v5e-8 Llama-2-7B int8 b96", LLAMA_2_7B, "int8", 96, 4783, "fit"),
    _jetstream("JetStream v5e-8 Llama-2-13B bf16 b48", LLAMA_2_13B, "bf16", 48, 2056),
    _jetstream("JetStream v5e-8 Llama-2-13B int8 b96", LLAMA_2_13B, "int8", 96, 3458),
    _jetstream("JetStream v5e-8 Llama-3-8B bf16 b128", LLAMA_3_8B, "bf16", 128, 8249),
    _jetstream("JetStream v5e-8 Llama-3-8B int8 b256", LLAMA_3_8B, "int8", 256, 10873),
)
