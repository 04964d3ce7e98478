"""Changing a course's scheduling settings (the numbers its FSRS scheduler is built from).

Every number is read through core.bounds with the ranges in core.ranges, the ones the importer
and the database's check constraints hold too, so no setting can break a learner's page.
"""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core.bounds import Bound, BoundError, bounded_number
from core.ranges import (
    DAILY_NEW_LIMIT,
    DAILY_REVIEW_LIMIT,
    DESIRED_RETENTION,
    MAXIMUM_INTERVAL_DAYS,
)
from core.steps import bounded_steps
from courses.models import Course

RETENTION_MIN = float(DESIRED_RETENTION.minimum)
RETENTION_MAX = float(DESIRED_RETENTION.maximum)


def _number(errors: dict[str, list[str]], field: str, raw: object, bound: Bound) -> Decimal:
    try:
        return bounded_number(raw, field=field, bound=bound)
    except BoundError as exc:
        errors[field] = [exc.message]
        return Decimal(0)


def _steps(errors: dict[str, list[str]], field: str, raw: object) -> list[int | float]:
    try:
        return bounded_steps(raw, field=field)
    except BoundError as exc:
        errors[field] = [exc.message]
        return []


def course_scheduling_update(
    *,
    course: Course,
    desired_retention: float,
    learning_steps_minutes: list[float],
    relearning_steps_minutes: list[float],
    maximum_interval_days: int,
    daily_new_limit: int | None = None,
    daily_review_limit: int | None = None,
) -> Course:
    """Validate and save the course's scheduling settings; errors name the field."""
    errors: dict[str, list[str]] = {}
    try:
        retention = bounded_number(
            desired_retention, field="desired_retention", bound=DESIRED_RETENTION
        )
    except BoundError:
        errors["desired_retention"] = [
            _("Desired retention must be between %(lo).2f and %(hi).2f (you gave %(value)s).")
            % {"lo": RETENTION_MIN, "hi": RETENTION_MAX, "value": str(desired_retention)[:40]}
        ]
        retention = Decimal(0)
    maximum = _number(errors, "maximum_interval_days", maximum_interval_days, MAXIMUM_INTERVAL_DAYS)
    limits = {
        name: _number(errors, name, raw, bound)
        for name, raw, bound in (
            ("daily_new_limit", daily_new_limit, DAILY_NEW_LIMIT),
            ("daily_review_limit", daily_review_limit, DAILY_REVIEW_LIMIT),
        )
        if raw is not None
    }
    learning = _steps(errors, "learning_steps_minutes", learning_steps_minutes)
    relearning = _steps(errors, "relearning_steps_minutes", relearning_steps_minutes)
    if errors:
        raise ValidationError(errors)
    course.desired_retention = float(retention)
    course.learning_steps_minutes = learning
    course.relearning_steps_minutes = relearning
    course.maximum_interval_days = int(maximum)
    fields = [
        "desired_retention",
        "learning_steps_minutes",
        "relearning_steps_minutes",
        "maximum_interval_days",
        "updated_at",
    ]
    for name, value in limits.items():
        setattr(course, name, int(value))
        fields.append(name)
    with transaction.atomic():
        course.save(update_fields=fields)
    return course
