"""The serving speed model's pure helpers: achieved bandwidth and FLOP/s per device class and
format, tensor-parallel all-reduces, MoE expert reads, attention FLOPs, one decode step. The
constants, each with its source, are planner.capacity.speed_constants (re-exported here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.speed_constants import (
    ACHIEVED_MFU,
    ACTIVATION_BYTES,
    ALL_REDUCE_STEP_LATENCY_S,
    ALL_REDUCES_PER_LAYER,
    BANDWIDTH_EFFICIENCY,
    CLASSES,
    CPU_DENSE_BF16_TFLOPS,
    DECODE_STEP_FIXED_BY_CLASS,
    DECODE_STEP_FIXED_S,
    EXPERT_READ_SHARE,
    FIRST_TOKEN_FIXED_S,
    MOE_EXPERTS,
)
from planner.capacity.units import BYTES_PER_GB, CapacityInputError, exact

__all__ = [
    "ACHIEVED_MFU",
    "ACTIVATION_BYTES",
    "ALL_REDUCES_PER_LAYER",
    "ALL_REDUCE_STEP_LATENCY_S",
    "BANDWIDTH_EFFICIENCY",
    "CLASSES",
    "CPU_DENSE_BF16_TFLOPS",
    "DECODE_STEP_FIXED_BY_CLASS",
    "DECODE_STEP_FIXED_S",
    "EXPERT_READ_SHARE",
    "FIRST_TOKEN_FIXED_S",
    "MOE_EXPERTS",
]


def device_class(acc: Accelerator | None) -> str:
    """'gpu', 'amd-gpu', 'tpu' or 'cpu': the row's speed class where it names one, else its kind
    (an unknown device counts as an NVIDIA GPU)."""
    if acc is not None and acc.speed_class in CLASSES:
        return acc.speed_class
    if acc is None or acc.kind not in ("tpu", "cpu"):
        return "gpu"
    return acc.kind


def decode_step_fixed(acc: Accelerator | None) -> Fraction:
    """The fixed cost of one decode step on this class of device (DECODE_STEP_FIXED_S)."""
    return DECODE_STEP_FIXED_BY_CLASS[device_class(acc)]


def expert_read_share(acc: Accelerator | None) -> Fraction:
    """How much of the achieved bandwidth a mixture of experts' expert weights stream at."""
    return EXPERT_READ_SHARE.get(device_class(acc), Fraction(1))


def weight_format(precision: str | None) -> str:
    """'16-bit', '8-bit' or '4-bit': how many bytes each weight streams from memory."""
    if precision in ("fp8", "int8"):
        return "8-bit"
    if precision in ("int4", "fp4", "mxfp4", "nvfp4"):
        return "4-bit"
    return "16-bit"


def bandwidth_efficiency(acc: Accelerator | None, precision: str | None) -> Fraction:
    return BANDWIDTH_EFFICIENCY[(device_class(acc), weight_format(precision))]


def compute_precision(acc: Accelerator | None, weight_precision: str | None) -> str:
    """What the matrix multiplies run in: fp8/int8 where the device has such tensor cores,
    else 16-bit (4-bit weights are weight-only everywhere: unpacked to 16-bit, W4A16)."""
    if acc is not None and weight_precision == "fp8" and acc.dense_fp8_tflops:
        return "fp8"
    if acc is not None and weight_precision == "int8" and acc.dense_int8_tops:
        return "int8"
    return "bf16"


def peak_tflops(acc: Accelerator, precision: str) -> Fraction | None:
    """The device's dense peak in `precision` (the CPU fallback where the row has none)."""
    figure = {"fp8": acc.dense_fp8_tflops, "int8": acc.dense_int8_tops}.get(precision)
    figure = figure or acc.dense_bf16_tflops
    if figure:
        return exact(figure)
    return CPU_DENSE_BF16_TFLOPS if acc.kind == "cpu" else None


def achieved_mfu(acc: Accelerator | None, precision: str) -> Fraction:
    bits = "16-bit" if precision == "bf16" else "8-bit"
    return ACHIEVED_MFU[(device_class(acc), bits)]


def achieved_flops(acc: Accelerator, weight_precision: str | None) -> Fraction | None:
    """FLOP/s one device sustains in a compute-bound pass: dense peak x achieved MFU."""
    precision = compute_precision(acc, weight_precision)
    peak = peak_tflops(acc, precision)
    return peak * 10**12 * achieved_mfu(acc, precision) if peak is not None else None


