"""Result files for the measured tests, written as the tools write them (key sets per version)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from planner.capacity import ServingInputs, default_catalogue
from planner.capacity.measured import measured_comparison, read_result

SAMPLES = Path(__file__).resolve().parents[3] / "planner" / "measured" / "samples"
CAT = default_catalogue()
# The deployments the samples were run on (planner/measured/samples/README.md).
CHAT = ServingInputs(
    accelerator=CAT.accelerator("l40s"),
    model=CAT.model("llama-3.1-8b"),
    context_tokens=8192,
    ttft_target_ms=2000,
)
NIM = ServingInputs(
    accelerator=CAT.accelerator("h100-sxm"),
    model=CAT.model("llama-3.3-70b"),
    tensor_parallel=2,
    weight_precision="fp8",
    kv_precision="fp8",
)


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def engine_ratio(name: str, deployment: ServingInputs, metric: str = "ttft_ms") -> float:
    """The engine's measured ÷ predicted for a sample: what the pages must show."""
    ratio = measured_comparison(read_result(sample(name)), deployment).ratios[metric]
    assert ratio is not None
    return ratio


def vllm_current(**overrides: Any) -> dict[str, Any]:
    """`vllm bench serve --save-result` (0.10+ keys) of a closed loop of 16 requests in flight,
    with --save-detailed's per-request lists, from seeded per-request figures as vLLM sums them."""
    rng = random.Random(40)
    n, prompt, output = 64, 1024, 128
    ttfts = [0.18 + rng.random() * 0.05 for _ in range(n)]
    itls = [[0.021 + rng.random() * 0.004 for _ in range(output - 1)] for _ in range(n)]
    tpots = [sum(gaps) / len(gaps) for gaps in itls]
    flat = sorted(g for gaps in itls for g in gaps)
    duration = 40.0
    data: dict[str, Any] = {
        "date": "20250601-120000",
        "endpoint_type": "openai",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": n,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 16,
        "duration": duration,
        "completed": n,
        "failed": 0,
        "total_input_tokens": n * prompt,
        "total_output_tokens": n * output,
        "request_throughput": n / duration,
        "output_throughput": n * output / duration,
        "total_token_throughput": n * (prompt + output) / duration,
        "mean_ttft_ms": sum(ttfts) / n * 1000,
        "median_ttft_ms": sorted(ttfts)[n // 2] * 1000,
        "std_ttft_ms": 12.0,
        "p50_ttft_ms": sorted(ttfts)[n // 2] * 1000,
        "p95_ttft_ms": sorted(ttfts)[int(n * 0.95)] * 1000,
        "p99_ttft_ms": sorted(ttfts)[-1] * 1000,
        "mean_tpot_ms": sum(tpots) / n * 1000,
        "median_tpot_ms": sorted(tpots)[n // 2] * 1000,
        "p99_tpot_ms": sorted(tpots)[-1] * 1000,
        "mean_itl_ms": sum(flat) / len(flat) * 1000,
        "median_itl_ms": flat[len(flat) // 2] * 1000,
        "p95_itl_ms": flat[int(len(flat) * 0.95)] * 1000,
        "p99_itl_ms": flat[int(len(flat) * 0.99)] * 1000,
        "mean_e2el_ms": 3000.0,
        "median_e2el_ms": 2990.0,
        "p99_e2el_ms": 3300.0,
        "input_lens": [prompt] * n,
        "output_lens": [output] * n,
        "ttfts": ttfts,
        "itls": itls,
        "generated_texts": ["x"] * n,
        "errors": [""] * n,
    }
    data.update(overrides)
    return data


def vllm_v04() -> dict[str, Any]:
    """benchmarks/benchmark_serving.py of vLLM 0.4: `request_inthroughput`, no ITL, no
    concurrency limit (a Poisson rate)."""
    return {
        "backend": "vllm",
        "model_id": "meta-llama/Llama-2-7b-hf",
        "tokenizer_id": "meta-llama/Llama-2-7b-hf",
        "best_of": 1,
        "use_beam_search": False,
        "num_prompts": 1000,
        "request_rate": 4.0,
        "duration": 260.5,
        "completed": 1000,
        "total_input_tokens": 512000,
        "total_output_tokens": 128000,
        "request_inthroughput": 3.84,
        "input_throughput": 1965.4,
        "output_throughput": 491.4,
        "mean_ttft_ms": 61.2,
        "median_ttft_ms": 55.0,
        "p99_ttft_ms": 180.0,
        "mean_tpot_ms": 24.5,
        "median_tpot_ms": 24.1,
        "p99_tpot_ms": 31.0,
    }


def vllm_v06() -> dict[str, Any]:
    """benchmark_serving.py of vLLM 0.5-0.6.1: ITL and std, `request_throughput`, no
    max_concurrency; every prompt sent at once (request_rate "inf")."""
    return {
        "backend": "vllm",
        "model_id": "meta-llama/Meta-Llama-3-8B-Instruct",
        "num_prompts": 200,
        "request_rate": "inf",
        "duration": 30.2,
        "completed": 200,
        "total_input_tokens": 200 * 256,
        "total_output_tokens": 200 * 128,
        "request_throughput": 6.62,
        "output_throughput": 847.7,
        "total_token_throughput": 2543.0,
        "mean_ttft_ms": 2100.0,
        "median_ttft_ms": 2000.0,
        "std_ttft_ms": 900.0,
        "p99_ttft_ms": 3900.0,
        "mean_tpot_ms": 60.0,
        "median_tpot_ms": 59.0,
        "std_tpot_ms": 5.0,
        "p99_tpot_ms": 75.0,
        "mean_itl_ms": 60.0,
        "median_itl_ms": 55.0,
        "std_itl_ms": 20.0,
        "p99_itl_ms": 140.0,
    }


def text(data: Any) -> str:
    return json.dumps(data)
