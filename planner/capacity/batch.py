"""Batch jobs (nightly embeddings and the like): rate, workers, hours and cost against a window.

The arithmetic is Little's-law simple and exact:
- work = items × (1 + retry margin): the margin reserves capacity for failed batches that are
  retried (the source: "retryable on cheaper capacity").
- required rate = work ÷ (window hours × 3600 s).
- workers needed = ⌈required rate ÷ items per second per worker⌉.
- hours = work ÷ (workers × items per second per worker) ÷ 3600; cost = hours × workers × price.
- without a measured rate, one worker's rate comes from the hardware: a forward pass costs about
  2 x parameters FLOPs per token (Kaplan et al. 2020), so items per second = device TFLOPS x MFU
  ÷ (2 x parameters) ÷ tokens per item, at the speed model's achieved MFU
  (planner.capacity.speed_model); a measured rate wins.
- on a managed API priced per million tokens (the catalogue's managed-API row), the same work costs
  work × (input tokens × input price + output tokens × output price) ÷ 10^6: the provider does the
  capacity planning, so there are no workers or window to size, only a bill to compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, ClassVar

from planner.capacity.batch_rate import hardware_items_per_s
from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.formatting import money, num, whole
from planner.capacity.results import (
    Assumption,
    EstimateNotes,
    EstimateWarning,
    FormulaLine,
    Severity,
    Trail,
    WarningCode,
)
from planner.capacity.units import SECONDS_PER_HOUR, CapacityInputError, as_float, exact
from planner.capacity.validation import positive, whole_number

DEFAULT_RETRY_MARGIN = Fraction(0)
# A batch window shorter than a minute is an interactive request, not a batch job (and a window
# that rounds to 0 h in the result would divide by zero downstream): a minute, 0.0167 h, is the
# floor, the same bound the calculator's form checks (planner.calculator.forms.BatchForm).
MIN_WINDOW_HOURS = Fraction(167, 10_000)
MAX_WINDOW_HOURS = Fraction(100_000)  # 11 years: longer is a typo, whatever the job


@dataclass(frozen=True, slots=True)
class BatchInputs:
    items: int
    window_hours: float | Decimal
    items_per_s: float | Decimal | None = None  # measured or assumed, per worker
    retry_margin: float | Decimal | None = None  # a fraction: 0.2 = 20 % extra work for retries
    price_per_hour: float | Decimal | None = None  # per worker
    workers: int | None = None  # a fixed pool; without it the estimate sizes the pool
    tokens_per_item: int | None = None  # input tokens per item, to price the job on `api`
    output_tokens_per_item: int | None = None  # generated tokens per item (0 for embeddings)
    api: Accelerator | None = None  # a managed-API row, priced per million tokens
    # The hardware a worker runs on and the model it runs: without a measured items_per_s the
    # rate comes from the forward pass (about 2 x parameters FLOPs per token) on this device.
    accelerator: Accelerator | None = None
    model: ModelSpec | None = None
    params_b: float | Decimal | None = None


@dataclass(frozen=True, slots=True)
class BatchEstimate(EstimateNotes):
    NOT_MODELLED: ClassVar[tuple[str, ...]] = (
        "Warm-up and model loading time per worker, and stragglers at the end of the window.",
        "Rate limits of a managed API, and its batch discounts.",
        "Variation of the per-item rate with item length.",
    )

    items: int
    window_hours: float
    retry_margin: float
    work_items: int
    required_items_per_s: float
    items_per_s_per_worker: float | None
    workers_needed: int | None
    workers: int | None
    hours_needed: float | None
    fits_window: bool | None
    cost_usd: float | None
    price_per_hour_usd: float | None
    tokens_per_item: int | None
    output_tokens_per_item: int | None
    api_id: str | None
    api_cost_usd: float | None
    accelerator_id: str | None = None
    model_id: str | None = None
    warnings: list[EstimateWarning] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    formulas: list[FormulaLine] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": "batch",
            "items": self.items,
            "window_hours": self.window_hours,
            "retry_margin": self.retry_margin,
            "work_items": self.work_items,
            "required_items_per_s": self.required_items_per_s,
            "items_per_s_per_worker": self.items_per_s_per_worker,
            "workers_needed": self.workers_needed,
            "workers": self.workers,
            "hours_needed": self.hours_needed,
            "fits_window": self.fits_window,
            "cost_usd": self.cost_usd,
            "price_per_hour_usd": self.price_per_hour_usd,
            "tokens_per_item": self.tokens_per_item,
            "output_tokens_per_item": self.output_tokens_per_item,
            "api": self.api_id,
            "api_cost_usd": self.api_cost_usd,
            "accelerator": self.accelerator_id,
            "model": self.model_id,
            **self.notes_dict(),
        }


@dataclass(frozen=True, slots=True)
class _Workers:
    per_worker: Fraction | None = None
    needed: int | None = None
    pool: int | None = None
    hours: Fraction | None = None
    fits: bool | None = None
    cost: Fraction | None = None


def estimate_batch(inputs: BatchInputs) -> BatchEstimate:
    """Run the steps: the required rate, the workers and hours, the API's bill."""
    trail = Trail()
    items = whole_number(inputs.items, "items")
    window = positive(inputs.window_hours, "window_hours")
    if not MIN_WINDOW_HOURS <= window <= MAX_WINDOW_HOURS:
        raise CapacityInputError(
            "window_hours", "must be a number from 0.0167 (a minute) to 100,000 hours."
        )
    margin, work, required = _required_rate(inputs, items, window, trail)
    price = positive(inputs.price_per_hour, "price_per_hour")
    if price is None and inputs.accelerator is not None and inputs.accelerator.price_per_hour_usd:
        price = exact(inputs.accelerator.price_per_hour_usd)
    workers = whole_number(inputs.workers, "workers")
    pool = _workers(inputs, work, required, window, price, workers, trail)
    api_cost = _api_cost(inputs, work=work, trail=trail)
    if api_cost is not None and pool.cost is not None:
        trail.formula(
            "Cost comparison",
            "own workers vs managed API",
            f"{money(pool.cost)} on {pool.pool} worker(s) vs {money(api_cost)} on the API",
        )
    return BatchEstimate(
        items=items,
        window_hours=as_float(window, 4),
        retry_margin=as_float(margin, 4),
        work_items=math.ceil(work),
        required_items_per_s=as_float(required, 4),
        items_per_s_per_worker=_opt(pool.per_worker, 4),
        workers_needed=pool.needed,
        workers=workers,
        hours_needed=_opt(pool.hours, 4),
        fits_window=pool.fits,
        cost_usd=_opt(pool.cost, 2),
        price_per_hour_usd=_opt(price, 4),
        tokens_per_item=inputs.tokens_per_item,
        output_tokens_per_item=inputs.output_tokens_per_item,
        api_id=inputs.api.id if inputs.api is not None and api_cost is not None else None,
        api_cost_usd=_opt(api_cost, 2),
        accelerator_id=inputs.accelerator.id if inputs.accelerator is not None else None,
        model_id=inputs.model.id if inputs.model is not None else None,
        warnings=trail.warnings,
        assumptions=trail.assumptions,
        formulas=trail.formulas,
    )