def forward_tokens_per_s(
    accelerator: Accelerator,
    params: Fraction | int | float,
    weight_precision: str | None,
    tensor_parallel: int = 1,
) -> Fraction:
    """Tokens/s of a compute-bound forward pass (prefill, an encoder, a large batch) on
    `tensor_parallel` devices: GPUs x peak x achieved MFU ÷ (2 x parameters) (Kaplan et al. 2020)."""
    flops = achieved_flops(accelerator, weight_precision)
    if flops is None:
        raise CapacityInputError(
            "gpu", f"{accelerator.name} has no compute figure to run a model on"
        )
    count = exact(params)
    if count <= 0 or tensor_parallel < 1:
        raise CapacityInputError("params_b", "must be greater than zero")
    return tensor_parallel * flops / (2 * count)


def matmul_params(spec: ModelSpec | None, params: Fraction) -> Fraction:
    """Parameters a token multiplies by: all of them less the input embedding, a lookup of one
    row (Kaplan et al. 2020 count N without embeddings); a tied embedding is the LM head's matrix,
    a matmul, and stays. A mixture of experts' active count already leaves the lookup out."""
    if spec is None or not spec.vocab_size or spec.tie_word_embeddings or spec.active_params_b:
        return params
    lookup = spec.vocab_size * spec.hidden_size
    return params - lookup if params > 2 * lookup else params


def attention_flops_per_pair(spec: ModelSpec | None, n: int) -> Fraction:
    """FLOPs per GPU for one query attending to one key over every layer: QK^T (2 x d_attn) and
    the weighted sum of V (2 x d_attn), d_attn = heads x head dim, heads split over N GPUs. Over a
    causal prompt of T tokens a token attends to T/2 keys on average: 2 x layers x T x d_attn
    FLOPs a token (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", Table 1; the
    PaLM paper's appendix B counts 6N + 12 x L x H x Q x T for training, 3x the forward's
    2N + 4 x L x H x Q x T at full, non-causal attention). For Llama 3.1 8B (32 layers, d_attn
    4,096) that is 13 % of 2 x parameters at 8k tokens and 53 % at 32k."""
    if spec is None:
        return Fraction(0)
    return Fraction(4 * spec.layers * spec.attention_heads * spec.head_dim, n)


def all_reduce_latency(acc: Accelerator | None, n: int) -> Fraction:
    """2 x ⌈log2 N⌉ steps of the link's latency; 0 on one device."""
    link = acc.interconnect if acc is not None and acc.interconnect else "pcie"
    step = ALL_REDUCE_STEP_LATENCY_S.get(link, ALL_REDUCE_STEP_LATENCY_S["pcie"])
    return 2 * (n - 1).bit_length() * step if n > 1 else Fraction(0)


def link_bytes_per_s(acc: Accelerator | None) -> Fraction:
    """Per device, one way; a device without a figure gets PCIe Gen4 x16's 32 GB/s."""
    figure = acc.interconnect_gb_s if acc is not None and acc.interconnect_gb_s else 32
    return exact(figure) * BYTES_PER_GB


def all_reduce_seconds(acc: Accelerator | None, tokens: int, hidden: int, n: int) -> Fraction:
    """One all-reduce of tokens x hidden activations over n devices: the latency + 2(n-1)/n x
    bytes ÷ link bandwidth (Patarasuk & Yuan 2009, the bandwidth-optimal ring)."""
    if n <= 1:
        return Fraction(0)
    moved = Fraction(2 * (n - 1), n) * tokens * hidden * ACTIVATION_BYTES
    return all_reduce_latency(acc, n) + moved / link_bytes_per_s(acc)


def moe_experts(spec: ModelSpec | None) -> tuple[int, int] | None:
    """(experts, experts per token) of a mixture of experts, from the row or MOE_EXPERTS."""
    if spec is None or not spec.active_params_b:
        return None
    total = getattr(spec, "num_experts", None) or getattr(spec, "experts", None)
    routed = getattr(spec, "experts_per_token", None) or getattr(spec, "num_experts_per_tok", None)
    if isinstance(total, int) and isinstance(routed, int):
        return (total, routed) if 0 < routed < total else None
    return MOE_EXPERTS.get(spec.id)


def experts_read(experts: int, per_token: int, batch: int) -> Fraction:
    """Expected distinct experts a batch of B tokens touches: E x (1 - (1 - k/E)^B), uniform
    routing (each token picks k of E); k at batch 1, all E as the batch grows."""
    untouched = (1 - per_token / experts) ** batch
    return Fraction(experts) * (1 - Fraction(untouched).limit_denominator(10**12))


