"""From raw input to an estimate: a bound form validates, calculation_run computes.

The page, the JSON API and the CLI parse with the same forms and run the same calculation, so the
three agree to the byte; a saved workload card replays its query string the same way.
"""

from __future__ import annotations

from typing import Any

from django.http import QueryDict

from planner.calculator.forms import FORMS, CalculatorForm, ServingForm
from planner.calculator.runs import Estimate, calculation_run
from planner.capacity import CapacityInputError

# What the page shows before the learner types: the source's baseline and its two other cards.
DEFAULT_INPUTS: dict[str, dict[str, str]] = {
    "serving": {
        "gpu_memory_gb": "24",
        "model_gb": "14",
        "overhead_gb": "3",
        "kv_per_user_gb": "0.6",
        "users": "20",
    },
    "training": {
        "model": "mistral-7b",
        "method": "lora",
        "batch_size": "8",
        "seq_len": "2048",
        "checkpointing": "true",
        "gpu": "a100-80gb",
        "steps": "1000",
    },
    "batch": {
        "items": "50000",
        "window_hours": "2",
        "items_per_s": "10",
        "retry_margin": "0.2",
        "price_per_hour": "0.80",
    },
}


def uses_default_inputs(kind: str, data: Any | None) -> bool:
    """True when the data names none of the form's fields (an empty one counts as named): the form
    is then bound to DEFAULT_INPUTS, so every visitor gets the same estimate."""
    form_class = FORMS.get(kind, ServingForm)
    return data is None or not any(name in data for name in form_class.base_fields)


def calculator_form_for(
    kind: str, data: Any | None, *, input_errors: dict[str, str] | None = None
) -> CalculatorForm:
    """A bound form for `kind` from query/POST data; unknown kinds fall back to serving."""
    form_class = FORMS.get(kind, ServingForm)
    if uses_default_inputs(kind, data) and not input_errors:
        return form_class(DEFAULT_INPUTS[form_class.kind])
    return form_class(data, input_errors=input_errors)


def form_estimate(form: CalculatorForm) -> Estimate | None:
    """Validate, then run the calculation; an engine input error lands on the field it names."""
    if not form.is_valid():
        return None
    try:
        return calculation_run(form.kind, form.cleaned_data)
    except CapacityInputError as err:
        form.add_error(err.field if err.field in form.fields else None, err.message)
        return None


def query_replay(query: str, *, latency_target_ms: int | None = None) -> CalculatorForm | None:
    """The calculator form bound to a saved query string (None: it names no estimate).

    A serving card's latency target is checked like one typed into the calculator.
    """
    data = QueryDict(query, mutable=True)
    kind = data.get("estimate", "")
    if kind not in FORMS:
        return None
    if kind == "serving" and latency_target_ms and not data.get("latency_target_ms"):
        data["latency_target_ms"] = str(latency_target_ms)
    return FORMS[kind](data)
