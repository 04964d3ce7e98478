"""Serving paths: every catalogue serving unit (one GPU, 2-8 in tensor parallel, a MIG slice, TPU
chips, a CPU server) run through estimate_serving, replicated to carry the day's peak under the
targets (paths.volume), and the managed API priced per token.

Capacity is planned for the peak, cost for the day: self-hosted is always-on, price per hour ×
devices (devices per replica × replicas, and a failover replica for N+1) × 24; the API is
requests per day × tokens × price.
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Final

from planner.capacity import speed_model as sm
from planner.capacity.catalogue import Accelerator, Catalogue, mig_slices
from planner.capacity.formatting import money, num, whole
from planner.capacity.paths.api import api_option
from planner.capacity.paths.card import ServingCard
from planner.capacity.paths.options import (
    COLD_START,
    GPU_COUNTS,
    SERVING_STACK,
    TPU_COUNTS,
    PathOption,
    engine_row,
    path_of,
)
from planner.capacity.paths.volume import (
    MAX_NUM_SEQS,
    ReplicaLoad,
    Sizing,
    Unit,
    requests_per_day,
    size_replicas,
    unit_from_curve,
)
from planner.capacity.results import FormulaLine
from planner.capacity.serving import ServingEstimate, estimate_serving
from planner.capacity.units import CapacityInputError, exact

HOURS_PER_DAY: Final = 24
# What a catalogue price per device-hour covers. GPU clouds that rent whole machines bill per GPU
# with the host included (e.g. AWS p5/g6 instances ÷ their GPUs); Google Compute Engine bills
# GPUs apart from the VM's vCPUs and memory (cloud.google.com/compute/gpus-pricing), where the
# host adds to the GPU's price. TPU prices are per chip-hour with the host (cloud.google.com/tpu/
# pricing); a CPU server's is the whole machine.
PRICE_BASIS: Final[dict[str, str]] = {
    "gpu": "per GPU, host included; on Google Compute Engine add the VM's vCPUs and memory",
    "tpu": "per chip, host included",
    "cpu": "the whole server",
}


def serving_options(card: ServingCard, catalogue: Catalogue) -> list[PathOption]:
    """Every path the catalogue offers; splits the model's heads do not allow are left out."""
    options: list[PathOption] = []
    for acc in catalogue.accelerators:
        if acc.kind == "managed_api":
            options.append(api_option(card, acc))
            continue
        counts = TPU_COUNTS if acc.kind == "tpu" else GPU_COUNTS if acc.kind == "gpu" else (1,)
        for n in counts:
            option = self_hosted_option(card, acc, n)
            if option is not None:
                options.append(option)
        for slice_ in mig_slices(acc):
            option = self_hosted_option(card, slice_, 1)
            if option is not None and option.limiter != "weights":  # MIG where the model fits
                options.append(option)
    if not any(o.self_hosted for o in options):
        _run(card, catalogue.accelerators[0], 1, quiet=False)  # raises what the card lacks
    return options


def _run(
    card: ServingCard,
    row: Accelerator,
    n: int,
    *,
    quiet: bool = True,
    users: int | None = None,
    prompt: int | None = None,
    arrivals: float | None = None,
) -> ServingEstimate | None:
    """The serving estimate of one replica, as `capacity serving` runs it for the same card (the
    engine's own --max-num-seqs unless the card sets one, so both count the same users)."""
    load = users if users is not None else card.users
    try:
        return estimate_serving(
            replace(
                card.inputs,
                accelerator=row,
                tensor_parallel=n if n > 1 else None,
                gpu_memory_gb=None,
                memory_bandwidth_gb_s=None,
                users=load,
                decode_batch=load if users is not None else card.inputs.decode_batch,
                prompt_tokens=prompt or card.prompt_tokens,
                arrival_rate_per_s=Decimal(f"{arrivals:.6g}") if arrivals else None,
                burst_arrivals=None,
            )
        )
    except CapacityInputError:
        # e.g. the model's attention or KV heads do not split over n devices; when no device
        # runs the card at all, the card lacks an input and the caller hears which.
        if quiet:
            return None
        raise


def max_num_seqs(card: ServingCard) -> int:
    """vLLM's --max-num-seqs for the peak: its users, up to what its default token budget per
    step (max_num_batched_tokens, 2,048 at the least) lets one step schedule."""
    return min(card.users, MAX_NUM_SEQS)


def decode_per_stream(est: ServingEstimate) -> float | None:
    """The speed model's prediction where it has one, else the roofline bound."""
    predicted = getattr(est, "decode_tokens_per_s", None)
    return float(predicted) if predicted is not None else est.decode_tokens_per_s_upper_bound


