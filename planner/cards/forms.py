"""Workload card forms: save the calculator's current calculation as a card; the admin's card."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from core.bounds import Bound
from core.forms import BoundedModelForm, BoundedNumberField
from planner.calculator.forms import BatchForm, CalculatorForm, ServingForm
from planner.cards.models import WorkloadCard


def _calculator_bound(form: type[CalculatorForm], name: str) -> Bound:
    field = form.base_fields[name]
    assert isinstance(field, BoundedNumberField)
    return field.bound


# The calculator's own ranges: a card holds only figures the calculator would accept (its summary
# columns are read from the calculator's inputs and result).
LATENCY_TARGET_MS = _calculator_bound(ServingForm, "latency_target_ms")
CARD_BOUNDS: dict[str, Bound] = {
    "latency_target_ms": LATENCY_TARGET_MS,
    "concurrency": _calculator_bound(ServingForm, "users"),
    "batch_window_hours": _calculator_bound(BatchForm, "window_hours"),
}


class WorkloadCardSaveForm(forms.Form):
    """Save the current calculation as a workload card; the result is recomputed from `query`."""

    name = forms.CharField(label=_("Card name"), max_length=120)
    latency_target_ms = BoundedNumberField(
        label=_("Latency target (ms, e.g. first token)"), required=False, bound=LATENCY_TARGET_MS
    )
    notes = forms.CharField(
        label=_("Notes"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    is_example = forms.BooleanField(label=_("Show to everyone as an example"), required=False)
    query = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, can_publish: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not can_publish:
            del self.fields["is_example"]


class WorkloadCardAdminForm(BoundedModelForm):
    """The admin's card: its numbers within the calculator's ranges."""

    bounds = CARD_BOUNDS

    class Meta:
        model = WorkloadCard
        fields = "__all__"
