"""One comparison run for the page, the API, the CLI, workload cards and the capstone worksheet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.http import QueryDict

from planner.calculator.runs import engine_inputs
from planner.capacity import (
    BatchInputs,
    CapacityInputError,
    ServingInputs,
    TrainingInputs,
    default_catalogue,
)
from planner.capacity.paths import (
    PathComparison,
    Traffic,
    compare_batch,
    compare_serving,
    compare_training,
)
from planner.paths.forms import ESTIMATES, TRAFFIC_FIELDS, ComparisonForms, comparison_forms


def comparison_run(
    kind: str,
    data: Mapping[str, Any],
    *,
    requests_per_day: int | None = None,
    peak_concurrency: int | None = None,
    exclude: Iterable[str] = (),
    traffic: Traffic | None = None,
) -> PathComparison:
    """Every path for the parsed workload `data` (the calculator form's cleaned data); `traffic`
    (when given) carries the serving plan's inputs in full and wins over the two counts."""
    catalogue = default_catalogue()
    if kind == "serving":
        return compare_serving(
            ServingInputs(**engine_inputs(ServingInputs, data)),
            catalogue=catalogue,
            traffic=traffic or Traffic(requests_per_day, peak_concurrency),
            exclude=exclude,
        )
    if kind == "batch":
        inputs = engine_inputs(BatchInputs, data)
        return compare_batch(BatchInputs(**inputs), catalogue=catalogue, exclude=exclude)
    if kind == "training":
        inputs = engine_inputs(TrainingInputs, data)
        return compare_training(TrainingInputs(**inputs), catalogue=catalogue, exclude=exclude)
    raise CapacityInputError("estimate", "use serving, batch or training.")


# What the page compares before the learner types: the course's three workload cards.
DEFAULT_INPUTS: dict[str, dict[str, str]] = {
    "serving": {
        "model": "llama-3.1-8b",
        "weight_precision": "bf16",
        "context_tokens": "8192",
        "users": "20",
        "ttft_target_ms": "2000",
        "output_tokens": "256",
        "requests_per_day": "1000",
    },
    "batch": {
        "items": "50000",
        "window_hours": "2",
        "retry_margin": "0.2",
        "tokens_per_item": "512",
        "output_tokens_per_item": "0",
        "gpu": "cpu-server",
        "model": "bge-large-en-v1.5",
    },
    "training": {
        "model": "mistral-7b",
        "method": "lora",
        "lora_rank": "16",
        "batch_size": "8",
        "seq_len": "2048",
        "checkpointing": "true",
        "steps": "1000",
    },
}


def form_comparison(forms: ComparisonForms) -> PathComparison | None:
    """Validate both forms, then compare; an engine input error lands on the field it names."""
    if not forms.is_valid():
        return None
    traffic = forms.traffic.cleaned_data
    try:
        return comparison_run(
            forms.kind,
            forms.workload.cleaned_data,
            exclude=traffic.get("exclude") or (),
            traffic=Traffic(**{n: _given(traffic.get(n)) for n in TRAFFIC_FIELDS}),
        )
    except CapacityInputError as err:
        for form in (forms.workload, forms.traffic):
            if err.field in form.fields:
                form.add_error(err.field, err.message)
                return None
        forms.workload.add_error(None, f"{err.field}: {err.message}")
        return None


def _given(value: Any) -> Any:
    return None if value == "" else value


def comparison_query(link: str) -> str:
    """The query string of a comparison's link (a whole URL, a path or the query itself)."""
    text = link.strip()
    return text.split("?", 1)[1] if "?" in text else text


def comparison_forms_for_link(link: str) -> ComparisonForms:
    """Both forms bound to the link's query, as the page would read it."""
    data = QueryDict(comparison_query(link))
    kind = data.get("estimate", "serving")
    return comparison_forms(kind if kind in ESTIMATES else "serving", data)


def comparison_for_link(link: str) -> PathComparison | None:
    """The comparison a link shows (None when its inputs are refused)."""
    return form_comparison(comparison_forms_for_link(link))
