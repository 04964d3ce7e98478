"""Choose the path: one workload on every catalogue path (CPU, GPUs, TPUs, the managed API), each
judged against the card's targets and priced per useful result, with a recommendation.

The recommendation is the cheapest option that meets every target; the break-even traffic is
the day's requests at which the cheapest meeting self-hosted path costs what the managed API does:
self-hosted cost per day ÷ the API's cost per request (self-hosted is sized for the peak and paid
whether busy or idle; the API is paid per token).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from planner.capacity.batch import BatchInputs
from planner.capacity.catalogue import Catalogue
from planner.capacity.formatting import money, num, whole
from planner.capacity.paths.card import Traffic, serving_card
from planner.capacity.paths.jobs import batch_options, training_options
from planner.capacity.paths.options import LIMITERS, PATHS, PathOption, cheapest_first
from planner.capacity.paths.plans import (
    LoadTest,
    batch_load_test,
    deploy_command,
    model_repo,
    serving_load_test,
    training_load_test,
)
from planner.capacity.paths.serving import serving_options
from planner.capacity.results import Assumption, FormulaLine
from planner.capacity.serving import ServingInputs
from planner.capacity.training import TrainingInputs
from planner.capacity.units import CapacityInputError, as_float

__all__ = [
    "LIMITERS",
    "PATHS",
    "PathComparison",
    "PathOption",
    "Traffic",
    "break_even_requests_per_day",
    "compare_batch",
    "compare_serving",
    "compare_training",
    "recommend",
]

SERIES_PATHS: Final = 4  # lines on the cost chart: the recommendation and the best of each path
SERIES_POINTS: Final = (10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)
NOT_MODELLED: Final = (
    "Autoscaling: self-hosted capacity is sized for the peak and paid around the clock.",
    "Committed-use, spot and batch discounts; egress and storage.",
    "Engineering and operations time to run your own endpoint.",
)


@dataclass(frozen=True, slots=True)
class PathComparison:
    estimate: str  # serving | batch | training
    options: list[PathOption]  # cheapest meeting first, then the rejected
    recommended: PathOption | None
    runner_up: PathOption | None
    excluded: tuple[str, ...]
    break_even_requests_per_day: Fraction | None = None
    load_test: LoadTest | None = None
    deploy_command: str | None = None
    requests_per_day: int | None = None
    peak_concurrency: int | None = None
    cost_series: list[dict[str, Any]] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    formulas: list[FormulaLine] = field(default_factory=list)

    @property
    def rejected(self) -> list[PathOption]:
        return [o for o in self.options if not o.meets]

    @property
    def meeting(self) -> list[PathOption]:
        return [o for o in self.options if o.meets]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the CLI (`--json`) and the API; the keys are a contract."""
        return {
            "estimate": self.estimate,
            "requests_per_day": self.requests_per_day,
            "peak_concurrency": self.peak_concurrency,
            "excluded": list(self.excluded),
            "options": [o.to_dict() for o in self.options],
            "recommended": _pick(self.recommended),
            "runner_up": _pick(self.runner_up),
            "break_even_requests_per_day": (
                as_float(self.break_even_requests_per_day, 1)
                if self.break_even_requests_per_day is not None
                else None
            ),
            "load_test": self.load_test.to_dict() if self.load_test else None,
            "deploy_command": self.deploy_command,
            "cost_series": self.cost_series,
            "missing_assumptions": [a.field for a in self.assumptions],
            "assumptions": [a.to_dict() for a in self.assumptions],
            "formulas": [f.to_dict() for f in self.formulas],
            "not_modelled": list(NOT_MODELLED),
        }


def _pick(option: PathOption | None) -> dict[str, Any] | None:
    if option is None:
        return None
    return {
        "path": option.path,
        "accelerator": option.accelerator,
        "count": option.count,
        "name": option.name,
        "cost_usd": as_float(option.cost_usd, 2) if option.cost_usd is not None else None,
    }


def check_exclude(exclude: Iterable[str]) -> tuple[str, ...]:
    """The paths a constraint rules out ("data must stay in-house": managed_api)."""
    out = []
    for path in exclude:
        if path not in PATHS:
            raise CapacityInputError("exclude", f"unknown path {path!r}; use {', '.join(PATHS)}")
        if path not in out:
            out.append(path)
    return tuple(out)


# Per-path gaps the comparison fills itself: the device's figures, a split, a measured rate.
PER_PATH_FIELDS: Final = frozenset(
    {
        "gpu_memory_gb",
        "memory_bandwidth_gb_s",
        "tensor_parallel",
        "items_per_s",
        "price_per_hour",
        "api",
    }
)


def card_assumptions(assumed: list[Assumption], options: Sequence[PathOption]) -> list[Assumption]:
    """The comparison's own assumptions, then those the card's estimates made (from the first
    self-hosted option: the card's gaps are the same on every device), each field once."""
    out = list(assumed)
    seen = {a.field for a in out} | PER_PATH_FIELDS
    first = next((o for o in options if o.self_hosted and o.assumptions), None)
    for a in first.assumptions if first else ():
        if a.field not in seen:
            out.append(a)
            seen.add(a.field)
    return out


def recommend(options: Sequence[PathOption]) -> tuple[PathOption | None, PathOption | None]:
    """The cheapest option that meets every target (priced ones only), and the runner-up."""
    ranked = sorted((o for o in options if o.meets and o.cost_usd is not None), key=cheapest_first)
    return (ranked[0] if ranked else None, ranked[1] if len(ranked) > 1 else None)


