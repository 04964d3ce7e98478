"""Django form fields that read numbers through core.bounds (the one bounded way)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar

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


class SignedBoundedNumberField(BoundedNumberField):
    """A number that may be negative, its size within `bound` (an expected answer of -40 °C)."""

    def to_python(self, value: Any) -> Decimal | int | None:
        text = value.strip() if isinstance(value, str) else value
        if isinstance(text, str) and text.startswith("-"):
            size = super().to_python(text[1:])
            return None if size is None else -size
        return super().to_python(text)


class BoundedModelForm(forms.ModelForm):
    """A model form whose number fields named in `bounds` read through core.bounds: the model's
    own form fields take any float or int the column holds (1e308, -5; an admin saved them)."""

    bounds: ClassVar[Mapping[str, Bound]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, bound in self.bounds.items():
            generated = self.fields.get(name)
            if generated is None or isinstance(generated, BoundedNumberField):
                continue
            self.fields[name] = BoundedNumberField(
                bound=bound,
                label=generated.label,
                help_text=generated.help_text,
                required=generated.required,
                initial=generated.initial,
            )
