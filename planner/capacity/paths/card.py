"""The serving card a path comparison plans for: the peak users, the prompt and output lengths and
the day's requests (given, or assumed and said), and the decode speed its targets ask for."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from planner.capacity.formatting import whole
from planner.capacity.results import Assumption
from planner.capacity.serving.inputs import DEFAULT_CONTEXT_TOKENS, ServingInputs
from planner.capacity.validation import positive, whole_number

DEFAULT_OUTPUT_TOKENS: Final = 256  # a chat answer of a few paragraphs
DEFAULT_REQUESTS_PER_DAY: Final = 10_000


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


def required_decode(card: ServingCard, ttft_s: Fraction) -> Fraction | None:
    """The decode speed per stream the targets ask for: the floor, or what the latency leaves."""
    floor = positive(card.inputs.min_decode_tokens_per_s, "min_decode_tokens_per_s")
    latency = positive(card.inputs.latency_target_ms, "latency_target_ms")
    rates = [floor] if floor is not None else []
    if latency is not None:
        left = latency / 1000 - ttft_s
        rates.append(card.output_tokens / left if left > 0 else Fraction(10**9))
    return max(rates) if rates else None
