"""The managed API as a serving path: per-token prices for the day's requests, and its rate limits,
first token and decode speed (the price row's published figures for its class of model, else the
engine's default) against the card's targets."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from planner.capacity.api_prices import ApiPrice
from planner.capacity.catalogue_rows import Accelerator
from planner.capacity.formatting import money, num, whole
from planner.capacity.paths.card import ServingCard, required_decode
from planner.capacity.paths.options import (
    API_DECODE_TOKENS_PER_S,
    API_RATE_LIMIT_SOURCE,
    API_REQUESTS_PER_MINUTE,
    API_SPEED_FALLBACK_SOURCE,
    API_TOKENS_PER_MINUTE,
    API_TTFT_MS,
    COLD_START,
    SERVING_STACK,
    PathOption,
)
from planner.capacity.results import FormulaLine
from planner.capacity.units import as_float, exact


@dataclass(frozen=True, slots=True)
class ApiSpeed:
    """One stream on the API: the median first token (ms) and output tokens/s, and whose."""

    ttft_ms: Fraction
    decode_tokens_per_s: Fraction
    source: str


def api_speed(row: Accelerator) -> ApiSpeed:
    """The row's published speed for its class of model; a figure the row lacks is the engine's
    default (Llama 3.1 8B's provider medians), and the source says so."""
    ttft, decode = row.api_ttft_ms, row.api_decode_tokens_per_s
    if ttft is None and decode is None:
        return ApiSpeed(API_TTFT_MS, API_DECODE_TOKENS_PER_S, API_SPEED_FALLBACK_SOURCE)
    source = f"{row.name}: {row.api_speed_source}"
    if ttft is None or decode is None:
        source += f"; the missing figure is {API_SPEED_FALLBACK_SOURCE}"
    return ApiSpeed(
        API_TTFT_MS if ttft is None else exact(ttft),
        API_DECODE_TOKENS_PER_S if decode is None else exact(decode),
        source,
    )


def api_option(card: ServingCard, price: ApiPrice) -> PathOption:
    """The managed API: the day's requests at the per-token price of the row for the card's model
    (planner.capacity.api_prices); its rate limits at the peak. A model no row prices has no
    API cost: the option says so and does not meet."""
    api = price.row
    if api is None:
        return _unpriced(price.reason)
    price_in = exact(api.price_per_million_input_tokens_usd or 0)
    price_out = exact(api.price_per_million_output_tokens_usd or 0)
    per_request = (card.prompt_tokens * price_in + card.output_tokens * price_out) / 10**6
    cost = card.requests_per_day * per_request
    speed = api_speed(api)
    seconds = speed.ttft_ms / 1000 + card.output_tokens / speed.decode_tokens_per_s
    # The peak is the larger of the card's users streaming back to back and the day's peak rate.
    peak_rpm = max(card.users * 60 / seconds, card.peak_requests_per_s * 60)
    peak_tpm = peak_rpm * (card.prompt_tokens + card.output_tokens)
    formulas = (
        FormulaLine(
            "Cost per day on the managed API",
            "requests per day × (prompt tokens × input price + output tokens × output price) ÷ "
            f"10⁶, at the {api.name} row's prices",
            f"{whole(card.requests_per_day)} × ({whole(card.prompt_tokens)} × {money(price_in)} + "
            f"{whole(card.output_tokens)} × {money(price_out)}) ÷ 10⁶ = {money(cost)}",
        ),
        FormulaLine(
            "Peak requests and tokens per minute",
            "the larger of peak users × 60 ÷ (first token + output tokens ÷ decode speed) and the "
            f"day's peak rate × 60; × tokens per request, at the {api.name} row's speed",
            f"max({card.users} × 60 ÷ ({num(speed.ttft_ms / 1000)} s + "
            f"{whole(card.output_tokens)} ÷ {num(speed.decode_tokens_per_s)}), "
            f"{num(card.peak_requests_per_s, 3)} × 60) = "
            f"{num(peak_rpm, 0)} requests/min, "
            f"{num(peak_tpm, 0)} tokens/min (limits {whole(API_REQUESTS_PER_MINUTE)} and "
            f"{whole(API_TOKENS_PER_MINUTE)})",
        ),
    )
    limiter, reason = _api_limiter(card, speed, peak_rpm, peak_tpm)
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
        notes=_notes(price, api, speed),
        figures=_figures(speed, per_request, peak_rpm, peak_tpm),
        formulas=formulas,
        cost_per_million_output_tokens_usd=per_request / card.output_tokens * 10**6,
        cost_per_request_usd=per_request,
        devices=0,
        capacity_requests_per_day=_capacity(card),
    )


