"""Writes for rubric editing by a course's instructors: criteria and their ordered levels."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.utils.translation import gettext as _

from courses.models import Course
from planner.models import Criterion, Rubric


def rubric_ensure(*, course: Course) -> Rubric:
    rubric, _created = Rubric.objects.get_or_create(
        course=course, defaults={"title": f"{course.title} capstone rubric"}
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
