"""The form that saves the calculator's current calculation as a workload card."""

from __future__ import annotations

from typing import Any

from django import forms


class WorkloadCardSaveForm(forms.Form):
    """Save the current calculation as a workload card; the result is recomputed from `query`."""

    name = forms.CharField(label="Card name", max_length=120)
    latency_target_ms = forms.IntegerField(
        label="Latency target (ms, e.g. first token)", required=False, min_value=1
    )
    notes = forms.CharField(label="Notes", required=False, widget=forms.Textarea(attrs={"rows": 2}))
    is_example = forms.BooleanField(label="Show to everyone as an example", required=False)
    query = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, can_publish: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not can_publish:
            del self.fields["is_example"]
