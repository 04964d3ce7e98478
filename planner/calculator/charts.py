"""The calculator's stacked bar: memory (or hours) in use against the device's capacity."""

from __future__ import annotations

from dataclasses import dataclass

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
