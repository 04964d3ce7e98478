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
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.engine_profiles import (
    EngineProfile,
    ProfileBatch,
    dense_forward_peak,
    non_torch_gib,
    profile_batch,
    sampler_peak,
    with_max_num_seqs,
)
from planner.capacity.units import BYTES_PER_GIB

DEFAULT_GPU_MEMORY_UTILIZATION: Final = Fraction(9, 10)  # vLLM's default
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
    if spec is not None and family == "dense" and spec.intermediate_size:
        forward = dense_forward_peak(batch, spec, run.tensor_parallel)
    else:
        forward = FORWARD_PEAK_GIB.get(family, FORWARD_PEAK_GIB["dense"]) * BYTES_PER_GIB
    vocab = spec.vocab_size if spec is not None else None
    hidden = spec.hidden_size if spec is not None else None
    return max(forward, sampler_peak(run.profile, batch, vocab, hidden))


def engine_overhead(*, usable: Fraction, utilization: Fraction, run: EngineRun) -> EngineOverhead:
    """The parts of one GPU's overhead (see planner.capacity.engine_profiles for the sources)."""
    return EngineOverhead(
        utilization_headroom=usable * (1 - utilization),
        activation_peak=activation_peak(run, usable),
        non_torch=non_torch_gib(run.profile, run.tensor_parallel, run.peer_to_peer) * BYTES_PER_GIB,
        cuda_graphs=run.profile.cuda_graph_gib * BYTES_PER_GIB,
    )
