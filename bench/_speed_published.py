"""The published serving-speed measurements that bench/serving_speed.py runs the speed model against.

Each Run is one published, fully specified measurement: model, GPU and count (tensor parallel),
engine and version, weight and KV precisions, input and output lengths, batch or concurrency, and
what it measured (per-stream decode tokens/s, aggregate output tokens/s, mean time to first
token), with its source. Role "fit" rows set a constant of planner/capacity/speed_model.py; the
others are checks. Every run found is kept, misses included. Modes:
- "static": a fixed batch prefilled together then decoded to the end (TensorRT-LLM's
  gptSessionBenchmark); aggregate = batch x output ÷ (batched prefill + output x step).
- "single": one request alone (batch 1).
- "closed": a closed loop of `batch` concurrent clients (NIM's genai-perf sweeps); a new request
  arrives when one finishes, so the arrival rate is batch ÷ request time.
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
LLAMACPP_PR = (
    "llama.cpp PR 15802 (CUDA: fastdiv, launch bounds for mmvq + q8_1 quant), llama-bench pp512 "
    "at micro-batch 1-8, master column, github.com/ggml-org/llama.cpp/pull/15802"
)
# An RTX 3090 for speed: 936 GB/s GDDR6X and 71 dense FP16 tensor TFLOPS (NVIDIA Ampere GA102
# whitepaper); _vllm_published's row carries only its memory.
RTX_3090_SPEED = replace(RTX_3090, memory_bandwidth_gb_s=936, dense_bf16_tflops=71)
LLAMA_33_70B = CAT.model("llama-3.3-70b")
LLAMA_3_8B = CAT.model("llama-3.1-8b")
# llama-bench lists "llama 8B Q4_0, 4.33 GiB": 4.33 x 2^30 bytes = 4.649 GB.
Q4_0_8B_GB = 4.649


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
    per_gpu: bool = True,
) -> Run:
    precision = "bf16" if gpu.startswith("a100") else "fp8"
    version = "0.5" if gpu == "l40s" else "0.6.1"
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
        TRTLLM_PERF,
        aggregate=aggregate * tp if per_gpu else aggregate,
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
    # llama.cpp, Llama 3 8B Q4_0 on one RTX 3090, micro-batches 1-8.
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub1", 1, 155.02, "fit"),
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub2", 2, 277.36),
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub4", 4, 468.95),
    _llamacpp("llama.cpp RTX 3090 Llama-3-8B Q4_0 ub8", 8, 570.67),
)
