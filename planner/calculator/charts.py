"""The calculator's stacked bar: memory (or hours) in use against the device's capacity."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.calculator.runs import Estimate
from planner.capacity import BYTES_PER_GB, ServingEstimate, TrainingEstimate

BAR_WIDTH = 1000
BAR_HEIGHT = 48
MEMORY_OVERFLOW = "Demand exceeds the device's memory (the line marks its capacity)."


@dataclass(frozen=True, slots=True)
class BarSegment:
    key: str  # also the CSS class that colours it
    label: str
    value_text: str
    x: float
    width: float


@dataclass(frozen=True, slots=True)
class StackedBar:
    title: str
    segments: list[BarSegment]
    capacity_x: float  # where the device's capacity ends (< BAR_WIDTH when demand overflows it)
    overflow: bool
    overflow_text: str = MEMORY_OVERFLOW
    width: int = BAR_WIDTH
    height: int = BAR_HEIGHT


def _gb_text(value_bytes: int) -> str:
    return f"{value_bytes / BYTES_PER_GB:,.2f} GB"


def stacked_bar(
    title: str,
    parts: list[tuple[str, str, float]],
    capacity: float | None,
    unit: str = "GB",
    free_label: str = "Free",
    overflow_text: str = "",
) -> StackedBar:
    """Segments scaled to max(capacity, demand); a free segment fills up to the capacity."""
    used = sum(v for _, _, v in parts)
    free = max((capacity or 0) - used, 0)
    scale_total = max(capacity or 0, used, 1)
    rows = [*parts, ("free", free_label, free)] if capacity is not None else parts
    segments: list[BarSegment] = []
    x = 0.0
    for key, label, value in rows:
        width = round(BAR_WIDTH * value / scale_total, 2)
        text = _gb_text(int(value)) if unit == "GB" else f"{value:,.2f} {unit}"
        segments.append(
            BarSegment(key=key, label=label, value_text=text, x=round(x, 2), width=width)
        )
        x += width
    capacity_x = round(BAR_WIDTH * (capacity or scale_total) / scale_total, 2)
    return StackedBar(
        title=title,
        segments=segments,
        capacity_x=capacity_x,
        overflow=capacity is not None and used > capacity,
        overflow_text=overflow_text or MEMORY_OVERFLOW,
    )


def memory_bar(estimate: Estimate) -> StackedBar | None:
    if isinstance(estimate, ServingEstimate):
        parts = estimate.overhead_parts_bytes
        overhead = (
            [
                ("overhead", "Held back (utilization)", parts["utilization_headroom"]),
                ("activation-peak", "Activation peak", parts["activation_peak"]),
                ("non-torch", "CUDA context and libraries", parts["non_torch"]),
            ]
            if parts
            else [("overhead", "Overhead", estimate.overhead_bytes)]
        )
        return stacked_bar(
            f"Memory of {_gb_text(estimate.gpu_memory_bytes)}",
            [
                ("weights", "Weights", estimate.weights_bytes),
                *overhead,
                ("kv", "KV cache", estimate.kv_cache_in_use_bytes),
            ],
            estimate.gpu_memory_bytes,
        )
    if isinstance(estimate, TrainingEstimate):
        return stacked_bar(
            "Training memory"
            + (f" on {_gb_text(estimate.gpu_memory_bytes)}" if estimate.gpu_memory_bytes else ""),
            [
                ("weights", "Weights", estimate.weights_bytes),
                ("gradients", "Gradients", estimate.gradients_bytes),
                ("optimizer", "Optimizer state", estimate.optimizer_state_bytes),
                ("activations", "Activations", estimate.activations_bytes or 0),
                # Coloured as the serving bar's non-torch part, which is mostly this context.
                ("non-torch", "CUDA context", estimate.cuda_context_bytes),
            ],
            estimate.gpu_memory_bytes,
        )
    if estimate.hours_needed is not None:
        return stacked_bar(
            f"Hours of the {estimate.window_hours:g} h window",
            [("work", "Work incl. retries", estimate.hours_needed)],
            estimate.window_hours,
            unit="h",
            free_label="Spare",
            overflow_text="The work takes longer than the window (the line marks its end).",
        )
    return None


# The roofline chart: user units about CSS pixels on a phone (as quizzes/charts.py), scaled up on
# wider screens by the stylesheet.
CURVE_WIDTH = 400
CURVE_HEIGHT = 220
CURVE_LEFT = 44
CURVE_RIGHT = 12
CURVE_TOP = 14
CURVE_BOTTOM = 36  # the batch labels and the axis name


@dataclass(frozen=True, slots=True)
class CurvePoint:
    batch: int
    predicted: float | None
    upper_bound: float | None
    aggregate: float | None


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    text: str


@dataclass(frozen=True, slots=True)
class RooflineChart:
    """Per-stream decode speed against the batch (log₂ x axis): the prediction, the roofline
    bound, the learner's point and the batch at which decode turns compute-bound."""

    title: str
    description: str
    points: list[CurvePoint]
    predicted_path: str  # SVG polyline points
    upper_bound_path: str
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    user_x: float | None
    user_y: float | None
    user_text: str
    compute_bound_x: float | None
    compute_bound_text: str
    width: int = CURVE_WIDTH
    height: int = CURVE_HEIGHT
    plot_left: int = CURVE_LEFT
    plot_right: int = CURVE_WIDTH - CURVE_RIGHT
    plot_top: int = CURVE_TOP
    baseline_y: int = CURVE_HEIGHT - CURVE_BOTTOM


