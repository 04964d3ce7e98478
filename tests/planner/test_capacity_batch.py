"""Batch jobs: the source's nightly embedding of 50,000 chunks in two hours."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from planner.capacity import (
    BatchInputs,
    CapacityInputError,
    WarningCode,
    default_catalogue,
    estimate_batch,
)
from planner.capacity.speed_model import forward_tokens_per_s


def test_nightly_embeddings_with_retry_margin() -> None:
    """50,000 × 1.2 ÷ 7,200 s = 8.333 items/s; at 5/s per worker, 2 workers, 1.667 h, $2.67 at $0.80/h."""
    est = estimate_batch(
        BatchInputs(
            items=50_000, window_hours=2, items_per_s=5, retry_margin=0.2, price_per_hour=0.8
        )
    )
    assert est.work_items == 60_000
    assert est.required_items_per_s == pytest.approx(8.3333, abs=1e-4)
    assert est.workers_needed == 2
    assert est.hours_needed == pytest.approx(60_000 / 10 / 3600, abs=1e-4)
    assert est.fits_window is True
    assert est.cost_usd == 2.67
    d = est.to_dict()
    assert {"required_items_per_s", "workers_needed", "hours_needed", "fits_window"} <= set(d)


def test_exact_division_needs_no_extra_worker() -> None:
    """7,200 items in 1 h at 1 item/s per worker is exactly 2 workers, not 3 (no float ceil drift)."""
    est = estimate_batch(BatchInputs(items=7200, window_hours=1, items_per_s=1, retry_margin=0))
    assert est.workers_needed == 2
    # 630 × 1.2 items in 0.1 h = 2.1 items/s; ÷ 0.7 per worker = 3 exactly (floats say 4).
    assert math.ceil(630 * (1 + 0.2) / (0.1 * 3600) / 0.7) == 4
    est = estimate_batch(
        BatchInputs(items=630, window_hours=0.1, items_per_s=0.7, retry_margin=0.2)
    )
    assert est.workers_needed == 3


def test_fixed_pool_too_small_misses_the_window() -> None:
    est = estimate_batch(
        BatchInputs(items=50_000, window_hours=2, items_per_s=5, retry_margin=0.2, workers=1)
    )
    assert est.fits_window is False
    assert [w.code for w in est.warnings] == [WarningCode.WINDOW_TOO_SHORT]
    assert est.hours_needed == pytest.approx(60_000 / 5 / 3600, abs=1e-4)


def test_missing_throughput_and_margin_are_listed() -> None:
    est = estimate_batch(BatchInputs(items=50_000, window_hours=2))
    assert set(est.missing_assumptions) == {"items_per_s", "retry_margin"}
    assert est.workers_needed is None and est.fits_window is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"items": 0, "window_hours": 2}, "items"),
        ({"items": 10, "window_hours": 0}, "window_hours"),
        ({"items": 10, "window_hours": 1, "items_per_s": -1}, "items_per_s"),
        ({"items": 10, "window_hours": 1, "retry_margin": -0.1}, "retry_margin"),
    ],
)
def test_bad_batch_inputs(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(CapacityInputError) as err:
        estimate_batch(BatchInputs(**kwargs))  # type: ignore[arg-type]
    assert err.value.field == field


def test_managed_api_row_prices_the_same_job_per_million_tokens() -> None:
    """The catalogue's managed-API row: 60,000 items (20 % retries) × 500 tokens to embed at the
    embedding price, $0.02 per million = $0.60, cheaper than own workers ($1.33); a chat job with
    100 output tokens each pays $0.20 per million in and out: $7.20."""
    api = default_catalogue().managed_api()
    assert api is not None and api.kind == "managed_api"
    assert api.price_per_million_input_tokens_usd == 0.20
    inputs = BatchInputs(
        items=50_000,
        window_hours=2,
        items_per_s=10,
        retry_margin=0.2,
        price_per_hour=0.8,
        tokens_per_item=500,
        api=api,
    )
    est = estimate_batch(inputs)
    assert est.api_cost_usd == 0.60
    assert est.cost_usd == 1.33
    assert "embedding price" in next(
        f.formula for f in est.formulas if f.label == "Managed API cost"
    )
    assert est.to_dict()["api"] == "managed-api"
    assert "output_tokens_per_item" in est.missing_assumptions
    assert "Cost comparison" in [f.label for f in est.formulas]
    with_output = estimate_batch(replace(inputs, output_tokens_per_item=100))
    assert with_output.api_cost_usd == 7.20
    assert "output_tokens_per_item" not in with_output.missing_assumptions


def test_no_api_comparison_without_tokens_or_a_priced_row() -> None:
    est = estimate_batch(
        BatchInputs(items=1000, window_hours=1, api=default_catalogue().managed_api())
    )
    assert est.api_cost_usd is None and est.to_dict()["api"] is None
    unpriced = estimate_batch(BatchInputs(items=1000, window_hours=1, tokens_per_item=200))
    assert unpriced.api_cost_usd is None
    assert "api" in unpriced.missing_assumptions
    with pytest.raises(CapacityInputError) as err:
        estimate_batch(BatchInputs(items=1000, window_hours=1, tokens_per_item=0))
    assert err.value.field == "tokens_per_item"


def test_hardware_rate_is_forward_tokens_per_second_over_tokens_per_item() -> None:
    """Without a measured rate: achieved FLOP/s ÷ (2 × parameters) ÷ tokens per item; a T4 runs
    a 110M encoder on 512-token chunks about as fast as its FLOPS divided over the work says."""
    cat = default_catalogue()
    t4 = cat.accelerator("t4")
    est = estimate_batch(
        BatchInputs(
            items=50_000,
            window_hours=2,
            tokens_per_item=512,
            output_tokens_per_item=0,
            params_b=0.11,
            accelerator=t4,
        )
    )
    expected = float(forward_tokens_per_s(t4, 0.11e9, "bf16")) / 512
    assert est.items_per_s_per_worker == pytest.approx(expected, rel=1e-3)
    assert est.price_per_hour_usd == t4.price_per_hour_usd  # the worker's catalogue price
    assert est.cost_usd is not None
    assert est.to_dict()["accelerator"] == "t4"
    # Twice the tokens per item: half the items per second.
    longer = estimate_batch(
        replace(
            BatchInputs(items=50_000, window_hours=2, params_b=0.11, accelerator=t4),
            tokens_per_item=1024,
        )
    )
    assert longer.items_per_s_per_worker == pytest.approx(expected / 2, rel=1e-3)


def test_no_tokens_per_item_leaves_the_rate_to_measure() -> None:
    est = estimate_batch(
        BatchInputs(
            items=10,
            window_hours=1,
            params_b=0.11,
            accelerator=default_catalogue().accelerator("t4"),
        )
    )
    assert est.items_per_s_per_worker is None
    assert "items_per_s" in est.missing_assumptions
