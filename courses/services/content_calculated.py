"""A calculated quiz item's template as the content files write it: its shape checked here (the
variables, the prompt's placeholders, the answer range), its draws by the checks that apps which
can work the exercises register (courses.services.content_specs.calculated_check_register)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from core.ranges import CONTENT_FIGURE
from courses.services.content_specs import CalculatedSpec, Path_, calculated_checks
from courses.services.content_toml import TomlTable, _dotted, toml_bounded

CALCULATED_KEYS = {"exercise", "variables", "relative_tolerance", "answer_range", "hand"}
_NUMERIC_ONLY_KEYS = ("expected_value", "tolerance", "model_answer")
_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,39}$")
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_VARIABLES = 20
MAX_LIST_VALUES = 100
MAX_RANGE_STEPS = 10**6
_VALUE_MAX = Decimal(10**12)


def _figure(table: TomlTable, path: Path_, raw: object, what: str) -> Decimal:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise table.doc.error(path, f"'{_dotted(path)}' must be a number ({what})")
    value = toml_bounded(raw, low=-_VALUE_MAX, high=_VALUE_MAX, bound=CONTENT_FIGURE)
    if value is None:
        raise table.doc.error(
            path, f"'{_dotted(path)}' must be between -{_VALUE_MAX:,} and {_VALUE_MAX:,} ({what})"
        )
    return value


def _list_variable(table: TomlTable, path: Path_, values: list[Any]) -> list[Any]:
    where = _dotted(path)
    if not values or len(values) > MAX_LIST_VALUES:
        raise table.doc.error(path, f"'{where}' must list 1 to {MAX_LIST_VALUES} values")
    if all(isinstance(v, str) for v in values):
        for v in values:
            if not v.strip() or len(v) > 100:
                raise table.doc.error(path, f"'{where}' values must be 1 to 100 characters")
        return list(values)
    for i, v in enumerate(values):
        _figure(table, path, v, f"value {i + 1} of a list of numbers")
    return list(values)


def _range_variable(table: TomlTable, path: Path_, spec: dict[str, Any]) -> dict[str, Any]:
    where = _dotted(path)
    unknown = sorted(set(spec) - {"min", "max", "step"})
    if unknown or "min" not in spec or "max" not in spec:
        raise table.doc.error(
            path, f"'{where}' must be a list of values or a range {{ min, max, step }}"
        )
    low = _figure(table, path, spec["min"], "min")
    high = _figure(table, path, spec["max"], "max")
    step = _figure(table, path, spec.get("step", 1), "step")
    if step <= 0:
        raise table.doc.error(path, f"'{where}.step' must be greater than zero")
    if low > high:
        raise table.doc.error(path, f"'{where}' has min above max")
    if (high - low) / step > MAX_RANGE_STEPS:
        raise table.doc.error(path, f"'{where}' has more than {MAX_RANGE_STEPS:,} steps")
    return {"min": spec["min"], "max": spec["max"], "step": spec.get("step", 1)}


def _variables(table: TomlTable) -> dict[str, Any]:
    path = (*table.path, "variables")
    raw = table.data.get("variables")
    if not isinstance(raw, dict) or not raw:
        raise table.doc.error(
            path, f"'{_dotted(path)}' must be a table of variables ([items.variables])"
        )
    if len(raw) > MAX_VARIABLES:
        raise table.doc.error(path, f"'{_dotted(path)}' has more than {MAX_VARIABLES} variables")
    out: dict[str, Any] = {}
    for name, spec in raw.items():
        where = (*path, name)
        if not _NAME_RE.match(name):
            raise table.doc.error(
                where, f"variable '{name}' must be lower-case letters, digits and _"
            )
        if isinstance(spec, list):
            out[name] = _list_variable(table, where, spec)
        elif isinstance(spec, dict):
            out[name] = _range_variable(table, where, spec)
        else:
            raise table.doc.error(
                where,
                f"'{_dotted(where)}' must be a list of values or a range {{ min, max, step }}",
            )
    return out


def _answer_range(table: TomlTable) -> tuple[float, float]:
    path = (*table.path, "answer_range")
    raw = table.data.get("answer_range")
    if not isinstance(raw, list) or len(raw) != 2:
        raise table.doc.error(path, f"'{_dotted(path)}' must be [lowest, highest] answer")
    low, high = (_figure(table, path, v, "an answer bound") for v in raw)
    if low >= high:
        raise table.doc.error(path, f"'{_dotted(path)}' must have its lowest below its highest")
    return float(low), float(high)


def _placeholders_match(table: TomlTable, prompt: str, variables: dict[str, Any]) -> None:
    """Every variable appears in the prompt. A placeholder that is not a variable is one of the
    exercise's facts ({weights_gb}); the draws check that the exercise gives it."""
    named = set(_PLACEHOLDER_RE.findall(prompt))
    for name in sorted(set(variables) - named):
        raise table.doc.error(
            (*table.path, "variables", name),
            f"variable '{name}' is defined but the prompt never uses {{{name}}}",
        )


def calculated_load(table: TomlTable, kind: str) -> CalculatedSpec | None:
    """A calculated item's template, checked (its shape here, its draws by the registered
    checks); None for another kind, which must not carry a template's keys."""
    if kind != "calculated":
        for key in sorted(CALCULATED_KEYS & set(table.data)):
            raise table._wrong(key, f"absent: only a calculated item takes '{key}'")
        return None
    for key in _NUMERIC_ONLY_KEYS:
        if key in table.data:
            raise table._wrong(key, "absent: a calculated item's answer is worked by its exercise")
    exercise = table.text("exercise", max_length=60)
    if not _NAME_RE.match(exercise):
        raise table._wrong("exercise", "an exercise name (lower-case letters, digits and _)")
    variables = _variables(table)
    _placeholders_match(table, table.text("prompt"), variables)
    hand = table.text("hand", max_length=600) if "hand" in table.data else ""
    spec = CalculatedSpec(
        exercise=exercise,
        variables=variables,
        relative_tolerance=table.number("relative_tolerance", low=0, high=1),
        answer_range=_answer_range(table),
        prompt=table.text("prompt"),
        hand=hand,
    )
    for check in calculated_checks():
        fault = check(spec)
        if fault is not None:
            key, reason = fault
            if key in variables:
                path: Path_ = (*table.path, "variables", key)
            elif key in {"answer_range", "hand", "prompt"}:
                path = (*table.path, key)
            else:
                path = (*table.path, "exercise")
            raise table.doc.error(path, reason)
    return spec
