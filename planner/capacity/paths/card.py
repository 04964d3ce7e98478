"""The serving card a path comparison plans for: the peak users, the prompt and output lengths,
the day's requests and their peak, the service level (a use case's preset, the card's own targets
over it), availability, prefix caching and speculative decoding: given, or assumed and said."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Final

from planner.capacity.formatting import num, whole
from planner.capacity.paths.presets import DEFAULT_USE_CASE, UseCase, use_case
from planner.capacity.results import Assumption
from planner.capacity.serving.inputs import DEFAULT_CONTEXT_TOKENS, ServingInputs
from planner.capacity.units import CapacityInputError
from planner.capacity.validation import positive, whole_number

DEFAULT_OUTPUT_TOKENS: Final = 256  # a chat answer of a few paragraphs
DEFAULT_REQUESTS_PER_DAY: Final = 10_000
SECONDS_PER_DAY: Final = 86_400
AVAILABILITY: Final = ("single", "n+1")
TARGET_PERCENTILES: Final = (50, 95, 99)
# The physical ranges of the plan's own inputs (the form and the CLI hold the same bounds).
MAX_PEAK_FACTOR: Final = 100  # a peak hour at most 100 × the day's mean rate
MAX_PREFIX_HIT_RATE: Final = Fraction(99, 100)  # at least 1 % of each prompt is new
MAX_DRAFT_TOKENS: Final = 16  # vLLM's num_speculative_tokens in published runs is 1-8
MAX_ACCEPTANCE_RATE: Final = Fraction(99, 100)

Number = int | float | Decimal | Fraction | None


@dataclass(frozen=True, slots=True)
class Traffic:
    """The day's requests and the peak (for the capacity and the cost), and the plan's service
    level: a use case's preset, availability, prefix caching and speculative decoding."""

    requests_per_day: int | None = None
    peak_concurrency: int | None = None
    peak_factor: Number = None
    use_case: str | None = None
    availability: str | None = None
    prefix_hit_rate: Number = None
    draft_tokens: int | None = None
    acceptance_rate: Number = None
    percentile: int | None = None  # at which the latency targets are checked (the preset's)


@dataclass(frozen=True, slots=True)
class ServingCard:
    """The card's targets with every figure the comparison needs filled in (or assumed)."""

    inputs: ServingInputs
    users: int
    requests_per_day: int
    prompt_tokens: int
    output_tokens: int
    ttft_target_ms: Fraction | None  # the card's own, else the use case's
    assumptions: list[Assumption] = field(default_factory=list)
    use_case: UseCase = field(default_factory=lambda: use_case(DEFAULT_USE_CASE))
    itl_target_ms: Fraction | None = None  # the use case's, unless the card sets a decode speed
    percentile: int = 95  # at which the latency targets are checked
    peak_factor: Fraction = Fraction(2)
    failover: int = 0  # replicas added for N+1
    prefix_hit_rate: Fraction = Fraction(0)
    draft_tokens: int = 0
    acceptance_rate: Fraction = Fraction(0)

    @property
    def peak_requests_per_s(self) -> Fraction:
        """The day's mean arrival rate × the peak factor."""
        return Fraction(self.requests_per_day, SECONDS_PER_DAY) * self.peak_factor

    @property
    def prefill_tokens(self) -> int:
        """The prompt tokens a request prefills: those a cached prefix does not already hold
        (vLLM's automatic prefix caching reuses a prompt's cached KV blocks instead of computing
        them again, docs.vllm.ai/en/latest/design/prefix_caching.html; aiconfigurator's users
        found TTFT 4-6 × off when the prefix was ignored, ai-dynamo/aiconfigurator#250)."""
        return max(1, round(self.prompt_tokens * (1 - self.prefix_hit_rate)))

    @property
    def availability(self) -> str:
        return "n+1" if self.failover else "single"


def serving_card(inputs: ServingInputs, traffic: Traffic) -> ServingCard:
    """Peak users, prompt and output lengths, and the day's requests: given, or assumed and said."""
    assumed: list[Assumption] = []
    preset = use_case(traffic.use_case)
    if traffic.use_case is None:
        assumed.append(
            Assumption("use_case", f"{preset.name} ({preset.label}: {_preset_targets(preset)})")
        )
    users = whole_number(traffic.peak_concurrency, "peak_concurrency") or whole_number(
        inputs.users, "users"
    )
    if users is None:
        users = 1
        assumed.append(Assumption("peak_concurrency", "1 (no concurrency given)"))
    output, prompt = _lengths(inputs, preset, traffic.use_case is not None, assumed)
    requests = whole_number(traffic.requests_per_day, "requests_per_day", allow_zero=True)
    if requests is None:
        requests = DEFAULT_REQUESTS_PER_DAY
        assumed.append(Assumption("requests_per_day", f"{whole(requests)} (no traffic given)"))
    if inputs.arrival_rate_per_s is not None or inputs.burst_arrivals is not None:
        assumed.append(
            Assumption(
                "arrival_rate_per_s",
                "the day's requests at their peak, spread over the replicas (the card's arrival "
                "rate and burst are the single estimate's)",
            )
        )
    peak = _peak_factor(traffic.peak_factor, preset, assumed)
    failover = _failover(traffic.availability, preset, assumed)
    own_ttft = positive(inputs.ttft_target_ms, "ttft_target_ms")
    own_decode = inputs.min_decode_tokens_per_s is not None or inputs.latency_target_ms is not None
    card_inputs = replace(inputs, users=users, output_tokens=output, prompt_tokens=prompt)
    hit, draft, acceptance = _speedups(traffic)
    return ServingCard(
        inputs=card_inputs,
        users=users,
        requests_per_day=requests,
        prompt_tokens=prompt,
        output_tokens=output,
        ttft_target_ms=own_ttft if own_ttft is not None else preset.ttft_ms,
        assumptions=assumed,
        use_case=preset,
        itl_target_ms=None if own_decode else preset.itl_ms,
        percentile=_percentile(traffic.percentile, preset),
        peak_factor=peak,
        failover=failover,
        prefix_hit_rate=hit,
        draft_tokens=draft,
        acceptance_rate=acceptance,
    )


