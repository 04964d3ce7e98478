"""A serving engine's own memory accounting (vLLM's), for when the learner gives no overhead.

vLLM sizes its KV cache at start-up (vllm/worker/worker.py `determine_num_available_blocks`, later
vllm/v1/worker/gpu_worker.py `determine_available_memory`):

    budget   = total_gpu_memory x gpu_memory_utilization     (total: what the CUDA runtime reports)
    kv_pool  = budget - weights - PyTorch activation peak - non-torch memory [- CUDA graphs]
    blocks   = floor(kv_pool / (block_size x KV bytes per token on this GPU)),  block_size = 16
    tokens   = blocks x block_size;  maximum concurrency = tokens / max_model_len

The activation peak follows from the profiled batch and the non-torch memory from the logs of the
engine generation (planner.capacity.engine_profiles, which cites both); a MoE or multimodal model's
forward peak is the figure vLLM printed for one named run (below), as good as that run is typical.
bench/vllm_accounting.py compares the result with every published start-up log we found.

The profiled forward's width is the model's intermediate size. Where it is unknown (architecture
flags typed by hand), it is derived from the parameter count of a Llama-style decoder (embeddings,
attention with as many query channels as the hidden size, a gated MLP of three matrices, two norms
a layer), and named among the assumptions (`engine_model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.engine_profiles import (
    DEFAULT_ENGINE_PROFILE,
    ENGINE_PROFILES,
    EngineProfile,
    ProfileBatch,
    dense_forward_peak,
    non_torch_gib,
    profile_batch,
    sampler_peak,
    with_max_num_seqs,
)
from planner.capacity.formatting import num, whole
from planner.capacity.results import Trail
from planner.capacity.serving.inputs import DEFAULT_CONTEXT_TOKENS, DEFAULT_PRECISION, ServingInputs
from planner.capacity.units import BYTES_PER_GB, BYTES_PER_GIB
from planner.capacity.validation import whole_number

# vLLM's default; each engine generation's own is EngineProfile.default_utilization
DEFAULT_GPU_MEMORY_UTILIZATION: Final = ENGINE_PROFILES[DEFAULT_ENGINE_PROFILE].default_utilization
BLOCK_SIZE_TOKENS: Final = 16  # vLLM's default KV block on CUDA
# The profiling forward pass's activation peak by architecture family (GiB), where it is not derived
# from the profiled batch (dense models with a known architecture are); the sampler's peak is
# compared with it all the same.
FORWARD_PEAK_GIB: Final[dict[str, Fraction]] = {
    # Llama-3-8B, 8,192 batched tokens, H100: 1.26 GiB (vllm pull 10511): for a dense model
    # without an architecture (a learner's own figures).
    "dense": Fraction("1.26"),
    # Qwen3-235B-A22B-FP8, TP 4, H100, vLLM V1 (issue 21348): budget 71.30 GiB - 54.74 GiB weights
    # - 8.11 GiB KV leaves 8.45 GiB, less 0.55 GiB non-torch: 7.90 GiB. Fitted to that log.
    "moe": Fraction("7.90"),
    # Llama-3.2-11B-Vision, 128 sequences, H100, V0: "PyTorch activation peak memory takes
    # 36.63GiB" (vllm pull 12126). The encoder's profile depends on the image limits; this is the
    # logged run, not a rule.
    "multimodal": Fraction("36.63"),
}


@dataclass(frozen=True, slots=True)
class EngineOverhead:
    """One GPU's memory that is neither weights nor KV cache, in exact bytes, by part."""

    utilization_headroom: Fraction  # usable x (1 - gpu_memory_utilization)
    activation_peak: Fraction
    non_torch: Fraction
    cuda_graphs: Fraction = Fraction(0)

    @property
    def total(self) -> Fraction:
        return self.utilization_headroom + self.activation_peak + self.non_torch + self.cuda_graphs

    def parts(self) -> dict[str, Fraction]:
        """The reported parts; the CUDA-graph pool (memory outside the profiled forward, like the
        non-torch memory) is reported with the non-torch memory, keeping the keys stable."""
        return {
            "utilization_headroom": self.utilization_headroom,
            "activation_peak": self.activation_peak,
            "non_torch": self.non_torch + self.cuda_graphs,
        }


@dataclass(frozen=True, slots=True)
class EngineRun:
    """What sizes one GPU's profiling run: the engine generation, the model, the deployment."""

    profile: EngineProfile
    spec: ModelSpec | None
    accelerator_id: str
    max_model_len: int
    tensor_parallel: int
    peer_to_peer: bool = True  # the GPUs reach each other's memory (NVLink or PCIe P2P)
    max_num_seqs: int | None = None  # vLLM's --max-num-seqs; None: the generation's default


def run_batch(run: EngineRun, usable: Fraction) -> ProfileBatch:
    """The profiled batch: the generation's defaults, with the learner's max_num_seqs if given."""
    batch = profile_batch(
        run.profile,
        usable=usable,
        accelerator_id=run.accelerator_id,
        max_model_len=run.max_model_len,
    )
    return with_max_num_seqs(batch, run.max_num_seqs)


