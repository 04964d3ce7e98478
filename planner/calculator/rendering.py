"""The calculator form as plain rows for one template loop (no per-widget templates; a select's
options rendered once per set of choices and selected value), and the result's words for people:
warning titles and assumption labels instead of the JSON's codes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django import forms
from django.utils.formats import localize
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from core.forms import BoundedNumberField
from planner.calculator.config_input import COMPACT_PREFIX, ConfigError, expand
from planner.calculator.fields import SwitchField
from planner.calculator.forms import CalculatorForm

# One per planner.capacity.results.WarningCode (tests/planner/calculator/test_warning_titles.py).
WARNING_TITLES: dict[str, Any] = {
    "weights_do_not_fit": _("The weights do not fit"),
    "no_room_for_serving": _("No room for one user"),
    "target_users_do_not_fit": _("Not all target users fit"),
    "memory_bound": _("Too slow: memory-bound"),
    "decode_too_slow": _("Too slow to decode"),
    "arrivals_exceed_prefill": _("Arrivals outrun the prefills"),
    "prefill_too_slow": _("First token too slow"),
    "context_exceeds_model": _("Context longer than the model's"),
    "mla_latent_cache": _("Multi-head latent attention: a compressed KV cache"),
    "sliding_window_upper_bound": _("Sliding window: an upper bound"),
    "moe_all_experts_resident": _("Mixture of experts"),
    "multimodal_activations": _("Multimodal model"),
    "precision_not_native": _("Precision not native to this device"),
    "training_does_not_fit": _("Training does not fit"),
    "activations_not_counted": _("Activations not counted"),
    "window_too_short": _("The window is too short"),
    "not_an_accelerator": _("Not an accelerator"),
}
# Assumptions the engine names by something other than a form field.
ASSUMPTION_LABELS: dict[str, Any] = {
    "api": _("Managed API"),
    "adam_bytes": _("Adam bytes per parameter"),
}


@dataclass(frozen=True, slots=True)
class FieldRow:
    name: str
    label: str
    help_text: str
    kind: str  # "text" | "select" | "checkbox" (ticked: value "true")
    value: str
    placeholder: str
    inputmode: str
    options: SafeString  # a select's <option>s, the typed value selected
    errors: list[str]


def form_rows(form: CalculatorForm) -> list[FieldRow]:
    """Every visible field with its typed text (kept as typed, even when invalid) and errors."""
    rows = []
    errors = form.errors if form.is_bound else {}
    for name, field in form.fields.items():
        if isinstance(field.widget, forms.HiddenInput):
            continue
        raw = form.data.get(name, "") if form.is_bound else form.initial.get(name, "")
        value = "" if raw is None else str(raw)
        select = isinstance(field.widget, forms.Select)
        choices = field.widget.choices if select else ()  # type: ignore[attr-defined]
        inputmode = ""
        if isinstance(field, BoundedNumberField):
            inputmode = "numeric" if field.bound.integer else "decimal"
        kind = "select" if select else "text"
        if isinstance(field.widget, forms.Textarea):
            kind = "textarea"
            value = readable_config(value)
        if isinstance(field, SwitchField):
            kind = "checkbox"
            value = "true" if SwitchField.VALUES.get(value.strip().lower()) else ""
        rows.append(
            FieldRow(
                name=name,
                label=str(field.label or name),
                help_text=str(field.help_text or ""),
                kind=kind,
                value=value,
                placeholder=str(field.widget.attrs.get("placeholder", "")),
                inputmode=inputmode,
                options=select_options(choices, value),
                errors=[readable_error(str(e), str(raw or "")) for e in errors.get(name, [])],
            )
        )
    return rows


def readable_config(value: str) -> str:
    """A link's compact config as the JSON a learner pasted (indented); other text as typed."""
    if not value.strip().startswith(COMPACT_PREFIX):
        return value
    try:
        return json.dumps(json.loads(expand(value)), indent=2, ensure_ascii=False)
    except (ConfigError, ValueError, RecursionError):
        return value


