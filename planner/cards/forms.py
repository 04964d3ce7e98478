"""The form that saves the calculator's current calculation as a workload card."""

from __future__ import annotations

from typing import Any

from django import forms

from core.forms import BoundedNumberField
from planner.calculator.forms import ServingForm

# The calculator's own range: a card saves only a latency target the calculator would accept.
_CALCULATOR_LATENCY = ServingForm.base_fields["latency_target_ms"]
assert isinstance(_CALCULATOR_LATENCY, BoundedNumberField)
LATENCY_TARGET_MS = _CALCULATOR_LATENCY.bound


class WorkloadCardSaveForm(forms.Form):
    """Save the current calculation as a workload card; the result is recomputed from `query`."""

    name = forms.CharField(label="Card name", max_length=120)
    latency_target_ms = BoundedNumberField(
        label="Latency target (ms, e.g. first token)", required=False, bound=LATENCY_TARGET_MS
    )
    notes = forms.CharField(label="Notes", required=False, widget=forms.Textarea(attrs={"rows": 2}))
    is_example = forms.BooleanField(label="Show to everyone as an example", required=False)
    query = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, can_publish: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not can_publish:
            del self.fields["is_example"]
