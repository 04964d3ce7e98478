"""What to run first on the recommended path: the load test with its pass criteria (from the card's
targets), and for a GPU or TPU serving path the vLLM deployment command."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import num, whole
from planner.capacity.paths.card import ServingCard, required_decode
from planner.capacity.paths.options import PathOption

LOAD_TEST_PROMPTS_PER_USER: Final = 10  # enough requests for each stream to reach steady state
MIN_LOAD_TEST_PROMPTS: Final = 200
LOAD_TEST_SECONDS: Final = 600  # a timed run of about ten minutes
# vLLM's weight and KV-cache flags for the precisions the plan uses (vLLM engine arguments,
# https://docs.vllm.ai/en/latest/configuration/engine_args.html).
QUANTIZATION_FLAG: Final = {"fp8": "fp8", "int4": "awq"}
HF_REPO = re.compile(r"huggingface\.co/([\w.-]+/[\w.-]+)")


@dataclass(frozen=True, slots=True)
class LoadTest:
    tool: str
    command: str
    pass_criteria: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "command": self.command,
            "pass_criteria": list(self.pass_criteria),
        }


def model_repo(spec: ModelSpec | None, params_b: object = None) -> str:
    """The Hugging Face repository a catalogue row was read from, else a placeholder to fill."""
    if spec is not None:
        match = HF_REPO.search(spec.source)
        return match.group(1) if match else spec.id
    return "YOUR/MODEL" if params_b is None else f"YOUR/MODEL-{params_b}B"


def serving_load_test(card: ServingCard, option: PathOption, model: str) -> LoadTest:
    """One replica driven at its share of the peak (its streams and arrival rate), with the
    prompt's cached prefix and the plan's speculative decoding, so the test measures what the
    plan assumed; pass criteria at the percentile the targets are checked at."""
    streams = int(option.figures.get("streams_per_replica") or card.users)
    prompts = max(MIN_LOAD_TEST_PROMPTS, LOAD_TEST_PROMPTS_PER_USER * streams)
    q = card.percentile
    criteria = ["no failed requests"]
    if card.ttft_target_ms is not None:
        criteria.append(f"p{q} time to first token ≤ {num(card.ttft_target_ms, 0)} ms")
    if card.itl_target_ms is not None:
        criteria.append(f"p{q} inter-token latency ≤ {num(card.itl_target_ms, 0)} ms")
    ttft = option.figures.get("time_to_first_token_ms") or 0
    need = required_decode(card, Fraction(str(ttft)) / 1000)
    if need is not None:
        criteria.append(
            f"p{q} time per output token ≤ {num(1000 / need, 1)} ms (≥ {num(need, 1)} tokens/s "
            "per stream)"
        )
    if card.draft_tokens:
        criteria.append(
            f"speculative decoding's acceptance rate ≥ {num(card.acceptance_rate)} "
            "(vLLM's spec_decode metrics)"
        )
    if option.path == "managed_api":
        command = (
            f"guidellm benchmark --target https://YOUR-PROVIDER/v1 --model {model} "
            f"--rate-type concurrent --rate {card.users} --max-seconds {LOAD_TEST_SECONDS} "
            f'--data "prompt_tokens={card.prompt_tokens},output_tokens={card.output_tokens}"'
        )
        criteria.append("no 429 (rate limit) answers at the peak")
        return LoadTest("guidellm", command, tuple(criteria))
    # vLLM's random dataset: --random-prefix-len tokens shared by every prompt (the cache's hits),
    # then --random-input-len fresh ones (vLLM benchmarks, docs.vllm.ai/en/latest/cli/bench/serve).
    prefix = card.prompt_tokens - card.prefill_tokens
    rate = option.figures.get("requests_per_s_per_replica")
    command = (
        f"vllm bench serve --model {model} --dataset-name random "
        + (f"--random-prefix-len {prefix} " if prefix else "")
        + f"--random-input-len {card.prompt_tokens - prefix} "
        f"--random-output-len {card.output_tokens} "
        + (f"--request-rate {num(rate, 4)} " if rate else "")
        + f"--max-concurrency {streams} --num-prompts {prompts} "
        f"--percentile-metrics ttft,tpot,itl --metric-percentiles 50,{q},99"
    )
    if option.replicas > 1:
        criteria.append(
            f"run against one of the {option.replicas} replicas (its share of the peak)"
        )
    return LoadTest("vllm bench serve", command, tuple(criteria))


def deploy_command(option: PathOption, model: str, card: ServingCard | None = None) -> str | None:
    """`vllm serve` with the plan's split, context, memory share and batch (GPU and TPU paths),
    for each replica; prefix caching and the plan's speculative decoding when it assumes them."""
    if option.path not in {"gpu", "tpu"}:
        return None
    s = option.settings
    parts = [f"vllm serve {model}"]
    if s.get("tensor_parallel", 1) > 1:
        parts.append(f"--tensor-parallel-size {s['tensor_parallel']}")
    if s.get("max_model_len"):
        parts.append(f"--max-model-len {s['max_model_len']}")
    if s.get("gpu_memory_utilization"):
        parts.append(f"--gpu-memory-utilization {s['gpu_memory_utilization']}")
    parts.append(f"--max-num-seqs {s['max_num_seqs']}")
    if s.get("dtype"):
        parts.append(f"--dtype {s['dtype']}")
    if s.get("kv_precision") == "fp8":
        parts.append("--kv-cache-dtype fp8")
    quantization = QUANTIZATION_FLAG.get(s.get("weight_precision") or "")
    if quantization:
        parts.append(f"--quantization {quantization}")
    if card is not None and card.prefix_hit_rate:
        parts.append("--enable-prefix-caching")
    if card is not None and card.draft_tokens:
        # vLLM's speculative decoding config (docs.vllm.ai, features/spec_decode): a draft model
        # of the same family, k tokens a step; "YOUR/DRAFT-MODEL" is the one to fill in.
        parts.append(
            '--speculative-config \'{"model": "YOUR/DRAFT-MODEL", '
            f'"num_speculative_tokens": {card.draft_tokens}}}\''
        )
    command = " ".join(parts)
    if s.get("mig"):
        command = f"CUDA_VISIBLE_DEVICES=MIG-<slice uuid> {command}"
    return command


