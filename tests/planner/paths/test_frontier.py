"""The throughput-latency frontier: no frontier point is beaten on both axes, the targets' pick
meets them with the most tokens per device, and batching trades speed per user for throughput."""

from __future__ import annotations

import itertools
from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import ServingInputs, default_catalogue
from planner.capacity.paths.frontier import (
    FrontierPoint,
    dominates,
    pareto_front,
    pick_operating_point,
    serving_frontier,
    tensor_parallel_degrees,
)

CAT = default_catalogue()


def chat_card(**extra: object) -> ServingInputs:
    values: dict[str, object] = {
        "model": CAT.model("llama-3.1-8b"),
        "weight_precision": "bf16",
        "context_tokens": 8192,
        "prompt_tokens": 7936,
        "output_tokens": 256,
        "users": 20,
        "ttft_target_ms": Decimal(2000),
        **extra,
    }
    return ServingInputs(**values)  # type: ignore[arg-type]


def _axes(p: FrontierPoint) -> tuple[float, float]:
    return (p.tokens_per_s_per_user, p.tokens_per_s_per_device)


def test_an_h100_trades_speed_per_user_for_tokens_per_gpu() -> None:
    frontier = serving_frontier(chat_card(), CAT.accelerator("h100-sxm"))
    assert {p.tensor_parallel for p in frontier.points} == {1, 2, 4, 8}
    front = frontier.frontier
    assert len(front) >= 3
    # Along the frontier, more tokens per GPU always costs speed per user.
    for faster, busier in itertools.pairwise(front):
        assert faster.tokens_per_s_per_user > busier.tokens_per_s_per_user
        assert faster.tokens_per_s_per_device < busier.tokens_per_s_per_device
    # One H100 holds 54 users of 8k context: batches past 32 do not run on one GPU.
    assert max(p.batch for p in frontier.points if p.tensor_parallel == 1) == 32
    assert any("batches above 32" in line for line in frontier.not_running)


def test_a_decode_speed_target_moves_the_operating_point_to_faster_streams() -> None:
    h100 = CAT.accelerator("h100-sxm")
    loose = serving_frontier(chat_card(), h100).operating_point
    tight = serving_frontier(
        chat_card(), h100, min_tokens_per_s_per_user=Fraction(100)
    ).operating_point
    assert loose is not None and tight is not None
    assert tight.tokens_per_s_per_user >= 100
    assert tight.tokens_per_s_per_device < loose.tokens_per_s_per_device


def test_no_point_meets_a_target_nothing_reaches() -> None:
    frontier = serving_frontier(
        chat_card(ttft_target_ms=None),
        CAT.accelerator("cpu-server"),
        min_tokens_per_s_per_user=Fraction(500),
    )
    assert frontier.points
    assert frontier.operating_point is None
    assert all("below 500" in p.reason for p in frontier.points)


def test_splits_follow_the_device_kind() -> None:
    assert tensor_parallel_degrees(CAT.accelerator("h100-sxm")) == (1, 2, 4, 8)
    assert tensor_parallel_degrees(CAT.accelerator("tpu-v5e")) == (1, 4, 8)
    assert tensor_parallel_degrees(CAT.accelerator("cpu-server")) == (1,)
    assert tensor_parallel_degrees(CAT.accelerator("h100-sxm:3g.40gb")) == (1,)


axis = st.floats(min_value=0.01, max_value=1e5, allow_nan=False, allow_infinity=False)


@given(st.lists(st.tuples(axis, axis), min_size=1, max_size=40))
def test_the_frontier_is_exactly_the_undominated_points(pairs: list[tuple[float, float]]) -> None:
    front = pareto_front(pairs, key=lambda p: p)
    assert front  # a non-empty set always has an undominated point
    for p in front:
        assert not any(dominates(q, p) for q in pairs)
    for p in pairs:
        if p not in front:
            assert any(dominates(q, p) for q in front)


@given(
    st.lists(
        st.tuples(axis, axis, st.booleans(), st.sampled_from((1, 2, 4, 8))), min_size=1, max_size=30
    )
)
def test_the_pick_meets_the_targets_with_the_most_tokens_per_device(
    rows: list[tuple[float, float, bool, int]],
) -> None:
    points = [
        FrontierPoint(n, i + 1, user, device, None, meets, "" if meets else "misses")
        for i, (user, device, meets, n) in enumerate(rows)
    ]
    pick = pick_operating_point(points)
    meeting = [p for p in points if p.meets]
    if not meeting:
        assert pick is None
        return
    assert pick is not None and pick.meets
    assert pick.tokens_per_s_per_device == max(p.tokens_per_s_per_device for p in meeting)


MODELS = ("llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "llama-3.1-70b")
DEVICES = ("h100-sxm", "l4", "a100-80gb", "t4", "tpu-v5e", "cpu-server", "l40s")


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    device=st.sampled_from(DEVICES),
    context=st.sampled_from((1024, 4096, 8192, 32768)),
    output=st.integers(min_value=16, max_value=1024),
    ttft=st.none() | st.integers(min_value=100, max_value=20_000),
    floor=st.none() | st.integers(min_value=1, max_value=200),
)
def test_every_workloads_frontier_is_undominated_and_its_pick_meets(
    model: str, device: str, context: int, output: int, ttft: int | None, floor: int | None
) -> None:
    spec = CAT.model(model)
    card = chat_card(
        model=spec,
        context_tokens=context,
        prompt_tokens=max(1, context - output),
        output_tokens=output,
        ttft_target_ms=Decimal(ttft) if ttft is not None else None,
    )
    frontier = serving_frontier(
        card,
        CAT.accelerator(device),
        min_tokens_per_s_per_user=Fraction(floor) if floor is not None else None,
    )
    points = frontier.points
    for p in frontier.frontier:
        assert not any(dominates(_axes(q), _axes(p)) for q in points)
    for p in points:
        if not p.on_frontier:
            assert any(dominates(_axes(q), _axes(p)) for q in points)
        # Within one split a bigger batch is slower per user and busier per device.
    for n in {p.tensor_parallel for p in points}:
        split = sorted((p for p in points if p.tensor_parallel == n), key=lambda p: p.batch)
        for small, big in itertools.pairwise(split):
            assert big.tokens_per_s_per_user <= small.tokens_per_s_per_user
            assert big.tokens_per_s_per_device >= small.tokens_per_s_per_device
    pick = frontier.operating_point
    if pick is not None:
        assert pick.meets
        if ttft is not None:
            assert pick.time_to_first_token_ms is not None and pick.time_to_first_token_ms <= ttft
        if floor is not None:
            assert pick.tokens_per_s_per_user >= floor
        assert pick.tokens_per_s_per_device == max(
            p.tokens_per_s_per_device for p in points if p.meets
        )
    else:
        assert not any(p.meets for p in points)
