"""The comparison page (/planner/paths/: htmx, every input in the URL) and its JSON API
(/planner/api/paths/?estimate=serving|batch|training&<the calculator's keys>&requests_per_day=...)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django_htmx.http import push_url

from accounts.http import HtmxHttpRequest
from planner.paths.forms import ESTIMATES, TrafficForm, comparison_forms
from planner.paths.page import paths_context
from planner.paths.runs import DEFAULT_INPUTS, form_comparison

PAGE = "planner/paths.html"


def _kind(request: HttpRequest) -> str:
    kind = request.GET.get("estimate", "serving")
    return kind if kind in ESTIMATES else "serving"


@require_GET
def paths_page(request: HtmxHttpRequest) -> HttpResponse:
    kind = _kind(request)
    forms = comparison_forms(kind, request.GET)
    names = set(forms.workload.fields) | set(TrafficForm.base_fields)
    if not any(name in request.GET for name in names):
        forms = comparison_forms(kind, DEFAULT_INPUTS[kind])
    comparison = form_comparison(forms)
    context = paths_context(forms, comparison)
    if not request.htmx:
        return render(request, PAGE, context)
    # The status beside the form says what changed (role="status"), swapped out of band.
    response = render(request, f"{PAGE}#result", {**context, "oob": True})
    return push_url(response, context["share_path"]) if comparison is not None else response


@require_GET
def api_paths(request: HttpRequest) -> JsonResponse:
    kind = request.GET.get("estimate", "serving")
    if kind not in ESTIMATES:
        return JsonResponse({"errors": {"estimate": [f"use {', '.join(ESTIMATES)}."]}}, status=400)
    forms = comparison_forms(kind, request.GET)
    comparison = form_comparison(forms)
    if comparison is None:
        return JsonResponse({"errors": forms.field_errors()}, status=400)
    return JsonResponse(comparison.to_dict(), json_dumps_params={"ensure_ascii": False})
