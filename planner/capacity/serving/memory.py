"""The memory steps of a serving estimate: device memory, weights, KV cache per user, tensor parallelism.

Each step takes what it needs, records its formula and assumptions on the Trail and returns its
value in exact bytes. Sources:
- KV cache per token = 2 (K and V) x layers x KV heads x head dim x bytes per element (Vaswani et
  al. 2017; with grouped-query attention only the KV heads are stored, Ainslie et al. 2023). With
  multi-head latent attention (DeepSeek-V2, DeepSeek-AI 2024, section 2.1) a layer caches one
  latent of kv_lora_rank elements plus the decoupled RoPE key of qk_rope_head_dim: layers x
  (kv_lora_rank + qk_rope_head_dim) x bytes, as vLLM's MLA backends store it (kv-cache shape
  (blocks, block_size, 576) for DeepSeek; one latent, replicated on every tensor-parallel GPU).
- Quantised checkpoints (AWQ, GPTQ, fp8/int8) keep the embedding table and the LM head at 16-bit
  (AutoAWQ and llm-compressor leave `embed_tokens` and `lm_head` unquantised) and add group scales
  (units.QUANTISED_BYTES_PER_WEIGHT).
- Tensor parallelism splits weights and KV heads N ways (Megatron-LM, Shoeybi et al. 2019); with
  fewer KV heads than GPUs each GPU keeps one head (vLLM replicates them).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import gb, num, plain, whole
from planner.capacity.results import Trail
from planner.capacity.serving.inputs import DEFAULT_CONTEXT_TOKENS, DEFAULT_PRECISION, ServingInputs
from planner.capacity.units import (
    BYTES_PER_GB,
    QUANTISED_BYTES_PER_WEIGHT,
    CapacityInputError,
    bytes_per_element,
    exact,
)
from planner.capacity.validation import given_or_catalogue, positive, whole_number


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    memory: Fraction  # per GPU: the datasheet figure, or the learner's
    usable: Fraction  # per GPU: what the runtime exposes (= memory when the learner gave it)
    source: str


def device_memory(inputs: ServingInputs, trail: Trail) -> DeviceMemory:
    """One GPU's memory: the learner's figure, the datasheet's (with an overhead given), or, for
    the engine's accounting, what the runtime reports (an "80 GB" H100 exposes 79.22 GiB)."""
    acc = inputs.accelerator
    memory_gb = given_or_catalogue(
        inputs.gpu_memory_gb, "gpu_memory_gb", acc.memory_gb if acc else None
    )
    if memory_gb is None:
        raise CapacityInputError("gpu_memory_gb", "give the GPU memory in GB or pick a GPU")
    memory = memory_gb * BYTES_PER_GB
    engine = inputs.overhead_gb is None and inputs.gpu_memory_gb is None
    if engine and acc is not None and acc.usable_memory_bytes:
        usable = Fraction(acc.usable_memory_bytes)
        trail.formula(
            "Usable memory",
            "what the CUDA runtime reports as total (not the datasheet figure)",
            f"{acc.usable_memory_gib} GiB = {gb(usable)} ({acc.usable_memory_source})",
        )
        return DeviceMemory(usable, usable, acc.usable_memory_source)
    return DeviceMemory(memory, memory, "as given")


def tensor_parallel(inputs: ServingInputs, spec: ModelSpec | None) -> int:
    n = whole_number(inputs.tensor_parallel, "tensor_parallel") or 1
    if n > 1 and inputs.accelerator is not None and inputs.accelerator.mig_of:
        raise CapacityInputError(
            "tensor_parallel", "MIG slices cannot be joined for tensor parallelism."
        )
    if n > 1 and spec is not None and spec.attention_heads % n:
        raise CapacityInputError(
            "tensor_parallel",
            f"{spec.name}'s {spec.attention_heads} attention heads do not split evenly over {n} GPUs.",
        )
    return n


