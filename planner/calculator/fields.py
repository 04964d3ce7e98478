"""Form fields of the calculator: figures that must be positive, precisions, catalogue pickers."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from core.bounds import Bound
from core.forms import BoundedNumberField
from planner.capacity import PRECISIONS


def gb_field(
    label: str,
    help_text: str = "",
    *,
    allow_zero: bool = False,
    maximum: str = "1e6",
    minimum: str | None = None,
    required: bool = False,
) -> BoundedNumberField:
    """A decimal figure with its physical range (core.bounds), checked before any arithmetic."""
    bound = Bound(maximum=Decimal(maximum), allow_zero=allow_zero)
    if minimum is not None:
        bound = Bound(maximum=Decimal(maximum), allow_zero=allow_zero, minimum=Decimal(minimum))
    return BoundedNumberField(label=label, required=required, help_text=help_text, bound=bound)


def int_field(
    label: str,
    help_text: str = "",
    *,
    allow_zero: bool = False,
    maximum: int = 10**9,
    required: bool = False,
) -> BoundedNumberField:
    """A whole-number figure with its physical range (core.bounds)."""
    return BoundedNumberField(
        label=label,
        required=required,
        help_text=help_text,
        bound=Bound(maximum=Decimal(maximum), allow_zero=allow_zero, integer=True),
    )


def fraction_field(label: str, help_text: str = "") -> BoundedNumberField:
    """A share of a whole: greater than zero, at most 1 (core.bounds)."""
    return BoundedNumberField(
        label=label,
        required=False,
        help_text=help_text,
        bound=Bound(maximum=Decimal(1), minimum=Decimal("0.01")),
    )


def precision_field(label: str, help_text: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label,
        required=False,
        help_text=help_text,
        choices=[("", "not given"), *((p, p) for p in PRECISIONS)],
    )


def picker_field(label: str, help_text: str) -> forms.CharField:
    """A catalogue picker (GPU or model); its choices are filled when the form is built."""
    return forms.CharField(label=label, required=False, help_text=help_text, widget=forms.Select)
