"""The calculator page (an htmx form that recalculates as the learner types, every input in the
URL) and the same calculation as JSON: GET /planner/api/<serving|training|batch>/?<the CLI's keys>.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django_htmx.http import push_url

from accounts.http import HtmxHttpRequest
from planner.calculator.charts import memory_bar
from planner.calculator.forms import FORMS, CalculatorForm
from planner.calculator.parsing import calculator_form_for, form_estimate
from planner.calculator.pickers import PICKER_CLEARS, picker_defaults
from planner.calculator.rendering import form_rows, readable_assumptions, readable_warnings
from planner.calculator.runs import ESTIMATE_KINDS, Estimate
from planner.capacity import BatchEstimate, ServingEstimate, TrainingEstimate, default_catalogue
from planner.capacity.formatting import num
from planner.cards.forms import WorkloadCardSaveForm


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
        "rows": form_rows(form),
        "warnings": readable_warnings(result or {}),
        "assumptions": readable_assumptions(form, result or {}),
        "overhead_parts": _overhead_parts(result or {}),
        "catalogue": default_catalogue(),
    }


OVERHEAD_PART_LABELS = {
    "utilization_headroom": "Held back by gpu_memory_utilization",
    "activation_peak": "Activation peak (profiled)",
    "non_torch": "CUDA context and libraries (non-torch)",
}


def _overhead_parts(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The engine's overhead parts as (label, "1.23 GB") for the page."""
    parts = result.get("overhead_parts_gb") or {}
    return [(OVERHEAD_PART_LABELS.get(k, k), f"{v:,.2f} GB") for k, v in parts.items()]


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
    estimate = form_estimate(form)
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


@require_GET
def api_estimate(request: HttpRequest, kind: str) -> JsonResponse:
    form = FORMS[kind](request.GET)
    result = form_estimate(form)
    if result is None:
        return JsonResponse({"errors": form.field_errors()}, status=400)
    return JsonResponse(result.to_dict(), json_dumps_params={"ensure_ascii": False})
