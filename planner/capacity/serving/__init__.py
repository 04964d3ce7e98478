"""Serving estimate: does the model fit, how many users' KV caches fit beside it, how fast it decodes.

The steps live in serving_memory (device, weights, KV cache, tensor parallelism), serving_pool
(overhead, KV pool, users, fit warnings) and serving_speed (decode under batching, prefill, targets,
cost); this module runs them in order and reports the whole deployment. Each step cites its source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from planner.capacity.results import (
    Assumption,
    EstimateNotes,
    EstimateWarning,
    FormulaLine,
    Gigabytes,
    Trail,
)
from planner.capacity.serving.inputs import ServingInputs
from planner.capacity.serving.memory import (
    KvCache,
    Weights,
    device_memory,
    kv_cache,
    kv_share,
    tensor_parallel,
    weights,
)
from planner.capacity.serving.notes import SERVING_NOT_MODELLED, model_notes, precision_notes
from planner.capacity.serving.pool import Pool, fit_warnings, kv_pool, largest_context
from planner.capacity.serving.speed import Speed, decode, rounded
from planner.capacity.serving.targets import speed_targets
from planner.capacity.units import bytes_per_element
from planner.capacity.validation import whole_number

__all__ = ["ServingEstimate", "ServingInputs", "estimate_serving", "kv_bytes_per_token"]


@dataclass(frozen=True, slots=True)
class ServingEstimate(EstimateNotes):
    """The deployment's figures (all GPUs together) in exact bytes; rates rounded for display."""

    NOT_MODELLED: ClassVar[tuple[str, ...]] = SERVING_NOT_MODELLED
    gpu_memory_bytes: int
    weights_bytes: int
    weight_precision: str | None
    params: int | None
    overhead_bytes: int
    overhead_parts_bytes: dict[str, int]
    gpu_memory_utilization: float | None
    tensor_parallel: int
    kv_bytes_per_token: int | None
    kv_precision: str | None
    context_tokens: int | None
    kv_cache_per_user_bytes: int
    available_for_cache_bytes: int
    kv_cache_tokens: int | None
    max_active_users: int
    users: int | None
    fits: bool
    headroom_users: int | None
    headroom_bytes: int
    max_context_tokens_for_users: int | None
    memory_bandwidth_gb_s: float | None
    decode_batch: int
    decode_tokens_per_s: float | None
    decode_tokens_per_s_upper_bound: float | None
    aggregate_tokens_per_s: float | None
    compute_ceiling_tokens_per_s: float | None
    time_to_first_token_ms: float | None
    cost_per_million_output_tokens_usd: float | None
    min_decode_tokens_per_s: float | None
    latency_target_ms: float | None
    ttft_target_ms: float | None
    output_tokens: int | None
    required_decode_tokens_per_s: float | None
    precision_that_fits: str | None
    kv_cache_in_use_bytes: int
    free_bytes: int
    accelerator_id: str | None
    model_id: str | None
    compute_bound_batch: int | None = None
    # A mixture of experts' parameters one token reads (billions); None for a dense model.
    active_params_b: float | None = None
    speed_curve: list[dict[str, Any]] = field(default_factory=list)
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
        out: dict[str, Any] = {
            "estimate": "serving",
            "accelerator": self.accelerator_id,
            "model": self.model_id,
        }
        for name in _JSON_FIGURES:
            out[name] = getattr(self, name)
            if name.endswith("_bytes") and name != "overhead_parts_bytes":
                out[name.removesuffix("_bytes") + "_gb"] = getattr(
                    self, name.removesuffix("_bytes") + "_gb"
                )
        out["overhead_parts_gb"] = {
            k: round(v / 10**9, 6) for k, v in self.overhead_parts_bytes.items()
        }
        return {**out, **self.notes_dict()}


_JSON_FIGURES = (
    "gpu_memory_bytes",
    "weights_bytes",
    "weight_precision",
    "params",
    "active_params_b",
    "overhead_bytes",
    "overhead_parts_bytes",
    "gpu_memory_utilization",
    "tensor_parallel",
    "kv_bytes_per_token",
    "kv_precision",
    "context_tokens",
    "kv_cache_per_user_bytes",
    "available_for_cache_bytes",
    "kv_cache_tokens",
    "max_active_users",
    "users",
    "fits",
    "headroom_users",
    "headroom_bytes",
    "max_context_tokens_for_users",
    "memory_bandwidth_gb_s",
    "decode_batch",
    "decode_tokens_per_s",
    "decode_tokens_per_s_upper_bound",
    "aggregate_tokens_per_s",
    "compute_ceiling_tokens_per_s",
    "time_to_first_token_ms",
    "cost_per_million_output_tokens_usd",
    "min_decode_tokens_per_s",
    "latency_target_ms",
    "ttft_target_ms",
    "output_tokens",
    "required_decode_tokens_per_s",
    "precision_that_fits",
    "kv_cache_in_use_bytes",
    "free_bytes",
    "compute_bound_batch",
    "speed_curve",
)


def kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, precision: str) -> Fraction:
    """2 (K and V) x layers x KV heads x head dim x bytes per element (serving_memory cites it)."""
    return 2 * layers * kv_heads * head_dim * bytes_per_element(precision, "kv_precision")


