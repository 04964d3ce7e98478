"""The measured-result page (/planner/measured/: paste or upload a load test's result, see it
beside the prediction; htmx) and its JSON API (/planner/api/measured/, POST)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from accounts.http import HtmxHttpRequest
from planner.capacity.measured import MAX_RESULT_BYTES, MeasuredComparison
from planner.measured.charts import gap_chart
from planner.measured.forms import (
    RESULT_FIELD,
    RESULT_FILE_FIELD,
    MeasuredForm,
    paste_too_big,
    too_big,
)
from planner.measured.runs import form_measured_comparison

PAGE = "planner/measured.html"
SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
# The samples a learner can try: file, label, and the estimate's inputs for the run.
SAMPLES: dict[str, tuple[str, str, dict[str, str]]] = {
    "chat-vllm": (
        "chat-serving-vllm.json",
        "Live chat on an 8B model, vllm bench serve (synthetic)",
        {
            "gpu": "l40s",
            "model": "llama-3.1-8b",
            "context_tokens": "8192",
            "ttft_target_ms": "2000",
        },
    ),
    "chat-guidellm": (
        "chat-serving-guidellm.json",
        "Live chat on an 8B model, GuideLLM (synthetic)",
        {
            "gpu": "l40s",
            "model": "llama-3.1-8b",
            "context_tokens": "8192",
            "ttft_target_ms": "2000",
        },
    ),
    "nim-70b": (
        "nim-llama-3.3-70b-h100-tp2-c25-vllm.json",
        "Llama-3.3-70B on 2 × H100, NIM's published means (synthetic from published)",
        {
            "gpu": "h100-sxm",
            "model": "llama-3.3-70b",
            "tensor_parallel": "2",
            "weight_precision": "fp8",
            "kv_precision": "fp8",
        },
    ),
}
# A form body holds the pasted file and a few dozen short figures.
BODY_MAX_BYTES = MAX_RESULT_BYTES + 64 * 1024


def _initial(request: HttpRequest) -> dict[str, Any]:
    """The estimate's inputs a link carries (a workload card's, a path comparison's), or a sample."""
    names = set(MeasuredForm.base_fields) - {RESULT_FIELD}
    initial: dict[str, Any] = {k: v for k, v in request.GET.items() if k in names and len(v) < 200}
    sample = SAMPLES.get(request.GET.get("sample", ""))
    if sample is not None:
        initial = {**sample[2], RESULT_FIELD: (SAMPLES_DIR / sample[0]).read_text()}
    return initial


def _context(form: MeasuredForm, comparison: MeasuredComparison | None) -> dict[str, Any]:
    fields = [form[name] for name in form.fields if name != RESULT_FIELD]
    context: dict[str, Any] = {
        "form": form,
        "result_field": form[RESULT_FIELD],
        "main_fields": [f for f in fields if f.name in {"benchmark", "gpu", "model"}],
        "more_fields": [f for f in fields if f.name not in {"benchmark", "gpu", "model"}],
        "comparison": comparison,
        "samples": [(key, label) for key, (_f, label, _q) in SAMPLES.items()],
        "error_lines": [
            f"{form.fields[k].label if k in form.fields else 'Input'}: {' '.join(v)}"
            for k, v in form.field_errors().items()
        ]
        if form.is_bound
        else [],
    }
    if comparison is not None:
        context["data"] = comparison.to_dict()
        context["chart"] = gap_chart(comparison)
        query = urlencode(form.query_dict())
        context["paths_path"] = f"{reverse('planner:paths')}?{query}"
        context["calculator_path"] = f"{reverse('planner:calculator')}?{query}"
        context["share_path"] = f"{reverse('planner:measured')}?{query}"
    return context


@require_GET
def measured_page(request: HtmxHttpRequest) -> HttpResponse:
    form = MeasuredForm(initial=_initial(request))
    return render(request, PAGE, _context(form, None))


def _upload_text(upload: UploadedFile) -> str | None:
    """The uploaded file's text (None: too big or not UTF-8; the form then says why)."""
    if upload.size is not None and upload.size > MAX_RESULT_BYTES:
        return None
    data = upload.read(MAX_RESULT_BYTES + 1)
    if len(data) > MAX_RESULT_BYTES:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _posted_form(request: HttpRequest) -> MeasuredForm:
    """The form bound to the POST; an uploaded file replaces the paste box."""
    try:
        data: QueryDict = request.POST.copy()
    except RequestDataTooBig:
        # Django reads at most DATA_UPLOAD_MAX_MEMORY_SIZE of form fields (a paste); a file
        # upload is not counted, so the way past it is the upload, up to MAX_RESULT_BYTES.
        size = int(request.META.get("CONTENT_LENGTH") or 0)
        return MeasuredForm({}, input_errors={RESULT_FIELD: paste_too_big(size)})
    upload = request.FILES.get(RESULT_FILE_FIELD) or request.FILES.get(RESULT_FIELD)
    if upload is None or not upload.name:
        return MeasuredForm(data)
    text = _upload_text(upload)
    if text is None:
        size = upload.size or 0
        data[RESULT_FIELD] = ""
        why = (
            too_big(size) if size > MAX_RESULT_BYTES else "is not UTF-8 text; upload the JSON file."
        )
        return MeasuredForm(data, input_errors={RESULT_FIELD: why})
    data[RESULT_FIELD] = text
    return MeasuredForm(data)


@require_POST
def measured_compare(request: HtmxHttpRequest) -> HttpResponse:
    """The page's form: the comparison (htmx: the result fragment; else the whole page)."""
    form = _posted_form(request)
    comparison = form_measured_comparison(form)
    context = _context(form, comparison)
    status = 200 if comparison is not None else 400
    if request.htmx:
        # htmx swaps only 2xx answers by default: the errors come back as 200 in the fragment.
        return render(request, f"{PAGE}#result", context)
    return render(request, PAGE, context, status=status)


def _json_form(request: HttpRequest) -> MeasuredForm | JsonResponse:
    body = request.read(BODY_MAX_BYTES + 1)
    if len(body) > BODY_MAX_BYTES:
        return JsonResponse({"errors": {"body": [too_big(len(body))]}}, status=400)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return JsonResponse({"errors": {"body": ["is not JSON: send an object."]}}, status=400)
    if not isinstance(data, dict):
        return JsonResponse({"errors": {"body": ["must be a JSON object."]}}, status=400)
    fields: dict[str, str] = {}
    for key, value in data.items():
        if key == RESULT_FIELD and isinstance(value, dict | list):
            fields[key] = json.dumps(value)
        elif isinstance(value, bool):
            fields[str(key)[:100]] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            fields[str(key)[:100]] = str(value)
    return MeasuredForm(fields)


# The API writes nothing and reads no session: scripts POST to it without a CSRF token.
@csrf_exempt
@require_POST
def api_measured(request: HttpRequest) -> JsonResponse:
    """POST a form (the file as `result`, text or upload) or a JSON object whose `result` is the
    file's object; the answer is the CLI's `--json`."""
    if request.content_type == "application/json":
        parsed = _json_form(request)
        if isinstance(parsed, JsonResponse):
            return parsed
        form = parsed
    else:
        form = _posted_form(request)
    comparison = form_measured_comparison(form)
    if comparison is None:
        return JsonResponse({"errors": form.field_errors()}, status=400)
    return JsonResponse(comparison.to_dict(), json_dumps_params={"ensure_ascii": False})
