"""Batch jobs (nightly embeddings and the like): rate, workers, hours and cost against a window.

The arithmetic is Little's-law simple and exact:
- work = items × (1 + retry margin): the margin reserves capacity for failed batches that are
  retried (the source: "retryable on cheaper capacity").
- required rate = work ÷ (window hours × 3600 s).
- workers needed = ⌈required rate ÷ items per second per worker⌉.
- hours = work ÷ (workers × items per second per worker) ÷ 3600; cost = hours × workers × price.
- on a managed API priced per million tokens (the catalogue's managed-API row), the same work costs
  work × (input tokens × input price + output tokens × output price) ÷ 10^6: the provider does the
  capacity planning, so there are no workers or window to size, only a bill to compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.capacity.catalogue import Accelerator
from planner.capacity.formatting import money, num, whole
from planner.capacity.results import (
    Assumption,
    EstimateNotes,
    EstimateWarning,
    FormulaLine,
    Severity,
    WarningCode,
)
from planner.capacity.units import SECONDS_PER_HOUR, as_float, exact
from planner.capacity.validation import positive, whole_number

DEFAULT_RETRY_MARGIN = Fraction(0)


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


@dataclass(frozen=True, slots=True)
class BatchEstimate(EstimateNotes):
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
            **self.notes_dict(),
        }


def estimate_batch(inputs: BatchInputs) -> BatchEstimate:
    assumptions: list[Assumption] = []
    warnings: list[EstimateWarning] = []
    formulas: list[FormulaLine] = []
    items = whole_number(inputs.items, "items")
    window = positive(inputs.window_hours, "window_hours")
    if inputs.retry_margin is None:
        margin = DEFAULT_RETRY_MARGIN
        assumptions.append(Assumption("retry_margin", "0 (no retries planned)"))
    else:
        margin = positive(inputs.retry_margin, "retry_margin", allow_zero=True)
    work = items * (1 + margin)
    required = work / (window * SECONDS_PER_HOUR)
    formulas.append(
        FormulaLine(
            "Required rate",
            "items × (1 + retry margin) ÷ (window hours × 3600)",
            f"{whole(items)} × (1 + {num(margin)}) ÷ ({num(window)} × 3600) = {num(required)} items/s",
        )
    )
    per_worker = None
    workers_needed = None
    hours = None
    fits = None
    cost = None
    price = positive(inputs.price_per_hour, "price_per_hour")
    workers = whole_number(inputs.workers, "workers")
    if inputs.items_per_s is None:
        assumptions.append(Assumption("items_per_s", "unknown: measure one worker's throughput"))
    else:
        per_worker = positive(inputs.items_per_s, "items_per_s")
        workers_needed = math.ceil(required / per_worker)
        formulas.append(
            FormulaLine(
                "Workers needed",
                "⌈required rate ÷ items per second per worker⌉",
                f"⌈{num(required)} ÷ {num(per_worker)}⌉ = {workers_needed}",
            )
        )
        pool = workers if workers is not None else workers_needed
        hours = work / (pool * per_worker) / SECONDS_PER_HOUR
        fits = hours <= window
        formulas.append(
            FormulaLine(
                "Hours needed",
                "items × (1 + retry margin) ÷ (workers × items per second) ÷ 3600",
                f"{num(work)} ÷ ({pool} × {num(per_worker)}) ÷ 3600 = {num(hours)} h",
            )
        )
        if price is not None:
            cost = hours * pool * price
            formulas.append(
                FormulaLine(
                    "Cost",
                    "hours × workers × price per hour",
                    f"{num(hours)} × {pool} × {money(price)} = {money(cost)}",
                )
            )
        if not fits:
            warnings.append(
                EstimateWarning(
                    WarningCode.WINDOW_TOO_SHORT,
                    Severity.ERROR,
                    f"{pool} worker(s) need {num(hours, 2)} h, longer than the {num(window)} h window; "
                    f"{workers_needed} are needed.",
                )
            )
    api_cost = _api_cost(inputs, work=work, formulas=formulas, assumptions=assumptions)
    if api_cost is not None and cost is not None:
        formulas.append(
            FormulaLine(
                "Cost comparison",
                "own workers vs managed API",
                f"{money(cost)} on {pool} worker(s) vs {money(api_cost)} on the API",
            )
        )
    return BatchEstimate(
        items=items,
        window_hours=as_float(window, 4),
        retry_margin=as_float(margin, 4),
        work_items=math.ceil(work),
        required_items_per_s=as_float(required, 4),
        items_per_s_per_worker=as_float(per_worker, 4) if per_worker is not None else None,
        workers_needed=workers_needed,
        workers=workers,
        hours_needed=as_float(hours, 4) if hours is not None else None,
        fits_window=fits,
        cost_usd=as_float(cost, 2) if cost is not None else None,
        price_per_hour_usd=as_float(price, 4) if price is not None else None,
        tokens_per_item=inputs.tokens_per_item,
        output_tokens_per_item=inputs.output_tokens_per_item,
        api_id=inputs.api.id if inputs.api is not None and api_cost is not None else None,
        api_cost_usd=as_float(api_cost, 2) if api_cost is not None else None,
        warnings=warnings,
        assumptions=assumptions,
        formulas=formulas,
    )


def _api_cost(
    inputs: BatchInputs,
    *,
    work: Fraction,
    formulas: list[FormulaLine],
    assumptions: list[Assumption],
) -> Fraction | None:
    """The job's bill on the managed API, when the tokens per item are given."""
    tokens_in = whole_number(inputs.tokens_per_item, "tokens_per_item")
    tokens_out = whole_number(
        inputs.output_tokens_per_item, "output_tokens_per_item", allow_zero=True
    )
    if tokens_in is None:
        return None
    api = inputs.api
    if api is None or api.price_per_million_input_tokens_usd is None:
        assumptions.append(Assumption("api", "none priced per million tokens: not compared"))
        return None
    if tokens_out is None:
        tokens_out = 0
        assumptions.append(Assumption("output_tokens_per_item", "0 (embeddings return vectors)"))
    price_in = exact(api.price_per_million_input_tokens_usd)
    price_out = exact(api.price_per_million_output_tokens_usd or 0)
    cost = work * (tokens_in * price_in + tokens_out * price_out) / 10**6
    formulas.append(
        FormulaLine(
            "Managed API cost",
            "items × (1 + retry margin) × (input tokens × input price + output tokens × output price) ÷ 10⁶",
            f"{num(work)} × ({whole(tokens_in)} × {money(price_in)} + {whole(tokens_out)} × {money(price_out)}) ÷ 10⁶ = {money(cost)}",
        )
    )
    return cost
