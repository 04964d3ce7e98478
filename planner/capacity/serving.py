"""Serving estimate: does the model fit, how many users' KV caches fit beside it, how fast can it decode.

Sources for the formulas:
- The course's planning function (source, "Write a simple hardware planning function"):
  available_for_cache = gpu_memory - model - runtime_overhead; max_active_users =
  available_for_cache // kv_cache_per_user; zero active users is an error.
- KV cache per token = 2 (K and V) x layers x KV heads x head dim x bytes per element: each layer
  stores one key and one value vector of head_dim per KV head per token (Vaswani et al. 2017;
  with grouped-query attention only the KV heads are stored, Ainslie et al. 2023, "GQA").
- Weights = parameters x bytes per parameter for the storage precision.
- Decode upper bound per stream = memory bandwidth / (weight bytes + context x KV bytes per token):
  each generated token reads every weight and the stream's whole KV cache once, so a memory-bound
  decoder cannot beat bandwidth / bytes read per token (the roofline argument of Williams et al.
  2009, applied to LLM decoding in e.g. Pope et al. 2022, "Efficiently Scaling Transformer
  Inference"). It ignores batching's sharing of the weight reads: it bounds one stream alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.formatting import gb, num, plain, whole
from planner.capacity.results import (
    Assumption,
    EstimateNotes,
    EstimateWarning,
    FormulaLine,
    Gigabytes,
    Severity,
    WarningCode,
)
from planner.capacity.units import (
    BYTES_PER_GB,
    PRECISIONS_WIDEST_FIRST,
    CapacityInputError,
    as_float,
    bytes_per_element,
    exact,
    gb_to_bytes,
)
from planner.capacity.validation import given_or_catalogue, positive, whole_number

DEFAULT_PRECISION = "bf16"  # the release precision of every model in the catalogue
DEFAULT_CONTEXT_TOKENS = 4096
DEFAULT_OVERHEAD_GB = 0


@dataclass(frozen=True, slots=True)
class ServingInputs:
    """What the caller knows. Explicit figures win over the catalogue rows (accelerator, model)."""

    gpu_memory_gb: float | Decimal | None = None
    model_gb: float | Decimal | None = None
    params_b: float | Decimal | None = None
    weight_precision: str | None = None
    overhead_gb: float | Decimal | None = None
    kv_per_user_gb: float | Decimal | None = None
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    users: int | None = None
    memory_bandwidth_gb_s: float | Decimal | None = None
    min_decode_tokens_per_s: float | Decimal | None = None
    latency_target_ms: float | Decimal | None = None  # per request (or to first token)
    output_tokens: int | None = None  # generated per request
    accelerator: Accelerator | None = None
    model: ModelSpec | None = None


@dataclass(frozen=True, slots=True)
class ServingEstimate(EstimateNotes):
    gpu_memory_bytes: int
    weights_bytes: int
    weight_precision: str | None
    params: int | None
    overhead_bytes: int
    kv_bytes_per_token: int | None
    kv_precision: str | None
    context_tokens: int | None
    kv_cache_per_user_bytes: int
    available_for_cache_bytes: int
    max_active_users: int
    users: int | None
    fits: bool
    headroom_users: int | None
    headroom_bytes: int
    max_context_tokens_for_users: int | None
    memory_bandwidth_gb_s: float | None
    decode_tokens_per_s_upper_bound: float | None
    min_decode_tokens_per_s: float | None
    latency_target_ms: float | None
    output_tokens: int | None
    required_decode_tokens_per_s: float | None
    precision_that_fits: str | None
    kv_cache_in_use_bytes: int
    free_bytes: int
    accelerator_id: str | None
    model_id: str | None
    warnings: list[EstimateWarning] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    formulas: list[FormulaLine] = field(default_factory=list)

    gpu_memory_gb = Gigabytes("gpu_memory_bytes")
    weights_gb = Gigabytes("weights_bytes")
    overhead_gb = Gigabytes("overhead_bytes")
    kv_cache_per_user_gb = Gigabytes("kv_cache_per_user_bytes")
    available_for_cache_gb = Gigabytes("available_for_cache_bytes")
    headroom_gb = Gigabytes("headroom_bytes")
    kv_cache_in_use_gb = Gigabytes("kv_cache_in_use_bytes")
    free_gb = Gigabytes("free_bytes")

    @property
    def warning_codes(self) -> list[str]:
        return [str(w.code) for w in self.warnings]

    def to_dict(self) -> dict[str, Any]:
        """The JSON the CLI (`--json`) and the API return; the keys are a contract."""
        return {
            "estimate": "serving",
            "accelerator": self.accelerator_id,
            "model": self.model_id,
            "gpu_memory_gb": self.gpu_memory_gb,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "weights_gb": self.weights_gb,
            "weights_bytes": self.weights_bytes,
            "weight_precision": self.weight_precision,
            "params": self.params,
            "overhead_gb": self.overhead_gb,
            "overhead_bytes": self.overhead_bytes,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_precision": self.kv_precision,
            "context_tokens": self.context_tokens,
            "kv_cache_per_user_gb": self.kv_cache_per_user_gb,
            "kv_cache_per_user_bytes": self.kv_cache_per_user_bytes,
            "available_for_cache_gb": self.available_for_cache_gb,
            "available_for_cache_bytes": self.available_for_cache_bytes,
            "max_active_users": self.max_active_users,
            "users": self.users,
            "fits": self.fits,
            "headroom_users": self.headroom_users,
            "headroom_gb": self.headroom_gb,
            "headroom_bytes": self.headroom_bytes,
            "max_context_tokens_for_users": self.max_context_tokens_for_users,
            "memory_bandwidth_gb_s": self.memory_bandwidth_gb_s,
            "decode_tokens_per_s_upper_bound": self.decode_tokens_per_s_upper_bound,
            "min_decode_tokens_per_s": self.min_decode_tokens_per_s,
            "latency_target_ms": self.latency_target_ms,
            "output_tokens": self.output_tokens,
            "required_decode_tokens_per_s": self.required_decode_tokens_per_s,
            "precision_that_fits": self.precision_that_fits,
            "kv_cache_in_use_gb": self.kv_cache_in_use_gb,
            "kv_cache_in_use_bytes": self.kv_cache_in_use_bytes,
            "free_gb": self.free_gb,
            "free_bytes": self.free_bytes,
            **self.notes_dict(),
        }


def kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, precision: str) -> Fraction:
    """2 (K and V) x layers x KV heads x head dim x bytes per element (see the module docstring)."""
    return 2 * layers * kv_heads * head_dim * bytes_per_element(precision, "kv_precision")


def estimate_serving(inputs: ServingInputs) -> ServingEstimate:
    acc, spec = inputs.accelerator, inputs.model
    assumptions: list[Assumption] = []
    warnings: list[EstimateWarning] = []
    formulas: list[FormulaLine] = []

    # Memory.
    memory_gb = given_or_catalogue(
        inputs.gpu_memory_gb, "gpu_memory_gb", acc.memory_gb if acc else None
    )
    if memory_gb is None:
        raise CapacityInputError("gpu_memory_gb", "give the GPU memory in GB or pick a GPU")
    memory = memory_gb * BYTES_PER_GB

    # Weights: a size, or parameters x precision.
    params: Fraction | None = None
    if inputs.params_b is not None:
        params = positive(inputs.params_b, "params_b") * BYTES_PER_GB
    elif spec is not None:
        params = exact(spec.params_b) * BYTES_PER_GB
    precision = inputs.weight_precision
    if precision is not None:
        bytes_per_element(precision, "weight_precision")
    if inputs.model_gb is not None:
        weights = positive(inputs.model_gb, "model_gb") * BYTES_PER_GB
        if params is None and precision is not None:
            params = weights / bytes_per_element(precision, "weight_precision")
        formulas.append(FormulaLine("Weights", "given", gb(weights)))
    elif params is not None:
        if precision is None:
            precision = spec.release_precision if spec is not None else DEFAULT_PRECISION
            assumptions.append(Assumption("weight_precision", precision))
        per_param = bytes_per_element(precision, "weight_precision")
        weights = params * per_param
        formulas.append(
            FormulaLine(
                "Weights",
                "parameters × bytes per parameter",
                f"{num(params / BYTES_PER_GB)} B params × {plain(per_param)} bytes ({precision}) = {gb(weights)}",
            )
        )
    else:
        raise CapacityInputError(
            "model_gb", "give the weights in GB, the parameters in billions, or a model"
        )

    # Runtime overhead (CUDA context, activations of the running batch, allocator slack).
    if inputs.overhead_gb is not None:
        overhead = positive(inputs.overhead_gb, "overhead_gb", allow_zero=True) * BYTES_PER_GB
    else:
        overhead = gb_to_bytes(DEFAULT_OVERHEAD_GB)
        assumptions.append(Assumption("overhead_gb", f"{DEFAULT_OVERHEAD_GB} GB"))

    # KV cache per user.
    context = whole_number(inputs.context_tokens, "context_tokens")
    per_token: Fraction | None = None
    kv_precision = inputs.kv_precision
    if kv_precision is not None:
        bytes_per_element(kv_precision, "kv_precision")
    if inputs.kv_per_user_gb is not None:
        per_user = positive(inputs.kv_per_user_gb, "kv_per_user_gb") * BYTES_PER_GB
        if context is not None:
            per_token = per_user / context
        formulas.append(FormulaLine("KV cache per user", "given", gb(per_user)))
    else:
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
        if kv_precision is None:
            kv_precision = DEFAULT_PRECISION
            assumptions.append(Assumption("kv_precision", kv_precision))
        if context is None:
            context = DEFAULT_CONTEXT_TOKENS
            assumptions.append(Assumption("context_tokens", f"{DEFAULT_CONTEXT_TOKENS} tokens"))
        kv_bpe = bytes_per_element(kv_precision, "kv_precision")
        per_token = kv_bytes_per_token(
            layers=layers, kv_heads=kv_heads, head_dim=head_dim, precision=kv_precision
        )
        per_user = per_token * context
        formulas.append(
            FormulaLine(
                "KV bytes per token",
                "2 × layers × KV heads × head dim × bytes",
                f"2 × {layers} × {kv_heads} × {head_dim} × {plain(kv_bpe)} = {whole(per_token)} bytes",
            )
        )
        formulas.append(
            FormulaLine(
                "KV cache per user",
                "KV bytes per token × context tokens",
                f"{whole(per_token)} × {whole(context)} = {gb(per_user)}",
            )
        )
    if spec is not None and context is not None and context > spec.max_context_tokens:
        warnings.append(
            EstimateWarning(
                WarningCode.CONTEXT_EXCEEDS_MODEL,
                Severity.WARNING,
                f"{whole(context)} tokens is longer than {spec.name}'s {whole(spec.max_context_tokens)}-token context.",
            )
        )

    # Users.
    users = whole_number(inputs.users, "users", allow_zero=True)
    if users is None:
        assumptions.append(Assumption("users", "1 (concurrent users not given)"))
    target = users if users else 1

    # The source's planning function, in exact bytes.
    free_after_weights = memory - weights - overhead
    available = max(free_after_weights, Fraction(0))
    max_users = math.floor(available / per_user)
    formulas.append(
        FormulaLine(
            "Available for cache",
            "GPU memory − weights − overhead",
            f"{gb(memory)} − {gb(weights)} − {gb(overhead)} = {gb(free_after_weights)}",
        )
    )
    formulas.append(
        FormulaLine(
            "Max active users",
            "⌊available for cache ÷ KV cache per user⌋",
            f"⌊{gb(available)} ÷ {gb(per_user)}⌋ = {max_users}",
        )
    )

    need_with_target = weights + overhead + target * per_user
    precision_that_fits = None
    hint = ""
    if free_after_weights < 0 or max_users == 0:
        precision_that_fits = _precision_that_fits(
            params=params, current=precision, overhead=overhead, kv=target * per_user, memory=memory
        )
        if precision_that_fits:
            hint = f"At {precision_that_fits} the weights would be {gb(params * bytes_per_element(precision_that_fits, 'weight_precision'))} and {target} user(s) would fit."  # type: ignore[operator]
        elif params is not None:
            hint = "No precision down to int4 fits: use a GPU with more memory, or shard the model over several."
        else:
            limit = max(memory - overhead - per_user, Fraction(0))
            hint = f"The weights must shrink to at most {gb(limit)} (give the parameter count to see which precision that is)."
    if free_after_weights < 0:
        warnings.append(
            EstimateWarning(
                WarningCode.WEIGHTS_DO_NOT_FIT,
                Severity.ERROR,
                f"Weights ({gb(weights)}) plus overhead ({gb(overhead)}) exceed the {gb(memory)} of memory. {hint}",
            )
        )
    elif max_users == 0:
        warnings.append(
            EstimateWarning(
                WarningCode.NO_ROOM_FOR_SERVING,
                Severity.ERROR,
                f"The model fits, but the {gb(available)} left is less than one user's KV cache "
                f"({gb(per_user)}): zero active users is an error, not a capacity. {hint}",
            )
        )
    elif users is not None and users > max_users:
        warnings.append(
            EstimateWarning(
                WarningCode.TARGET_USERS_DO_NOT_FIT,
                Severity.ERROR,
                f"{users} users need {gb(users * per_user)} of KV cache; {gb(available)} is available, "
                f"enough for {max_users}. Shorten the context, quantise the KV cache, or add memory.",
            )
        )

    # Largest context per user that still fits the target users.
    max_context = None
    if per_token is not None and per_token > 0:
        max_context = math.floor(available / (target * per_token))
        formulas.append(
            FormulaLine(
                "Largest context for the target users",
                "⌊available ÷ (users × KV bytes per token)⌋",
                f"⌊{gb(available)} ÷ ({target} × {whole(math.ceil(per_token))} bytes)⌋ = {whole(max_context)} tokens",
            )
        )

    # Decode speed upper bound (memory-bound roofline).
    bandwidth = given_or_catalogue(
        inputs.memory_bandwidth_gb_s,
        "memory_bandwidth_gb_s",
        acc.memory_bandwidth_gb_s if acc else None,
    )
    decode_bound = None
    if bandwidth is not None:
        decode = bandwidth * BYTES_PER_GB / (weights + per_user)
        decode_bound = as_float(decode, 2)
        formulas.append(
            FormulaLine(
                "Decode upper bound per stream",
                "bandwidth ÷ (weight bytes + context × KV bytes per token)",
                f"{num(bandwidth)} GB/s ÷ ({gb(weights)} + {gb(per_user)}) = {num(decode, 1)} tokens/s",
            )
        )
    min_decode = positive(inputs.min_decode_tokens_per_s, "min_decode_tokens_per_s")
    latency_ms = positive(inputs.latency_target_ms, "latency_target_ms")
    output_tokens = whole_number(inputs.output_tokens, "output_tokens")
    # A latency target covers a whole request: its output tokens must stream out within it.
    from_latency = None
    if latency_ms is not None and output_tokens is None:
        assumptions.append(
            Assumption(
                "output_tokens",
                "unknown: the latency target was not turned into a decode speed",
            )
        )
    elif latency_ms is not None and output_tokens is not None:
        from_latency = output_tokens / (latency_ms / 1000)
        formulas.append(
            FormulaLine(
                "Decode speed the latency target needs",
                "output tokens ÷ latency target",
                f"{whole(output_tokens)} tokens ÷ {num(latency_ms / 1000)} s = {num(from_latency, 1)} tokens/s",
            )
        )
    targets = [
        (rate, why)
        for rate, why in (
            (min_decode, "target"),
            (
                from_latency,
                f"that {whole(output_tokens or 0)} output tokens in {num(latency_ms or 0, 0)} ms need",
            ),
        )
        if rate is not None
    ]
    required = max(targets, key=lambda t: t[0]) if targets else None
    if required is not None:
        rate, why = required
        if decode_bound is None:
            assumptions.append(
                Assumption("memory_bandwidth_gb_s", "unknown: the speed target was not checked")
            )
        elif decode_bound < rate:
            warnings.append(
                EstimateWarning(
                    WarningCode.MEMORY_BOUND,
                    Severity.ERROR,
                    f"Memory-bound: at most {num(decode_bound, 1)} tokens/s per stream from "
                    f"{num(bandwidth or 0)} GB/s, below the {num(rate)} tokens/s {why}. "
                    "More FLOPS will not help; fewer bytes per token (quantisation, shorter context) or more bandwidth will.",
                )
            )

    in_use = min(target, max_users) * per_user
    free = max(memory - weights - overhead - in_use, Fraction(0))
    fits = not any(w.severity == Severity.ERROR for w in warnings) and max_users >= target
    return ServingEstimate(
        gpu_memory_bytes=math.floor(memory),
        weights_bytes=math.ceil(weights),
        weight_precision=precision,
        params=math.floor(params) if params is not None else None,
        overhead_bytes=math.ceil(overhead),
        kv_bytes_per_token=math.ceil(per_token) if per_token is not None else None,
        kv_precision=kv_precision,
        context_tokens=context,
        kv_cache_per_user_bytes=math.ceil(per_user),
        available_for_cache_bytes=math.floor(available),
        max_active_users=max_users,
        users=users,
        fits=fits,
        headroom_users=(max_users - users) if users is not None else None,
        headroom_bytes=math.floor(memory - need_with_target),
        max_context_tokens_for_users=max_context,
        memory_bandwidth_gb_s=as_float(bandwidth, 1) if bandwidth is not None else None,
        decode_tokens_per_s_upper_bound=decode_bound,
        min_decode_tokens_per_s=as_float(min_decode, 2) if min_decode is not None else None,
        latency_target_ms=as_float(latency_ms, 3) if latency_ms is not None else None,
        output_tokens=output_tokens,
        required_decode_tokens_per_s=as_float(required[0], 2) if required is not None else None,
        precision_that_fits=precision_that_fits,
        kv_cache_in_use_bytes=math.ceil(in_use),
        free_bytes=math.floor(free),
        accelerator_id=acc.id if acc else None,
        model_id=spec.id if spec else None,
        warnings=warnings,
        assumptions=assumptions,
        formulas=formulas,
    )


def _precision_that_fits(
    *,
    params: Fraction | None,
    current: str | None,
    overhead: Fraction,
    kv: Fraction,
    memory: Fraction,
) -> str | None:
    """The widest precision, narrower than the current one, at which weights + overhead + KV fit."""
    if params is None:
        return None
    current_bytes = bytes_per_element(current, "weight_precision") if current else Fraction(4)
    for candidate in PRECISIONS_WIDEST_FIRST:
        per_param = bytes_per_element(candidate, "weight_precision")
        if per_param >= current_bytes:
            continue
        if params * per_param + overhead + kv <= memory:
            return candidate
    return None
