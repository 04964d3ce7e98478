"""Choose the path: one workload on every catalogue path (CPU, GPUs, TPUs, the managed API), each
judged against the card's targets and priced per useful result, with a recommendation.

Serving options are replicated to carry the day's requests at their peak (paths.volume) and
checked at a percentile (paths.queueing) against the card's targets, or a use case's preset
(paths.presets) where the card gives none. The recommendation is the cheapest option that meets
every target; the break-even traffic is the day's requests at which the cheapest meeting
self-hosted plan costs what the managed API does: self-hosted cost per day ÷ the API's cost per
request (self-hosted is sized for the peak and paid whether busy or idle, its failover replica
included under N+1; the API is paid per token).
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
from planner.capacity.paths.card import ServingCard, Traffic, serving_card
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
from planner.capacity.paths.presets import USE_CASES
from planner.capacity.paths.queueing import speculative_speedup
from planner.capacity.paths.serving import serving_options
from planner.capacity.results import Assumption, FormulaLine
from planner.capacity.serving import ServingInputs
from planner.capacity.training import TrainingInputs
from planner.capacity.units import CapacityInputError, as_float

__all__ = [
    "LIMITERS",
    "PATHS",
    "USE_CASES",
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
    service_level: dict[str, Any] | None = None  # serving: the load and the targets checked

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
            "service_level": self.service_level,
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
        "replicas": option.replicas,
        "devices": option.devices if option.devices is not None else option.count,
        "plan_label": option.plan_label,
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
        "max_num_seqs",  # per replica, in each option's deploy command
        "decode_batch",
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
    """The fewest requests a day at which a meeting self-hosted plan, replicated for that volume,
    costs no more than the API (None when no self-hosted option meets or no API price is there,
    or when a replica's full capacity costs less on the API than the replica itself)."""
    found = _break_even(options)
    return found[0] if found else None


def _break_even(options: Sequence[PathOption]) -> tuple[Fraction, PathOption, int] | None:
    api = next((o for o in options if o.path == "managed_api" and o.cost_per_request_usd), None)
    own = [o for o in options if o.self_hosted and o.meets and o.cost_usd is not None]
    if api is None or not own or not api.cost_per_request_usd:
        return None
    best: tuple[Fraction, PathOption, int] | None = None
    for option in own:
        found = _own_break_even(option, api.cost_per_request_usd)
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], option, found[1])
    return best


def _own_break_even(option: PathOption, per_request: Fraction) -> tuple[Fraction, int] | None:
    """(requests a day, replicas) where `option` first costs no more than the API: with k
    replicas it costs k × a replica's price and carries k × a replica's capacity."""
    assert option.cost_usd is not None
    paid = option.replicas + option.failover
    replica_cost = option.cost_usd / paid
    capacity = option.requests_per_day_capacity
    floor = int(option.settings.get("replicas_for_users") or 1)
    if not capacity:
        return option.cost_usd / per_request, option.replicas
    if per_request * capacity <= replica_cost:
        # Each added replica costs more than the API charges for what it carries; only the
        # plan's first replicas could ever break even.
        even = replica_cost * (floor + option.failover) / per_request
        return (even, floor) if even <= floor * capacity else None
    k = max(
        floor, math.ceil(replica_cost * option.failover / (per_request * capacity - replica_cost))
    )
    even = replica_cost * (k + option.failover) / per_request
    return max(even, capacity * (k - 1)), k


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
        deploy_command=deploy_command(best, repo, card) if best else None,
        requests_per_day=card.requests_per_day,
        peak_concurrency=card.users,
        cost_series=cost_series(options, best),
        assumptions=card_assumptions(card.assumptions, options),
        formulas=[*load_formulas(card), *formulas],
        service_level=service_level(card),
    )


def service_level(card: ServingCard) -> dict[str, Any]:
    """The load the plan carries and the targets it is checked against (the JSON's contract)."""
    peak = card.peak_requests_per_s
    tokens_per_step, _ = speculative_speedup(card.draft_tokens, card.acceptance_rate)
    return {
        "use_case": card.use_case.name,
        "use_case_source": card.use_case.source,
        "percentile": card.percentile,
        "ttft_target_ms": as_float(card.ttft_target_ms, 1) if card.ttft_target_ms else None,
        "itl_target_ms": as_float(card.itl_target_ms, 1) if card.itl_target_ms else None,
        "peak_factor": as_float(card.peak_factor, 3),
        "peak_requests_per_s": as_float(peak, 4),
        "required_prefill_tokens_per_s": as_float(peak * card.prefill_tokens, 1),
        "required_decode_tokens_per_s": as_float(peak * card.output_tokens, 1),
        "prompt_tokens": card.prompt_tokens,
        "prefill_tokens": card.prefill_tokens,
        "output_tokens": card.output_tokens,
        "availability": card.availability,
        "prefix_hit_rate": as_float(card.prefix_hit_rate, 3),
        "draft_tokens": card.draft_tokens,
        "acceptance_rate": as_float(card.acceptance_rate, 3),
        "tokens_per_decode_step": round(tokens_per_step, 3),
    }


def load_formulas(card: ServingCard) -> list[FormulaLine]:
    peak = card.peak_requests_per_s
    lines = [
        FormulaLine(
            "Peak arrival rate",
            "requests per day ÷ 86,400 s × peak factor",
            f"{whole(card.requests_per_day)} ÷ 86,400 × {num(card.peak_factor)} = "
            f"{num(peak, 3)} requests/s",
        ),
        FormulaLine(
            "Prefill and decode needed at the peak",
            "peak rate × prompt tokens not in the prefix cache; peak rate × output tokens",
            f"{num(peak, 3)} × {whole(card.prefill_tokens)} = {num(peak * card.prefill_tokens, 0)} "
            f"tokens/s in; {num(peak, 3)} × {whole(card.output_tokens)} = "
            f"{num(peak * card.output_tokens, 0)} tokens/s out",
        ),
    ]
    if card.draft_tokens:
        tokens, speedup = speculative_speedup(card.draft_tokens, card.acceptance_rate)
        lines.append(
            FormulaLine(
                "Speculative decoding (Leviathan et al. 2023)",
                "tokens per step (1 − a^(k+1)) ÷ (1 − a); speed-up ÷ (1 + k × draft cost)",
                f"k = {card.draft_tokens}, a = {num(card.acceptance_rate)}: {tokens:.2f} tokens "
                f"per step, {speedup:.2f} × the decode speed",
            )
        )
    return lines


def _break_even_formula(options: Sequence[PathOption], even: Fraction | None) -> list[FormulaLine]:
    found = _break_even(options)
    if even is None or found is None:
        return []
    api = next(o for o in options if o.path == "managed_api" and o.cost_per_request_usd)
    _, own, replicas = found
    paid = own.replicas + own.failover
    cost = (own.cost_usd or Fraction(0)) / paid * (replicas + own.failover)
    spare = " + 1 failover" if own.failover else ""
    return [
        FormulaLine(
            "Break-even traffic",
            "a meeting self-hosted plan's cost per day (replicas for that volume) ÷ the API's "
            "cost per request, the lowest over the plans",
            f"{money(cost)} ({own.label} × {replicas}{spare}) ÷ "
            f"${num(api.cost_per_request_usd or 0, 6)} = {whole(math.floor(even))} requests/day",
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
    per_replica = option.cost_usd / (option.replicas + option.failover)
    capacity = option.requests_per_day_capacity
    replicas = max(1, math.ceil(requests / capacity)) if capacity else option.replicas
    return per_replica * (replicas + option.failover)


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
