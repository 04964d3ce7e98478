"""Django form fields that read numbers through core.bounds (the one bounded way)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from core.bounds import Bound, BoundError, bounded_number


class BoundedNumberField(forms.Field):
    """A number within a physical range; empty is None unless required."""

    def __init__(self, *, bound: Bound, **kwargs: Any) -> None:
        self.bound = bound
        step = "1" if bound.integer else "any"
        mode = "numeric" if bound.integer else "decimal"
        # No min/max attributes: the server's message, at the field, says what is wrong.
        kwargs.setdefault("widget", forms.NumberInput(attrs={"step": step, "inputmode": mode}))
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> Decimal | int | None:
        if value in self.empty_values:
            return None
        try:
            number = bounded_number(value, field=str(self.label or "value"), bound=self.bound)
        except BoundError as err:
            raise ValidationError(err.message, code="out_of_range") from None
        return int(number) if self.bound.integer else number
