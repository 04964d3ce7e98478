"""Changing a course's scheduling settings (the numbers its FSRS scheduler is built from)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from courses.models import Course

RETENTION_MIN = 0.70
RETENTION_MAX = 0.97


def _validate_steps(field: str, steps: list[float]) -> list[float]:
    if not isinstance(steps, list) or any(
        not isinstance(s, int | float) or isinstance(s, bool) or s <= 0 for s in steps
    ):
        raise ValidationError(
            {field: _("Steps are positive numbers of minutes, e.g. 1, 10.")}, code="invalid"
        )
    return [float(s) if not float(s).is_integer() else int(s) for s in steps]


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
    if not RETENTION_MIN <= desired_retention <= RETENTION_MAX:
        errors["desired_retention"] = [
            _("Desired retention must be between 0.70 and 0.97 (you gave %(value)s).")
            % {"value": desired_retention}
        ]
    if maximum_interval_days < 1:
        errors["maximum_interval_days"] = [_("Maximum interval must be at least 1 day.")]
    for name, limit in (
        ("daily_new_limit", daily_new_limit),
        ("daily_review_limit", daily_review_limit),
    ):
        if limit is not None and limit < 0:
            errors[name] = [_("A daily limit cannot be negative.")]
    try:
        learning = _validate_steps("learning_steps_minutes", learning_steps_minutes)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    try:
        relearning = _validate_steps("relearning_steps_minutes", relearning_steps_minutes)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    course.desired_retention = desired_retention
    course.learning_steps_minutes = learning
    course.relearning_steps_minutes = relearning
    course.maximum_interval_days = maximum_interval_days
    fields = [
        "desired_retention",
        "learning_steps_minutes",
        "relearning_steps_minutes",
        "maximum_interval_days",
        "updated_at",
    ]
    if daily_new_limit is not None:
        course.daily_new_limit = daily_new_limit
        fields.append("daily_new_limit")
    if daily_review_limit is not None:
        course.daily_review_limit = daily_review_limit
        fields.append("daily_review_limit")
    with transaction.atomic():
        course.save(update_fields=fields)
    return course
