"""The serving speed model's constants and pure helpers: achieved bandwidth and FLOP/s per device
class and format, fixed costs, tensor-parallel all-reduces, MoE expert reads, one decode step.

Constants were fitted on the "fit" rows of bench/_speed_published.py and checked on the others
(bench/serving_speed.py; the lab notes are docs/speed-model.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.units import BYTES_PER_GB, CapacityInputError, exact

# Achieved share of the datasheet memory bandwidth while decoding ("model bandwidth utilisation",
# Databricks, "LLM Inference Performance Engineering: Best Practices", 2023: well below 100 % even
# at batch 1), by device class and by how the weights are stored. Fitted on the fit rows of
# bench/_speed_published.py (NIM / TensorRT-LLM on H100, llama.cpp on RTX 3090: 0.75-0.82 of
# peak); 8-bit weights carry scales and block-quantised 4-bit weights (AWQ, GPTQ, GGUF Q4_0)
# unpack in the kernel, so they stream a little less. TPUs and CPUs (STREAM sustains 70-80 % of
# a DDR5 server's peak; llama.cpp decode reaches less) are set lower, unfitted: no run here.
CLASSES: Final = ("gpu", "amd-gpu", "tpu", "cpu", "cpu-amx")
BANDWIDTH_EFFICIENCY: Final[dict[tuple[str, str], Fraction]] = {
    ("gpu", "16-bit"): Fraction(80, 100),
    ("gpu", "8-bit"): Fraction(75, 100),
    ("gpu", "4-bit"): Fraction(75, 100),
    ("amd-gpu", "16-bit"): Fraction(70, 100),
    ("amd-gpu", "8-bit"): Fraction(70, 100),
    ("amd-gpu", "4-bit"): Fraction(65, 100),
    ("tpu", "16-bit"): Fraction(70, 100),
    ("tpu", "8-bit"): Fraction(60, 100),
    ("tpu", "4-bit"): Fraction(60, 100),
    ("cpu", "16-bit"): Fraction(55, 100),
    ("cpu", "8-bit"): Fraction(55, 100),
    ("cpu", "4-bit"): Fraction(50, 100),
    ("cpu-amx", "16-bit"): Fraction(60, 100),
    ("cpu-amx", "8-bit"): Fraction(60, 100),
    ("cpu-amx", "4-bit"): Fraction(55, 100),
}
# Achieved share of the dense peak in a compute-bound pass (prefill, a large decode batch), by
# device class and the precision the tensor cores compute in. Fitted on TensorRT-LLM's first-token
# latencies (v0.5 performance.md: Llama 7B, 2,048-token prompt, 133 ms on an A100 at FP16 and 36 ms
# on an H100 at FP8: 0.76 and 0.55 of peak once the fixed cost and the weight read are taken out)
# and its batch-768 H100 run; 0.65 and 0.50 keep those rows within tolerance. Pope et al. 2022
# ("Efficiently Scaling Transformer Inference") report 40-60 % MFU for prefill on TPUs.
ACHIEVED_MFU: Final[dict[tuple[str, str], Fraction]] = {
    ("gpu", "16-bit"): Fraction(65, 100),
    ("gpu", "8-bit"): Fraction(50, 100),
    ("amd-gpu", "16-bit"): Fraction(30, 100),
    ("amd-gpu", "8-bit"): Fraction(22, 100),
    ("tpu", "16-bit"): Fraction(50, 100),
    ("tpu", "8-bit"): Fraction(40, 100),
    ("cpu", "16-bit"): Fraction(40, 100),
    ("cpu", "8-bit"): Fraction(40, 100),
    ("cpu-amx", "16-bit"): Fraction(10, 100),
    ("cpu-amx", "8-bit"): Fraction(55, 1000),
}
# A CPU row has no TFLOPS in the catalogue: an AMD EPYC 9654 (96 Zen 4 cores, 2.4 GHz) runs
# AVX-512 BF16 dot products (VDPBF16PS: 64 FLOPs a cycle a core, AMD "Zen 4" software optimisation
# guide, publication 57647): 96 x 2.4 GHz x 64 = 14.7 TFLOPS peak; llama.cpp's prompt processing
# reaches about 40 % of it (ACHIEVED_MFU above). Indicative: a Xeon with AMX tiles peaks higher.
CPU_DENSE_BF16_TFLOPS: Final = Fraction(147, 10)
# Per decode step, whatever the batch: the scheduler, sampling and the kernel launches that CUDA
# graphs do not remove. NIM's single-stream Llama 3.3 70B TP2 run (18.91 ms a token, of which the
# weights and all-reduces explain ~17 ms) allows ~1.5 ms; llama.cpp's micro-batch-1 run (6.45 ms,
# 4.65 GB of weights on a 936 GB/s card) allows less, vLLM's Python scheduler more: 1.5 ms keeps
# both fit rows within 25 % (bench/_speed_published.py).
DECODE_STEP_FIXED_S: Final = Fraction(15, 10000)
DECODE_STEP_FIXED_BY_CLASS: Final[dict[str, Fraction]] = {
    "gpu": DECODE_STEP_FIXED_S,
    "amd-gpu": Fraction(3, 1000),
    "tpu": Fraction(10, 1000),
    "cpu": DECODE_STEP_FIXED_S,
    "cpu-amx": Fraction(3, 1000),
}
EXPERT_READ_SHARE: Final[dict[str, Fraction]] = {"cpu-amx": Fraction(35, 100)}
# Per request before its first token: HTTP, tokenising, scheduling, detokenising. NIM's
# single-stream first tokens (47.8 ms for a 500-token prompt on 2 H100s) sit above their prefill;
# in-process TensorRT-LLM runs (no HTTP) come out 1.2-1.9x slow with it, still within 2x.
FIRST_TOKEN_FIXED_S: Final = Fraction(8, 1000)
# Latency of one step of a small-message all-reduce, by link. Small messages go by recursive
# doubling or a tree: 2 x ⌈log2 N⌉ steps (the alpha-beta model, Thakur, Rabenseifner & Gropp 2005,
# "Optimization of Collective Communication Operations in MPICH"), so two GPUs pay 2 steps, four 4,
# eight 6. Two GPUs: 15 us over NVLink (nccl-tests' small-message all-reduce latency on NVLink is
# ~10-20 us; vLLM PR 2192's custom all-reduce is of that order), fitted on NIM's single-stream
# TP2 run; 40 us over PCIe (NCCL crosses the host bridge); 10 us over TPU ICI, assumed (no TPU run).
ALL_REDUCE_STEP_LATENCY_S: Final[dict[str, Fraction]] = {
    "nvlink": Fraction(75, 10**7),
    "pcie": Fraction(20, 10**6),
    "ici": Fraction(5, 10**6),
    "infinity-fabric": Fraction(7, 10**6),
}
# After attention and after the MLP (Megatron-LM, Shoeybi et al. 2019).
ALL_REDUCES_PER_LAYER: Final = 2
ACTIVATION_BYTES: Final = 2  # bf16/fp16 activations are what the all-reduces move
# Experts (total, routed per token) of the catalogue's mixtures of experts, from their config.json
# (num_local_experts / n_routed_experts and num_experts_per_tok), for rows that do not carry them.
MOE_EXPERTS: Final[dict[str, tuple[int, int]]] = {
    "mixtral-8x7b": (8, 2),
    "deepseek-v2-lite": (64, 6),
    "qwen3-30b-a3b": (128, 8),
    "qwen3-235b-a22b": (128, 8),
    "gpt-oss-20b": (32, 4),
    "gpt-oss-120b": (128, 4),
    "deepseek-v3": (256, 8),
}


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
