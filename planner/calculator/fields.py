"""Form fields of the calculator: figures that must be positive, precisions, catalogue pickers,
switches, and the choices the engine keeps a registry of (engine profiles, Adam bytes)."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from core.bounds import Bound
from core.forms import BoundedNumberField
from planner.capacity import PRECISIONS
from planner.capacity.engine_profiles import DEFAULT_ENGINE_PROFILE, ENGINE_PROFILES
from planner.capacity.training.memory import ADAM_BYTES


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


class SwitchField(forms.Field):
    """An on/off input: "true" (a ticked checkbox's value) or "false"; empty or absent is not
    given (None). Anything else is refused, so a typo in a link or the API is a 400 naming the
    field rather than a silent "on" (Django's CheckboxInput reads any other text as ticked)."""

    VALUES = {"true": True, "on": True, "1": True, "false": False, "off": False, "0": False}
    default_error_messages = {"invalid": "use true or false."}

    def to_python(self, value: object) -> bool | None:
        if isinstance(value, bool):
            return value
        if value is None or value == "":
            return None
        key = str(value).strip().lower()
        if key not in self.VALUES:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return self.VALUES[key]


def switch_field(label: str, help_text: str) -> SwitchField:
    """A checkbox on the page, `--name` / `--no-name` on the CLI, true/false in a query."""
    return SwitchField(label=label, required=False, help_text=help_text)


def engine_profile_choices() -> list[tuple[str, str]]:
    """The engine's registry of serving-engine generations, each under the engine's own name; a
    profile added there is offered here with no change."""
    default = ENGINE_PROFILES[DEFAULT_ENGINE_PROFILE].name
    return [
        ("", f"not given ({default}, current)"),
        *(
            (p.id, f"{p.name}, current" if p.id == DEFAULT_ENGINE_PROFILE else p.name)
            for p in ENGINE_PROFILES.values()
        ),
    ]


def engine_profile_field() -> forms.ChoiceField:
    return forms.ChoiceField(
        label="Serving engine (vLLM version)",
        required=False,
        help_text="Whose start-up accounting sizes the overhead when it is left empty.",
        choices=engine_profile_choices(),
        error_messages={
            "invalid_choice": "unknown engine profile %(value)s; use "
            + ", ".join(ENGINE_PROFILES)
            + "."
        },
    )


# Words for the engine's Adam byte counts (planner.capacity.training.memory.ADAM_BYTES).
ADAM_BYTES_LABELS = {16: "bf16 gradients", 18: "fp32 gradients", 6: "8-bit AdamW"}


def adam_bytes_field() -> forms.TypedChoiceField:
    """Every byte count the engine knows, in its order; one without words shows its number."""
    described = (
        (str(n), f"{n} ({ADAM_BYTES_LABELS[n]})" if n in ADAM_BYTES_LABELS else str(n))
        for n in ADAM_BYTES
    )
    return forms.TypedChoiceField(
        label="Adam bytes per parameter",
        required=False,
        choices=[("", "not given (16)"), *described],
        coerce=int,
        empty_value=None,
        error_messages={
            "invalid_choice": "use " + ", ".join(str(n) for n in ADAM_BYTES) + " (or leave empty)."
        },
    )
