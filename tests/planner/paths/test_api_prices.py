"""The managed API is priced on the row for the card's model: a 70B card pays the 70B class's
price per token, a bigger model never pays less, and a model no row prices has no API cost."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import ModelSpec, ServingInputs, default_catalogue
from planner.capacity.api_prices import api_price_for
from planner.capacity.paths import PathComparison, PathOption, Traffic, compare_serving
from tests.planner.paths.test_properties import workloads

FULL = default_catalogue()
API_ROWS = tuple(a for a in FULL.accelerators if a.kind == "managed_api")
# Every API row and one GPU keep each example fast; the API option does not depend on the GPUs.
CAT = replace(FULL, accelerators=(*API_ROWS, FULL.accelerator("l4")))


def chat_card(model: ModelSpec) -> ServingInputs:
    """Lesson 8's chat card (planner.cards.services.EXAMPLE_CARDS) with another model."""
    return ServingInputs(
        model=model,
        weight_precision="bf16",
        kv_precision="bf16",
        users=20,
        context_tokens=8192,
        prompt_tokens=2000,
        output_tokens=300,
        ttft_target_ms=Decimal(2000),
        max_num_seqs=20,
    )


def api_of(result: PathComparison) -> PathOption:
    return next(o for o in result.options if o.path == "managed_api")


def test_the_70b_chat_card_at_50000_requests_a_day_is_priced_from_the_70b_row() -> None:
    seventy = FULL.model("llama-3.1-70b")
    result = compare_serving(
        chat_card(seventy), catalogue=FULL, traffic=Traffic(requests_per_day=50_000)
    )
    api = api_of(result)
    row = FULL.accelerator("managed-api-80b")
    assert row.api_family == "dense" and 16 < seventy.params_b <= (row.api_max_params_b or 0)
    price_in = Fraction(str(row.price_per_million_input_tokens_usd))
    price_out = Fraction(str(row.price_per_million_output_tokens_usd))
    per_request = (2000 * price_in + 300 * price_out) / 10**6
    assert api.accelerator == row.id and api.name == row.name
    assert api.cost_per_request_usd == per_request
    assert api.cost_usd == 50_000 * per_request == Fraction("103.5")  # $0.90 a million tokens
    assert any(row.name in note and "Llama 3.1 70B" in note for note in api.notes)
    assert any("fireworks.ai/pricing" in note for note in api.notes)  # the price names its source
    # The 8B row's price would have made the same day $23.00: a fifth of it.
    small = FULL.accelerator("managed-api")
    assert 50_000 * 2300 * Fraction(str(small.price_per_million_input_tokens_usd)) / 10**6 == 23
    # The break-even divides the cheapest meeting self-hosted plan by the same price per request.
    assert result.break_even_requests_per_day is not None
    assert result.recommended is not None and result.recommended.path == "managed_api"


def test_a_named_model_is_priced_on_its_own_row_before_its_size_class() -> None:
    for model, row in (
        ("deepseek-v3", "managed-api-deepseek-v3"),
        ("mixtral-8x7b", "managed-api-moe-56b"),
    ):
        assert api_price_for(FULL.accelerators, FULL.model(model)).row == FULL.accelerator(row)


def test_a_model_larger_than_every_class_has_no_api_price_and_says_why() -> None:
    huge = replace(FULL.model("llama-3.1-70b"), id="huge", name="Huge", params_b=1000.0)
    api = api_of(compare_serving(chat_card(huge), catalogue=CAT, traffic=Traffic(1000)))
    assert not api.meets and api.cost_usd is None and api.cost_per_request_usd is None
    assert "dense model of 1,000 B parameters" in api.reason and "405B class" in api.reason


sizes = st.fractions(min_value=Fraction(1, 2), max_value=1200, max_denominator=100)


@settings(max_examples=25, deadline=None)
@given(w=workloads, family=st.sampled_from(["dense", "moe"]), small=sizes, grow=sizes)
def test_the_api_never_costs_less_a_request_for_a_bigger_model(
    w: dict[str, object], family: str, small: Fraction, grow: Fraction
) -> None:
    """Same tokens, same family, more parameters: the API's price per request never falls, and a
    model too big for any class stays too big as it grows. (A row naming a model prices that model
    alone, so the models here are unnamed.)"""
    base = FULL.model("llama-3.1-8b" if family == "dense" else "qwen3-30b-a3b")
    prompt, output = int(w["prompt"]), int(w["output"])  # type: ignore[call-overload]

    def api_for(params: Fraction) -> PathOption:
        model = replace(base, id="unnamed", name="An unnamed model", params_b=float(params))
        inputs = ServingInputs(
            model=model,
            weight_precision="bf16",
            context_tokens=prompt + output,
            prompt_tokens=prompt,
            output_tokens=output,
            users=int(w["users"]),  # type: ignore[call-overload]
        )
        traffic = Traffic(requests_per_day=1000, use_case=str(w["use_case"]))
        return api_of(compare_serving(inputs, catalogue=CAT, traffic=traffic))

    lesser, bigger = api_for(small), api_for(small + grow)
    if lesser.cost_per_request_usd is None:
        assert bigger.cost_per_request_usd is None
    elif bigger.cost_per_request_usd is not None:
        assert bigger.cost_per_request_usd >= lesser.cost_per_request_usd


def test_a_catalogue_with_one_unclassed_api_row_prices_every_model_on_it() -> None:
    one = replace(FULL.accelerator("managed-api"), api_family="", api_max_params_b=None)
    price = api_price_for((one,), FULL.model("llama-3.1-70b"))
    assert price.row == one and "one price for every model" in price.reason
