"""Form fields of the calculator: figures that must be positive, precisions, catalogue pickers."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError

from planner.capacity import PRECISIONS


def gt_zero(value: Decimal | int) -> None:
    if value is not None and value <= 0:
        raise ValidationError("must be greater than zero.", code="not_positive")


def not_negative(value: Decimal | int) -> None:
    if value is not None and value < 0:
        raise ValidationError("must not be negative.", code="negative")


def gb_field(label: str, help_text: str = "", *, allow_zero: bool = False) -> forms.DecimalField:
    return forms.DecimalField(
        label=label,
        required=False,
        help_text=help_text,
        validators=[not_negative if allow_zero else gt_zero],
        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}),
    )


def int_field(label: str, help_text: str = "", *, allow_zero: bool = False) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        help_text=help_text,
        validators=[not_negative if allow_zero else gt_zero],
        widget=forms.NumberInput(attrs={"step": "1", "inputmode": "numeric"}),
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
