"""Properties of the serving comparison over random workloads (hypothesis): more traffic never
costs less, a tighter target never recommends an option that misses it, the recommendation is
the cheapest option meeting every target, and p50 ≤ p95 ≤ p99."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import ServingInputs, default_catalogue
from planner.capacity.paths import PathComparison, Traffic, compare_serving
from planner.capacity.paths.presets import USE_CASES

FULL = default_catalogue()
# A few rows of every path keep each example fast; the properties do not depend on which.
CAT = replace(
    FULL,
    accelerators=tuple(
        a
        for a in FULL.accelerators
        if a.id in {"t4", "l4", "h100-sxm", "tpu-v5e", "cpu-server"} or a.kind == "managed_api"
    ),
)

workloads = st.fixed_dictionaries(
    {
        "model": st.sampled_from(["llama-3.1-8b", "phi-3-mini", "qwen3-30b-a3b"]),
        "prompt": st.integers(min_value=64, max_value=6000),
        "output": st.integers(min_value=16, max_value=1500),
        "users": st.integers(min_value=1, max_value=200),
        "use_case": st.sampled_from(sorted(USE_CASES)),
        "availability": st.sampled_from(["single", "n+1"]),
        "hit": st.sampled_from([Decimal(0), Decimal("0.5"), Decimal("0.9")]),
    }
)
volumes = st.integers(min_value=0, max_value=5_000_000)


def compare(w: dict[str, object], requests: int, ttft: Decimal | None = None) -> PathComparison:
    prompt, output = int(w["prompt"]), int(w["output"])  # type: ignore[call-overload]
    inputs = ServingInputs(
        model=FULL.model(str(w["model"])),
        weight_precision="bf16",
        context_tokens=prompt + output,
        prompt_tokens=prompt,
        output_tokens=output,
        users=int(w["users"]),  # type: ignore[call-overload]
        ttft_target_ms=ttft,
    )
    traffic = Traffic(
        requests_per_day=requests,
        use_case=str(w["use_case"]),
        availability=str(w["availability"]),
        prefix_hit_rate=w["hit"],  # type: ignore[arg-type]
    )
    return compare_serving(inputs, catalogue=CAT, traffic=traffic)


def _cost(result: PathComparison) -> Decimal | None:
    best = result.recommended
    return None if best is None or best.cost_usd is None else Decimal(str(float(best.cost_usd)))


@settings(max_examples=12, deadline=None)
@given(w=workloads, low=volumes, extra=st.integers(min_value=1, max_value=5_000_000))
def test_more_requests_a_day_never_cost_less_nor_need_fewer_devices(
    w: dict[str, object], low: int, extra: int
) -> None:
    quiet, busy = compare(w, low), compare(w, low + extra)
    if busy.recommended is not None:
        assert quiet.recommended is not None  # what carries more carries less
        assert quiet.recommended.cost_usd is not None and busy.recommended.cost_usd is not None
        assert busy.recommended.cost_usd >= quiet.recommended.cost_usd
        if busy.recommended.key == quiet.recommended.key:
            assert (busy.recommended.devices or 0) >= (quiet.recommended.devices or 0)
    for option in busy.options:
        before = next(o for o in quiet.options if o.key == option.key)
        if option.meets:
            assert before.meets
        if option.self_hosted and option.meets:
            assert (option.devices or 0) >= (before.devices or 0)
            assert option.cost_usd is not None and before.cost_usd is not None
            assert option.cost_usd >= before.cost_usd


@settings(max_examples=12, deadline=None)
@given(
    w=workloads,
    requests=volumes,
    loose=st.integers(min_value=200, max_value=20_000),
    tighter=st.floats(min_value=0.05, max_value=1.0),
)
def test_a_tighter_target_never_recommends_an_option_that_misses_it(
    w: dict[str, object], requests: int, loose: int, tighter: float
) -> None:
    tight = Decimal(max(1, round(loose * tighter)))
    before, after = compare(w, requests, Decimal(loose)), compare(w, requests, tight)
    best = after.recommended
    if best is not None and best.self_hosted:
        q = after.service_level["percentile"] if after.service_level else 95
        assert best.figures[f"ttft_ms_p{q}"] <= tight
    if best is not None:
        assert before.recommended is not None
        assert before.recommended.cost_usd is not None and best.cost_usd is not None
        assert best.cost_usd >= before.recommended.cost_usd


@settings(max_examples=12, deadline=None)
@given(w=workloads, requests=volumes)
def test_the_recommendation_is_the_cheapest_meeting_and_percentiles_are_ordered(
    w: dict[str, object], requests: int
) -> None:
    result = compare(w, requests)
    meeting = [o.cost_usd for o in result.options if o.meets and o.cost_usd is not None]
    if meeting:
        assert result.recommended is not None and result.recommended.cost_usd == min(meeting)
    else:
        assert result.recommended is None
    level = result.service_level
    assert level is not None
    for option in result.options:
        if option.meets and option.self_hosted:
            q = level["percentile"]
            if level["ttft_target_ms"] is not None:
                assert option.figures[f"ttft_ms_p{q}"] <= level["ttft_target_ms"]
            if level["itl_target_ms"] is not None:
                assert option.figures[f"itl_ms_p{q}"] <= level["itl_target_ms"]
        for metric in ("ttft", "itl"):
            p = [option.figures.get(f"{metric}_ms_p{q}") for q in (50, 95, 99)]
            if None not in p:
                assert p[0] <= p[1] <= p[2]
