"""One row of each catalogue: an accelerator (with its MIG profiles) and a model's architecture."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

# The physical range of a managed-API row's speed: a median first token of at most two minutes
# (Artificial Analysis's slowest 405B endpoint reads 76 s), and at most 10,000 output tokens/s a
# stream (its fastest endpoints read under 2,000).
API_TTFT_MS_MAX: Final = 120_000
API_DECODE_MAX: Final = 10_000


@dataclass(frozen=True, slots=True)
class MigProfile:
    name: str  # NVIDIA's profile name, e.g. "3g.40gb"
    memory_gb: float
    compute_slices: int  # of 7
    sms: int | None = None  # streaming multiprocessors (nvidia-smi mig -lgip), of the GPU's `sms`
    # The memory `nvidia-smi mig -lgip` lists for the profile (GiB): what the CUDA runtime reports
    # inside the slice. None where no listing is published: the slice then prorates its parent's.
    memory_gib: float | None = None


@dataclass(frozen=True, slots=True)
class Accelerator:
    id: str
    name: str
    kind: str  # "gpu" | "tpu" | "cpu" | "managed_api"
    memory_gb: float | None
    memory_bandwidth_gb_s: float | None
    dense_bf16_tflops: float | None
    price_per_hour_usd: float | None
    source: str
    notes: str = ""
    price_per_million_input_tokens_usd: float | None = None
    price_per_million_output_tokens_usd: float | None = None
    mig_profiles: tuple[MigProfile, ...] = ()
    # For a MIG slice: the parent's id; TFLOPS scale by its SMs of the GPU's (else compute slices
    # of 7), bandwidth by memory slices of 8 (NVIDIA MIG user guide: each memory slice has its own share of the memory controllers).
    mig_of: str = ""
    # What the CUDA runtime reports as total (GiB), and where that figure comes from.
    usable_memory_gib: float | None = None
    usable_memory_source: str = ""
    dense_fp8_tflops: float | None = None
    dense_int8_tops: float | None = None
    precisions: tuple[str, ...] = ()
    price_per_million_embedding_tokens_usd: float | None = None
    # Whether GPUs of this kind reach each other's memory directly (NVLink or PCIe P2P); GeForce
    # cards such as the RTX 4090 do not, which changes the engine's non-torch memory under TP
    # (planner.capacity.engine_profiles). Every catalogued data-centre GPU does.
    peer_to_peer: bool = True
    # How a GPU (or TPU chip) reaches its peers for tensor parallelism: "nvlink", "pcie" or "ici",
    # and the per-device, one-direction bandwidth of that link in GB/s (the speed model charges
    # each decode step's all-reduces to it). None on a CPU and the managed API.
    interconnect: str = ""
    interconnect_gb_s: float | None = None
    sms: int | None = None  # streaming multiprocessors: what a MIG profile's SMs are a share of
    # Where the MIG profiles' listed memory and SMs come from (an `nvidia-smi mig -lgip` listing).
    mig_listing_source: str = ""
    # The speed model's efficiency class when it is not the kind's ("amd-gpu": fitted on ROCm runs).
    speed_class: str = ""
    # A managed-API row's class (planner.capacity.api_prices): the models it prices by name, else
    # the family ("dense" | "moe") and the largest total parameter count (billions) it prices.
    api_models: tuple[str, ...] = ()
    api_family: str = ""
    api_max_params_b: float | None = None
    # A managed-API row's own speed: the published median first token (ms) and output tokens/s
    # of one stream for its class, and whose figures they are. A row without them (a deployment's
    # own catalogue) falls back to planner.capacity.paths.options' API_TTFT_MS and
    # API_DECODE_TOKENS_PER_S.
    api_ttft_ms: float | None = None
    api_decode_tokens_per_s: float | None = None
    api_speed_source: str = ""

    def __post_init__(self) -> None:
        for name, value, top in (
            ("api_ttft_ms", self.api_ttft_ms, API_TTFT_MS_MAX),
            ("api_decode_tokens_per_s", self.api_decode_tokens_per_s, API_DECODE_MAX),
        ):
            if value is not None and not 0 < value <= top:
                raise ValueError(f"{self.id}: {name} must be above 0 and at most {top:,}")
        speed = self.api_ttft_ms is not None or self.api_decode_tokens_per_s is not None
        if speed and not self.api_speed_source.strip():
            raise ValueError(f"{self.id}: api_speed_source must name the speed figures' source")

    @property
    def has_mig(self) -> bool:
        """Whether the SKU partitions into MIG slices (the MIG user guide lists A100, A30, H100,
        H200, B200 and GB200 data-centre parts; A10, A40, L4, L40S and T4 have no MIG)."""
        return bool(self.mig_profiles)

    @property
    def is_memory_device(self) -> bool:
        return self.memory_gb is not None

    @property
    def usable_memory_bytes(self) -> int | None:
        """The runtime's total in bytes (GiB x 2^30), or None where no figure is catalogued."""
        if self.usable_memory_gib is None:
            return None
        return round(Fraction(str(self.usable_memory_gib)) * 2**30)

    def supports(self, precision: str) -> bool:
        """Whether the hardware computes in `precision` (unknown lists allow everything)."""
        return not self.precisions or precision in self.precisions


@dataclass(frozen=True, slots=True)
class ModelSpec:
    id: str
    name: str
    params_b: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int
    max_context_tokens: int
    release_precision: str
    source: str
    notes: str = ""
    vocab_size: int | None = None
    tie_word_embeddings: bool = False
    family: str = "dense"  # "dense" | "moe" | "multimodal" | "encoder"
    # MoE: parameters one token reads (attention, dense and shared MLPs, the router, the chosen
    # routed experts, the LM head; the input embedding is a lookup of one row)
    active_params_b: float | None = None
    sliding_window: int | None = None
    sliding_window_layers: int | None = None  # how many layers use the window (Gemma 2: half)
    # Multi-head latent attention (DeepSeek-V2/V3): each layer caches one compressed latent of
    # kv_lora_rank elements plus the shared RoPE key of qk_rope_head_dim, not K and V per head.
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    # The checkpoint's bytes at release_precision (a safetensors index's total_size, or counted
    # tensor by tensor from config.json: quantised checkpoints keep some tensors at 16-bit).
    weight_bytes: int | None = None
    # MoE: routed experts per MoE layer, how many a token uses, and all routed experts' parameters
    # (what decode reads grows from the chosen experts toward all of them as the batch grows).
    experts: int | None = None
    experts_per_token: int | None = None
    routed_params_b: float | None = None

    @property
    def mla_latent_dim(self) -> int | None:
        """Elements one MLA layer caches per token (kv_lora_rank + qk_rope_head_dim), or None."""
        if self.kv_lora_rank is None:
            return None
        return self.kv_lora_rank + (self.qk_rope_head_dim or 0)