def _opt(value: Fraction | None, places: int) -> float | None:
    return as_float(value, places) if value is not None else None


def _required_rate(
    inputs: BatchInputs, items: int, window: Fraction, trail: Trail
) -> tuple[Fraction, Fraction, Fraction]:
    if inputs.retry_margin is None:
        margin = Fraction(DEFAULT_RETRY_MARGIN)
        trail.assume("retry_margin", "0 (no retries planned)")
    else:
        margin = positive(inputs.retry_margin, "retry_margin", allow_zero=True)
    work = items * (1 + margin)
    required = work / (window * SECONDS_PER_HOUR)
    trail.formula(
        "Required rate",
        "items × (1 + retry margin) ÷ (window hours × 3600)",
        f"{whole(items)} × (1 + {num(margin)}) ÷ ({num(window)} × 3600) = {num(required)} items/s",
    )
    return margin, work, required


def _workers(
    inputs: BatchInputs,
    work: Fraction,
    required: Fraction,
    window: Fraction,
    price: Fraction | None,
    workers: int | None,
    trail: Trail,
) -> _Workers:
    if inputs.items_per_s is None:
        hardware = hardware_items_per_s(inputs, trail)
        if hardware is None:
            trail.assume("items_per_s", "unknown: measure one worker's throughput")
            return _Workers()
        per_worker = hardware
    else:
        per_worker = positive(inputs.items_per_s, "items_per_s")
    needed = math.ceil(required / per_worker)
    trail.formula(
        "Workers needed",
        "⌈required rate ÷ items per second per worker⌉",
        f"⌈{num(required)} ÷ {num(per_worker)}⌉ = {needed}",
    )
    pool = workers if workers is not None else needed
    hours = work / (pool * per_worker) / SECONDS_PER_HOUR
    trail.formula(
        "Hours needed",
        "items × (1 + retry margin) ÷ (workers × items per second) ÷ 3600",
        f"{num(work)} ÷ ({pool} × {num(per_worker)}) ÷ 3600 = {num(hours)} h",
    )
    cost = hours * pool * price if price is not None else None
    if cost is not None:
        trail.formula(
            "Cost",
            "hours × workers × price per hour",
            f"{num(hours)} × {pool} × {money(price or 0)} = {money(cost)}",
        )
    if hours > window:
        trail.warn(
            WarningCode.WINDOW_TOO_SHORT,
            Severity.ERROR,
            f"{pool} worker(s) need {num(hours, 2)} h, longer than the {num(window)} h window; "
            f"{needed} are needed.",
        )
    return _Workers(per_worker, needed, pool, hours, hours <= window, cost)


def _api_cost(inputs: BatchInputs, *, work: Fraction, trail: Trail) -> Fraction | None:
    """The job's bill on the managed API, when the tokens per item are given. A job with no
    output tokens is an embedding job, priced at the API's embedding price where it has one."""
    tokens_in = whole_number(inputs.tokens_per_item, "tokens_per_item")
    tokens_out = whole_number(
        inputs.output_tokens_per_item, "output_tokens_per_item", allow_zero=True
    )
    if tokens_in is None:
        return None
    api = inputs.api
    if api is None or api.price_per_million_input_tokens_usd is None:
        trail.assume("api", "none priced per million tokens: not compared")
        return None
    if tokens_out is None:
        tokens_out = 0
        trail.assume("output_tokens_per_item", "0 (embeddings return vectors)")
    price_in = exact(api.price_per_million_input_tokens_usd)
    kind = "input price"
    if tokens_out == 0 and api.price_per_million_embedding_tokens_usd is not None:
        price_in, kind = exact(api.price_per_million_embedding_tokens_usd), "embedding price"
    price_out = exact(api.price_per_million_output_tokens_usd or 0)
    cost = work * (tokens_in * price_in + tokens_out * price_out) / 10**6
    trail.formula(
        "Managed API cost",
        f"items × (1 + retry margin) × (input tokens × {kind} + output tokens × output price) ÷ 10⁶",
        f"{num(work)} × ({whole(tokens_in)} × {money(price_in)} + {whole(tokens_out)} × "
        f"{money(price_out)}) ÷ 10⁶ = {money(cost)}",
    )
    return cost
