"""Read and validate a course folder (course.toml, a Markdown file and a quiz TOML per lesson).

Nothing here touches the database: `course_content_load` returns plain specs, or raises
`ContentError` naming the file, the line and the reason.

Manifest layout (see content/gpus-tpus-ai-hardware/course.toml):
    [course]            slug, title, summary, is_published
    [scheduling]        desired_retention, learning_steps_minutes, relearning_steps_minutes,
                        maximum_interval_days, daily_new_limit, daily_review_limit
    [[modules]]         slug, title
    [[modules.lessons]] slug, title, file, quiz, objective, decision, estimated_minutes
    [rubric]            title; [[rubric.criteria]] key, title, description;
                        [[rubric.criteria.levels]] key, title, points, description
Quiz file: [[items]] key, kind, prompt, explanation, expected_value, unit, tolerance, model_answer;
           [[items.choices]] key, text, is_correct, reason
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from core.bounds import Bound, BoundError, bounded_number
from core.ranges import (
    CONTENT_FIGURE,
    DAILY_NEW_LIMIT,
    DAILY_REVIEW_LIMIT,
    DESIRED_RETENTION,
    MAX_STEPS,
    MAXIMUM_INTERVAL_DAYS,
    STEP_MINUTES,
    STEP_TOO_LONG,
)

MANIFEST = "course.toml"
SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+$")
# Lesson and course slugs share URL space with these paths (courses/urls.py).
RESERVED_LESSON_SLUGS = frozenset({"enroll", "resume"})
RESERVED_COURSE_SLUGS = frozenset({"teaching"})
KINDS = ("multiple_choice", "numeric", "free_recall")

Path_ = tuple[str | int, ...]


class ContentError(Exception):
    """A content file is malformed: which file, which line (1-based, if known), and why."""

    def __init__(self, file: Path, line: int | None, reason: str) -> None:
        self.file = file
        self.line = line
        self.reason = reason
        where = f"{file}:{line}" if line else str(file)
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class ChoiceSpec:
    key: str
    text: str
    is_correct: bool
    reason: str


@dataclass(frozen=True)
class ItemSpec:
    key: str
    kind: str
    prompt: str
    explanation: str
    expected_value: float | None
    unit: str
    tolerance: float
    model_answer: str
    choices: tuple[ChoiceSpec, ...]


@dataclass(frozen=True)
class LessonSpec:
    slug: str
    title: str
    objective: str
    decision: str
    estimated_minutes: int
    body_markdown: str
    items: tuple[ItemSpec, ...]


@dataclass(frozen=True)
class ModuleSpec:
    slug: str
    title: str
    lessons: tuple[LessonSpec, ...]


@dataclass(frozen=True)
class LevelSpec:
    key: str
    title: str
    points: int
    description: str


@dataclass(frozen=True)
class CriterionSpec:
    key: str
    title: str
    description: str
    levels: tuple[LevelSpec, ...]


@dataclass(frozen=True)
class RubricSpec:
    title: str
    criteria: tuple[CriterionSpec, ...]


@dataclass(frozen=True)
class CourseSpec:
    slug: str
    title: str
    summary: str
    is_published: bool
    desired_retention: float
    learning_steps_minutes: list[float]
    relearning_steps_minutes: list[float]
    maximum_interval_days: int
    daily_new_limit: int
    daily_review_limit: int
    modules: tuple[ModuleSpec, ...]
    rubric: RubricSpec | None
    content_hash: str = ""
    files: tuple[Path, ...] = field(default=())


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


class _Doc:
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


class _Table:
    """Typed access to one TOML table, every failure naming the key and its line."""

    def __init__(self, doc: _Doc, path: Path_, data: Any, allowed: set[str]) -> None:
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
        low_d = Decimal(low) if low is not None else _low(bound)
        high_d = Decimal(high) if high is not None else bound.maximum
        value = _bounded(raw, low=low_d, high=high_d, bound=bound)
        if value is None:
            got = f"an integer of {raw.bit_length()} bits" if isinstance(raw, int) else raw
            raise self._wrong(key, f"between {_plain(low_d)} and {_plain(high_d)} (got {got})")
        return int(value) if integer else float(value)

    def integer(
        self, key: str, *, default: int | None = None, low: int = 0, high: int = 10**9
    ) -> int:
        return int(self.number(key, default=default, integer=True, low=low, high=high))

    def bounded_integer(self, key: str, *, default: int, bound: Bound) -> int:
        return int(self.number(key, default=default, integer=True, bound=bound))

    def steps(self, key: str, default: list[float]) -> list[float]:
        value = self.data.get(key, default)
        if not isinstance(value, list) or len(value) > MAX_STEPS:
            raise self._wrong(key, f"a list of at most {MAX_STEPS} steps in minutes")
        steps = []
        low, high = _low(STEP_MINUTES), STEP_MINUTES.maximum
        for i, raw in enumerate(value):
            step = None
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                step = _bounded(raw, low=low, high=high, bound=STEP_MINUTES)
            if step is None:
                got = f"an integer of {raw.bit_length()} bits" if isinstance(raw, int) else raw
                raise self.doc.error(
                    (*self.path, key),
                    f"'{_dotted((*self.path, key, i))}' must be between {_plain(low)} and "
                    f"{_plain(high)} minutes: {STEP_TOO_LONG} (got {got})",
                )
            steps.append(float(step))
        return steps

    def tables(self, key: str, allowed: set[str], *, required: bool = True) -> list[_Table]:
        if key not in self.data:
            if required:
                raise self._missing(key)
            return []
        value = self.data[key]
        if not isinstance(value, list) or (required and not value):
            raise self._wrong(
                key, f"a non-empty array of tables ([[{_dotted((*self.path, key))}]])"
            )
        return [_Table(self.doc, (*self.path, key, i), v, allowed) for i, v in enumerate(value)]

    def table(self, key: str, allowed: set[str]) -> _Table | None:
        if key not in self.data:
            return None
        return _Table(self.doc, (*self.path, key), self.data[key], allowed)


def _low(bound: Bound) -> Decimal:
    return Decimal(0) if bound.allow_zero else bound.minimum


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _bounded(raw: int | float, *, low: Decimal, high: Decimal, bound: Bound) -> Decimal | None:
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


def _unique(tables: list[_Table], key: str, values: list[str], what: str) -> None:
    seen: set[str] = set()
    for table, value in zip(tables, values, strict=True):
        if value in seen:
            raise table.doc.error((*table.path, key), f"duplicate {what} '{value}'")
        seen.add(value)


def _inside(folder: Path, table: _Table, key: str) -> Path:
    relative = table.text(key)
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise table._wrong(key, "a path inside the course folder")
    if not path.is_file():
        raise table.doc.error((*table.path, key), f"file not found: {relative}")
    return folder / relative


# --- the loader -------------------------------------------------------------------------------

COURSE_KEYS = {"slug", "title", "summary", "is_published"}
SCHEDULING_KEYS = {
    "desired_retention",
    "learning_steps_minutes",
    "relearning_steps_minutes",
    "maximum_interval_days",
    "daily_new_limit",
    "daily_review_limit",
}
MODULE_KEYS = {"slug", "title", "lessons"}
LESSON_KEYS = {"slug", "title", "file", "quiz", "objective", "decision", "estimated_minutes"}
ITEM_KEYS = {
    "key",
    "kind",
    "prompt",
    "explanation",
    "expected_value",
    "unit",
    "tolerance",
    "model_answer",
    "choices",
}
CHOICE_KEYS = {"key", "text", "is_correct", "reason"}
RUBRIC_KEYS = {"title", "criteria"}
CRITERION_KEYS = {"key", "title", "description", "levels"}
LEVEL_KEYS = {"key", "title", "points", "description"}


def _load_items(file: Path) -> tuple[ItemSpec, ...]:
    doc = _Doc(file)
    root = _Table(doc, (), doc.data, {"items"})
    tables = root.tables("items", ITEM_KEYS)
    items: list[ItemSpec] = []
    for t in tables:
        kind = t.text("kind")
        if kind not in KINDS:
            raise t._wrong("kind", "one of " + ", ".join(KINDS))
        choices: list[ChoiceSpec] = []
        expected: float | None = None
        if kind == "multiple_choice":
            choice_tables = t.tables("choices", CHOICE_KEYS)
            for c in choice_tables:
                choices.append(
                    ChoiceSpec(
                        key=c.slug("key", max_length=40),
                        text=c.text("text"),
                        is_correct=c.boolean("is_correct", default=False),
                        reason=c.text("reason", required=False),
                    )
                )
            _unique(choice_tables, "key", [c.key for c in choices], "choice key")
            if len(choices) < 2:
                raise t.doc.error(
                    (*t.path, "choices"), "a multiple-choice item needs 2 choices or more"
                )
            if not any(c.is_correct for c in choices):
                raise t.doc.error(
                    (*t.path, "choices"), "a multiple-choice item needs a correct choice"
                )
        elif "choices" in t.data:
            raise t.doc.error((*t.path, "choices"), f"a {kind} item has no choices")
        if kind == "numeric":
            expected = t.number("expected_value", low=-(10**15))
        if kind == "free_recall":
            t.text("model_answer")
        items.append(
            ItemSpec(
                key=t.slug("key", max_length=100),
                kind=kind,
                prompt=t.text("prompt"),
                explanation=t.text("explanation", required=False),
                expected_value=expected,
                unit=t.text("unit", required=False, max_length=40),
                tolerance=t.number("tolerance", default=0.0, low=0),
                model_answer=t.text("model_answer", required=False),
                choices=tuple(choices),
            )
        )
    _unique(tables, "key", [i.key for i in items], "item key")
    return tuple(items)


def course_content_load(*, folder: Path) -> CourseSpec:
    """Parse and validate a course folder. Raises ContentError; never returns a half-valid spec."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ContentError(folder, None, "not a folder")
    doc = _Doc(folder / MANIFEST)
    root = _Table(doc, (), doc.data, {"course", "scheduling", "modules", "rubric"})
    files: list[Path] = [doc.file]

    course = root.table("course", COURSE_KEYS)
    if course is None:
        raise doc.error((), "missing required table [course]")
    sched = root.table("scheduling", SCHEDULING_KEYS) or _Table(doc, ("scheduling",), {}, set())

    module_tables = root.tables("modules", MODULE_KEYS)
    modules: list[ModuleSpec] = []
    all_lessons: list[tuple[_Table, str]] = []
    for m in module_tables:
        lessons: list[LessonSpec] = []
        for lt in m.tables("lessons", LESSON_KEYS):
            body_file = _inside(folder, lt, "file")
            files.append(body_file)
            try:
                body = body_file.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise ContentError(body_file, None, f"not UTF-8 text ({exc.reason})") from exc
            if not body.strip():
                raise ContentError(body_file, 1, "the lesson body is empty")
            items: tuple[ItemSpec, ...] = ()
            if "quiz" in lt.data:
                quiz_file = _inside(folder, lt, "quiz")
                files.append(quiz_file)
                items = _load_items(quiz_file)
            lesson = LessonSpec(
                slug=lt.slug("slug", reserved=RESERVED_LESSON_SLUGS),
                title=lt.text("title", max_length=200),
                objective=lt.text("objective"),
                decision=lt.text("decision", required=False),
                estimated_minutes=lt.integer("estimated_minutes", default=10, low=1, high=600),
                body_markdown=body,
                items=items,
            )
            lessons.append(lesson)
            all_lessons.append((lt, lesson.slug))
        modules.append(
            ModuleSpec(
                slug=m.slug("slug"), title=m.text("title", max_length=200), lessons=tuple(lessons)
            )
        )
    _unique(module_tables, "slug", [m.slug for m in modules], "module slug")
    # Lesson URLs are /courses/<course>/<lesson>/, so lesson slugs are unique in the course.
    _unique([t for t, _ in all_lessons], "slug", [s for _, s in all_lessons], "lesson slug")

    rubric: RubricSpec | None = None
    rt = root.table("rubric", RUBRIC_KEYS)
    if rt is not None:
        criteria: list[CriterionSpec] = []
        criterion_tables = rt.tables("criteria", CRITERION_KEYS)
        for ct in criterion_tables:
            level_tables = ct.tables("levels", LEVEL_KEYS)
            levels = [
                LevelSpec(
                    key=lv.slug("key", max_length=60),
                    title=lv.text("title", max_length=120),
                    points=lv.integer("points", high=1000),
                    description=lv.text("description", required=False),
                )
                for lv in level_tables
            ]
            _unique(level_tables, "key", [lv.key for lv in levels], "level key")
            if len(levels) < 2:
                raise ct.doc.error((*ct.path, "levels"), "a criterion needs 2 levels or more")
            criteria.append(
                CriterionSpec(
                    key=ct.slug("key", max_length=60),
                    title=ct.text("title", max_length=200),
                    description=ct.text("description", required=False),
                    levels=tuple(levels),
                )
            )
        _unique(criterion_tables, "key", [c.key for c in criteria], "criterion key")
        rubric = RubricSpec(title=rt.text("title", max_length=200), criteria=tuple(criteria))

    digest = hashlib.sha256()
    for f in files:
        digest.update(os.path.relpath(f, folder).encode())
        digest.update(b"\0")
        digest.update(f.read_bytes())
        digest.update(b"\0")

    return CourseSpec(
        slug=course.slug("slug", reserved=RESERVED_COURSE_SLUGS),
        title=course.text("title", max_length=200),
        summary=course.text("summary", required=False),
        is_published=course.boolean("is_published", default=True),
        desired_retention=sched.number("desired_retention", default=0.9, bound=DESIRED_RETENTION),
        learning_steps_minutes=sched.steps("learning_steps_minutes", [1, 10]),
        relearning_steps_minutes=sched.steps("relearning_steps_minutes", [10]),
        maximum_interval_days=sched.bounded_integer(
            "maximum_interval_days", default=36500, bound=MAXIMUM_INTERVAL_DAYS
        ),
        daily_new_limit=sched.bounded_integer("daily_new_limit", default=20, bound=DAILY_NEW_LIMIT),
        daily_review_limit=sched.bounded_integer(
            "daily_review_limit", default=200, bound=DAILY_REVIEW_LIMIT
        ),
        modules=tuple(modules),
        rubric=rubric,
        content_hash=digest.hexdigest(),
        files=tuple(files),
    )
