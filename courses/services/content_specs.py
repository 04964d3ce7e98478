"""What a validated course folder becomes: plain specs, and the error that names file, line and
reason. Nothing here touches the database."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "course.toml"
SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+$")
# Lesson and course slugs share URL space with these paths (courses/urls.py).
RESERVED_LESSON_SLUGS = frozenset({"enroll", "resume"})
RESERVED_COURSE_SLUGS = frozenset({"teaching"})
KINDS = ("multiple_choice", "numeric", "free_recall", "calculated")

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
class CalculatedSpec:
    """A calculated item's template: the exercise that works it, the variables drawn for each
    learner and review (a list of values, or {min, max, step}), the relative tolerance and the
    range every answer must fall in."""

    exercise: str
    variables: dict[str, Any]
    relative_tolerance: float
    answer_range: tuple[float, float]
    # The prompt (its `{fact}` placeholders are filled by the exercise) and the hand formula:
    # what a learner computes from the prompt's numbers, checked against every draw's answer.
    prompt: str = ""
    hand: str = ""


# What a calculated template must also pass beyond its shape: each check returns None, or the
# key at fault ("exercise", "answer_range" or a variable's name) and why. Apps that can work the
# exercises register here (quizzes draws each template many times); courses cannot.
CalculatedCheck = Callable[[CalculatedSpec], tuple[str, str] | None]
_calculated_checks: list[CalculatedCheck] = []


def calculated_check_register(check: CalculatedCheck) -> None:
    if check not in _calculated_checks:
        _calculated_checks.append(check)


def calculated_checks() -> tuple[CalculatedCheck, ...]:
    return tuple(_calculated_checks)


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
    calculated: CalculatedSpec | None = None
    # Slugs of the course skills the item exercises (its quiz file's `skills`, or skills.toml).
    skills: tuple[str, ...] = ()
    # Where the item is written (file, line), for the skill check's errors.
    source: tuple[Path, int | None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SkillSpec:
    slug: str
    title: str


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
    skills: tuple[SkillSpec, ...] = ()
    files: tuple[Path, ...] = field(default=())
