"""Properties over random inputs: parsing raises nothing but the input error; a ratio is exactly
measured ÷ predicted; the comparison holds for any run the files could describe."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import ServingInputs, default_catalogue
from planner.capacity.measured import MeasuredInputError, measured_comparison, read_result
from tests.planner.measured.results import vllm_current

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6)
    ),
    max_leaves=30,
)
KEYS = [k for k in vllm_current() if not isinstance(vllm_current()[k], list)]


@settings(max_examples=400, deadline=None)
@given(value=json_values)
def test_any_json_is_read_or_refused_with_the_input_error(value: Any) -> None:
    try:
        read_result(json.dumps(value))
    except MeasuredInputError as err:
        assert "\n" not in str(err)


@settings(max_examples=300, deadline=None)
@given(
    changes=st.dictionaries(
        st.sampled_from(KEYS),
        st.none()
        | st.integers(min_value=-(10**6), max_value=10**14)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=5)
        | st.booleans(),
        max_size=4,
    )
)
def test_a_vllm_file_with_random_figures_is_read_or_refused(changes: dict[str, Any]) -> None:
    try:
        read_result(json.dumps(vllm_current(**changes)))
    except MeasuredInputError as err:
        assert str(err).startswith("result: ")


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_are_refused_with_the_input_error(data: bytes) -> None:
    try:
        read_result(data)
    except MeasuredInputError:
        pass


CAT = default_catalogue()
BASE = ServingInputs(accelerator=CAT.accelerator("h100-sxm"), model=CAT.model("llama-3.1-8b"))


@settings(max_examples=40, deadline=None)
@given(
    ttft=st.floats(min_value=1, max_value=60_000),
    itl=st.floats(min_value=1, max_value=2_000),
    rate=st.floats(min_value=1, max_value=50_000),
    concurrency=st.integers(min_value=1, max_value=64),
    prompt=st.integers(min_value=1, max_value=4096),
    output=st.integers(min_value=2, max_value=1024),
)
def test_each_ratio_is_exactly_measured_over_predicted(
    ttft: float, itl: float, rate: float, concurrency: int, prompt: int, output: int
) -> None:
    file = vllm_current(
        mean_ttft_ms=ttft,
        mean_itl_ms=itl,
        output_throughput=rate,
        max_concurrency=concurrency,
        total_input_tokens=64 * prompt,
        total_output_tokens=64 * output,
        output_lens=None,
        input_lens=None,
    )
    comparison = measured_comparison(read_result(json.dumps(file)), BASE)
    data = comparison.to_dict()
    p = data["predicted"]
    assert data["ratios"]["ttft_ms"] == ttft / p["ttft_ms"]["mean"]
    assert data["ratios"]["itl_ms"] == itl / p["itl_ms"]["mean"]
    assert data["ratios"]["output_tokens_per_s"] == rate / p["output_tokens_per_s"]
    assert data["largest_gap"]["metric"] == data["gaps"][0]["metric"]
    assert p["concurrency"] == concurrency
