"""The cost chart: dollars per day against requests per day for the best few paths (log-log SVG)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.capacity.formatting import num

WIDTH = 640
HEIGHT = 320
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 40


@dataclass(frozen=True, slots=True)
class Line:
    label: str
    path: str  # also the CSS class that colours it
    points: str  # the polyline's "x,y x,y"
    description: str  # the same figures as text, for screen readers and the formula box


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    text: str


@dataclass(frozen=True, slots=True)
class CostChart:
    lines: list[Line]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    bottom_y: int = HEIGHT - BOTTOM
    right_x: int = WIDTH - RIGHT


def _money_tick(value: float) -> str:
    return f"${value:,.0f}" if value >= 1 else f"${value:g}"


def cost_chart(series: list[dict[str, Any]]) -> CostChart | None:
    """None when there is nothing to draw (no priced path)."""
    points = [(p["requests_per_day"], p["cost_usd"]) for s in series for p in s["points"]]
    costs = [c for _, c in points if c > 0]
    if not costs:
        return None
    x_low, x_high = math.log10(min(r for r, _ in points)), math.log10(max(r for r, _ in points))
    y_low, y_high = math.floor(math.log10(min(costs))), math.ceil(math.log10(max(costs)))
    y_high = max(y_high, y_low + 1)
    span_x, span_y = max(x_high - x_low, 1), y_high - y_low

    def x_of(requests: float) -> float:
        return round(LEFT + (math.log10(requests) - x_low) / span_x * (WIDTH - LEFT - RIGHT), 1)

    def y_of(cost: float) -> float:
        top = (
            HEIGHT
            - BOTTOM
            - (math.log10(max(cost, 10**y_low)) - y_low) / span_y * (HEIGHT - TOP - BOTTOM)
        )
        return round(top, 1)

    lines = [
        Line(
            label=s["label"],
            path=s["path"],
            points=" ".join(
                f"{x_of(p['requests_per_day'])},{y_of(p['cost_usd'])}" for p in s["points"]
            ),
            description="; ".join(
                f"{num(p['requests_per_day'], 0)}/day: ${num(p['cost_usd'], 2)}"
                for p in s["points"]
            ),
        )
        for s in series
        if s["points"]
    ]
    x_ticks = [
        Tick(x_of(10**e), f"{10**e:,}") for e in range(math.ceil(x_low), math.floor(x_high) + 1)
    ]
    y_ticks = [Tick(y_of(10**e), _money_tick(10**e)) for e in range(y_low, y_high + 1)]
    return CostChart(lines=lines, x_ticks=x_ticks, y_ticks=y_ticks)