def activation_peak(run: EngineRun, usable: Fraction) -> Fraction:
    """max(forward, sampler): a dense model's forward from its profiled batch, other families'
    logged forward figure; the sampler from the batch's sequences and the vocabulary."""
    spec = run.spec
    batch = run_batch(run, usable)
    family = spec.family if spec is not None else "dense"
    if spec is not None and family in ("dense", "encoder") and spec.intermediate_size:
        forward = dense_forward_peak(batch, spec, run.tensor_parallel)
    else:
        forward = FORWARD_PEAK_GIB.get(family, FORWARD_PEAK_GIB["dense"]) * BYTES_PER_GIB
    if family == "encoder":  # a pooling model samples nothing (vLLM's pooling runner)
        return forward
    vocab = spec.vocab_size if spec is not None else None
    hidden = spec.hidden_size if spec is not None else None
    return max(forward, sampler_peak(run.profile, batch, vocab, hidden))


def engine_model(inputs: ServingInputs, params: Fraction | None, trail: Trail) -> ModelSpec | None:
    """The model the engine's profiling run is sized by: the chosen row (or config.json's) with
    the learner's architecture figures in place (hidden size, vocabulary, intermediate size). An
    intermediate size neither given nor known is derived from the parameter count and named among
    the assumptions. None when neither a model nor a hidden size is known (the logged dense peak)."""
    spec = inputs.model
    hidden = whole_number(inputs.hidden_size, "hidden_size")
    vocab = whole_number(inputs.vocab_size, "vocab_size")
    width = whole_number(inputs.intermediate_size, "intermediate_size")
    if spec is None:
        if hidden is None:
            return None
        spec = _flags_model(inputs, hidden)
    spec = replace(
        spec,
        hidden_size=hidden or spec.hidden_size,
        vocab_size=vocab or spec.vocab_size,
        intermediate_size=width or spec.intermediate_size,
    )
    if spec.intermediate_size or spec.family not in ("dense", "encoder"):
        return spec
    derived = derived_intermediate_size(spec, params)
    if derived is None:
        trail.assume(
            "intermediate_size",
            "unknown (give it, or the parameter count): the forward peak is the "
            f"{num(FORWARD_PEAK_GIB['dense'], 2)} GiB logged for Llama-3-8B",
        )
        return spec
    trail.assume(
        "intermediate_size",
        f"{whole(derived)}, derived from {num(Fraction(params or 0) / BYTES_PER_GB)} B parameters "
        "(a Llama-style decoder: embeddings, attention as wide as the hidden size, a gated MLP); "
        "give --intermediate-size from config.json for the model's own",
    )
    return replace(spec, intermediate_size=derived)


def _flags_model(inputs: ServingInputs, hidden: int) -> ModelSpec:
    layers = whole_number(inputs.layers, "layers") or 0
    kv_heads = whole_number(inputs.kv_heads, "kv_heads") or 0
    head_dim = whole_number(inputs.head_dim, "head_dim") or 0
    return ModelSpec(
        id="",
        name="the model",
        params_b=0.0,
        layers=layers,
        hidden_size=hidden,
        attention_heads=hidden // head_dim if head_dim else 0,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=0,
        max_context_tokens=inputs.context_tokens or DEFAULT_CONTEXT_TOKENS,
        release_precision=inputs.weight_precision or DEFAULT_PRECISION,
        source="architecture flags",
    )


def derived_intermediate_size(spec: ModelSpec, params: Fraction | None) -> int | None:
    """(params − embeddings − layers × (attention + norms) − final norm) ÷ (3 × layers × hidden):
    the MLP width a Llama-style decoder of this size has (Llama-3.1-8B: 14,336 exactly). None
    without the parameter count or the layers, or when the rest leaves no room for an MLP."""
    if not params or not spec.layers or not spec.hidden_size:
        return None
    h, layers = spec.hidden_size, spec.layers
    kv = spec.kv_heads * spec.head_dim or h
    query = spec.attention_heads * spec.head_dim if spec.attention_heads and spec.head_dim else h
    embeddings = (spec.vocab_size or 0) * h * (1 if spec.tie_word_embeddings else 2)
    attention = h * (query + 2 * kv) + query * h + 2 * h
    mlp = Fraction(params) - embeddings - layers * attention - h
    if mlp <= 0:
        return None
    return max(1, math.floor(mlp / (3 * layers * h) + Fraction(1, 2)))


def engine_overhead(*, usable: Fraction, utilization: Fraction, run: EngineRun) -> EngineOverhead:
    """The parts of one GPU's overhead (see planner.capacity.engine_profiles for the sources)."""
    return EngineOverhead(
        utilization_headroom=usable * (1 - utilization),
        activation_peak=activation_peak(run, usable),
        non_torch=non_torch_gib(run.profile, run.tensor_parallel, run.peer_to_peer) * BYTES_PER_GIB,
        cuda_graphs=run.profile.cuda_graph_gib * BYTES_PER_GIB,
    )
