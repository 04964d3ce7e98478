"""A serving engine's own memory accounting (vLLM's), for when the learner gives no overhead.

vLLM sizes its KV cache at start-up (vllm/worker/worker.py `determine_num_available_blocks`, later
vllm/v1/worker/gpu_worker.py `determine_available_memory`):

    budget   = total_gpu_memory x gpu_memory_utilization     (total: what the CUDA runtime reports)
    kv_pool  = budget - weights - PyTorch activation peak - non-torch memory
    blocks   = floor(kv_pool / (block_size x KV bytes per token on this GPU)),  block_size = 16
    tokens   = blocks x block_size;  maximum concurrency = tokens / max_model_len

The activation peak and the non-torch memory are profiled, not derived; the constants below are the
ones vLLM printed for the named runs ("Memory profiling results", vllm-project/vllm pull 10511,
a Llama-3-8B on H100s at tensor parallelism 1 and 2), so the estimate is as good as those runs are
typical. bench/vllm_accounting.py compares the result with every published start-up log we found.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.units import BYTES_PER_GIB

DEFAULT_GPU_MEMORY_UTILIZATION: Final = Fraction(9, 10)  # vLLM's default
BLOCK_SIZE_TOKENS: Final = 16  # vLLM's default KV block on CUDA
# PyTorch activation peak of the profiling forward pass, by architecture family (GiB).
ACTIVATION_PEAK_GIB: Final[dict[str, Fraction]] = {
    # Llama-3-8B, 8,192 batched tokens, H100: 1.26 GiB (vllm pull 10511).
    "dense": Fraction("1.26"),
    # Qwen3-235B-A22B-FP8, TP 4, H100: budget 71.30 GiB - 54.74 GiB weights - 8.11 GiB KV leaves
    # 8.45 GiB, of which 3.58 GiB is non-torch at TP > 1 (vllm issue 21348): 4.87 GiB.
    "moe": Fraction("4.87"),
    # Llama-3.2-11B-Vision, 128 sequences, H100: 36.63 GiB activation + 0.16 GiB non-torch
    # logged (vllm pull 12126), less the 1.79 GiB non-torch counted separately: 35.00 GiB. The
    # encoder's profile depends on the image limits; this is the logged run, not a rule.
    "multimodal": Fraction("35.00"),
}
# CUDA context, cuBLAS workspaces, NCCL buffers: 1.79 GiB on one H100, 3.58 GiB per GPU at
# tensor parallelism 2 (vllm pull 10511). No larger TP was logged; it is held at the TP-2 figure.
NON_TORCH_GIB: Final = Fraction("1.79")
NON_TORCH_TP_GIB: Final = Fraction("3.58")


@dataclass(frozen=True, slots=True)
class EngineOverhead:
    """One GPU's memory that is neither weights nor KV cache, in exact bytes, by part."""

    utilization_headroom: Fraction  # usable x (1 - gpu_memory_utilization)
    activation_peak: Fraction
    non_torch: Fraction

    @property
    def total(self) -> Fraction:
        return self.utilization_headroom + self.activation_peak + self.non_torch

    def parts(self) -> dict[str, Fraction]:
        return {
            "utilization_headroom": self.utilization_headroom,
            "activation_peak": self.activation_peak,
            "non_torch": self.non_torch,
        }


def engine_overhead(
    *, usable: Fraction, utilization: Fraction, family: str, tensor_parallel: int
) -> EngineOverhead:
    """The parts of one GPU's overhead (see the module docstring for the sources)."""
    activation = ACTIVATION_PEAK_GIB.get(family, ACTIVATION_PEAK_GIB["dense"]) * BYTES_PER_GIB
    non_torch = (NON_TORCH_GIB if tensor_parallel == 1 else NON_TORCH_TP_GIB) * BYTES_PER_GIB
    return EngineOverhead(
        utilization_headroom=usable * (1 - utilization),
        activation_peak=activation,
        non_torch=non_torch,
    )
