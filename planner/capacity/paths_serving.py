"""Serving paths: every catalogue device at 1-8 per node (and MIG slices, TPU slices, a CPU server)
run through estimate_serving for the peak concurrency, and the managed API priced per token.

Capacity is planned for the peak (the estimate's users), cost for the day: self-hosted is
always-on, price per hour × devices × 24; the API is requests per day × tokens × price.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import Accelerator, Catalogue, mig_slices
from planner.capacity.formatting import money, num, whole
from planner.capacity.paths_options import (
    API_DECODE_TOKENS_PER_S,
    API_RATE_LIMIT_SOURCE,
    API_REQUESTS_PER_MINUTE,
    API_TOKENS_PER_MINUTE,
    API_TTFT_MS,
    COLD_START,
    GPU_COUNTS,
    SERVING_STACK,
    TPU_COUNTS,
    PathOption,
    engine_row,
    path_of,
)
from planner.capacity.results import Assumption, FormulaLine
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.serving_inputs import DEFAULT_CONTEXT_TOKENS
from planner.capacity.speed_model import achieved_flops
from planner.capacity.units import CapacityInputError, as_float, exact
from planner.capacity.validation import positive, whole_number

DEFAULT_OUTPUT_TOKENS: Final = 256  # a chat answer of a few paragraphs
DEFAULT_REQUESTS_PER_DAY: Final = 10_000
HOURS_PER_DAY: Final = 24
SECONDS_PER_DAY: Final = 86_400
MEMORY_CODES: Final = {"no_room_for_serving", "target_users_do_not_fit"}


@dataclass(frozen=True, slots=True)
class Traffic:
    """The day's requests (for the cost) and the peak concurrency (for the capacity)."""

    requests_per_day: int | None = None
    peak_concurrency: int | None = None


@dataclass(frozen=True, slots=True)
class ServingCard:
    """The card's targets with every figure the comparison needs filled in (or assumed)."""

    inputs: ServingInputs
    users: int
    requests_per_day: int
    prompt_tokens: int
    output_tokens: int
    ttft_target_ms: Fraction | None
    assumptions: list[Assumption] = field(default_factory=list)


def serving_card(inputs: ServingInputs, traffic: Traffic) -> ServingCard:
    """Peak users, prompt and output lengths, and the day's requests: given, or assumed and said."""
    assumed: list[Assumption] = []
    users = whole_number(traffic.peak_concurrency, "peak_concurrency") or whole_number(
        inputs.users, "users"
    )
    if users is None:
        users = 1
        assumed.append(Assumption("peak_concurrency", "1 (no concurrency given)"))
    output = whole_number(inputs.output_tokens, "output_tokens")
    if output is None:
        output = DEFAULT_OUTPUT_TOKENS
        assumed.append(Assumption("output_tokens", f"{output} (a few paragraphs)"))
    context = whole_number(inputs.context_tokens, "context_tokens") or DEFAULT_CONTEXT_TOKENS
    prompt = whole_number(inputs.prompt_tokens, "prompt_tokens")
    if prompt is None:
        prompt = max(1, context - output)
        assumed.append(
            Assumption("prompt_tokens", f"{whole(prompt)} (the context less the output)")
        )
    requests = whole_number(traffic.requests_per_day, "requests_per_day", allow_zero=True)
    if requests is None:
        requests = DEFAULT_REQUESTS_PER_DAY
        assumed.append(Assumption("requests_per_day", f"{whole(requests)} (no traffic given)"))
    card_inputs = replace(inputs, users=users, output_tokens=output, prompt_tokens=prompt)
    return ServingCard(
        inputs=card_inputs,
        users=users,
        requests_per_day=requests,
        prompt_tokens=prompt,
        output_tokens=output,
        ttft_target_ms=positive(inputs.ttft_target_ms, "ttft_target_ms"),
        assumptions=assumed,
    )


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
    return options


def _run(card: ServingCard, row: Accelerator, n: int) -> ServingEstimate | None:
    try:
        return estimate_serving(
            replace(
                card.inputs,
                accelerator=row,
                tensor_parallel=n if n > 1 else None,
                gpu_memory_gb=None,
                memory_bandwidth_gb_s=None,
                max_num_seqs=None,
            )
        )
    except CapacityInputError:
        return None  # e.g. the model's attention or KV heads do not split over n devices


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
        formulas=tuple(formulas),
        cost_per_million_output_tokens_usd=per_million,
        requests_per_day_capacity=capacity,
        settings={
            "tensor_parallel": n,
            "max_model_len": est.context_tokens,
            "gpu_memory_utilization": est.gpu_memory_utilization,
            "max_num_seqs": card.users,
            "kv_precision": est.kv_precision,
            "weight_precision": est.weight_precision,
            "decode_tokens_per_s": decode,
            "mig": bool(acc.mig_of),
        },
    )


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


