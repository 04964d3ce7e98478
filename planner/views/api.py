"""The calculator as JSON: GET /planner/api/<serving|training|batch>/?<inputs> (the CLI's keys)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from planner.forms.calculator import FORMS


@require_GET
def estimate(request: HttpRequest, kind: str) -> JsonResponse:
    form = FORMS[kind](request.GET)
    result = form.estimate()
    if result is None:
        return JsonResponse({"errors": form.field_errors()}, status=400)
    return JsonResponse(result.to_dict(), json_dumps_params={"ensure_ascii": False})
