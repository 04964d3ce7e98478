"""The frontier the comparison page draws: the device the comparison would run, swept across
batches and splits against the card's targets (planner.capacity.paths.frontier)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

from planner.calculator.runs import engine_inputs
from planner.capacity import CapacityInputError, ServingInputs, default_catalogue
from planner.capacity.paths import PathComparison, PathOption, Traffic
from planner.capacity.paths.card import serving_card
from planner.capacity.paths.frontier import Frontier, serving_frontier
from planner.paths.forms import TRAFFIC_FIELDS, ComparisonForms


def frontier_option(comparison: PathComparison) -> PathOption | None:
    """The device the frontier is drawn for: the recommendation, or the cheapest self-hosted
    option that meets when the managed API is recommended."""
    best = comparison.recommended
    if best is not None and best.self_hosted:
        return best
    return next((o for o in comparison.meeting if o.self_hosted), None)


def _decimal(value: Fraction | None) -> Decimal | None:
    return None if value is None else Decimal(value.numerator) / Decimal(value.denominator)


def comparison_frontier(
    forms: ComparisonForms, comparison: PathComparison
) -> tuple[Frontier, PathOption] | None:
    """The frontier of the device the comparison would run, against the card's targets (its own,
    else its use case's): the first token, and the inter-token latency as tokens/s per user."""
    option = frontier_option(comparison)
    if comparison.estimate != "serving" or option is None:
        return None
    given = forms.traffic.cleaned_data
    traffic = Traffic(**{n: None if given.get(n) == "" else given.get(n) for n in TRAFFIC_FIELDS})
    try:
        inputs = ServingInputs(**engine_inputs(ServingInputs, forms.workload.cleaned_data))
        card = serving_card(inputs, traffic)
        accelerator = default_catalogue().accelerator(option.accelerator)
        itl = card.itl_target_ms
        frontier = serving_frontier(
            replace(card.inputs, ttft_target_ms=_decimal(card.ttft_target_ms)),
            accelerator,
            min_tokens_per_s_per_user=Fraction(1000) / itl if itl else None,
        )
    except CapacityInputError:
        return None
    return frontier, option


def splits_words(frontier: Frontier) -> str:
    degrees = sorted({p.tensor_parallel for p in frontier.points})
    if len(degrees) <= 1:
        return f"{degrees[0] if degrees else 1} device"
    return f"{', '.join(map(str, degrees[:-1]))} or {degrees[-1]} devices"