def required_decode(card: ServingCard, ttft_s: Fraction) -> Fraction | None:
    """The decode speed per stream the targets ask for: the floor, or what the latency leaves."""
    floor = positive(card.inputs.min_decode_tokens_per_s, "min_decode_tokens_per_s")
    latency = positive(card.inputs.latency_target_ms, "latency_target_ms")
    rates = [floor] if floor is not None else []
    if latency is not None:
        left = latency / 1000 - ttft_s
        rates.append(card.output_tokens / left if left > 0 else Fraction(10**9))
    return max(rates) if rates else None


def api_option(card: ServingCard, api: Accelerator) -> PathOption:
    """The managed API: per-token price for the day's requests; its rate limits at the peak."""
    price_in = exact(api.price_per_million_input_tokens_usd or 0)
    price_out = exact(api.price_per_million_output_tokens_usd or 0)
    per_request = (card.prompt_tokens * price_in + card.output_tokens * price_out) / 10**6
    cost = card.requests_per_day * per_request
    seconds = API_TTFT_MS / 1000 + card.output_tokens / API_DECODE_TOKENS_PER_S
    peak_rpm = card.users * 60 / seconds
    peak_tpm = peak_rpm * (card.prompt_tokens + card.output_tokens)
    formulas = (
        FormulaLine(
            "Cost per day on the managed API",
            "requests per day × (prompt tokens × input price + output tokens × output price) ÷ 10⁶",
            f"{whole(card.requests_per_day)} × ({whole(card.prompt_tokens)} × {money(price_in)} + "
            f"{whole(card.output_tokens)} × {money(price_out)}) ÷ 10⁶ = {money(cost)}",
        ),
        FormulaLine(
            "Peak requests and tokens per minute",
            "peak users × 60 ÷ (first token + output tokens ÷ decode speed); × tokens per request",
            f"{card.users} × 60 ÷ ({num(API_TTFT_MS / 1000)} s + {whole(card.output_tokens)} ÷ "
            f"{num(API_DECODE_TOKENS_PER_S)}) = {num(peak_rpm, 0)} requests/min, "
            f"{num(peak_tpm, 0)} tokens/min (limits {whole(API_REQUESTS_PER_MINUTE)} and "
            f"{whole(API_TOKENS_PER_MINUTE)})",
        ),
    )
    limiter, reason = _api_limiter(card, peak_rpm, peak_tpm)
    return PathOption(
        path="managed_api",
        accelerator=api.id,
        name=api.name,
        count=1,
        meets=limiter is None,
        limiter=limiter,
        reason=reason,
        cost_usd=cost,
        stack=SERVING_STACK["managed_api"],
        notes=(
            COLD_START["managed_api"],
            f"rate limits: {API_RATE_LIMIT_SOURCE}",
            "the prompts leave your network: not for data that must stay in-house",
            "priced as the catalogue's 7-8B class model; a larger model costs more per token",
        ),
        figures={
            "time_to_first_token_ms": as_float(API_TTFT_MS, 1),
            "decode_tokens_per_s": as_float(API_DECODE_TOKENS_PER_S, 1),
            "peak_requests_per_minute": as_float(peak_rpm, 1),
            "peak_tokens_per_minute": as_float(peak_tpm, 0),
            "cost_per_request_usd": as_float(per_request, 6),
        },
        formulas=formulas,
        cost_per_million_output_tokens_usd=per_request / card.output_tokens * 10**6,
        cost_per_request_usd=per_request,
    )


def _api_limiter(card: ServingCard, rpm: Fraction, tpm: Fraction) -> tuple[str | None, str]:
    if rpm > API_REQUESTS_PER_MINUTE or tpm > API_TOKENS_PER_MINUTE:
        return "rate_limit", (
            f"{num(rpm, 0)} requests and {num(tpm, 0)} tokens a minute at the peak, over the "
            f"provider's {whole(API_REQUESTS_PER_MINUTE)} and {whole(API_TOKENS_PER_MINUTE)}"
        )
    if card.ttft_target_ms is not None and API_TTFT_MS > card.ttft_target_ms:
        return "queueing", (
            f"a typical first token after {num(API_TTFT_MS, 0)} ms, over the "
            f"{num(card.ttft_target_ms, 0)} ms target"
        )
    need = required_decode(card, API_TTFT_MS / 1000)
    if need is not None and API_DECODE_TOKENS_PER_S < need:
        return "bandwidth", (
            f"a typical {num(API_DECODE_TOKENS_PER_S, 0)} tokens/s per stream, below the "
            f"{num(need, 1)} needed"
        )
    return None, ""