def batch_load_test(option: PathOption, items: int, retry_margin: float) -> LoadTest:
    rate = Fraction(str(option.figures.get("items_per_s_per_worker") or 0))
    window = option.figures.get("window_hours")
    if option.path == "managed_api" or rate <= 0:
        sample = min(items, 1000)
        return LoadTest(
            "timed run",
            f"send {whole(sample)} items through the provider's batch endpoint and time it",
            (
                "no rate-limit (429) answers",
                f"the whole job's tokens finish within the {num(window or 0)} h window",
            ),
        )
    sample = min(items, max(100, math.ceil(rate * LOAD_TEST_SECONDS)))
    seconds = sample / rate
    return LoadTest(
        "timed run",
        f"time the job on {whole(sample)} items on one {option.name} worker "
        f"(e.g. `time python embed.py --limit {sample}`)",
        (
            f"≤ {num(seconds, 0)} s for {whole(sample)} items (≥ {num(rate, 2)} items/s per worker)",
            f"{option.count} worker(s) then finish the job within the {num(window or 0)} h window",
            f"failed items ≤ {num(retry_margin * 100, 0)} % (the retry margin)",
        ),
    )


def training_load_test(option: PathOption, total_gb: float | None) -> LoadTest:
    steps_per_s = option.figures.get("steps_per_s")
    criteria = [
        f"peak memory per device ≤ {num(total_gb or 0, 1)} GB (torch.cuda.max_memory_allocated)"
    ]
    if steps_per_s:
        criteria.append(f"≥ {num(steps_per_s * 0.8, 4)} steps/s (80 % of the estimate)")
    criteria.append("the loss falls and a checkpoint saves and resumes")
    return LoadTest(
        "a short training run",
        f"run 50 steps (max_steps=50) on {option.count} × {option.name} and log steps/s and peak memory",
        tuple(criteria),
    )
