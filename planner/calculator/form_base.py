"""What every calculator form shares: catalogue lookups, the pickers' placeholders, errors the
request could not hand over, and canonical query strings (the engine runs elsewhere)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar
from urllib.parse import urlencode

from django import forms
from django.core.exceptions import ValidationError

from planner.calculator.config_input import config_spec_or_none
from planner.calculator.pickers import (
    CONFIG_SOURCE,
    PICKER_FIELDS,
    PICKER_SOURCE,
    gpu_choices,
    model_choices,
    picker_defaults,
)
from planner.calculator.runs import query_values
from planner.capacity import CapacityInputError, default_catalogue


class CalculatorForm(forms.Form):
    """Shared parsing: catalogue lookups and canonical query strings (the engine runs elsewhere)."""

    kind: ClassVar[str]

    def __init__(
        self, *args: Any, input_errors: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        # What the request could not hand over (an oversized or unreadable config.json upload).
        self.input_errors = {k: v for k, v in (input_errors or {}).items() if k in self.fields}
        # The pickers list the catalogue as loaded now (prices may be overridden per deployment).
        for name, choices in (("gpu", gpu_choices), ("model", model_choices)):
            if name in self.fields:
                widget = self.fields[name].widget
                assert isinstance(widget, forms.Select)
                widget.choices = choices()
        self._show_picked_figures()

    def _show_picked_figures(self) -> None:
        """Empty fields that a picked GPU or model fills show its figure as their placeholder."""
        defaults = picker_defaults()
        for picker, source in PICKER_SOURCE.items():
            picked = str(self.data.get(picker, "") or "").strip().lower() if self.is_bound else ""
            figures = defaults[picker].get(picked, {})
            for field, value in figures.items():
                if field in self.fields:
                    self.fields[field].widget.attrs["placeholder"] = f"{value} ({source})"
        spec = config_spec_or_none(self.data.get("config")) if self.is_bound else None
        if spec is not None:
            for field, attr in PICKER_FIELDS["model"].items():
                figure = getattr(spec, attr, None)
                if field in self.fields and figure is not None:
                    self.fields[field].widget.attrs["placeholder"] = f"{figure:g} ({CONFIG_SOURCE})"

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name, message in self.input_errors.items():
            self.add_error(name, message)
        return cleaned

    def _clean_catalogue_id(self, name: str, lookup: Callable[[str], object]) -> str:
        value: str = (self.cleaned_data.get(name) or "").strip().lower()
        if value:
            try:
                lookup(value)
            except CapacityInputError as err:
                raise ValidationError(err.message, code="unknown") from None
        return value

    def clean_gpu(self) -> str:
        return self._clean_catalogue_id("gpu", default_catalogue().accelerator)

    def clean_model(self) -> str:
        return self._clean_catalogue_id("model", default_catalogue().model)

    def query_dict(self) -> dict[str, str]:
        """The inputs as query-string values, for shareable links and saved cards."""
        return query_values(self.kind, self.cleaned_data)

    def query_string(self) -> str:
        return urlencode(self.query_dict())

    def field_errors(self) -> dict[str, list[str]]:
        return {field: [str(e) for e in errors] for field, errors in self.errors.items()}
