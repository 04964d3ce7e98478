"""The calculator page (an htmx form that recalculates as the learner types, every input in the
URL) and the same calculation as JSON: /planner/api/<serving|training|batch>/, GET with the CLI's
keys in the query, or POST with them as a form (a config.json as an uploaded file) or a JSON object.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods
from django_htmx.http import push_url

from accounts.http import HtmxHttpRequest
from planner.calculator.forms import FORMS
from planner.calculator.page import PAGE, calculator_context, calculator_page
from planner.calculator.parsing import calculator_form_for, form_estimate
from planner.calculator.request_data import request_inputs
from planner.calculator.runs import ESTIMATE_KINDS


@require_http_methods(["GET", "POST"])
def calculator(request: HtmxHttpRequest) -> HttpResponse:
    """GET renders the inputs of a link; the page's form POSTs (a pasted config.json is too long
    for a URL), and the address bar then shows the same calculation as a link."""
    inputs = request_inputs(request)
    kind = inputs.data.get("estimate", "serving")
    if kind not in ESTIMATE_KINDS:
        kind = "serving"
    if not request.htmx:
        if request.method == "POST":
            form = calculator_form_for(kind, inputs.data, input_errors=inputs.errors)
            if form_estimate(form) is not None:
                return redirect(f"{reverse('planner:calculator')}?{form.query_string()}")
        return render(request, PAGE, calculator_page(request, kind, inputs.data, inputs.errors))
    form = calculator_form_for(kind, inputs.data, input_errors=inputs.errors)
    estimate = form_estimate(form)
    context = calculator_context(request, form, estimate)
    response = render(request, f"{PAGE}#result", context)
    # The address bar shows only the inputs given, so a shared link is short and exact. An
    # invalid form leaves it at the last valid link: what was posted (the CSRF token, a pasted
    # config.json) never reaches the URL or the history.
    return push_url(response, context["share_path"] if estimate is not None else False)


# The API writes nothing and reads no session: scripts POST to it without a CSRF token.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def api_estimate(request: HttpRequest, kind: str) -> JsonResponse:
    inputs = request_inputs(request)
    form_class = FORMS[kind]
    unread = {k: [v] for k, v in inputs.errors.items() if k not in form_class.base_fields}
    if unread:
        return JsonResponse({"errors": unread}, status=400)
    form = form_class(inputs.data, input_errors=inputs.errors)
    result = form_estimate(form)
    if result is None:
        return JsonResponse({"errors": form.field_errors()}, status=400)
    return JsonResponse(result.to_dict(), json_dumps_params={"ensure_ascii": False})
