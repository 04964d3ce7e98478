"""The comparison's form as the page shows it: each default the comparison assumed written into
its field (a plain figure) or shown as the field's placeholder, and said in words."""

from __future__ import annotations

import re
from typing import Any

from django.forms import BoundField
from django.http import QueryDict

from planner.capacity.paths import PathComparison
from planner.paths.forms import ComparisonForms, comparison_forms

# Words for the assumptions whose field is not one of the page's own inputs.
ASSUMPTION_WORDS = {
    "requests_per_day": "Requests per day",
    "peak_concurrency": "Peak concurrency",
    "peak_factor": "Peak-to-mean traffic",
    "use_case": "Use case",
    "availability": "Availability",
    "gpu_memory_utilization": "GPU memory a serving engine may use",
    "decode_batch": "Streams decoding together",
    "kv_precision": "KV cache precision",
    "overhead_gb": "Runtime overhead",
    "prompt_tokens": "Prompt tokens per request",
    "output_tokens": "Output tokens per request",
    "adam_bytes": "Optimizer bytes per parameter",
    "mfu": "Model FLOPs utilization",
    "users": "Concurrent users",
}
# A default the page writes into its field (a plain figure, not derived from other fields).
FILLED_DEFAULTS = {"requests_per_day"}
LEADING_FIGURE = re.compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?)(?![0-9A-Za-z])")


def assumption_words(name: str, forms: ComparisonForms) -> str:
    for form in (forms.workload, forms.traffic):
        if name in form.fields and form.fields[name].label:
            return str(form.fields[name].label)
    return ASSUMPTION_WORDS.get(name, name.replace("_", " ").capitalize())


def _value_of(data: Any, name: str) -> str:
    value = data.get(name) if hasattr(data, "get") else None
    return str(value or "").strip()


def fields_with_defaults(
    forms: ComparisonForms, comparison: PathComparison | None
) -> ComparisonForms:
    """The forms as the page shows them: a default the comparison assumed is written into its
    (empty) field where it is a plain figure, else shown as the field's placeholder, and each
    such field says "Assumed: ..." under it."""
    if comparison is None:
        return forms
    assumed = {a.field: a.assumed for a in comparison.assumptions}
    filled: dict[str, str] = {}
    for name in FILLED_DEFAULTS & set(assumed):
        match = LEADING_FIGURE.match(assumed[name])
        if match and not _value_of(forms.traffic.data, name):
            filled[name] = match.group(1).replace(",", "")
    shown = forms
    if filled:
        raw = forms.traffic.data  # the workload's form is bound to the same data
        data: Any = raw.copy() if isinstance(raw, QueryDict) else dict(raw)
        for name, value in filled.items():
            data[name] = value
        shown = comparison_forms(forms.kind, data)
        shown.is_valid()
    for form in (shown.workload, shown.traffic):
        for name, text in assumed.items():
            if name not in form.fields:
                continue
            bound: BoundField = form[name]
            bound.assumed_note = text  # type: ignore[attr-defined]
            match = LEADING_FIGURE.match(text)
            widget = form.fields[name].widget
            typed = getattr(widget, "input_type", None) in {"number", "text"}
            if match and typed and name not in filled and not _value_of(form.data, name):
                widget.attrs["placeholder"] = f"{match.group(1)} (assumed)"
    return shown