def select_options(choices: Iterable[tuple[Any, Any]], value: str) -> SafeString:
    """The <option>s of a select with `value` selected (none when it is not a choice)."""
    pairs = tuple((str(k), str(v)) for k, v in choices)
    return _options_html(pairs, value if any(k == value for k, _ in pairs) else None)


# The choices are the pickers' (one tuple per catalogue) and the fields' own, and only a value
# among them is a key: a few hundred entries at most, each rendered once.
@lru_cache(maxsize=1024)
def _options_html(pairs: tuple[tuple[str, str], ...], selected: str | None) -> SafeString:
    return format_html_join(
        "",
        '<option value="{}"{}>{}</option>',
        ((k, SafeString(" selected") if k == selected else "", v) for k, v in pairs),
    )


# Shown elsewhere on the page, in words.
# Lists the page shows in words elsewhere (the notes under "What this does not model").
NOT_FIGURES = frozenset(
    {"formulas", "warnings", "assumptions", "missing_assumptions", "speed_curve", "not_modelled"}
)


def figure_rows(result: dict[str, Any]) -> SafeString:
    """The result's figures under the API's keys, as table rows: each value as a template prints it
    (localised), None as a dash. Built here, not in a template loop: 48 rows for a serving result,
    and the batch result's "items" key would shadow the dict's items()."""
    return format_html_join(
        "",
        '<tr><th scope="row"><code>{}</code></th><td>{}</td></tr>',
        ((k, "—" if v is None else localize(v)) for k, v in result.items() if k not in NOT_FIGURES),
    )


def readable_warnings(result: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {**w, "title": str(WARNING_TITLES.get(w["code"], w["code"].replace("_", " ")))}
        for w in result.get("warnings", [])
    ]


def readable_assumptions(form: CalculatorForm, result: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    for a in result.get("assumptions", []):
        field = form.fields.get(a["field"])
        label = field.label if field is not None else ASSUMPTION_LABELS.get(a["field"])
        rows.append({**a, "label": str(label or a["field"].replace("_", " ").capitalize())})
    return rows


# Python's JSON messages in a learner's words (what the reader expected where it stopped).
JSON_MESSAGES = {
    "Expecting property name enclosed in double quotes": _(
        "a key in double quotes was expected (a comma after the last entry, or a key without "
        "quotes?)"
    ),
    "Expecting value": _("a value was expected (a missing value, or a trailing comma?)"),
    "Expecting ',' delimiter": _("a comma was expected between two entries"),
    "Expecting ':' delimiter": _("a colon was expected after a key"),
    "Unterminated string starting at": _("a text in quotes is not closed"),
    "Extra data": _("more text follows the closing brace"),
}
JSON_ERROR_RE = re.compile(
    r"^is not JSON: (?P<msg>.+?) \(line (?P<line>\d+), column (?P<col>\d+)\)$"
)


JSON_KEY_RE = re.compile(r'"((?:[^"\\]|\\.){1,80})"\s*:')


def readable_error(message: str, text: str = "") -> str:
    """A field's error as the page shows it: a JSON parser's message says where, what it
    expected and, from the typed `text`, the last key before that place."""
    match = JSON_ERROR_RE.match(message)
    if match is None:
        return message
    said = next((str(v) for k, v in JSON_MESSAGES.items() if match["msg"].startswith(k)), None)
    where = f"line {match['line']}, column {match['col']}"
    lines = text.splitlines()
    line, col = int(match["line"]), int(match["col"])
    before = (
        "\n".join([*lines[: line - 1], lines[line - 1][: col - 1]]) if line <= len(lines) else ""
    )
    keys = JSON_KEY_RE.findall(before)
    after = f' after the key "{keys[-1]}"' if keys else ""
    return f"is not valid JSON at {where}{after}: {said or match['msg']}."


# The engine's notes name its modules; the page names what they are.
ENGINE_WORDS = (
    ("planner.capacity.speed_model", _("the calculator's speed model")),
    ("planner.capacity", _("the calculator's engine")),
)


def readable_note(note: str) -> str:
    for identifier, words in ENGINE_WORDS:
        note = note.replace(identifier, str(words))
    return note
