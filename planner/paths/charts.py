"""The page's charts as SVG: the cost chart (dollars per day against requests per day for the
best few paths, log-log) and the frontier (tokens/s per device against tokens/s per user)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.capacity.formatting import num
from planner.capacity.paths.frontier import Frontier, FrontierPoint

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
    anchor: str = "middle"  # the first and last labels of an axis stay inside the drawing


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
    x_ticks = _edge_anchored(
        [Tick(x_of(10**e), f"{10**e:,}") for e in range(math.ceil(x_low), math.floor(x_high) + 1)]
    )
    y_ticks = [Tick(y_of(10**e), _money_tick(10**e)) for e in range(y_low, y_high + 1)]
    return CostChart(lines=lines, x_ticks=x_ticks, y_ticks=y_ticks)


def _edge_anchored(ticks: list[Tick], width: int = WIDTH) -> list[Tick]:
    """A label near either edge is anchored to stay whole ("10,000,000" at the right end)."""
    edge = 40
    return [
        Tick(
            t.position,
            t.text,
            "end" if t.position > width - edge else "start" if t.position < edge else t.anchor,
        )
        for t in ticks
    ]


# The frontier: one series per tensor-parallel degree (its own marker shape, so colour is not
# the only cue), the frontier as a line, the operating point ringed.
FRONTIER_MARKERS = ("circle", "square", "triangle", "diamond")
FRONTIER_TOP = 32  # room above the plot for the vertical axis's name


@dataclass(frozen=True, slots=True)
class Marker:
    x: float
    y: float
    shape: str
    points: str  # the polygon of a square, triangle or diamond
    title: str


@dataclass(frozen=True, slots=True)
class FrontierSeries:
    label: str
    shape: str
    markers: list[Marker]


@dataclass(frozen=True, slots=True)
class FrontierChart:
    series: list[FrontierSeries]
    line: str  # the frontier's polyline
    operating: Marker | None
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    bottom_y: int = HEIGHT - BOTTOM
    right_x: int = WIDTH - RIGHT


def _nice_step(high: float, ticks: int = 5) -> float:
    raw = max(high, 1e-9) / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _linear_ticks(high: float) -> tuple[float, list[float]]:
    step = _nice_step(high)
    top = step * math.ceil(high / step) if high > 0 else step
    count = round(top / step)
    return top, [step * i for i in range(count + 1)]


def _tick_text(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:g}"


def _shape_points(shape: str, x: float, y: float, r: float = 5) -> str:
    corners = {
        "square": [(-r, -r), (r, -r), (r, r), (-r, r)],
        "triangle": [(0, -r - 1), (r + 1, r), (-r - 1, r)],
        "diamond": [(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
    }.get(shape, [])
    return " ".join(f"{round(x + dx, 1)},{round(y + dy, 1)}" for dx, dy in corners)


def frontier_chart(frontier: Frontier) -> FrontierChart | None:
    """None when no batch runs on the device."""
    points = frontier.points
    if not points:
        return None
    x_top, x_values = _linear_ticks(max(p.tokens_per_s_per_user for p in points))
    y_top, y_values = _linear_ticks(max(p.tokens_per_s_per_device for p in points))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - FRONTIER_TOP - BOTTOM

    def x_of(v: float) -> float:
        return round(LEFT + v / x_top * plot_w, 1)

    def y_of(v: float) -> float:
        return round(HEIGHT - BOTTOM - v / y_top * plot_h, 1)

    def marker(p: FrontierPoint, shape: str) -> Marker:
        x, y = x_of(p.tokens_per_s_per_user), y_of(p.tokens_per_s_per_device)
        title = (
            f"{p.tensor_parallel} × {frontier.accelerator_name}, batch {p.batch}: "
            f"{num(p.tokens_per_s_per_user, 1)} tokens/s per user, "
            f"{num(p.tokens_per_s_per_device, 1)} per device"
        )
        return Marker(x, y, shape, _shape_points(shape, x, y), title)

    degrees = sorted({p.tensor_parallel for p in points})
    shapes = {n: FRONTIER_MARKERS[i % len(FRONTIER_MARKERS)] for i, n in enumerate(degrees)}
    series = [
        FrontierSeries(
            label=f"{n} × {frontier.accelerator_name}" if n > 1 else frontier.accelerator_name,
            shape=shapes[n],
            markers=[marker(p, shapes[n]) for p in points if p.tensor_parallel == n],
        )
        for n in degrees
    ]
    line = " ".join(
        f"{x_of(p.tokens_per_s_per_user)},{y_of(p.tokens_per_s_per_device)}"
        for p in frontier.frontier
    )
    op = frontier.operating_point
    return FrontierChart(
        series=series,
        line=line,
        operating=marker(op, "ring") if op is not None else None,
        x_ticks=_edge_anchored([Tick(x_of(v), _tick_text(v)) for v in x_values]),
        y_ticks=[Tick(y_of(v), _tick_text(v)) for v in y_values],
    )
