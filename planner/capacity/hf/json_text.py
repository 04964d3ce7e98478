"""Reading a config.json as hostile input: bounded size, depth and digits, no NaN or duplicate
keys, and typed, range-checked reads that name the JSON key in every error."""

from __future__ import annotations

import json
import math
from typing import Any, Final

from planner.capacity.units import CapacityInputError

FIELD: Final = "config"
INDEX_FIELD: Final = "index_json"
MAX_CONFIG_BYTES: Final = (
    1 << 20
)  # 1 MiB: DeepSeek-V3's config.json is 1.7 kB, with layer lists < 10 kB
MAX_INDEX_BYTES: Final = 16 << 20  # DeepSeek-V3's index (91,000+ tensors) is about 9 MB
MAX_DEPTH: Final = 16  # config.json nests three levels (text_config.rope_scaling)
MAX_DIGITS: Final = 20  # no count in a config needs more (10^20 bytes is 100 EB)
MAX_PARAMS: Final = 10**13  # 10 T parameters: 15x the largest open checkpoint (DeepSeek-V3, 671 B)
# An index whose total is outside these bounds of the architecture's count is another model's.
INDEX_AGREEMENT: Final = (0.5, 2.0)


class _Invalid:
    """A JSON value the reader refuses (NaN, Infinity, a number too long): the walk after parsing
    reports it with its key."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _constant(name: str) -> _Invalid:
    return _Invalid(f"{name} is not a number (JSON has no NaN or Infinity)")


def _int(text: str) -> int | _Invalid:
    if len(text.lstrip("-")) > MAX_DIGITS:
        return _Invalid(f"a {len(text)}-digit number is out of any physical range")
    return int(text)


def _float(text: str) -> float | _Invalid:
    value = float(text)
    if not math.isfinite(value):
        return _Invalid(f"{text} overflows a number")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            out[key] = _Invalid(f"appears twice; which one is meant is ambiguous ({key!r})")
        else:
            out[key] = value
    return out


def load_json(text: str | bytes, field: str, limit: int) -> dict[str, Any]:
    """A JSON object from untrusted text: size, UTF-8, nesting depth, NaN, huge numbers and
    duplicate keys checked before any value is used. Linear in the text: the standard library's
    C scanner parses once (its hooks mark duplicates, constants and overlong numbers), and the
    depth is measured on the parsed value, never with a backtracking pattern (a pattern for
    strings took quadratic time on an unterminated run of escaped quotes)."""
    if not isinstance(text, str | bytes | bytearray):
        raise CapacityInputError(field, "must be the text of a JSON file")
    if isinstance(text, str) and len(text) > limit:  # before encoding a huge paste
        raise CapacityInputError(field, f"is {len(text):,} characters; at most {limit:,} are read")
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
    if len(raw) > limit:
        raise CapacityInputError(field, f"is {len(raw):,} bytes; at most {limit:,} are read")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CapacityInputError(field, "is not UTF-8 text") from None
    try:
        data = json.loads(
            source,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
            object_pairs_hook=_pairs,
        )
    except json.JSONDecodeError as exc:
        raise CapacityInputError(
            field, f"is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # nesting deeper than the interpreter's stack
        raise CapacityInputError(field, f"nests deeper than {MAX_DEPTH} levels") from None
    _refuse_invalid(data, field, "", 1)
    if not isinstance(data, dict):
        raise CapacityInputError(field, "must be a JSON object ({...})")
    return data


def _refuse_invalid(value: Any, field: str, path: str, depth: int) -> None:
    if depth > MAX_DEPTH and isinstance(value, dict | list):
        raise CapacityInputError(field, f"nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, _Invalid):
        raise CapacityInputError(field, f"{path or '(top level)'}: {value.why}")
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_invalid(item, field, f"{path}.{key}" if path else key, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _refuse_invalid(item, field, f"{path}[{i}]", depth + 1)


MISSING: Final = object()


class ConfigReader:
    """Typed, range-checked reads of one config, naming the JSON key in every error."""

    def __init__(
        self,
        data: dict[str, Any],
        prefix: str,
        defaults: dict[str, Any],
        nested: frozenset[str] | None = None,
    ) -> None:
        self.data = data
        self.prefix = prefix
        self.defaults = defaults
        self.nested = nested  # the keys that came from under `prefix` (None: all of them)

    def key(self, name: str) -> str:
        root = name.split(".")[0].split("[")[0]
        nested = self.nested is None or root in self.nested
        return f"{self.prefix}{name}" if nested else name

    def raw(self, name: str) -> Any:
        value = self.data.get(name)
        return self.defaults.get(name) if value is None else value

    def has(self, name: str) -> bool:
        return self.raw(name) is not None

    def error(self, name: str, why: str) -> CapacityInputError:
        return CapacityInputError(FIELD, f"{self.key(name)}: {why}")

    def whole(self, name: str, low: int, high: int, default: Any = MISSING) -> int:
        value = self.raw(name)
        if value is None:
            if default is MISSING:
                raise self.error(name, "missing: config.json must give it")
            return int(default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(name, f"must be a whole number, not {kind_of(value)}")
        if not low <= value <= high:
            raise self.error(name, f"{value:,} is outside {low:,}-{high:,}")
        return value

    def opt_whole(self, name: str, low: int, high: int) -> int | None:
        return self.whole(name, low, high) if self.has(name) else None

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(name, f"must be true or false, not {kind_of(value)}")
        return value

    def text(self, name: str, default: str = "") -> str:
        value = self.raw(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.error(name, f"must be a string, not {kind_of(value)}")
        if len(value) > 200:
            raise self.error(name, "is longer than 200 characters")
        return value

    def items(self, name: str, max_items: int) -> list[Any]:
        value = self.raw(name)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(name, f"must be a list, not {kind_of(value)}")
        if len(value) > max_items:
            raise self.error(name, f"has {len(value):,} items; at most {max_items:,}")
        return value


def kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, float):
        return f"{value!r}"
    return type(value).__name__