def kv_share(kv_heads: int | None, n: int) -> Fraction:
    """The fraction of a token's KV cache each of n GPUs stores (replicated heads count again)."""
    if kv_heads is None or n == 1:
        return Fraction(1, n)
    if kv_heads % n and n % kv_heads:
        raise CapacityInputError(
            "tensor_parallel", f"{kv_heads} KV heads do not split evenly over {n} GPUs."
        )
    return Fraction(max(1, kv_heads // n), kv_heads)


@dataclass(frozen=True, slots=True)
class Weights:
    bytes: Fraction
    params: Fraction | None
    precision: str | None


def weights(inputs: ServingInputs, trail: Trail) -> Weights:
    spec = inputs.model
    params: Fraction | None = None
    if inputs.params_b is not None:
        params = positive(inputs.params_b, "params_b") * BYTES_PER_GB
    elif spec is not None:
        params = exact(spec.params_b) * BYTES_PER_GB
    precision = inputs.weight_precision
    if precision is not None:
        bytes_per_element(precision, "weight_precision")
    if inputs.model_gb is not None:
        size = positive(inputs.model_gb, "model_gb") * BYTES_PER_GB
        if params is None and precision is not None:
            params = size / bytes_per_element(precision, "weight_precision")
        trail.formula("Weights", "given", gb(size))
        return Weights(size, params, precision)
    if params is None:
        raise CapacityInputError(
            "model_gb", "give the weights in GB, the parameters in billions, or a model"
        )
    if precision is None:
        precision = spec.release_precision if spec is not None else DEFAULT_PRECISION
        trail.assume("weight_precision", precision)
    if (
        spec is not None
        and spec.weight_bytes
        and inputs.params_b is None
        and precision == spec.release_precision
    ):
        size = Fraction(spec.weight_bytes)
        trail.formula(
            "Weights (the checkpoint as stored)",
            "every tensor at the precision its checkpoint stores it in (config.json, or the "
            "safetensors index's total_size)",
            f"{num(params / BYTES_PER_GB)} B params at {precision} as stored = {gb(size)}",
        )
        return Weights(size, params, precision)
    return Weights(checkpoint_bytes(inputs, params, precision, trail), params, precision)


def embedding_params(inputs: ServingInputs) -> Fraction | None:
    """Parameters of the embedding table plus an untied LM head (vocab x hidden each), if known."""
    spec = inputs.model
    vocab = whole_number(inputs.vocab_size, "vocab_size") or (spec.vocab_size if spec else None)
    hidden = whole_number(inputs.hidden_size, "hidden_size") or (spec.hidden_size if spec else None)
    if vocab is None or hidden is None:
        return None
    tied = spec.tie_word_embeddings if spec is not None else False
    return Fraction(vocab * hidden * (1 if tied else 2))


def checkpoint_bytes(
    inputs: ServingInputs, params: Fraction, precision: str, trail: Trail
) -> Fraction:
    """Weights as a checkpoint stores them: quantised bodies keep 16-bit embeddings and LM head."""
    per_param = bytes_per_element(precision, "weight_precision")
    quantised = QUANTISED_BYTES_PER_WEIGHT.get(precision)
    billions = num(params / BYTES_PER_GB)
    if quantised is None:
        size = params * per_param
        trail.formula(
            "Weights",
            "parameters × bytes per parameter",
            f"{billions} B params × {plain(per_param)} bytes ({precision}) = {gb(size)}",
        )
        return size
    embed = embedding_params(inputs)
    if embed is None or embed >= params:
        trail.assume("vocab_size", "unknown: embeddings and LM head counted as quantised too")
        embed = Fraction(0)
    size = (params - embed) * quantised + embed * 2
    trail.formula(
        "Weights (quantised checkpoint)",
        "(parameters − embeddings and LM head) × bytes per quantised weight + embeddings and LM head × 2",
        f"({billions} − {num(embed / BYTES_PER_GB)}) B × {num(quantised, 4)} bytes ({precision}, "
        f"scales included) + {num(embed / BYTES_PER_GB)} B × 2 bytes = {gb(size)}",
    )
    return size


# The largest share of a model's parameters in its embedding table and LM head (Gemma-2-2B: 0.59 B
# of 2.6 B, 23 %; 7-70 B models 2-13 %), which a quantised checkpoint keeps at 16-bit.
EMBEDDING_SHARE_MAX = Fraction(1, 4)


def checkpoint_size_range(params: Fraction, precision: str) -> tuple[Fraction, Fraction]:
    """The bytes a checkpoint of `params` parameters at `precision` can take on disk, scales and
    16-bit embeddings included: (every weight quantised, a quarter of them at 16-bit)."""
    quantised = QUANTISED_BYTES_PER_WEIGHT.get(precision)
    if quantised is None:
        size = params * bytes_per_element(precision, "weight_precision")
        return size, size
    low = params * quantised
    return low, low + params * EMBEDDING_SHARE_MAX * (2 - quantised)


@dataclass(frozen=True, slots=True)
class KvCache:
    per_token: Fraction | None  # the whole model's bytes per token (all GPUs together)
    per_user: Fraction  # per_token x context
    context: int | None
    precision: str | None
    kv_heads: int | None


def kv_cache(inputs: ServingInputs, trail: Trail) -> KvCache:
    context = whole_number(inputs.context_tokens, "context_tokens")
    kv_precision = inputs.kv_precision
    if kv_precision is not None:
        _check_kv_precision(kv_precision)
    if inputs.kv_per_user_gb is not None:
        per_user = positive(inputs.kv_per_user_gb, "kv_per_user_gb") * BYTES_PER_GB
        trail.formula("KV cache per user", "given", gb(per_user))
        per_token = per_user / context if context is not None else None
        return KvCache(per_token, per_user, context, kv_precision, None)
    layers, kv_heads, head_dim = _architecture(inputs)
    if kv_precision is None:
        kv_precision = DEFAULT_PRECISION
        trail.assume("kv_precision", kv_precision)
    if context is None:
        context = DEFAULT_CONTEXT_TOKENS
        trail.assume("context_tokens", f"{DEFAULT_CONTEXT_TOKENS} tokens")
    kv_bpe = bytes_per_element(kv_precision, "kv_precision")
    latent = _mla_latent(inputs)
    if latent is not None:
        per_token = layers * latent * kv_bpe
        kv_heads = 1  # one latent per layer, which every tensor-parallel GPU keeps whole
        trail.formula(
            "KV bytes per token (multi-head latent attention)",
            "layers × (kv_lora_rank + qk_rope_head_dim) × bytes",
            f"{layers} × {latent} × {plain(kv_bpe)} = {whole(per_token)} bytes",
        )
    else:
        per_token = 2 * layers * kv_heads * head_dim * kv_bpe
        trail.formula(
            "KV bytes per token",
            "2 × layers × KV heads × head dim × bytes",
            f"2 × {layers} × {kv_heads} × {head_dim} × {plain(kv_bpe)} = {whole(per_token)} bytes",
        )
    per_user = per_token * context
    trail.formula(
        "KV cache per user",
        "KV bytes per token × context tokens",
        f"{whole(per_token)} × {whole(context)} = {gb(per_user)}",
    )
    return KvCache(per_token, per_user, context, kv_precision, kv_heads)


def _architecture(inputs: ServingInputs) -> tuple[int, int, int]:
    """Layers, KV heads and head dimension: the caller's, else the model's."""
    spec = inputs.model
    layers = whole_number(inputs.layers, "layers") or (spec.layers if spec else None)
    kv_heads = whole_number(inputs.kv_heads, "kv_heads") or (spec.kv_heads if spec else None)
    head_dim = whole_number(inputs.head_dim, "head_dim") or (spec.head_dim if spec else None)
    if layers is None or kv_heads is None or head_dim is None:
        missing = [
            n
            for n, v in (("layers", layers), ("kv_heads", kv_heads), ("head_dim", head_dim))
            if v is None
        ]
        raise CapacityInputError(
            "kv_per_user_gb",
            "give the KV cache per user in GB, or the architecture (layers, KV heads, head "
            f"dimension) or a model; missing: {', '.join(missing)}",
        )
    return layers, kv_heads, head_dim


def _mla_latent(inputs: ServingInputs) -> int | None:
    """The model's MLA latent per layer (vLLM's MLA backends cache (blocks, block_size,
    kv_lora_rank + qk_rope_head_dim)), unless the caller gave KV heads or a head dimension."""
    spec = inputs.model
    if spec is None or inputs.kv_heads is not None or inputs.head_dim is not None:
        return None
    return spec.mla_latent_dim


def _check_kv_precision(precision: str) -> None:
    bytes_per_element(precision, "kv_precision")
    if precision in ("int4", "mxfp4"):
        raise CapacityInputError(
            "kv_precision",
            f"no mainstream serving engine stores the KV cache in {precision} (vLLM offers fp8); use fp8 or int8.",
        )