def break_even_requests_per_day(options: Sequence[PathOption]) -> Fraction | None:
    """Self-hosted cost per day ÷ the API's cost per request, for the cheapest meeting
    self-hosted option; None when no self-hosted option meets or no API price is there."""
    api = next((o for o in options if o.path == "managed_api" and o.cost_per_request_usd), None)
    own = [o for o in options if o.self_hosted and o.meets and o.cost_usd is not None]
    if api is None or not own or not api.cost_per_request_usd:
        return None
    cheapest = min(own, key=cheapest_first)
    assert cheapest.cost_usd is not None
    return cheapest.cost_usd / api.cost_per_request_usd


def _finish(
    estimate: str, options: list[PathOption], excluded: tuple[str, ...]
) -> tuple[list[PathOption], PathOption | None, PathOption | None]:
    kept = sorted((o for o in options if o.path not in excluded), key=cheapest_first)
    best, second = recommend(kept)
    return kept, best, second


def compare_serving(
    inputs: ServingInputs,
    *,
    catalogue: Catalogue,
    traffic: Traffic | None = None,
    exclude: Iterable[str] = (),
) -> PathComparison:
    """Every serving path for the card at its peak concurrency, priced for the day's traffic."""
    excluded = check_exclude(exclude)
    card = serving_card(inputs, traffic or Traffic())
    options, best, second = _finish("serving", serving_options(card, catalogue), excluded)
    even = break_even_requests_per_day(options)
    formulas = _break_even_formula(options, even)
    repo = model_repo(inputs.model, inputs.params_b)
    return PathComparison(
        estimate="serving",
        options=options,
        recommended=best,
        runner_up=second,
        excluded=excluded,
        break_even_requests_per_day=even,
        load_test=serving_load_test(card, best, repo) if best else None,
        deploy_command=deploy_command(best, repo) if best else None,
        requests_per_day=card.requests_per_day,
        peak_concurrency=card.users,
        cost_series=cost_series(options, best),
        assumptions=card_assumptions(card.assumptions, options),
        formulas=formulas,
    )


def _break_even_formula(options: Sequence[PathOption], even: Fraction | None) -> list[FormulaLine]:
    if even is None:
        return []
    api = next(o for o in options if o.path == "managed_api" and o.cost_per_request_usd)
    own = min((o for o in options if o.self_hosted and o.meets and o.cost_usd), key=cheapest_first)
    return [
        FormulaLine(
            "Break-even traffic",
            "cheapest meeting self-hosted cost per day ÷ the API's cost per request",
            f"{money(own.cost_usd or 0)} ({own.label}) ÷ ${num(api.cost_per_request_usd or 0, 6)} "
            f"= {whole(math.floor(even))} requests/day",
        )
    ]


def cost_series(options: Sequence[PathOption], best: PathOption | None) -> list[dict[str, Any]]:
    """Cost per day against requests per day for the best few paths: the API grows per request,
    a self-hosted path adds a replica (at its always-on price) each time its capacity is used."""
    chosen: list[PathOption] = [best] if best is not None else []
    for path in ("managed_api", "gpu", "tpu", "cpu"):
        first = next((o for o in options if o.path == path and o.meets and o.cost_usd), None)
        if first is not None and first not in chosen:
            chosen.append(first)
    series = []
    for option in chosen[:SERIES_PATHS]:
        points = []
        for requests in SERIES_POINTS:
            cost = _cost_at(option, requests)
            if cost is not None:
                points.append({"requests_per_day": requests, "cost_usd": as_float(cost, 2)})
        series.append({"label": option.label, "path": option.path, "points": points})
    return series


def _cost_at(option: PathOption, requests: int) -> Fraction | None:
    if option.path == "managed_api":
        return option.cost_per_request_usd * requests if option.cost_per_request_usd else None
    if option.cost_usd is None:
        return None
    capacity = option.requests_per_day_capacity
    replicas = max(1, math.ceil(requests / capacity)) if capacity else 1
    return option.cost_usd * replicas


def compare_batch(
    inputs: BatchInputs, *, catalogue: Catalogue, exclude: Iterable[str] = ()
) -> PathComparison:
    """Every device sized to the window (or the fixed pool), and the API, priced per run."""
    excluded = check_exclude(exclude)
    found, assumed = batch_options(inputs, catalogue)
    options, best, second = _finish("batch", found, excluded)
    margin = float(inputs.retry_margin or 0)
    return PathComparison(
        estimate="batch",
        options=options,
        recommended=best,
        runner_up=second,
        excluded=excluded,
        load_test=batch_load_test(best, inputs.items, margin) if best else None,
        assumptions=card_assumptions(assumed, options),
    )


def compare_training(
    inputs: TrainingInputs, *, catalogue: Catalogue, exclude: Iterable[str] = ()
) -> PathComparison:
    """Each device at 1-8 (states sharded when several), priced per run; the API has no row."""
    excluded = check_exclude(exclude)
    found, assumed = training_options(inputs, catalogue)
    options, best, second = _finish("training", found, excluded)
    total = best.figures.get("total_gb") if best else None
    return PathComparison(
        estimate="training",
        options=options,
        recommended=best,
        runner_up=second,
        excluded=excluded,
        load_test=training_load_test(best, total) if best else None,
        assumptions=card_assumptions(assumed, options),
    )
