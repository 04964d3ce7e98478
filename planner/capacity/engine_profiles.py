"""How each generation of vLLM sizes its start-up profiling run, and what it subtracts first.

vLLM sizes the KV cache from a profiled run (planner.capacity.overhead): one batch of
`max_num_batched_tokens` tokens spread over `max_num_seqs` requests, then a sampler run on one
logit row per request. What sizes that batch, and what else is subtracted, differs by generation:

- "vllm-v1" (vLLM >= 0.21, the V1 engine, `vllm serve`, the default): chunked prefill always;
  16,384 batched tokens and 1,024 sequences on a GPU with >= 70 GiB that is not an A100, else
  2,048 and 256 (vllm/engine/arg_utils.py `get_batch_defaults`; the memory rule is vllm pull
  17073, the A100 exclusion pull 17885, 8,192 -> 16,384 pull 51726). The CUDA-graph pool is
  estimated in the profile and subtracted too (vllm pull 30515, on by default since v0.21.0: "CUDA
  graph memory profiling is enabled (default since v0.21.0)").
- "vllm-v1-0.9" (V1, 0.9-0.20): 8,192 batched tokens on those large GPUs, else the same; torch
  peak plus non-torch memory measured from a snapshot taken after start-up (so the CUDA context
  is not counted); no CUDA-graph term.
- "vllm-v1-0.8" (V1, 0.8.0-0.8.3, `vllm serve`): 8,192 batched tokens on an H100 or H200 (a GPU
  name containing "h100" or "h200"), else 2,048; 1,024 sequences on every GPU
  (vllm/engine/arg_utils.py `_set_default_args_v1`, read in the v0.8.0-v0.8.3 wheels:
  `default_max_num_seqs = 1024` whatever the device). "vllm-v1-0.8.4" (v0.8.4): the sequences by
  name too, 1,024 on an H100/H200, else 256. "vllm-v1-0.8.5" (v0.8.5): both by device memory,
  >= 70 GiB (an A100 80GB included), else 2,048 and 256. All three run a sampler on
  `max_num_seqs` logit rows (vllm/v1/worker/gpu_model_runner.py `_dummy_sampler_run`, whose
  hidden states are `hidden_states[logit_indices]`, one row per dummy request). Non-torch memory
  is total device use minus PyTorch's allocations after the run (vllm/v1/worker/gpu_worker.py
  `determine_available_memory`, v0.7.0-v0.8.5), so the CUDA context counts as non-torch.
- "vllm-v1-0.7" (V1, 0.7.0-0.7.2, `vllm serve`): the same batch on an H100/H200 by name, 2,048
  tokens elsewhere, and 1,024 sequences on every GPU (arg_utils.py `__post_init__`: "256 if not
  VLLM_USE_V1 else 1024", v0.7.0). No sampler run ("TODO(woosuk): Consider the memory usage of
  the sampler"): the profile computes the logits of every batched token instead
  (`compute_logits(hidden_states)`, then `logits[:max_num_tokens]`, v0.7.0-v0.7.2), 16-bit, while
  the hidden states are alive: tokens x (vocabulary + hidden) x 2 bytes. (v0.7.3 keeps only one
  logit row per request; not modelled.) Non-torch memory as 0.8.
- "vllm-v0" (V0, 0.6.4-0.10): no chunked prefill up to 32K tokens, so max_num_batched_tokens =
  max(max_model_len, 2,048); above 32K the API server turns chunked prefill on at 512 tokens (V0
  SchedulerConfig); 256 sequences. (vLLM up to 0.6.3 took total - free after the run instead, the
  allocator's cache included; that profiler is not modelled: bench/vllm_accounting.py runs its
  logs as "vllm-v0" and says so.)

The activation peak is the larger of the two phases (PyTorch frees the forward's intermediates
before the sampler runs):
- forward, dense model: tokens x (3 x intermediate / TP + 3 x hidden) x 2 bytes: the MLP's gate_up
  output (2 x intermediate / TP, column-parallel), the SiLU-and-mul output (intermediate / TP) and
  three hidden-size tensors (residual, normed input, down_proj output) in 16-bit. Checked against
  the slope of vLLM's own "peak_torch_memory" between two runs of one model (vllm issue 10517,
  Llama-3.1-8B on an RTX 3090: 17.06 -> 17.98 GiB from 20,000 to 29,000 tokens, 109.8 kB a token;
  the formula gives 110.6 kB). Other families use a logged figure (planner.capacity.overhead).
- sampler: sequences x vocabulary x bytes per logit. V1's top-k/top-p path
  (vllm/v1/sample/ops/topk_topp_sampler.py `apply_top_k_top_p`) holds the 16-bit logits (2), their
  fp32 copy (4), the sorted values and int64 indices (4 + 8), the sort's alternate key and value
  buffers (4 + 8) and the fp32 softmax of the sorted values (4), with two boolean masks (1 + 1):
  36 bytes (v0.8.0-v0.8.2 keep one more fp32 tensor, the cumsum not yet in place: not modelled).
  vLLM measured 4.76 GiB for Llama-3.1-8B's 1,024 x 128,256 logits (38.9 bytes;
  llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md), which we use, rounded:
  39 (a fitted constant; the same file's Qwen3-0.6B, Qwen3-32B and Llama-3.3-70B rows check it).
  V0's profiling run peaked 0.06 GiB above the weights for 512 tokens and 256 x 128,256 logits on
  an RTX 3090 (vllm issue 10517), which bounds its sampler at the 16-bit logits: 2 bytes.

Non-torch memory (CUDA context where counted, cuBLAS workspaces, NCCL buffers), per GPU:
- V1 >= 0.9: 0.13 GiB at TP 1 and 0.55 GiB at TP 2 (the llm-d file above, H100: Llama-3.1-8B and
  Llama-3.3-70B-FP8).
- V1 0.7-0.8: those plus the 0.61 GiB CUDA context (the same logs: "78.57/79.18 GiB free on
  startup").
- V0: 0.16 GiB at TP 1 (vllm pull 12126, the V0 profiler of v0.7.0) and 3.58 GiB at TP 2 (vllm
  pull 10511, whose own TP-1 figure, 1.79 GiB, came from the v0.6.5 profiler: it counted what
  PyTorch had reserved but not allocated, where v0.7's `MemorySnapshot` subtracts
  `torch.cuda.memory_reserved()`; vllm/utils.py of the two wheels).
No log we found separates non-torch memory at TP 4 or 8, so larger TP is held at the TP-2 figure:
an assumption. NCCL's buffers grow with the peers (NCCL_BUFFSIZE, 4 MiB per channel and peer),
tens of MiB at TP 8; custom all-reduce maps its peers' buffers rather than allocating locally.
Without GPU peer-to-peer access (GeForce cards such as the RTX 4090), TP adds nothing to the
TP-1 figure: vLLM turns custom all-reduce off ("your platform lacks GPU P2P capability",
vllm/distributed/device_communicators/custom_all_reduce.py, v0.7.2) and NCCL falls back to its
SHM transport, whose buffers are in host memory ("SHM is used between devices when peer-to-peer
cannot happen, therefore, host memory is used", NCCL's NCCL_SHM_DISABLE documentation). Two RTX
4090s at TP 2 logged 0.25 GiB (vllm issue 13061), beside 0.16 at TP 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.units import BYTES_PER_GIB, CapacityInputError

DEFAULT_ENGINE_PROFILE: Final = "vllm-v1"
ACTIVATION_BYTES: Final = 2  # vLLM serves in the checkpoint's 16-bit dtype
LARGE_GPU_GIB: Final = 70  # arg_utils: "device_memory >= 70 * GiB_bytes and 'a100' not in name"
V0_CHUNKED_ABOVE: Final = 32768  # V0 turns chunked prefill on for longer contexts (API server)


@dataclass(frozen=True, slots=True)
class EngineProfile:
    id: str
    name: str
    # by GPU size: "v1", "v1-0.9", "v1-0.8.5"; by GPU name: "v1-0.8.4", "v1-0.8", "v1-0.7"; "v0"
    batch_rule: str
    logit_bytes: int  # bytes per logit alive at the sampler's peak
    non_torch_gib: Fraction  # per GPU at tensor parallelism 1
    non_torch_tp_gib: Fraction  # per GPU at tensor parallelism 2 and above
    cuda_graph_gib: Fraction  # the CUDA-graph pool subtracted before the KV cache (0: not counted)
    # True: the profile's logits cover every batched token, with no sampler run (vLLM 0.7.0-0.7.2)
    logits_per_token: bool = False
    # --gpu-memory-utilization's default: 0.90 in every generation catalogued here
    # (vllm/engine/arg_utils.py `EngineArgs.gpu_memory_utilization: float = 0.90`, v0.2 through
    # v0.10; vllm/config/cache.py `CacheConfig.gpu_memory_utilization = 0.9` from v0.10.2 on).
    default_utilization: Fraction = Fraction(9, 10)


V1_NON_TORCH: Final = (Fraction("0.13"), Fraction("0.55"))
CUDA_CONTEXT_GIB: Final = Fraction("0.61")
# vLLM 0.27.1's estimate for a small model (gpustack/runner pull 251: "Estimated CUDA graph
# memory: 0.36 GiB total"); other logs show 0.10-0.41 GiB (the llm-d file above, club-3090 #127).
CUDA_GRAPH_GIB: Final = Fraction("0.36")
ENGINE_PROFILES: Final[dict[str, EngineProfile]] = {
    p.id: p
    for p in (
        EngineProfile(
            id="vllm-v1",
            name="vLLM >= 0.21 (V1)",
            batch_rule="v1",
            logit_bytes=39,
            non_torch_gib=V1_NON_TORCH[0],
            non_torch_tp_gib=V1_NON_TORCH[1],
            cuda_graph_gib=CUDA_GRAPH_GIB,
        ),
        EngineProfile(
            id="vllm-v1-0.9",
            name="vLLM 0.9-0.20 (V1)",
            batch_rule="v1-0.9",
            logit_bytes=39,
            non_torch_gib=V1_NON_TORCH[0],
            non_torch_tp_gib=V1_NON_TORCH[1],
            cuda_graph_gib=Fraction(0),
        ),
        *(
            EngineProfile(
                id=f"vllm-v1-{version}",
                name=f"vLLM {versions} (V1)",
                batch_rule=f"v1-{version}",
                logit_bytes=39,
                non_torch_gib=V1_NON_TORCH[0] + CUDA_CONTEXT_GIB,
                non_torch_tp_gib=V1_NON_TORCH[1] + CUDA_CONTEXT_GIB,
                cuda_graph_gib=Fraction(0),
            )
            for version, versions in (
                ("0.8", "0.8.0-0.8.3"),
                ("0.8.4", "0.8.4"),
                ("0.8.5", "0.8.5"),
            )
        ),
        EngineProfile(
            id="vllm-v1-0.7",
            name="vLLM 0.7.0-0.7.2 (V1)",
            batch_rule="v1-0.7",
            logit_bytes=ACTIVATION_BYTES,
            non_torch_gib=V1_NON_TORCH[0] + CUDA_CONTEXT_GIB,
            non_torch_tp_gib=V1_NON_TORCH[1] + CUDA_CONTEXT_GIB,
            cuda_graph_gib=Fraction(0),
            logits_per_token=True,
        ),
        EngineProfile(
            id="vllm-v0",
            name="vLLM 0.6.4-0.10 (V0)",
            batch_rule="v0",
            logit_bytes=2,
            non_torch_gib=Fraction("0.16"),
            non_torch_tp_gib=Fraction("3.58"),
            cuda_graph_gib=Fraction(0),
        ),
    )
}


def engine_profile(name: str | None) -> EngineProfile:
    """The named engine generation (default: the current vLLM, V1)."""
    key = (name or DEFAULT_ENGINE_PROFILE).strip().lower()
    if key not in ENGINE_PROFILES:
        raise CapacityInputError(
            "engine_profile",
            f"unknown engine profile {name!r}; known: {', '.join(ENGINE_PROFILES)}",
        )
    return ENGINE_PROFILES[key]


@dataclass(frozen=True, slots=True)
class ProfileBatch:
    tokens: int  # max_num_batched_tokens
    sequences: int  # max_num_seqs


def profile_batch(
    profile: EngineProfile, *, usable: Fraction, accelerator_id: str, max_model_len: int
) -> ProfileBatch:
    """The defaults of the profiled batch, as the named engine generation sets them."""
    if profile.batch_rule == "v0":
        if max_model_len > V0_CHUNKED_ABOVE:
            return ProfileBatch(512, 256)
        return ProfileBatch(max(max_model_len, 2048), 256)
    if profile.batch_rule in ("v1-0.8.4", "v1-0.8", "v1-0.7"):
        # arg_utils.py of 0.7.0-0.8.4 matches the device name; catalogue ids name the GPU. Only
        # 0.8.4 sizes the sequences by it too (1,024 everywhere before).
        by_name = accelerator_id.startswith(("h100", "h200"))
        sequences = 1024 if by_name or profile.batch_rule != "v1-0.8.4" else 256
        return ProfileBatch(8192 if by_name else 2048, sequences)
    if profile.batch_rule == "v1-0.8.5":  # >= 70 GiB, the A100 not yet excluded (pull 17885)
        large = usable >= LARGE_GPU_GIB * BYTES_PER_GIB
        return ProfileBatch(8192, 1024) if large else ProfileBatch(2048, 256)
    large = usable >= LARGE_GPU_GIB * BYTES_PER_GIB and not accelerator_id.startswith("a100")
    if not large:
        return ProfileBatch(2048, 256)
    return ProfileBatch(16384 if profile.batch_rule == "v1" else 8192, 1024)


def with_max_num_seqs(batch: ProfileBatch, max_num_seqs: int | None) -> ProfileBatch:
    """The batch with the learner's `--max-num-seqs` in place of the default; vLLM refuses more
    sequences than batched tokens (vllm/config.py `SchedulerConfig._verify_args`, v0.8.4)."""
    if max_num_seqs is None:
        return batch
    if max_num_seqs > batch.tokens:
        raise CapacityInputError(
            "max_num_seqs",
            f"vLLM refuses more sequences than batched tokens ({batch.tokens:,} here).",
        )
    return ProfileBatch(batch.tokens, max_num_seqs)


@dataclass(frozen=True, slots=True)
class ActivationPeak:
    forward: Fraction
    sampler: Fraction

    @property
    def peak(self) -> Fraction:
        return max(self.forward, self.sampler)


def dense_forward_peak(batch: ProfileBatch, spec: ModelSpec, tensor_parallel: int) -> Fraction:
    """tokens x (3 x intermediate / TP + 3 x hidden) x 2 bytes, per GPU (see the module)."""
    per_token = 3 * Fraction(spec.intermediate_size, tensor_parallel) + 3 * spec.hidden_size
    return batch.tokens * per_token * ACTIVATION_BYTES


def sampler_peak(
    profile: EngineProfile, batch: ProfileBatch, vocab: int | None, hidden: int | None = None
) -> Fraction:
    """sequences x vocabulary x bytes per logit (the full vocabulary on every TP rank); for an
    engine that takes the logits of every batched token instead (vLLM 0.7.0-0.7.2),
    tokens x (vocabulary + hidden) x 2 bytes: the 16-bit logits beside the hidden states."""
    if profile.logits_per_token:
        return Fraction(batch.tokens * ((vocab or 0) + (hidden or 0)) * profile.logit_bytes)
    return Fraction(batch.sequences * (vocab or 0) * profile.logit_bytes)


def non_torch_gib(
    profile: EngineProfile, tensor_parallel: int, peer_to_peer: bool = True
) -> Fraction:
    """Per GPU; without peer-to-peer access, TP adds nothing to the TP-1 figure (see the module)."""
    if tensor_parallel == 1 or not peer_to_peer:
        return profile.non_torch_gib
    return profile.non_torch_tp_gib
