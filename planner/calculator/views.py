"""The calculator page (an htmx form that recalculates as the learner types, every input in the
URL) and the same calculation as JSON: GET /planner/api/<serving|training|batch>/?<the CLI's keys>.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django_htmx.http import push_url

from accounts.http import HtmxHttpRequest
from planner.calculator.forms import FORMS
from planner.calculator.page import PAGE, calculator_context, calculator_page
from planner.calculator.parsing import calculator_form_for, form_estimate
from planner.calculator.runs import ESTIMATE_KINDS


@require_GET
def calculator(request: HtmxHttpRequest) -> HttpResponse:
    kind = request.GET.get("estimate", "serving")
    if kind not in ESTIMATE_KINDS:
        kind = "serving"
    if not request.htmx:
        return render(request, PAGE, calculator_page(request, kind))
    form = calculator_form_for(kind, request.GET)
    estimate = form_estimate(form)
    context = calculator_context(request, form, estimate)
    response = render(request, f"{PAGE}#result", context)
    # The address bar shows only the inputs given, so a shared link is short and exact.
    if estimate is not None:
        url = context["share_path"]
    else:
        given = {k: v for k, v in request.GET.items() if v != ""}
        url = f"{reverse('planner:calculator')}?{urlencode(given)}"
    return push_url(response, url)


@require_GET
def api_estimate(request: HttpRequest, kind: str) -> JsonResponse:
    form = FORMS[kind](request.GET)
    result = form_estimate(form)
    if result is None:
        return JsonResponse({"errors": form.field_errors()}, status=400)
    return JsonResponse(result.to_dict(), json_dumps_params={"ensure_ascii": False})