def _unit(card: ServingCard, row: Accelerator, n: int, est: ServingEstimate) -> Unit:
    """The replica's KV slots and decode steps (from its estimate) and one prefill alone."""
    alone = _run(card, row, n, users=1, prompt=card.prefill_tokens)
    ttft = alone.time_to_first_token_ms if alone is not None else None
    prefill = max(ttft / 1000 - float(sm.FIRST_TOKEN_FIXED_S), 0.0) if ttft is not None else None
    slots = min(est.max_active_users, MAX_NUM_SEQS)
    curve = est.speed_curve or (alone.speed_curve if alone is not None else [])
    return unit_from_curve(n, slots, curve, prefill)


def self_hosted_option(card: ServingCard, acc: Accelerator, n: int) -> PathOption | None:
    row = engine_row(acc)
    est = _run(card, row, n)
    if est is None:
        return None
    limiter, reason = serving_limiter(card, est, row, n)
    sizing: Sizing | None = None
    if limiter is None:
        unit = _unit(card, row, n, est)
        if unit.prefill_s is None and card.ttft_target_ms is not None:
            limiter, reason = "compute", "no compute figure to estimate the time to first token"
        elif not unit.curve:
            limiter, reason = "bandwidth", "no decode speed to size the replicas"
        else:
            sizing = size_replicas(card, unit)
            limiter, reason = sizing.load.miss, sizing.load.reason
    replicas = sizing.replicas if sizing is not None else 1
    failover = card.failover
    devices = n * (replicas + failover)
    planned = sizing.load if sizing is not None else None
    shown = est
    if planned is not None and limiter is None:
        at_load = _run(
            card,
            row,
            n,
            users=min(planned.streams, est.max_active_users or 1),
            arrivals=planned.arrivals_per_s,
        )
        shown = at_load or est
    path = path_of(acc)
    cost, formulas = _always_on_cost(card, acc, n, replicas, failover)
    capacity = None
    if sizing is not None and sizing.capacity_per_replica_per_s > 0:
        capacity = requests_per_day(sizing.capacity_per_replica_per_s, card)
    per_million = None
    if cost is not None and card.requests_per_day:
        per_million = cost / (card.requests_per_day * card.output_tokens) * 10**6
    figures = _figures(shown, decode_per_stream(shown))
    if planned is not None:
        figures |= _load_figures(planned)
    return PathOption(
        path=path,
        accelerator=acc.id,
        name=acc.name,
        count=n,
        meets=limiter is None,
        limiter=limiter,
        reason=reason,
        cost_usd=cost,
        stack=SERVING_STACK[path],
        notes=_serving_notes(acc, shown),
        figures=figures,
        formulas=(*_shown_formulas(shown), *_volume_formulas(card, n, sizing), *formulas),
        cost_per_million_output_tokens_usd=per_million,
        assumptions=tuple(est.assumptions),
        requests_per_day_capacity=capacity,
        replicas=replicas,
        failover=failover,
        devices=devices,
        capacity_requests_per_day=capacity * replicas if capacity is not None else None,
        settings={
            "tensor_parallel": n,
            "max_model_len": est.context_tokens,
            "gpu_memory_utilization": est.gpu_memory_utilization,
            "max_num_seqs": min(planned.streams, MAX_NUM_SEQS) if planned else max_num_seqs(card),
            "kv_precision": est.kv_precision,
            "weight_precision": est.weight_precision,
            # Turing (the T4) has no bf16: vLLM runs such a checkpoint in fp16 there.
            "dtype": "float16"
            if est.weight_precision == "bf16" and not acc.supports("bf16")
            else "",
            "decode_tokens_per_s": figures.get("decode_tokens_per_s"),
            "mig": bool(acc.mig_of),
            "replicas": replicas + failover,
            "replicas_for_users": sizing.for_users if sizing is not None else 1,
            "request_rate_per_replica": planned.arrivals_per_s if planned else None,
        },
    )


def _load_figures(load: ReplicaLoad) -> dict[str, float | int | None]:
    """The replica's figures at the planned peak: the mean and the percentiles."""
    ttft, itl = load.ttft.ms(), load.itl.ms()
    finite = math.isfinite(load.ttft.mean) and math.isfinite(load.itl.mean)
    return {
        "decode_tokens_per_s": round(load.decode_per_stream, 2) if finite else None,
        "time_to_first_token_ms": round(load.ttft.mean * 1000, 1) if finite else None,
        "inter_token_latency_ms": round(load.itl.mean * 1000, 2) if finite else None,
        "streams_per_replica": load.streams,
        "requests_per_s_per_replica": round(load.arrivals_per_s, 4),
        **({f"ttft_ms_{k}": v for k, v in ttft.items()} if finite else {}),
        **({f"itl_ms_{k}": v for k, v in itl.items()} if finite else {}),
    }