def estimate_serving(inputs: ServingInputs) -> ServingEstimate:
    """Run the steps in order: memory, weights, KV cache, pool and users, speed, targets."""
    trail = Trail()
    device = device_memory(inputs, trail)
    n = tensor_parallel(inputs, inputs.model)
    w = weights(inputs, trail)
    kv = kv_cache(inputs, trail)
    share = kv_share(kv.kv_heads, n)
    model_notes(inputs, kv.context, trail)
    precision_notes(inputs, w.precision, trail)
    users = whole_number(inputs.users, "users", allow_zero=True)
    if users is None:
        trail.assume("users", "1 (concurrent users not given)")
    pool = kv_pool(inputs, device, w, kv, share, n, trail)
    precision_that_fits = fit_warnings(inputs, device, w, pool, users, n, trail)
    max_context = largest_context(inputs, pool, users, trail)
    speed = decode(inputs, w, pool, users, n, trail)
    required = speed_targets(inputs, speed, trail)
    return _estimate(
        inputs,
        device.memory,
        w,
        kv,
        pool,
        speed,
        users,
        n,
        trail,
        precision_that_fits,
        max_context,
        required,
    )


def _estimate(
    inputs: ServingInputs,
    memory: Fraction,
    w: Weights,
    kv: KvCache,
    pool: Pool,
    speed: Speed,
    users: int | None,
    n: int,
    trail: Trail,
    precision_that_fits: str | None,
    max_context: int | None,
    required: Fraction | None,
) -> ServingEstimate:
    acc, spec = inputs.accelerator, inputs.model
    return ServingEstimate(
        **_memory_figures(memory, w, kv, pool, users, n),
        **_speed_figures(inputs, speed, required),
        users=users,
        fits=not trail.has_error and pool.max_users >= (users or 1),
        headroom_users=(pool.max_users - users) if users is not None else None,
        max_context_tokens_for_users=max_context,
        output_tokens=inputs.output_tokens,
        precision_that_fits=precision_that_fits,
        accelerator_id=acc.id if acc else None,
        model_id=spec.id if spec else None,
        active_params_b=spec.active_params_b if spec else None,
        warnings=trail.warnings,
        assumptions=trail.assumptions,
        formulas=trail.formulas,
    )


def _memory_figures(
    memory: Fraction, w: Weights, kv: KvCache, pool: Pool, users: int | None, n: int
) -> dict[str, Any]:
    """The deployment's bytes: per-GPU figures times the GPUs."""
    target = users if users else 1
    in_use = min(target, pool.max_users) * pool.per_user_gpu
    left = memory - w.bytes / n - pool.overhead
    return {
        "gpu_memory_bytes": math.floor(memory * n),
        "weights_bytes": math.ceil(w.bytes),
        "weight_precision": w.precision,
        "params": math.floor(w.params) if w.params is not None else None,
        "overhead_bytes": math.ceil(pool.overhead * n),
        "overhead_parts_bytes": {k: math.ceil(v * n) for k, v in pool.parts.items()},
        "gpu_memory_utilization": rounded(pool.utilization, 4),
        "tensor_parallel": n,
        "kv_bytes_per_token": math.ceil(kv.per_token) if kv.per_token is not None else None,
        "kv_precision": kv.precision,
        "context_tokens": kv.context,
        "kv_cache_per_user_bytes": math.ceil(kv.per_user),
        "available_for_cache_bytes": math.floor(pool.available * n),
        "kv_cache_tokens": pool.kv_cache_tokens,
        "max_active_users": pool.max_users,
        "headroom_bytes": math.floor((left - target * pool.per_user_gpu) * n),
        "kv_cache_in_use_bytes": math.ceil(in_use * n),
        "free_bytes": math.floor(max(left - in_use, Fraction(0)) * n),
    }


def _given(value: Any, places: int = 2) -> float | None:
    return rounded(Fraction(str(value)), places) if value is not None else None


def _speed_figures(
    inputs: ServingInputs, speed: Speed, required: Fraction | None
) -> dict[str, Any]:
    ttft_ms = speed.ttft_s * 1000 if speed.ttft_s is not None else None
    return {
        "memory_bandwidth_gb_s": rounded(speed.bandwidth, 1),
        "decode_batch": speed.batch,
        "decode_tokens_per_s": rounded(speed.per_user),
        "decode_tokens_per_s_upper_bound": rounded(speed.per_user_bound),
        "aggregate_tokens_per_s": rounded(speed.aggregate, 1),
        "compute_ceiling_tokens_per_s": rounded(speed.compute_ceiling, 1),
        "time_to_first_token_ms": rounded(ttft_ms, 1),
        "cost_per_million_output_tokens_usd": rounded(speed.cost_per_million, 4),
        "min_decode_tokens_per_s": _given(inputs.min_decode_tokens_per_s),
        "latency_target_ms": _given(inputs.latency_target_ms, 3),
        "ttft_target_ms": _given(inputs.ttft_target_ms, 3),
        "required_decode_tokens_per_s": rounded(required),
        "compute_bound_batch": speed.compute_bound_batch,
        "speed_curve": speed.curve,
    }
