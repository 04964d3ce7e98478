"""The calculator page: an htmx form that recalculates as the learner types, every input in the URL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django_htmx.http import push_url

from accounts.http import HtmxHttpRequest
from planner.capacity import BatchEstimate, ServingEstimate, TrainingEstimate, default_catalogue
from planner.capacity.formatting import num
from planner.capacity.units import BYTES_PER_GB
from planner.forms.calculator import (
    ESTIMATE_KINDS,
    PICKER_CLEARS,
    CalculatorForm,
    Estimate,
    WorkloadCardSaveForm,
    calculator_form_for,
    picker_defaults,
)

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
        return stacked_bar(
            f"Memory of {_gb_text(estimate.gpu_memory_bytes)}",
            [
                ("weights", "Weights", estimate.weights_bytes),
                ("overhead", "Overhead", estimate.overhead_bytes),
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


def calculator_context(
    request: HtmxHttpRequest, form: CalculatorForm, estimate: Estimate | None
) -> dict[str, Any]:
    kind = form.kind
    share_query = form.query_string() if estimate is not None else ""
    share_path = f"{reverse('planner:calculator')}?{share_query}"
    result = estimate.to_dict() if estimate is not None else None
    # Listed here, not with `result.items` in the template: batch results have an "items" key.
    figures = [
        (k, v)
        for k, v in (result or {}).items()
        if k not in {"formulas", "warnings", "assumptions", "missing_assumptions"}
    ]
    return {
        "kind": kind,
        "kinds": ESTIMATE_KINDS,
        "error_lines": _error_lines(form),
        "form": form,
        "estimate": estimate,
        "result": result,
        "figures": figures,
        # Short forms for prose ("4.295", "0.6"); the exact figures are in `figures`.
        "display": {k: num(v) for k, v in (result or {}).items() if isinstance(v, float)},
        "bar": memory_bar(estimate) if estimate is not None else None,
        "is_serving": isinstance(estimate, ServingEstimate),
        "serving_badge": _serving_badge(estimate) if isinstance(estimate, ServingEstimate) else "",
        "is_training": isinstance(estimate, TrainingEstimate),
        "is_batch": isinstance(estimate, BatchEstimate),
        "share_query": share_query,
        "share_path": share_path,
        "share_url": request.build_absolute_uri(share_path),
        "picker_data": {"defaults": picker_defaults(), "clears": PICKER_CLEARS},
        "picked": _picked_rows(form) if estimate is not None else {},
        "card_form": WorkloadCardSaveForm(initial={"query": share_query}),
        "catalogue": default_catalogue(),
    }


def _serving_badge(estimate: ServingEstimate) -> str:
    """The headline's verdict: the users can fit and still miss the speed target."""
    if estimate.fits:
        return "fits"
    errors = {str(w.code) for w in estimate.warnings if w.severity == "error"}
    return "too slow" if errors == {"memory_bound"} else "does not fit"


def _error_lines(form: CalculatorForm) -> list[str]:
    """Each error as "Field label: message". Built here: the batch form has a field named `items`,
    which a template's `form.errors.items` would look up instead of the dict method."""
    lines = []
    for name, messages in form.errors.items():
        label = form.fields[name].label if name in form.fields else None
        lines += [f"{label}: {m}" if label else str(m) for m in messages]
    return lines


def _picked_rows(form: CalculatorForm) -> dict[str, Any]:
    """The catalogue rows the GPU and model pickers chose, to show what they supplied."""
    cat = default_catalogue()
    data = form.cleaned_data
    return {
        "gpu": cat.accelerator(data["gpu"]) if data.get("gpu") else None,
        "model": cat.model(data["model"]) if data.get("model") else None,
    }


@require_GET
def calculator(request: HtmxHttpRequest) -> HttpResponse:
    kind = request.GET.get("estimate", "serving")
    if kind not in ESTIMATE_KINDS:
        kind = "serving"
    form = calculator_form_for(kind, request.GET)
    estimate = form.estimate()
    context = calculator_context(request, form, estimate)
    if request.htmx:
        response = render(request, "planner/calculator.html#result", context)
        # The address bar shows only the inputs given, so a shared link is short and exact.
        if estimate is not None:
            url = context["share_path"]
        else:
            given = {k: v for k, v in request.GET.items() if v != ""}
            url = f"{reverse('planner:calculator')}?{urlencode(given)}"
        return push_url(response, url)
    return render(request, "planner/calculator.html", context)