def _figure(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _rate_text(value: float) -> str:
    if value == 0:
        return "0"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def roofline_chart(result: dict[str, Any]) -> RooflineChart | None:
    """The chart of a serving result's `speed_curve`, or None when it has fewer than two points."""
    points = [
        CurvePoint(
            batch=int(p["batch"]),
            predicted=_figure(p.get("decode_tokens_per_s")),
            upper_bound=_figure(p.get("decode_tokens_per_s_upper_bound")),
            aggregate=_figure(p.get("aggregate_tokens_per_s")),
        )
        for p in result.get("speed_curve") or []
        if isinstance(p, dict) and isinstance(p.get("batch"), int) and p["batch"] >= 1
    ]
    points.sort(key=lambda p: p.batch)
    rates = [r for p in points for r in (p.predicted, p.upper_bound) if r is not None and r > 0]
    if len(points) < 2 or not rates:
        return None
    low_batch, high_batch = points[0].batch, points[-1].batch
    user_batch = result.get("decode_batch")
    user_rate = _figure(result.get("decode_tokens_per_s"))
    # The learner's point is plotted only on the curve's range: past its end the users do not fit.
    if not (isinstance(user_batch, int) and low_batch <= user_batch <= high_batch):
        user_batch = user_rate = None
    top = max([*rates, user_rate or 0]) * 1.08
    span = max(math.log2(high_batch) - math.log2(low_batch), 1)
    left, right = CURVE_LEFT, CURVE_WIDTH - CURVE_RIGHT
    base = CURVE_HEIGHT - CURVE_BOTTOM

    def x_of(batch: float) -> float:
        return round(left + (right - left) * (math.log2(batch) - math.log2(low_batch)) / span, 1)

    def y_of(rate: float) -> float:
        return round(base - (base - CURVE_TOP) * rate / top, 1)

    def path(values: list[tuple[int, float | None]]) -> str:
        return " ".join(f"{x_of(b)},{y_of(v)}" for b, v in values if v is not None)

    every = max(1, math.ceil(len(points) / 7))  # at most seven batch labels: they stay legible
    x_ticks = [Tick(x_of(p.batch), f"{p.batch:,}") for p in points[::every]]
    y_ticks = [Tick(y_of(v), _rate_text(v)) for v in (0.0, top / 2, top / 1.08)]
    user_x = user_y = None
    user_text = ""
    if isinstance(user_batch, int) and user_batch >= 1 and user_rate is not None:
        user_x, user_y = x_of(user_batch), y_of(user_rate)
        user_text = (
            f"Your batch of {user_batch:,}: about {_rate_text(user_rate)} tokens/s per stream"
        )
    bound_batch = result.get("compute_bound_batch")
    compute_x = None
    compute_text = "Decode stays memory-bound over this range."
    if isinstance(bound_batch, int) and bound_batch >= 1:
        compute_text = f"Decode turns compute-bound at a batch of {bound_batch:,}."
        if low_batch <= bound_batch <= high_batch:
            compute_x = x_of(bound_batch)
    first, last = points[0], points[-1]
    description = (
        f"Per-stream decode speed from batch {first.batch:,} to {last.batch:,}: predicted "
        f"{_rate_text(first.predicted or 0)} falling to {_rate_text(last.predicted or 0)} "
        f"tokens/s; the roofline bound {_rate_text(first.upper_bound or 0)} to "
        f"{_rate_text(last.upper_bound or 0)}. {compute_text}"
        + (f" {user_text}." if user_text else "")
    )
    return RooflineChart(
        title="Decode speed per stream against the batch (log scale)",
        description=description,
        points=points,
        predicted_path=path([(p.batch, p.predicted) for p in points]),
        upper_bound_path=path([(p.batch, p.upper_bound) for p in points]),
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        user_x=user_x,
        user_y=user_y,
        user_text=user_text,
        compute_bound_x=compute_x,
        compute_bound_text=compute_text,
    )