@dataclass(frozen=True, slots=True)
class StepParts:
    """One decode step of every stream in the batch, per GPU, in seconds."""

    read_bytes: Fraction
    memory: Fraction
    compute: Fraction
    all_reduce: Fraction
    fixed: Fraction

    @property
    def total(self) -> Fraction:
        return self.memory + self.compute + self.all_reduce + self.fixed


@dataclass(frozen=True, slots=True)
class DecodeModel:
    """What one GPU of the deployment reads and computes per step; `step(batch)` prices it.

    dense_bytes: weights every token reads (per GPU); expert_bytes: one expert's weights per GPU
    (0 for a dense model); kv_bytes: one stream's KV at its mean context, per GPU.
    """

    dense_bytes: Fraction
    expert_bytes: Fraction
    experts: tuple[int, int] | None
    kv_bytes: Fraction
    bandwidth: Fraction  # achieved bytes/s per GPU
    flops_per_token: Fraction | None  # per GPU
    flops: Fraction | None  # achieved FLOP/s per GPU
    all_reduce_per_token: Fraction  # seconds per step for each streaming token, beyond latency
    all_reduce_fixed: Fraction  # latency of the step's all-reduces
    fixed: Fraction
    # Attention's FLOPs per (query, key) pair per GPU in a prompt: QK^T and the weighted sum of V,
    # 2 x d_attn each, per layer (4 x layers x heads x head dim ÷ N); 0 where the shape is unknown.
    attention_flops: Fraction = Fraction(0)
    expert_share: Fraction = Fraction(1)  # EXPERT_READ_SHARE of the device's class

    def weights_read(self, tokens: int) -> Fraction:
        if self.experts is None:
            return self.dense_bytes
        experts, per_token = self.experts
        return self.dense_bytes + experts_read(experts, per_token, tokens) * self.expert_bytes

    def step(self, batch: int) -> StepParts:
        read = self.weights_read(batch) + batch * self.kv_bytes
        compute = (
            batch * self.flops_per_token / self.flops
            if self.flops_per_token is not None and self.flops
            else Fraction(0)
        )
        comms = self.all_reduce_fixed + batch * self.all_reduce_per_token
        return StepParts(read, self.read_seconds(read, batch), compute, comms, self.fixed)

    def read_seconds(self, read: Fraction, tokens: int) -> Fraction:
        """Bytes over the achieved bandwidth; experts' bytes at their own share of it."""
        if self.experts is None or self.expert_share == 1:
            return read / self.bandwidth
        experts, per_token = self.experts
        expert = experts_read(experts, per_token, tokens) * self.expert_bytes
        return (read - expert) / self.bandwidth + expert / (self.bandwidth * self.expert_share)

    def prefill(self, prompt: int, sequences: int = 1) -> StepParts:
        """One forward pass over `sequences` prompts of `prompt` tokens: the weights once, every
        token's matmul FLOPs, and each prompt's causal attention (token t attends to t keys:
        prompt² ÷ 2 pairs; Kaplan et al. 2020, Table 1: 2 x n_layer x n_ctx x d_attn a token)."""
        tokens = prompt * sequences
        read = self.weights_read(tokens)
        compute = Fraction(0)
        if self.flops_per_token is not None and self.flops:
            pairs = sequences * Fraction(prompt * prompt, 2)
            compute = (tokens * self.flops_per_token + pairs * self.attention_flops) / self.flops
        comms = self.all_reduce_fixed + tokens * self.all_reduce_per_token
        # A prompt's tokens share each expert's weights (large matmuls): full bandwidth.
        return StepParts(read, read / self.bandwidth, compute, comms, Fraction(0))

    def compute_bound_batch(self) -> int | None:
        """The smallest batch whose compute time reaches its memory time (all experts read):
        B x f/F >= (W + B x kv)/BW, so B = ⌈(W/BW) ÷ (f/F - kv/BW)⌉; None if it never does."""
        if self.flops_per_token is None or not self.flops:
            return None
        weights = self.dense_bytes + (self.experts[0] * self.expert_bytes if self.experts else 0)
        slope = self.flops_per_token / self.flops - self.kv_bytes / self.bandwidth
        if slope <= 0:
            return None
        return max(1, math.ceil(weights / self.bandwidth / slope))


def speed_curve_batches(max_batch: int) -> list[int]:
    """1, 2, 4, ... up to max_batch, and max_batch itself."""
    if max_batch < 1:
        return []
    out = [2**i for i in range(max_batch.bit_length()) if 2**i <= max_batch]
    return out if out[-1] == max_batch else [*out, max_batch]