def _preset_targets(preset: UseCase) -> str:
    if preset.ttft_ms is None:
        return "no latency target"
    return (
        f"p{preset.percentile} first token ≤ {num(preset.ttft_ms, 0)} ms, p{preset.percentile} "
        f"inter-token latency ≤ {num(preset.itl_ms or 0, 0)} ms; {preset.source}"
    )


def _lengths(
    inputs: ServingInputs, preset: UseCase, named: bool, assumed: list[Assumption]
) -> tuple[int, int]:
    """Output and prompt tokens: the card's; else a named use case's typical lengths (within the
    context); else a few paragraphs out and the rest of the context in."""
    context = whole_number(inputs.context_tokens, "context_tokens") or DEFAULT_CONTEXT_TOKENS
    output = whole_number(inputs.output_tokens, "output_tokens")
    if output is None:
        typical = named and preset.output_tokens < context
        output = preset.output_tokens if typical else min(DEFAULT_OUTPUT_TOKENS, context - 1)
        why = f"{preset.label}'s typical answer" if typical else "a few paragraphs"
        assumed.append(Assumption("output_tokens", f"{whole(output)} ({why})"))
    prompt = whole_number(inputs.prompt_tokens, "prompt_tokens")
    if prompt is None:
        if named:
            prompt = max(1, min(preset.prompt_tokens, context - output))
            why = f"{preset.label}'s typical prompt, within the context"
        else:
            prompt = max(1, context - output)
            why = "the context less the output"
        assumed.append(Assumption("prompt_tokens", f"{whole(prompt)} ({why})"))
    return output, prompt


def _peak_factor(value: Number, preset: UseCase, assumed: list[Assumption]) -> Fraction:
    peak = positive(value, "peak_factor")
    if peak is None:
        assumed.append(
            Assumption(
                "peak_factor",
                f"{num(preset.peak_factor)} × the day's mean rate at the peak ({preset.label}; "
                f"{preset.source})",
            )
        )
        return preset.peak_factor
    if peak < 1 or peak > MAX_PEAK_FACTOR:
        raise CapacityInputError("peak_factor", f"must be from 1 to {MAX_PEAK_FACTOR}.")
    return peak


def _failover(value: str | None, preset: UseCase, assumed: list[Assumption]) -> int:
    if value is None:
        assumed.append(
            Assumption(
                "availability",
                "single (no failover replica: a failed replica drops its streams; "
                "N+1 availability adds one)",
            )
        )
        return 0
    if value not in AVAILABILITY:
        raise CapacityInputError("availability", f"use {' or '.join(AVAILABILITY)}.")
    return 1 if value == "n+1" else 0


def _percentile(value: int | None, preset: UseCase) -> int:
    if value is None:
        return preset.percentile
    if isinstance(value, bool) or value not in TARGET_PERCENTILES:
        raise CapacityInputError("percentile", "use 50, 95 or 99.")
    return value


def _speedups(traffic: Traffic) -> tuple[Fraction, int, Fraction]:
    hit = positive(traffic.prefix_hit_rate, "prefix_hit_rate", allow_zero=True) or Fraction(0)
    if hit > MAX_PREFIX_HIT_RATE:
        raise CapacityInputError("prefix_hit_rate", "is a share of the prompt: at most 0.99.")
    draft = whole_number(traffic.draft_tokens, "draft_tokens", allow_zero=True) or 0
    if draft > MAX_DRAFT_TOKENS:
        raise CapacityInputError("draft_tokens", f"must be at most {MAX_DRAFT_TOKENS}.")
    acceptance = positive(traffic.acceptance_rate, "acceptance_rate", allow_zero=True)
    if draft and acceptance is None:
        raise CapacityInputError("acceptance_rate", "give it with the draft tokens (0 to 0.99).")
    if acceptance is not None and acceptance > MAX_ACCEPTANCE_RATE:
        raise CapacityInputError("acceptance_rate", "is a probability: at most 0.99.")
    return hit, draft, acceptance or Fraction(0)


def required_decode(card: ServingCard, ttft_s: Fraction) -> Fraction | None:
    """The decode speed per stream the targets ask for: the floor, or what the latency leaves."""
    floor = positive(card.inputs.min_decode_tokens_per_s, "min_decode_tokens_per_s")
    latency = positive(card.inputs.latency_target_ms, "latency_target_ms")
    rates = [floor] if floor is not None else []
    if latency is not None:
        left = latency / 1000 - ttft_s
        rates.append(card.output_tokens / left if left > 0 else Fraction(10**9))
    return max(rates) if rates else None
