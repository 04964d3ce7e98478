"""Writes for rubric editing by a course's instructors: criteria and their ordered levels."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.utils.translation import gettext as _

from courses.models import Course
from planner.capstone.models import Criterion, Level, Rubric


def rubric_default_title(*, course: Course) -> str:
    return f"{course.title} capstone rubric"


def rubric_ensure(*, course: Course) -> Rubric:
    rubric, _created = Rubric.objects.get_or_create(
        course=course, defaults={"title": rubric_default_title(course=course)}
    )
    return rubric


@transaction.atomic
def rubric_update(*, rubric: Rubric, title: str) -> Rubric:
    rubric.title = title
    rubric.full_clean()
    rubric.save()
    return rubric


@transaction.atomic
def criterion_save(
    *, rubric: Rubric, criterion: Criterion | None, data: dict[str, Any]
) -> Criterion:
    criterion = criterion or Criterion(rubric=rubric)
    if criterion.rubric_id != rubric.pk:
        raise ValidationError(_("That criterion belongs to another rubric."))
    for field in ("key", "title", "description", "position"):
        if field in data:
            setattr(criterion, field, data[field])
    criterion.full_clean()
    criterion.save()
    return criterion


def criterion_delete(*, criterion: Criterion) -> None:
    """Delete a criterion nobody has been scored on yet (given grades keep their criteria)."""
    try:
        criterion.delete()
    except ProtectedError as exc:
        raise ValidationError(
            _("%(criterion)s has been used in grades and cannot be deleted; edit it instead.")
            % {"criterion": criterion}
        ) from exc


@dataclass(frozen=True)
class LevelInput:
    """One level as the criterion page posts it: `level_id` None adds it, `delete` removes it."""

    level_id: int | None
    key: str
    title: str
    points: int
    description: str = ""
    position: int = 0
    delete: bool = False


def rubric_max_points(criteria: Iterable[Criterion]) -> int:
    """The rubric's maximum: each criterion's best level (levels prefetched by the caller)."""
    return sum(max((lv.points for lv in c.levels.all()), default=0) for c in criteria)


def _level_delete(level: Level) -> None:
    try:
        level.delete()
    except ProtectedError as exc:
        raise ValidationError(
            _("The level %(level)s has been used in grades and cannot be deleted; edit it instead.")
            % {"level": level.title}
        ) from exc


@transaction.atomic
def criterion_levels_save(
    *, criterion: Criterion, data: dict[str, Any], levels: list[LevelInput]
) -> Criterion:
    """Save the criterion and its levels together: any refusal (a level a grade uses cannot be
    deleted) raises ValidationError and leaves nothing changed."""
    criterion = criterion_save(rubric=criterion.rubric, criterion=criterion, data=data)
    existing = {lv.pk: lv for lv in criterion.levels.all()}
    # Deletes first, so a new level may take a deleted one's key.
    for item in levels:
        if item.delete and item.level_id in existing:
            _level_delete(existing[item.level_id])
    for item in levels:
        if item.delete:
            continue
        level = existing.get(item.level_id or 0) or Level(criterion=criterion)
        level.key, level.title, level.points = item.key, item.title, item.points
        level.description, level.position = item.description, item.position
        level.full_clean()
        level.save()
    return criterion
