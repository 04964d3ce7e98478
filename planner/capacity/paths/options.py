"""One path of a comparison (a CPU server, n GPUs, a MIG slice, TPU chips, the managed API), what
every path comparison's steps share, and the cited figures of the paths that have no catalogue row."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Final

from planner.capacity.catalogue import Accelerator
from planner.capacity.results import Assumption, FormulaLine
from planner.capacity.speed_model import CPU_DENSE_BF16_TFLOPS
from planner.capacity.units import as_float

PATHS: Final = ("cpu", "gpu", "tpu", "managed_api")
LIMITERS: Final = (
    "weights",
    "kv_cache",
    "bandwidth",
    "compute",
    "queueing",
    "rate_limit",
    "window",
    "training_memory",
    "throughput",
)
GPU_COUNTS: Final = (1, 2, 4, 8)  # GPUs in one node: tensor parallelism stays inside NVLink/PCIe
# TPU slices of 1, 4 and 8 chips (Cloud TPU v5e/v6e topologies 1x1, 2x2, 2x4; v5p from 2x2x1).
TPU_COUNTS: Final = (1, 4, 8)

# Indicative managed-API service figures:
# - rate limits (no catalogue row carries them): OpenAI's usage tier 3 for gpt-4o-mini, 5,000
#   requests and 4,000,000 tokens per minute (https://platform.openai.com/docs/guides/rate-limits;
#   limits rise with the tier, and other providers publish limits of the same order for 7-8B models).
# - speed, only for a row without its own `api_ttft_ms` / `api_decode_tokens_per_s` (a
#   deployment's own catalogue): Artificial Analysis's provider medians for Llama 3.1 8B Instruct,
#   about 0.5 s to the first token and 100+ output tokens/s per stream
#   (https://artificialanalysis.ai/models/llama-3-1-instruct-8b/providers).
API_REQUESTS_PER_MINUTE: Final = 5_000
API_TOKENS_PER_MINUTE: Final = 4_000_000
API_TTFT_MS: Final = Fraction(500)
API_DECODE_TOKENS_PER_S: Final = Fraction(100)
API_SPEED_FALLBACK_SOURCE: Final = (
    "the engine's default, Artificial Analysis's Llama 3.1 8B Instruct provider medians "
    "(https://artificialanalysis.ai/models/llama-3-1-instruct-8b/providers): the row has no "
    "speed of its own"
)
API_RATE_LIMIT_SOURCE: Final = (
    "OpenAI usage tier 3 (gpt-4o-mini): 5,000 requests/min, 4,000,000 tokens/min, "
    "https://platform.openai.com/docs/guides/rate-limits"
)


@dataclass(frozen=True, slots=True)
class PathOption:
    """One way to run the workload, judged against every target of the card."""

    path: str  # one of PATHS
    accelerator: str  # catalogue id (a MIG slice: "h100-sxm:3g.40gb")
    name: str
    count: int  # GPUs (tensor parallel), TPU chips, workers, or 1
    meets: bool
    limiter: str | None  # one of LIMITERS when it does not meet
    reason: str  # why it does not meet (empty when it does)
    cost_usd: Fraction | None  # serving: per day at the stated traffic; batch, training: per run
    stack: str
    notes: tuple[str, ...] = ()
    figures: dict[str, Any] = field(default_factory=dict)
    formulas: tuple[FormulaLine, ...] = ()
    cost_per_million_output_tokens_usd: Fraction | None = None
    cost_per_request_usd: Fraction | None = None  # serving: the API's price of one request
    # Serving: one replica's capacity in requests per day (self-hosted), for the cost series.
    requests_per_day_capacity: Fraction | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # what the deploy command needs
    # What the option's estimate assumed (the card's own gaps, such as the precision).
    assumptions: tuple[Assumption, ...] = ()
    # Serving: replicas of the unit (`count` devices each) that carry the peak, the failover
    # replica N+1 adds, every device paid for, and the day's requests the replicas carry.
    replicas: int = 1
    failover: int = 0
    devices: int | None = None
    capacity_requests_per_day: Fraction | None = None

    @property
    def key(self) -> str:
        return f"{self.accelerator}x{self.count}"

    @property
    def label(self) -> str:
        return self.name if self.count == 1 else f"{self.count} × {self.name}"

    @property
    def plan_label(self) -> str:
        """The unit and its replicas: "NVIDIA L4 × 3 replicas (+1 failover)"."""
        if self.replicas == 1 and not self.failover:
            return self.label
        unit = self.label if self.count == 1 else f"({self.label})"
        spare = f" (+{self.failover} failover)" if self.failover else ""
        return f"{unit} × {self.replicas} replica{'s' if self.replicas > 1 else ''}{spare}"

    @property
    def self_hosted(self) -> bool:
        return self.path != "managed_api"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "accelerator": self.accelerator,
            "name": self.name,
            "count": self.count,
            "meets": self.meets,
            "limiter": self.limiter,
            "reason": self.reason,
            "cost_usd": _money(self.cost_usd),
            "cost_per_million_output_tokens_usd": _money(
                self.cost_per_million_output_tokens_usd, 4
            ),
            "stack": self.stack,
            "notes": list(self.notes),
            "figures": dict(self.figures),
            "formulas": [f.to_dict() for f in self.formulas],
            "replicas": self.replicas,
            "failover_replicas": self.failover,
            "devices": self.devices if self.devices is not None else self.count,
            "capacity_requests_per_day": _whole(self.capacity_requests_per_day),
            "plan_label": self.plan_label,
            **{key: self.figures.get(key) for key in PERCENTILE_KEYS},
        }


PERCENTILE_KEYS: Final = tuple(
    f"{metric}_ms_p{q}" for metric in ("ttft", "itl") for q in (50, 95, 99)
)


def _whole(value: Fraction | None) -> int | None:
    return int(value) if value is not None else None


def _money(value: Fraction | None, places: int = 2) -> float | None:
    return as_float(value, places) if value is not None else None


def path_of(acc: Accelerator) -> str:
    return acc.kind if acc.kind in PATHS else "gpu"


def engine_row(acc: Accelerator) -> Accelerator:
    """The row the estimates run on: a CPU without a compute figure gets the cited fallback."""
    if acc.kind == "cpu" and not acc.dense_bf16_tflops:
        return replace(acc, dense_bf16_tflops=float(CPU_DENSE_BF16_TFLOPS))
    return acc


def cheapest_first(option: PathOption) -> tuple[bool, bool, Fraction, int, str]:
    """The order of the table: meeting options by cost (unpriced last), then the rejected."""
    cost = option.cost_usd
    return (not option.meets, cost is None, cost or Fraction(0), option.count, option.accelerator)


SERVING_STACK: Final[dict[str, str]] = {
    "gpu": "vLLM (CUDA); TensorRT-LLM or SGLang alike",
    "tpu": "JetStream (JAX/MaxText) or vLLM TPU",
    "cpu": "llama.cpp or vLLM's CPU backend",
    "managed_api": "the provider's endpoint (OpenAI-compatible)",
}
BATCH_STACK: Final[dict[str, str]] = {
    "gpu": "sentence-transformers or vLLM (CUDA), large batches",
    "tpu": "JAX/Flax or PyTorch/XLA, fixed shapes (XLA compiles each)",
    "cpu": "ONNX Runtime or sentence-transformers on CPU",
    "managed_api": "the provider's batch or embeddings endpoint",
}
TRAINING_STACK: Final[dict[str, str]] = {
    "gpu": "PyTorch with PEFT/TRL (FSDP or DeepSpeed ZeRO across GPUs)",
    "tpu": "JAX (MaxText) or PyTorch/XLA",
    "cpu": "PyTorch on CPU (slow: for tiny models only)",
}
COLD_START: Final[dict[str, str]] = {
    "gpu": "cold start: load the weights (minutes for tens of GB) plus the engine's profiling",
    "tpu": "cold start: XLA compiles each shape on first use (minutes), then loads the weights",
    "cpu": "cold start: load the weights into RAM; no compilation",
    "managed_api": "no cold start of your own; the provider keeps the model warm",
}
