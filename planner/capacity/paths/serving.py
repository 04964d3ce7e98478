"""Serving paths: every catalogue device at 1-8 per node (and MIG slices, TPU slices, a CPU server)
run through estimate_serving for the peak concurrency, and the managed API priced per token.

Capacity is planned for the peak (the estimate's users), cost for the day: self-hosted is
always-on, price per hour × devices × 24; the API is requests per day × tokens × price.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Final

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
from planner.capacity.results import FormulaLine
from planner.capacity.serving import ServingEstimate, estimate_serving
from planner.capacity.speed_model import achieved_flops
from planner.capacity.units import CapacityInputError, exact

HOURS_PER_DAY: Final = 24
SECONDS_PER_DAY: Final = 86_400
MAX_NUM_SEQS: Final = 1024  # half of vLLM's smallest default max_num_batched_tokens (2,048)
MEMORY_CODES: Final = {"no_room_for_serving", "target_users_do_not_fit"}


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
    card: ServingCard, row: Accelerator, n: int, *, quiet: bool = True
) -> ServingEstimate | None:
    try:
        return estimate_serving(
            replace(
                card.inputs,
                accelerator=row,
                tensor_parallel=n if n > 1 else None,
                gpu_memory_gb=None,
                memory_bandwidth_gb_s=None,
                max_num_seqs=max_num_seqs(card),  # as the deploy command starts it
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


def self_hosted_option(card: ServingCard, acc: Accelerator, n: int) -> PathOption | None:
    row = engine_row(acc)
    est = _run(card, row, n)
    if est is None:
        return None
    limiter, reason = serving_limiter(card, est, row, n)
    path = path_of(acc)
    cost, formulas = _always_on_cost(card, acc, n)
    decode = decode_per_stream(est)
    capacity = None
    if decode and est.time_to_first_token_ms is not None:
        seconds = exact(est.time_to_first_token_ms) / 1000 + card.output_tokens / exact(decode)
        capacity = card.users * SECONDS_PER_DAY / seconds
    per_million = None
    if cost is not None and card.requests_per_day:
        per_million = cost / (card.requests_per_day * card.output_tokens) * 10**6
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
        notes=_serving_notes(acc, est),
        figures=_figures(est, decode),
        formulas=(*_shown_formulas(est), *formulas),
        cost_per_million_output_tokens_usd=per_million,
        assumptions=tuple(est.assumptions),
        requests_per_day_capacity=capacity,
        settings={
            "tensor_parallel": n,
            "max_model_len": est.context_tokens,
            "gpu_memory_utilization": est.gpu_memory_utilization,
            "max_num_seqs": max_num_seqs(card),
            "kv_precision": est.kv_precision,
            "weight_precision": est.weight_precision,
            # Turing (the T4) has no bf16: vLLM runs such a checkpoint in fp16 there.
            "dtype": "float16"
            if est.weight_precision == "bf16" and not acc.supports("bf16")
            else "",
            "decode_tokens_per_s": decode,
            "mig": bool(acc.mig_of),
        },
    )


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
    card: ServingCard, acc: Accelerator, n: int
) -> tuple[Fraction | None, list[FormulaLine]]:
    if not acc.price_per_hour_usd:
        return None, []
    price = exact(acc.price_per_hour_usd)
    cost = price * n * HOURS_PER_DAY
    return cost, [
        FormulaLine(
            "Cost per day (always on, sized for the peak)",
            "price per hour × devices × 24 h",
            f"{money(price)} × {n} × 24 = {money(cost)}",
        )
    ]


def serving_limiter(
    card: ServingCard, est: ServingEstimate, row: Accelerator, n: int
) -> tuple[str | None, str]:
    """The first target the option misses, in the order a planner checks them."""
    codes = set(est.warning_codes)
    if "weights_do_not_fit" in codes:
        return "weights", f"the weights ({num(est.weights_gb, 1)} GB) do not fit {n} device(s)"
    if codes & MEMORY_CODES or est.max_active_users < card.users:
        return "kv_cache", (
            f"KV cache room for {est.max_active_users} of the {card.users} users at "
            f"{whole(est.context_tokens or 0)} tokens"
        )
    ttft = est.time_to_first_token_ms
    target = card.ttft_target_ms
    if target is not None and ttft is None:
        return "compute", "no compute figure to estimate the time to first token"
    if target is not None and ttft is not None and exact(ttft) > target:
        prefill = _prefill_ms(card, est, row, n)
        if prefill is not None and prefill <= target:
            return "queueing", (
                f"first token after {num(ttft, 0)} ms with queueing (prefill alone "
                f"{num(prefill, 0)} ms), over the {num(target, 0)} ms target"
            )
        return (
            "compute",
            f"first token after {num(ttft, 0)} ms, over the {num(target, 0)} ms target",
        )
    return _decode_limiter(est)


def _decode_limiter(est: ServingEstimate) -> tuple[str | None, str]:
    required = est.required_decode_tokens_per_s
    decode = decode_per_stream(est)
    if required is None or decode is None or decode >= required:
        return None, ""
    ceiling = est.compute_ceiling_tokens_per_s
    bound = "compute" if ceiling and (est.aggregate_tokens_per_s or 0) >= ceiling else "bandwidth"
    return bound, f"{num(decode, 1)} tokens/s per stream, below the {num(required, 1)} needed"


def _prefill_ms(
    card: ServingCard, est: ServingEstimate, row: Accelerator, n: int
) -> Fraction | None:
    flops = achieved_flops(row, est.weight_precision)
    if flops is None or est.params is None:
        return None
    return card.prompt_tokens * 2 * est.params * 1000 / (n * flops)


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
