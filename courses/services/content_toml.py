"""Reading TOML as the content files need it: each key's line (tomllib keeps none), typed and
bounded values, and errors that name the file, the line and the reason."""

from __future__ import annotations

import re
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

from core.bounds import Bound, BoundError, bounded_number
from core.ranges import (
    CONTENT_FIGURE,
    MAX_STEPS,
    STEP_MINUTES,
    STEP_TOO_LONG,
)
from courses.services.content_specs import SLUG_RE, ContentError, Path_

# --- where a key lives in a TOML file -------------------------------------------------------

_HEADER_RE = re.compile(r"^\s*(\[\[|\[)\s*([^\[\]]+?)\s*(\]\]|\])\s*(#.*)?$")
_KEY_RE = re.compile(r"""^\s*([A-Za-z0-9_\-]+(?:\s*\.\s*[A-Za-z0-9_\-]+)*)\s*=""")


def toml_key_lines(text: str) -> dict[Path_, int]:
    """Map each table and key path, e.g. ("modules", 1, "lessons", 0, "file"), to its 1-based line.

    tomllib reports syntax errors with a line but keeps no positions for valid documents, so
    schema errors find their line here. It understands table and array-of-tables headers, plain
    and dotted keys, and skips the inside of multi-line strings; that covers what we write.
    """
    lines: dict[Path_, int] = {}
    arrays: set[tuple[str, ...]] = set()
    counters: dict[Path_, int] = {}
    current: Path_ = ()
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        header = _HEADER_RE.match(line)
        if header:
            names = [n.strip().strip('"') for n in header.group(2).split(".")]
            resolved: list[str | int] = []
            for i, name in enumerate(names):
                resolved.append(name)
                plain = tuple(names[: i + 1])
                last = i == len(names) - 1
                if last and header.group(1) == "[[":
                    arrays.add(plain)
                    counters[tuple(resolved)] = counters.get(tuple(resolved), -1) + 1
                    resolved.append(counters[tuple(resolved)])
                elif plain in arrays:
                    resolved.append(counters.get(tuple(resolved), 0))
            current = tuple(resolved)
            lines.setdefault(current, number)
            continue
        key = _KEY_RE.match(line)
        if key:
            parts = tuple(p.strip() for p in key.group(1).split("."))
            lines.setdefault(current + parts, number)
            rest = line[key.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_string = quote
    return lines


class TomlDoc:
    """One parsed TOML file with the means to point at a key's line."""

    def __init__(self, file: Path) -> None:
        self.file = file
        try:
            self.text = file.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise ContentError(file, None, "file not found") from exc
        except UnicodeDecodeError as exc:
            raise ContentError(file, None, f"not UTF-8 text ({exc.reason})") from exc
        try:
            self.data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            raise ContentError(file, _toml_line(exc), _toml_reason(exc)) from exc
        except ValueError as exc:
            # Python refuses to turn an integer of more than 4,300 digits into an int.
            raise ContentError(file, None, f"a number too long to read ({exc})") from exc
        self._lines = toml_key_lines(self.text)

    def line(self, path: Path_) -> int | None:
        while path:
            if path in self._lines:
                return self._lines[path]
            path = path[:-1]
        return None

    def error(self, path: Path_, reason: str) -> ContentError:
        return ContentError(self.file, self.line(path), reason)


def _toml_line(exc: tomllib.TOMLDecodeError) -> int | None:
    line = getattr(exc, "lineno", None)
    if line is None:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(match.group(1)) if match else None
    return line


def _toml_reason(exc: tomllib.TOMLDecodeError) -> str:
    # Python 3.14 has exc.msg; 3.12 puts "(at line L, column C)" in the message.
    reason = getattr(exc, "msg", None) or str(exc)
    return "invalid TOML: " + re.sub(r"\s*\(at line \d+, column \d+\)$", "", reason)


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class TomlTable:
    """Typed access to one TOML table, every failure naming the key and its line."""

    def __init__(self, doc: TomlDoc, path: Path_, data: Any, allowed: set[str]) -> None:
        self.doc = doc
        self.path = path
        if not isinstance(data, dict):
            raise doc.error(path, f"{_dotted(path)} must be a table")
        self.data = data
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise doc.error((*path, unknown[0]), f"unknown key '{_dotted((*path, unknown[0]))}'")

    def _missing(self, key: str) -> ContentError:
        where = _dotted(self.path) or "the top level"
        return self.doc.error(self.path, f"missing required key '{key}' in {where}")

    def _wrong(self, key: str, what: str) -> ContentError:
        return self.doc.error((*self.path, key), f"'{_dotted((*self.path, key))}' must be {what}")

    def text(
        self, key: str, *, required: bool = True, default: str = "", max_length: int | None = None
    ) -> str:
        if key not in self.data:
            if required:
                raise self._missing(key)
            return default
        value = self.data[key]
        if not isinstance(value, str):
            raise self._wrong(key, "a string")
        value = value.strip()
        if required and not value:
            raise self._wrong(key, "a non-empty string")
        if max_length is not None and len(value) > max_length:
            raise self._wrong(key, f"at most {max_length} characters long (got {len(value)})")
        return value

    def slug(
        self, key: str, *, max_length: int = 50, reserved: frozenset[str] = frozenset()
    ) -> str:
        value = self.text(key)
        if not SLUG_RE.match(value) or len(value) > max_length:
            raise self._wrong(
                key, f"a slug (letters, digits, - and _, at most {max_length} characters)"
            )
        if value in reserved:
            raise self._wrong(
                key, f"a slug other than {', '.join(sorted(reserved))} (used by URLs)"
            )
        return value

    def boolean(self, key: str, *, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self._wrong(key, "true or false")
        return value

    def number(
        self,
        key: str,
        *,
        default: float | None = None,
        integer: bool = False,
        low: float | None = None,
        high: float | None = None,
        bound: Bound = CONTENT_FIGURE,
    ) -> float:
        if key not in self.data:
            if default is None:
                raise self._missing(key)
            return default
        raw = self.data[key]
        if (
            isinstance(raw, bool)
            or not isinstance(raw, int | float)
            or (integer and not isinstance(raw, int))
        ):
            raise self._wrong(key, "an integer" if integer else "a number")
        low_d = Decimal(low) if low is not None else bound_low(bound)
        high_d = Decimal(high) if high is not None else bound.maximum
        value = toml_bounded(raw, low=low_d, high=high_d, bound=bound)
        if value is None:
            got = f"an integer of {raw.bit_length()} bits" if isinstance(raw, int) else raw
            raise self._wrong(
                key, f"between {plain_decimal(low_d)} and {plain_decimal(high_d)} (got {got})"
            )
        return int(value) if integer else float(value)

    def integer(
        self, key: str, *, default: int | None = None, low: int = 0, high: int = 10**9
    ) -> int:
        return int(self.number(key, default=default, integer=True, low=low, high=high))

    def bounded_integer(self, key: str, *, default: int | None = None, bound: Bound) -> int:
        return int(self.number(key, default=default, integer=True, bound=bound))

    def steps(self, key: str, default: list[float]) -> list[float]:
        value = self.data.get(key, default)
        if not isinstance(value, list) or len(value) > MAX_STEPS:
            raise self._wrong(key, f"a list of at most {MAX_STEPS} steps in minutes")
        steps = []
        low, high = bound_low(STEP_MINUTES), STEP_MINUTES.maximum
        for i, raw in enumerate(value):
            step = None
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                step = toml_bounded(raw, low=low, high=high, bound=STEP_MINUTES)
            if step is None:
                got = f"an integer of {raw.bit_length()} bits" if isinstance(raw, int) else raw
                raise self.doc.error(
                    (*self.path, key),
                    f"'{_dotted((*self.path, key, i))}' must be between {plain_decimal(low)} and "
                    f"{plain_decimal(high)} minutes: {STEP_TOO_LONG} (got {got})",
                )
            steps.append(float(step))
        return steps

    def tables(self, key: str, allowed: set[str], *, required: bool = True) -> list[TomlTable]:
        if key not in self.data:
            if required:
                raise self._missing(key)
            return []
        value = self.data[key]
        if not isinstance(value, list) or (required and not value):
            raise self._wrong(
                key, f"a non-empty array of tables ([[{_dotted((*self.path, key))}]])"
            )
        return [TomlTable(self.doc, (*self.path, key, i), v, allowed) for i, v in enumerate(value)]

    def table(self, key: str, allowed: set[str]) -> TomlTable | None:
        if key not in self.data:
            return None
        return TomlTable(self.doc, (*self.path, key), self.data[key], allowed)


def bound_low(bound: Bound) -> Decimal:
    return Decimal(0) if bound.allow_zero else bound.minimum


def plain_decimal(value: Decimal) -> str:
    return format(value.normalize(), "f")


def toml_bounded(raw: int | float, *, low: Decimal, high: Decimal, bound: Bound) -> Decimal | None:
    """`raw` as a Decimal in [low, high], or None; nan, inf and huge integers never get far."""
    if isinstance(raw, int) and raw.bit_length() > 64:
        return None
    try:
        value = bounded_number(abs(raw), field="", bound=bound)
    except BoundError:
        if raw != 0 or not low <= 0:
            return None
        value = Decimal(0)
    value = -value if raw < 0 else value
    return value if low <= value <= high else None


def unique_values(tables: list[TomlTable], key: str, values: list[str], what: str) -> None:
    seen: set[str] = set()
    for table, value in zip(tables, values, strict=True):
        if value in seen:
            raise table.doc.error((*table.path, key), f"duplicate {what} '{value}'")
        seen.add(value)


def file_inside(folder: Path, table: TomlTable, key: str) -> Path:
    relative = table.text(key)
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise table._wrong(key, "a path inside the course folder")
    if not path.is_file():
        raise table.doc.error((*table.path, key), f"file not found: {relative}")
    return folder / relative
