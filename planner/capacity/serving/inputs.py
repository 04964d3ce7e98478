"""What a serving estimate is asked: the caller's figures, and the catalogue rows they picked."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from planner.capacity.catalogue import Accelerator, ModelSpec

DEFAULT_PRECISION: Final = "bf16"  # the release precision of every model in the catalogue
DEFAULT_CONTEXT_TOKENS: Final = 4096

Figure = float | Decimal | None


@dataclass(frozen=True, slots=True)
class ServingInputs:
    """What the caller knows. Explicit figures win over the catalogue rows (accelerator, model).

    With `overhead_gb` given the estimate is the course's planning function (memory − weights −
    overhead); without it, a serving engine's own accounting (planner.capacity.overhead).
    """

    gpu_memory_gb: Figure = None
    model_gb: Figure = None
    params_b: Figure = None
    weight_precision: str | None = None
    overhead_gb: Figure = None
    kv_per_user_gb: Figure = None
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    users: int | None = None
    memory_bandwidth_gb_s: Figure = None
    min_decode_tokens_per_s: Figure = None
    latency_target_ms: Figure = None  # the whole answer: first token plus every output token
    output_tokens: int | None = None  # generated per request
    gpu_memory_utilization: Figure = None  # vLLM's --gpu-memory-utilization (default 0.9)
    # vLLM's --max-num-seqs: the requests its start-up profile samples (default: the engine
    # generation's, by GPU; planner.capacity.engine_profiles)
    max_num_seqs: int | None = None
    tensor_parallel: int | None = None  # GPUs of one kind the model is split over
    vocab_size: int | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None  # the MLP width (config.json's intermediate_size)
    decode_batch: int | None = None  # concurrent streams decoding together (default: the users)
    prompt_tokens: int | None = None  # per request, for the time to first token
    ttft_target_ms: Figure = None  # time to first token
    # Queueing before the first token: requests that arrive together (each waits for the
    # prefills ahead of it), and new requests per second joining a continuous batch.
    burst_arrivals: int | None = None
    arrival_rate_per_s: Figure = None
    # Which serving engine's start-up accounting (planner.capacity.engine_profiles); default the
    # current vLLM ("vllm-v1"); "vllm-v1-0.9", "vllm-v1-0.8.5", "vllm-v1-0.8.4", "vllm-v1-0.8",
    # "vllm-v1-0.7" and "vllm-v0" for logs of older versions.
    engine_profile: str | None = None
    accelerator: Accelerator | None = None
    model: ModelSpec | None = None
