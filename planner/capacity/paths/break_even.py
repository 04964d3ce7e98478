"""Break-even traffic and the cost chart: the day's requests at which a meeting self-hosted plan, sized
for that volume (its failover replica included under N+1), costs what the managed API does; and cost
per day against requests per day for the best few paths."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Final

from planner.capacity.formatting import money, num, whole
from planner.capacity.paths.options import PathOption
from planner.capacity.results import FormulaLine
from planner.capacity.units import as_float

SERIES_PATHS: Final = 4  # lines on the cost chart: the recommendation and the best of each path
SERIES_POINTS: Final = (10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)


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


def break_even_formula(options: Sequence[PathOption], even: Fraction | None) -> list[FormulaLine]:
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
