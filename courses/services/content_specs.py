"""What a validated course folder becomes: plain specs, and the error that names file, line and
reason. Nothing here touches the database."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

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