def _notes(price: ApiPrice, api: Accelerator, speed: ApiSpeed) -> tuple[str, ...]:
    """Why to take it or not, and whose price and speed the option shows."""
    return (
        COLD_START["managed_api"],
        f"rate limits: {API_RATE_LIMIT_SOURCE}",
        "the prompts leave your network: not for data that must stay in-house",
        f"priced at {price.reason}",
        f"price source: {api.source}",
        f"speed (median first token {num(speed.ttft_ms, 0)} ms, "
        f"{num(speed.decode_tokens_per_s)} output tokens/s a stream): {speed.source}",
    )


def _unpriced(reason: str) -> PathOption:
    """The API path for a model no price row covers: listed, with why, never recommended."""
    return PathOption(
        path="managed_api",
        accelerator="managed-api",
        name="Managed model API",
        count=1,
        meets=False,
        limiter=None,
        reason=reason,
        cost_usd=None,
        stack=SERVING_STACK["managed_api"],
        notes=("no published per-token price: a provider may still host it on dedicated GPUs",),
        devices=0,
    )


def _figures(
    speed: ApiSpeed, per_request: Fraction, rpm: Fraction, tpm: Fraction
) -> dict[str, float]:
    """The table's figures: the row's medians, the peak against the limits, the price."""
    return {
        "time_to_first_token_ms": as_float(speed.ttft_ms, 1),
        "decode_tokens_per_s": as_float(speed.decode_tokens_per_s, 2),
        "peak_requests_per_minute": as_float(rpm, 1),
        "peak_tokens_per_minute": as_float(tpm, 0),
        "cost_per_request_usd": as_float(per_request, 6),
        # Provider medians only: no percentile beyond the median is published.
        "ttft_ms_p50": as_float(speed.ttft_ms, 1),
        "itl_ms_p50": as_float(1000 / speed.decode_tokens_per_s, 1),
    }


def _capacity(card: ServingCard) -> Fraction:
    """The day's requests the rate limits allow at the card's peak factor."""
    per_minute = min(
        Fraction(API_REQUESTS_PER_MINUTE),
        Fraction(API_TOKENS_PER_MINUTE, card.prompt_tokens + card.output_tokens),
    )
    return per_minute * 60 * 24 / card.peak_factor


def _api_limiter(
    card: ServingCard, speed: ApiSpeed, rpm: Fraction, tpm: Fraction
) -> tuple[str | None, str]:
    if rpm > API_REQUESTS_PER_MINUTE or tpm > API_TOKENS_PER_MINUTE:
        return "rate_limit", (
            f"{num(rpm, 0)} requests and {num(tpm, 0)} tokens a minute at the peak, over the "
            f"provider's {whole(API_REQUESTS_PER_MINUTE)} and {whole(API_TOKENS_PER_MINUTE)}"
        )
    if card.ttft_target_ms is not None and speed.ttft_ms > card.ttft_target_ms:
        return "queueing", (
            f"a median first token after {num(speed.ttft_ms, 0)} ms, over the "
            f"{num(card.ttft_target_ms, 0)} ms target"
        )
    itl = 1000 / speed.decode_tokens_per_s
    if card.itl_target_ms is not None and itl > card.itl_target_ms:
        return "bandwidth", (
            f"a median {num(itl, 1)} ms between tokens ({num(speed.decode_tokens_per_s)} "
            f"tokens/s a stream), over the {num(card.itl_target_ms, 0)} ms target"
        )
    need = required_decode(card, speed.ttft_ms / 1000)
    if need is not None and speed.decode_tokens_per_s < need:
        return "bandwidth", (
            f"a median {num(speed.decode_tokens_per_s)} tokens/s a stream, below the "
            f"{num(need, 1)} needed"
        )
    return None, ""
