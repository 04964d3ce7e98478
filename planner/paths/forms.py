"""The comparison's inputs: the calculator's own form for the workload (imported, never copied)
and the traffic beside it (requests per day, peak concurrency, the paths a constraint excludes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms

from planner.calculator.fields import int_field
from planner.calculator.forms import FORMS, CalculatorForm
from planner.capacity.paths import PATHS

ESTIMATES = tuple(FORMS)
PATH_LABELS = {
    "cpu": "CPU server",
    "gpu": "GPUs",
    "tpu": "TPUs",
    "managed_api": "Managed API (data leaves your network)",
}


class TrafficForm(forms.Form):
    requests_per_day = int_field(
        "Requests per day",
        "Serving: prices the day (self-hosted is always on; the API is paid per request).",
        allow_zero=True,
        maximum=10**10,
    )
    peak_concurrency = int_field(
        "Peak concurrency (users at once)",
        "Serving: capacity is planned for the peak. Empty: the workload's users.",
        maximum=10**7,
    )
    exclude = forms.MultipleChoiceField(
        label="Exclude paths",
        help_text="A constraint: data that must stay in-house excludes the managed API.",
        required=False,
        choices=[(p, PATH_LABELS[p]) for p in PATHS],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "unknown path %(value)s; use " + ", ".join(PATHS) + "."},
    )


@dataclass
class ComparisonForms:
    """The workload's calculator form and the traffic form, validated together."""

    kind: str
    workload: CalculatorForm
    traffic: TrafficForm

    def is_valid(self) -> bool:
        return self.workload.is_valid() & self.traffic.is_valid()

    def field_errors(self) -> dict[str, list[str]]:
        errors = self.workload.field_errors()
        for name, messages in self.traffic.errors.items():
            errors[name] = [str(m) for m in messages]
        return errors

    def query_dict(self) -> dict[str, Any]:
        """The inputs as a shareable query (the calculator's keys, then the traffic)."""
        out: dict[str, Any] = dict(self.workload.query_dict())
        traffic = self.traffic.cleaned_data
        for name in ("requests_per_day", "peak_concurrency"):
            if traffic.get(name) is not None:
                out[name] = str(traffic[name])
        if traffic.get("exclude"):
            out["exclude"] = list(traffic["exclude"])
        return out


def comparison_forms(kind: str, data: Any) -> ComparisonForms:
    """Both forms bound to the same query (or POST, or CLI) data."""
    form_class = FORMS.get(kind, FORMS["serving"])
    return ComparisonForms(form_class.kind, form_class(data), TrafficForm(data))
