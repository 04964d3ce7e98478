"""Advice that holds beyond the course's cards: the day's volume sized in replicas, service-level
presets checked at a percentile, availability, prefix caching and speculative decoding."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from planner.capacity import ServingInputs, default_catalogue, estimate_serving
from planner.capacity.paths import Traffic, compare_serving
from planner.capacity.paths.presets import USE_CASES
from planner.capacity.paths.queueing import (
    chunk_share,
    first_token,
    speculative_speedup,
    token_gaps,
)

CAT = default_catalogue()


def card(**extra: object) -> ServingInputs:
    values: dict[str, object] = {
        "model": CAT.model("llama-3.1-8b"),
        "weight_precision": "bf16",
        "context_tokens": 4096,
        "prompt_tokens": 1000,
        "output_tokens": 300,
        **extra,
    }
    return ServingInputs(**values)  # type: ignore[arg-type]


def test_no_cpu_serves_a_70b_chat_card_at_50000_requests_a_day() -> None:
    """The issue's reproduction: it recommended one CPU server at $38.40 a day whose first token
    came after three minutes."""
    seventy = ServingInputs(
        model=CAT.model("llama-3.1-70b"), weight_precision="bf16", users=10, context_tokens=8000
    )
    result = compare_serving(
        seventy, catalogue=CAT, traffic=Traffic(requests_per_day=50_000), exclude=["managed_api"]
    )
    assert result.recommended is not None and result.recommended.path != "cpu"
    cpus = [o for o in result.options if o.path == "cpu"]
    assert cpus and all(not o.meets for o in cpus)
    level = result.service_level
    assert level is not None and (level["use_case"], level["percentile"]) == ("chat", 95)
    assert "use_case" in [a.field for a in result.assumptions]
    best = result.recommended
    assert best.figures["ttft_ms_p95"] <= 500 and best.figures["itl_ms_p95"] <= 50


def test_two_million_chat_requests_a_day_need_more_than_one_h100() -> None:
    """1,000 in / 300 out: 23,148 prompt tokens/s on average, twice that at the chat peak."""
    result = compare_serving(
        card(), catalogue=CAT, traffic=Traffic(requests_per_day=2_000_000, use_case="chat")
    )
    level = result.service_level
    assert level is not None
    assert level["required_prefill_tokens_per_s"] == pytest.approx(2_000_000 / 86_400 * 2 * 1000)
    h100 = next(o for o in result.options if o.accelerator == "h100-sxm" and o.count == 1)
    assert h100.meets and h100.replicas > 1 and h100.devices == h100.replicas
    assert h100.cost_usd == Decimal("4.50") * 24 * h100.replicas
    assert h100.capacity_requests_per_day is not None
    assert h100.capacity_requests_per_day >= 2_000_000
    assert result.recommended is not None and (result.recommended.devices or 0) >= 1
    quiet = compare_serving(
        card(), catalogue=CAT, traffic=Traffic(requests_per_day=10_000, use_case="chat")
    )
    one = next(o for o in quiet.options if o.accelerator == "h100-sxm" and o.count == 1)
    assert one.replicas == 1 and one.meets


def test_a_volume_no_replica_count_carries_misses_on_throughput() -> None:
    """One CPU server cannot carry a billion requests a day at any count the planner allows."""
    result = compare_serving(
        card(),
        catalogue=CAT,
        traffic=Traffic(requests_per_day=10**9, use_case="batch"),
    )
    cpu = next(o for o in result.options if o.accelerator == "cpu-server")
    assert not cpu.meets and cpu.limiter == "throughput"


def test_a_card_without_targets_gets_the_chat_preset_and_its_own_target_wins() -> None:
    bare = compare_serving(card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    level = bare.service_level
    assert level is not None
    assert (level["ttft_target_ms"], level["itl_target_ms"], level["percentile"]) == (500, 50, 95)
    assumed = {a.field: a.assumed for a in bare.assumptions}
    assert assumed["use_case"].startswith("chat") and "llm-d" in assumed["use_case"]
    assert "peak_factor" in assumed and "availability" in assumed
    own = compare_serving(
        card(ttft_target_ms=Decimal(3000)),
        catalogue=CAT,
        traffic=Traffic(requests_per_day=1000, use_case="code_completion"),
    )
    level = own.service_level
    assert level is not None
    assert (level["ttft_target_ms"], level["itl_target_ms"]) == (3000, 35)
    assert "use_case" not in [a.field for a in own.assumptions]


def test_each_preset_names_its_source_and_agents_are_held_at_p99() -> None:
    assert {"chat", "code_completion", "rag", "long_document", "agent", "batch"} <= set(USE_CASES)
    for preset in USE_CASES.values():
        assert preset.source
    assert USE_CASES["agent"].percentile == 99
    agent = compare_serving(
        card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000, use_case="agent")
    )
    assert agent.service_level is not None and agent.service_level["percentile"] == 99
    best = agent.recommended
    if best is not None and best.self_hosted:
        assert best.figures["ttft_ms_p99"] <= 450


def test_a_stricter_percentile_is_checked_where_the_card_names_it() -> None:
    at95 = compare_serving(card(), catalogue=CAT, traffic=Traffic(requests_per_day=500_000))
    at99 = compare_serving(
        card(), catalogue=CAT, traffic=Traffic(requests_per_day=500_000, percentile=99)
    )
    assert at99.service_level is not None and at99.service_level["percentile"] == 99
    for option in at99.options:
        if option.meets and option.self_hosted:
            assert option.figures["ttft_ms_p99"] <= 500 and option.figures["itl_ms_p99"] <= 50
            same = next(o for o in at95.options if o.key == option.key)
            assert (option.devices or 0) >= (same.devices or 0)


def test_a_named_use_case_brings_its_typical_lengths() -> None:
    bare = ServingInputs(model=CAT.model("llama-3.1-8b"), weight_precision="bf16", users=4)
    rag = compare_serving(bare, catalogue=CAT, traffic=Traffic(use_case="rag"))
    assert rag.service_level is not None
    assert (rag.service_level["output_tokens"], rag.service_level["prompt_tokens"]) == (
        512,
        4096 - 512,
    )  # the typical 4,096-token prompt, within the default 4,096-token context


def test_n_plus_1_adds_a_failover_replica_to_every_plan_and_the_break_even() -> None:
    single = compare_serving(
        card(), catalogue=CAT, traffic=Traffic(requests_per_day=20_000, availability="single")
    )
    spare = compare_serving(
        card(), catalogue=CAT, traffic=Traffic(requests_per_day=20_000, availability="n+1")
    )
    for one in single.options:
        if not one.self_hosted or not one.meets:
            continue
        two = next(o for o in spare.options if o.key == one.key)
        assert two.failover == 1
        assert two.devices == (one.devices or 0) + one.count
        assert two.cost_usd is not None and one.cost_usd is not None
        assert two.cost_usd > one.cost_usd
    assert single.break_even_requests_per_day is not None
    assert spare.break_even_requests_per_day is not None
    assert spare.break_even_requests_per_day > single.break_even_requests_per_day


def test_prefix_hits_cut_the_first_token_and_the_load_test_carries_them() -> None:
    base = compare_serving(
        card(prompt_tokens=3000),
        catalogue=CAT,
        traffic=Traffic(requests_per_day=100_000),
        exclude=["managed_api"],
    )
    cached = compare_serving(
        card(prompt_tokens=3000),
        catalogue=CAT,
        traffic=Traffic(requests_per_day=100_000, prefix_hit_rate=Decimal("0.8")),
        exclude=["managed_api"],
    )
    h100 = next(o for o in base.options if o.key == "h100-sxmx1")
    hit = next(o for o in cached.options if o.key == "h100-sxmx1")
    assert hit.figures["ttft_ms_p95"] < h100.figures["ttft_ms_p95"]
    assert cached.service_level is not None and cached.service_level["prefill_tokens"] == 600
    assert cached.load_test is not None
    assert "--random-prefix-len 2400 --random-input-len 600" in cached.load_test.command
    assert "--request-rate" in cached.load_test.command
    assert cached.deploy_command is not None and "--enable-prefix-caching" in cached.deploy_command


def test_speculative_decoding_speeds_decode_and_the_plan_carries_it() -> None:
    tokens, speedup = speculative_speedup(4, Decimal("0.7"))
    assert tokens == pytest.approx((1 - 0.7**5) / (1 - 0.7))  # Leviathan et al. eq. 1: 2.77
    assert speedup == pytest.approx(tokens / 1.2)
    assert speculative_speedup(0, 0) == (1.0, 1.0)
    plain = compare_serving(card(), catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    drafted = compare_serving(
        card(),
        catalogue=CAT,
        traffic=Traffic(requests_per_day=1000, draft_tokens=4, acceptance_rate=Decimal("0.7")),
        exclude=["managed_api"],
    )
    before = next(o for o in plain.options if o.key == "l4x1")
    after = next(o for o in drafted.options if o.key == "l4x1")
    assert after.figures["itl_ms_p95"] < before.figures["itl_ms_p95"]
    assert after.meets and not before.meets  # 73 ms between tokens become under 50
    assert drafted.deploy_command is not None
    assert '"num_speculative_tokens": 4' in drafted.deploy_command
    assert drafted.load_test is not None
    assert any("acceptance rate ≥ 0.7" in c for c in drafted.load_test.pass_criteria)


def test_the_comparison_and_the_estimate_count_the_same_users() -> None:
    """The chat card on one L4: 3 users' KV caches in both (it was 4 against 3)."""
    chat = ServingInputs(
        model=CAT.model("llama-3.1-8b"),
        weight_precision="bf16",
        users=20,
        context_tokens=8192,
        ttft_target_ms=Decimal(2000),
    )
    result = compare_serving(chat, catalogue=CAT, traffic=Traffic(requests_per_day=1000))
    l4 = next(o for o in result.options if o.key == "l4x1")
    alone = estimate_serving(replace(chat, accelerator=CAT.accelerator("l4")))
    assert l4.figures["max_active_users"] == alone.max_active_users == 3


def test_the_queueing_model_at_its_edges() -> None:
    idle = first_token(0.008, 0.2, 0.0)
    assert idle.p50 == idle.p95 == idle.p99 == idle.mean == pytest.approx(0.208)
    busy = first_token(0.008, 0.2, 0.5)
    assert busy.p50 == pytest.approx(0.208)  # half the prompts find the replica free
    assert busy.p50 < busy.p95 < busy.p99
    assert busy.mean == pytest.approx(0.208 + 0.5 * 0.2 / (2 * 0.5))  # Pollaczek-Khinchine
    share, chunk = chunk_share(5.0, 4000, 0.1, 16, 0.02)
    assert chunk == pytest.approx(0.05)  # 4,000 tokens in two 2,032-token chunks
    gaps = token_gaps(0.02, share, chunk)
    assert gaps.p50 == pytest.approx(0.02) and gaps.p99 == pytest.approx(0.07)