def _volume_formulas(card: ServingCard, n: int, sizing: Sizing | None) -> list[FormulaLine]:
    if sizing is None:
        return []
    load = sizing.load
    peak = card.peak_requests_per_s
    lines = [
        FormulaLine(
            "Replicas for the peak",
            "fewest replicas whose share of the peak (rate ÷ replicas, users ÷ replicas) meets "
            f"every target at p{card.percentile}",
            f"{num(peak, 3)} requests/s ÷ {sizing.replicas} = {load.arrivals_per_s:,.3f} per "
            f"replica, {load.streams} streams at once; {sizing.replicas} × {n} device(s)",
        )
    ]
    if math.isfinite(load.ttft.mean):
        ttft = load.ttft.ms()
        lines.append(
            FormulaLine(
                "First token at p50 / p95 / p99 (M/D/1 prefill queue)",
                "fixed cost + prefill + wait, P(wait > t) ≈ ρ·exp(−2(1 − ρ)t ÷ prefill)",
                f"ρ = {load.rho:.3f}: {ttft['p50']:,} / {ttft['p95']:,} / {ttft['p99']:,} ms",
            )
        )
        itl = load.itl.ms()
        lines.append(
            FormulaLine(
                "Inter-token latency at p50 / p95 / p99 (chunked prefill)",
                "decode step, plus one prompt chunk on the share of steps that carry one",
                f"{itl['p50']:,} / {itl['p95']:,} / {itl['p99']:,} ms",
            )
        )
    return lines


# The estimate's formulas behind the table's figures (users, first token, decode speed).
SHOWN_FORMULAS: Final = (
    "KV cache per user",
    "Max active users",
    "Prefill",
    "Decode",
    "Time to first",
)


def _shown_formulas(est: ServingEstimate) -> list[FormulaLine]:
    return [f for f in est.formulas if f.label.startswith(SHOWN_FORMULAS)]


def _figures(est: ServingEstimate, decode: float | None) -> dict[str, float | int | None]:
    return {
        "weights_gb": est.weights_gb,
        "kv_cache_per_user_gb": est.kv_cache_per_user_gb,
        "max_active_users": est.max_active_users,
        "decode_tokens_per_s": decode,
        "decode_tokens_per_s_upper_bound": est.decode_tokens_per_s_upper_bound,
        "time_to_first_token_ms": est.time_to_first_token_ms,
        "required_decode_tokens_per_s": est.required_decode_tokens_per_s,
    }


def _always_on_cost(
    card: ServingCard, acc: Accelerator, n: int, replicas: int = 1, failover: int = 0
) -> tuple[Fraction | None, list[FormulaLine]]:
    if not acc.price_per_hour_usd:
        return None, []
    price = exact(acc.price_per_hour_usd)
    devices = n * (replicas + failover)
    cost = price * devices * HOURS_PER_DAY
    spare = " + 1 failover" if failover else ""
    return cost, [
        FormulaLine(
            "Cost per day (always on, sized for the peak)",
            f"price per device-hour ({PRICE_BASIS[path_of(acc)]}) × devices × 24 h",
            f"{money(price)} × {n} × ({replicas}{spare}) × 24 = {money(cost)}",
        )
    ]


def serving_limiter(
    card: ServingCard, est: ServingEstimate, row: Accelerator, n: int
) -> tuple[str | None, str]:
    """What no number of replicas mends: the weights do not fit the unit, or not one user's KV
    cache does (the latency targets and the volume are paths.volume's)."""
    codes = set(est.warning_codes)
    if "weights_do_not_fit" in codes:
        return "weights", f"the weights ({num(est.weights_gb, 1)} GB) do not fit {n} device(s)"
    if "no_room_for_serving" in codes or est.max_active_users < 1:
        return "kv_cache", (
            f"KV cache room for no user at {whole(est.context_tokens or 0)} tokens: more replicas "
            "cannot help"
        )
    return None, ""


def _serving_notes(acc: Accelerator, est: ServingEstimate) -> tuple[str, ...]:
    path = path_of(acc)
    notes = [
        COLD_START[path],
        "spot or preemptible capacity does not fit live traffic alone: an interruption drops "
        "the streams; keep an on-demand floor",
    ]
    if acc.mig_of:
        notes.append(
            "a MIG slice: priced as its share of the GPU; you pay the whole GPU unless other "
            "workloads use the other slices"
        )
    if path == "tpu":
        notes.append("sold as slices of chips; the software stack changes from CUDA to XLA")
    notes += [w.message for w in est.warnings if str(w.severity) == "warning"][:2]
    return tuple(notes)
