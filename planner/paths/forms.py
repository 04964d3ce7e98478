"""The comparison's inputs: the calculator's own form for the workload (imported, never copied)
and the traffic beside it (requests per day, peak concurrency, the paths a constraint excludes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms

from planner.calculator.fields import gb_field, int_field
from planner.calculator.forms import FORMS, CalculatorForm
from planner.capacity.paths import PATHS, USE_CASES
from planner.capacity.paths.card import (
    AVAILABILITY,
    MAX_ACCEPTANCE_RATE,
    MAX_DRAFT_TOKENS,
    MAX_PEAK_FACTOR,
    MAX_PREFIX_HIT_RATE,
    TARGET_PERCENTILES,
)

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
        "Serving: the day's requests, carried at their peak (replicas) and priced (self-hosted "
        "is always on; the API is paid per request).",
        allow_zero=True,
        maximum=10**10,
    )
    peak_concurrency = int_field(
        "Peak concurrency (users at once)",
        "Serving: capacity is planned for the peak. Empty: the workload's users.",
        maximum=10**7,
    )
    use_case = forms.ChoiceField(
        label="Use case (service-level preset)",
        help_text="Serving: its p95 first-token and inter-token targets and typical lengths; "
        "the card's own targets win. Empty: chat.",
        required=False,
        choices=[("", "not given (chat)"), *((u.name, u.label) for u in USE_CASES.values())],
        error_messages={
            "invalid_choice": "unknown use case %(value)s; use " + ", ".join(USE_CASES) + "."
        },
    )
    peak_factor = gb_field(
        "Peak factor (peak rate ÷ the day's mean)",
        "Serving: the busiest hour's arrival rate over the day's mean. Empty: the use case's.",
        minimum="1",
        maximum=str(MAX_PEAK_FACTOR),
    )
    availability = forms.ChoiceField(
        label="Availability",
        help_text="Serving: n+1 adds a failover replica to every self-hosted plan.",
        required=False,
        choices=[("", "not given (single)"), *((a, a) for a in AVAILABILITY)],
        error_messages={"invalid_choice": "use single or n+1."},
    )
    percentile = forms.TypedChoiceField(
        label="Percentile the targets are checked at",
        help_text="Serving: 95 unless the use case names another (agents: 99).",
        required=False,
        coerce=int,
        empty_value=None,
        choices=[
            ("", "not given (the use case's)"),
            *((str(q), f"p{q}") for q in TARGET_PERCENTILES),
        ],
        error_messages={"invalid_choice": "use 50, 95 or 99."},
    )
    prefix_hit_rate = gb_field(
        "Prefix-cache hit rate",
        "Serving: the share of each prompt already in the prefix cache (0 to 0.99).",
        allow_zero=True,
        maximum=str(float(MAX_PREFIX_HIT_RATE)),
    )
    draft_tokens = int_field(
        "Speculative draft tokens",
        f"Serving: tokens the draft proposes per step (0 to {MAX_DRAFT_TOKENS}); give the "
        "acceptance rate with it.",
        allow_zero=True,
        maximum=MAX_DRAFT_TOKENS,
    )
    acceptance_rate = gb_field(
        "Draft acceptance rate",
        "Serving: the chance each draft token is accepted (0 to 0.99).",
        allow_zero=True,
        maximum=str(float(MAX_ACCEPTANCE_RATE)),
    )
    exclude = forms.MultipleChoiceField(
        label="Exclude paths",
        help_text="A constraint: data that must stay in-house excludes the managed API.",
        required=False,
        choices=[(p, PATH_LABELS[p]) for p in PATHS],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "unknown path %(value)s; use " + ", ".join(PATHS) + "."},
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("draft_tokens") and data.get("acceptance_rate") is None:
            self.add_error("acceptance_rate", "give it with the draft tokens (0 to 0.99).")
        return data


# The traffic form's fields the comparison takes, beside the workload's own.
TRAFFIC_FIELDS = (
    "requests_per_day",
    "peak_concurrency",
    "use_case",
    "peak_factor",
    "availability",
    "percentile",
    "prefix_hit_rate",
    "draft_tokens",
    "acceptance_rate",
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
        for name in TRAFFIC_FIELDS:
            if traffic.get(name) not in (None, ""):
                out[name] = str(traffic[name])
        if traffic.get("exclude"):
            out["exclude"] = list(traffic["exclude"])
        return out


def comparison_forms(kind: str, data: Any) -> ComparisonForms:
    """Both forms bound to the same query (or POST, or CLI) data."""
    form_class = FORMS.get(kind, FORMS["serving"])
    return ComparisonForms(form_class.kind, form_class(data), TrafficForm(data))
