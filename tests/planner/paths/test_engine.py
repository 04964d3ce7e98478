"""The path comparison's judgements, as a practitioner would make them, and its properties."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import (
    Accelerator,
    BatchInputs,
    CapacityInputError,
    ServingInputs,
    TrainingInputs,
    default_catalogue,
    estimate_batch,
)
from planner.capacity.paths import (
    LIMITERS,
    PathOption,
    Traffic,
    compare_batch,
    compare_serving,
    compare_training,
    recommend,
)
from planner.capacity.paths.plans import deploy_command

CAT = default_catalogue()


def chat_card(**extra: object) -> ServingInputs:
    """The course's live chat card: an 8B at bf16, 20 users at 8k, first token under 2 s."""
    values: dict[str, object] = {
        "model": CAT.model("llama-3.1-8b"),
        "weight_precision": "bf16",
        "context_tokens": 8192,
        "users": 20,
        "ttft_target_ms": Decimal(2000),
        **extra,
    }
    return ServingInputs(**values)  # type: ignore[arg-type]


def option(result: object, accelerator: str, count: int = 1) -> PathOption:
    options = result.options  # type: ignore[attr-defined]
    return next(o for o in options if o.accelerator == accelerator and o.count == count)


def test_chat_card_misses_one_l4_between_tokens_and_fits_one_h100() -> None:
    """One L4's KV cache holds 3 of the 20 users (replicas would carry the rest), but at 73 ms
    between tokens it misses the chat preset's p95 inter-token latency of 50 ms."""
    result = compare_serving(chat_card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    l4 = option(result, "l4")
    assert not l4.meets
    assert l4.limiter == "bandwidth"
    assert "inter-token latency" in l4.reason and "50 ms" in l4.reason
    h100 = option(result, "h100-sxm")
    assert h100.meets and h100.limiter is None
    assert h100.replicas == 1 and h100.devices == 1
    assert h100.cost_usd == Fraction("4.50") * 24


def test_a_cpu_misses_the_chat_card_and_says_why() -> None:
    result = compare_serving(chat_card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    cpus = [o for o in result.options if o.path == "cpu"]
    assert cpus
    for cpu in cpus:
        assert not cpu.meets
        assert cpu.limiter in LIMITERS
        assert cpu.reason


def test_at_1000_requests_a_day_the_managed_api_is_recommended() -> None:
    result = compare_serving(chat_card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    assert result.recommended is not None
    assert result.recommended.path == "managed_api"
    assert result.load_test is not None and result.load_test.tool == "guidellm"
    assert result.deploy_command is None


def test_with_the_api_excluded_a_gpu_is_recommended_with_its_vllm_command() -> None:
    result = compare_serving(
        chat_card(),
        catalogue=CAT,
        traffic=Traffic(requests_per_day=1000),
        exclude=["managed_api"],
    )
    assert all(o.path != "managed_api" for o in result.options)
    assert result.recommended is not None and result.recommended.path == "gpu"
    assert result.deploy_command is not None
    assert "vllm serve meta-llama/Llama-3.1-8B" in result.deploy_command
    assert "--max-model-len 8192" in result.deploy_command
    assert "--max-num-seqs 20" in result.deploy_command
    assert result.load_test is not None
    assert "--max-concurrency 20" in result.load_test.command
    assert any("2,000 ms" in c for c in result.load_test.pass_criteria)


def test_a_70b_at_bf16_fits_no_single_80_gb_gpu() -> None:
    card = chat_card(model=CAT.model("llama-3.1-70b"))
    result = compare_serving(card, catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    singles = [
        o
        for o in result.options
        if o.path == "gpu" and o.count == 1 and CAT.accelerator(o.accelerator).memory_gb == 80
    ]
    assert singles
    assert all(not o.meets and o.limiter == "weights" for o in singles)


def test_more_traffic_moves_the_recommendation_off_the_api_at_the_break_even() -> None:
    quiet = compare_serving(chat_card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    even = quiet.break_even_requests_per_day
    assert even is not None
    api = option(quiet, "managed-api")
    own = min(
        (o for o in quiet.options if o.self_hosted and o.meets and o.cost_usd is not None),
        key=lambda o: o.cost_usd or 0,
    )
    # At least the cheapest plan's cost over the API's price per request (replicas only add cost).
    assert even >= (own.cost_usd or 0) / (api.cost_per_request_usd or 1)
    busy = compare_serving(
        chat_card(), catalogue=CAT, traffic=Traffic(requests_per_day=int(even) + 1000)
    )
    assert busy.recommended is not None and busy.recommended.self_hosted


def test_tensor_parallel_splits_the_heads_do_not_allow_are_left_out() -> None:
    # Llama 3.1 8B has 32 attention and 8 KV heads: every split of 1-8 is allowed.
    result = compare_serving(chat_card(), catalogue=CAT)
    counts = {o.count for o in result.options if o.accelerator == "h100-sxm"}
    assert counts == {1, 2, 4, 8}
    assert result.requests_per_day == 10_000
    fields = [a.field for a in result.assumptions]
    assert "requests_per_day" in fields
    assert "kv_precision" in fields  # the card's own gap, as the calculator lists it
    assert "gpu_memory_gb" not in fields and "max_num_seqs" not in fields  # set per path


def test_unknown_excluded_path_names_the_field() -> None:
    with pytest.raises(CapacityInputError) as err:
        compare_serving(chat_card(), catalogue=CAT, exclude=["quantum"])
    assert err.value.field == "exclude"


def nightly_embeddings(**extra: object) -> BatchInputs:
    values: dict[str, object] = {
        "items": 50_000,
        "window_hours": Decimal(2),
        "retry_margin": Decimal("0.2"),
        "tokens_per_item": 512,
        "output_tokens_per_item": 0,
        "params_b": Decimal("0.335"),
        **extra,
    }
    return BatchInputs(**values)  # type: ignore[arg-type]


def test_the_nightly_embedding_job_fits_its_window_on_a_cpu_server() -> None:
    result = compare_batch(nightly_embeddings(), catalogue=CAT)
    cpu = next(o for o in result.options if o.path == "cpu")
    assert cpu.meets
    assert cpu.count == 1
    assert cpu.figures["hours_needed"] < 2


def test_batch_rate_comes_from_the_hardware_without_a_measurement() -> None:
    cpu = CAT.accelerator("cpu-server")
    est = estimate_batch(nightly_embeddings(accelerator=cpu))
    assert est.items_per_s_per_worker is not None and est.items_per_s_per_worker > 0
    assert "items_per_s" not in est.missing_assumptions
    assert any("from the hardware" in f.label for f in est.formulas)
    assert est.fits_window is True
    larger = estimate_batch(nightly_embeddings(accelerator=cpu, params_b=Decimal("3.35")))
    assert larger.items_per_s_per_worker is not None
    assert larger.items_per_s_per_worker == pytest.approx(est.items_per_s_per_worker / 10, rel=1e-3)
    measured = estimate_batch(nightly_embeddings(accelerator=cpu, items_per_s=Decimal(3)))
    assert measured.items_per_s_per_worker == 3


def test_a_fixed_pool_too_small_misses_the_window() -> None:
    result = compare_batch(
        nightly_embeddings(workers=1, params_b=Decimal(8), tokens_per_item=4096),
        catalogue=CAT,
    )
    cpu = next(o for o in result.options if o.path == "cpu")
    assert not cpu.meets and cpu.limiter == "window"
    assert result.recommended is not None and result.recommended.meets


def test_fine_tuning_is_priced_per_run_and_rejects_what_does_not_fit() -> None:
    card = TrainingInputs(
        model=CAT.model("mistral-7b"),
        method="full",
        batch_size=8,
        seq_len=2048,
        checkpointing=True,
        steps=1000,
    )
    result = compare_training(card, catalogue=CAT)
    l4 = option(result, "l4")
    assert not l4.meets and l4.limiter == "training_memory"
    assert result.recommended is not None and result.recommended.cost_usd is not None
    assert all(o.path != "managed_api" for o in result.options)


# --- properties -------------------------------------------------------------------------------

costs = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("10000"), places=2)
options_strategy = st.lists(st.tuples(st.booleans(), costs), min_size=1, max_size=12).map(
    lambda rows: [
        PathOption(
            path="gpu",
            accelerator=f"gpu-{i}",
            name=f"GPU {i}",
            count=1,
            meets=meets,
            limiter=None if meets else "bandwidth",
            reason="",
            cost_usd=Fraction(cost),
            stack="",
        )
        for i, (meets, cost) in enumerate(rows)
    ]
)


@settings(max_examples=300, deadline=None)
@given(options=options_strategy, cost=costs)
def test_the_recommendation_is_the_cheapest_meeting_and_a_cheaper_one_displaces_it(
    options: list[PathOption], cost: Decimal
) -> None:
    best, _ = recommend(options)
    meeting = [o.cost_usd for o in options if o.meets]
    assert (best is None) == (not meeting)
    if best is not None:
        assert best.cost_usd == min(c for c in meeting if c is not None)
    cheaper = replace(
        options[0], accelerator="new", meets=True, limiter=None, cost_usd=Fraction(cost)
    )
    after, _ = recommend([*options, cheaper])
    assert after is not None and after.cost_usd is not None
    assert after.cost_usd <= cheaper.cost_usd  # type: ignore[operator]
    if best is not None and best.cost_usd is not None:
        assert after.cost_usd <= best.cost_usd


@settings(max_examples=25, deadline=None)
@given(
    price=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("20"), places=2),
    memory=st.integers(min_value=16, max_value=400),
    bandwidth=st.integers(min_value=100, max_value=10_000),
    tflops=st.integers(min_value=20, max_value=5000),
)
def test_adding_a_gpu_to_the_catalogue_never_leaves_a_dearer_recommendation(
    price: Decimal, memory: int, bandwidth: int, tflops: int
) -> None:
    card = chat_card()
    before = compare_serving(card, catalogue=CAT, traffic=Traffic(requests_per_day=50_000))
    new = Accelerator(
        id="new-gpu",
        name="New GPU",
        kind="gpu",
        memory_gb=memory,
        memory_bandwidth_gb_s=bandwidth,
        dense_bf16_tflops=tflops,
        price_per_hour_usd=float(price),
        source="test",
        interconnect="nvlink",
        interconnect_gb_s=450,
    )
    bigger = replace(CAT, accelerators=(*CAT.accelerators, new))
    after = compare_serving(card, catalogue=bigger, traffic=Traffic(requests_per_day=50_000))
    assert before.recommended is not None and after.recommended is not None
    assert after.recommended.cost_usd is not None and before.recommended.cost_usd is not None
    assert after.recommended.cost_usd <= before.recommended.cost_usd
    added = [o for o in after.options if o.accelerator == "new-gpu" and o.meets]
    for o in added:
        assert o.cost_usd is not None
        assert after.recommended.cost_usd <= o.cost_usd
    meeting = [o.cost_usd for o in after.options if o.meets and o.cost_usd is not None]
    assert after.recommended.cost_usd == min(meeting)


def test_deploy_commands_follow_the_plan_split_and_the_hardware() -> None:
    result = compare_serving(chat_card(kv_precision="fp8"), catalogue=CAT)
    t4 = option(result, "t4", 4)
    command = deploy_command(t4, "meta-llama/Llama-3.1-8B")
    assert command is not None
    assert "--tensor-parallel-size 4" in command
    assert "--dtype float16" in command  # Turing has no bf16
    assert "--kv-cache-dtype fp8" in command
    h100 = deploy_command(option(result, "h100-sxm"), "m")
    assert h100 is not None and "--dtype" not in h100 and "--tensor-parallel-size" not in h100
    cpu = next(o for o in result.options if o.path == "cpu")
    assert deploy_command(cpu, "m") is None
