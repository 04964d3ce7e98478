"""Serving paths: every catalogue serving unit (one GPU, 2-8 in tensor parallel, a MIG slice, TPU
chips, a CPU server) run through estimate_serving, replicated to carry the day's peak under the
targets (paths.volume), and the managed API priced per token.

Capacity is planned for the peak, cost for the day: self-hosted is always-on, price per hour ×
devices (devices per replica × replicas, and a failover replica for N+1) × 24; the API is
requests per day × tokens × price.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.capacity import speed_model as sm
from planner.capacity.api_prices import api_price_for
from planner.capacity.catalogue import Accelerator, Catalogue, mig_slices
from planner.capacity.formatting import num, whole
from planner.capacity.paths.api import api_option
from planner.capacity.paths.card import ServingCard
from planner.capacity.paths.options import (
    GPU_COUNTS,
    SERVING_STACK,
    TPU_COUNTS,
    PathOption,
    engine_row,
    path_of,
)
from planner.capacity.paths.serving_figures import (
    always_on_cost,
    figures_of,
    load_figures,
    serving_notes,
    shown_formulas,
    volume_formulas,
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
from planner.capacity.serving import ServingEstimate, estimate_serving
from planner.capacity.units import CapacityInputError


def serving_options(card: ServingCard, catalogue: Catalogue) -> list[PathOption]:
    """Every path the catalogue offers; splits the model's heads do not allow are left out."""
    options: list[PathOption] = []
    for acc in catalogue.accelerators:
        if acc.kind == "managed_api":
            if not any(o.path == "managed_api" for o in options):  # one API option: the model's row
                price = api_price_for(
                    catalogue.accelerators, card.inputs.model, card.inputs.params_b
                )
                options.append(api_option(card, price))
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
    limiter, reason, sizing = _size(card, row, n, est)
    replicas = sizing.replicas if sizing is not None else 1
    planned = sizing.load if sizing is not None else None
    shown = _shown(card, row, n, est, planned if limiter is None else None)
    path = path_of(acc)
    cost, formulas = always_on_cost(card, acc, n, replicas, card.failover)
    capacity = _capacity(card, sizing)
    figures = figures_of(shown, decode_per_stream(shown))
    if planned is not None:
        figures |= load_figures(planned)
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
        notes=serving_notes(acc, shown),
        figures=figures,
        formulas=(*shown_formulas(shown), *volume_formulas(card, n, sizing), *formulas),
        cost_per_million_output_tokens_usd=_per_million(card, cost),
        assumptions=tuple(est.assumptions),
        requests_per_day_capacity=capacity,
        replicas=replicas,
        failover=card.failover,
        devices=n * (replicas + card.failover),
        capacity_requests_per_day=capacity * replicas if capacity is not None else None,
        settings=_settings(card, acc, n, est, sizing, figures),
    )


def _size(
    card: ServingCard, row: Accelerator, n: int, est: ServingEstimate
) -> tuple[str | None, str, Sizing | None]:
    """(limiter, reason, sizing): what no replica count mends, else the replicas for the peak."""
    limiter, reason = serving_limiter(card, est, row, n)
    if limiter is not None:
        return limiter, reason, None
    unit = _unit(card, row, n, est)
    if unit.prefill_s is None and card.ttft_target_ms is not None:
        return "compute", "no compute figure to estimate the time to first token", None
    if not unit.curve:
        return "bandwidth", "no decode speed to size the replicas", None
    sizing = size_replicas(card, unit)
    return sizing.load.miss, sizing.load.reason, sizing


def _shown(
    card: ServingCard,
    row: Accelerator,
    n: int,
    est: ServingEstimate,
    planned: ReplicaLoad | None,
) -> ServingEstimate:
    """The estimate the table shows: one replica at its planned load where the plan meets."""
    if planned is None:
        return est
    at_load = _run(
        card,
        row,
        n,
        users=min(planned.streams, est.max_active_users or 1),
        arrivals=planned.arrivals_per_s,
    )
    return at_load or est


def _capacity(card: ServingCard, sizing: Sizing | None) -> Fraction | None:
    """One replica's requests per day at the card's peak factor."""
    if sizing is None or sizing.capacity_per_replica_per_s <= 0:
        return None
    return requests_per_day(sizing.capacity_per_replica_per_s, card)


def _per_million(card: ServingCard, cost: Fraction | None) -> Fraction | None:
    if cost is None or not card.requests_per_day:
        return None
    return cost / (card.requests_per_day * card.output_tokens) * 10**6


def _settings(
    card: ServingCard,
    acc: Accelerator,
    n: int,
    est: ServingEstimate,
    sizing: Sizing | None,
    figures: dict[str, float | int | None],
) -> dict[str, Any]:
    """What the deploy command and the load test need."""
    planned = sizing.load if sizing is not None else None
    replicas = sizing.replicas if sizing is not None else 1
    return {
        "tensor_parallel": n,
        "max_model_len": est.context_tokens,
        "gpu_memory_utilization": est.gpu_memory_utilization,
        "max_num_seqs": min(planned.streams, MAX_NUM_SEQS) if planned else max_num_seqs(card),
        "kv_precision": est.kv_precision,
        "weight_precision": est.weight_precision,
        # Turing (the T4) has no bf16: vLLM runs such a checkpoint in fp16 there.
        "dtype": "float16" if est.weight_precision == "bf16" and not acc.supports("bf16") else "",
        "decode_tokens_per_s": figures.get("decode_tokens_per_s"),
        "mig": bool(acc.mig_of),
        "replicas": replicas + card.failover,
        "replicas_for_users": sizing.for_users if sizing is not None else 1,
        "request_rate_per_replica": planned.arrivals_per_s if planned else None,
    }


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
