"""A learner's own desired retention in a course, within the course's bounds."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from core.bounds import Bound, BoundError, bounded_number
from courses.models import Course
from quizzes.models import RetentionPreference

# A learner may choose along the course's curve (0.80–0.97), inside the course's own range.
LEARNER_RETENTION = Bound(minimum=Decimal("0.8"), maximum=Decimal("0.97"))


def retention_preference_set(
    *, learner: User, course: Course, desired_retention: object
) -> RetentionPreference:
    """Save the learner's retention for the course; errors name the field and its range."""
    try:
        value = bounded_number(
            desired_retention, field="desired_retention", bound=LEARNER_RETENTION
        )
    except BoundError as exc:
        raise ValidationError({exc.field: [exc.message]}, code="invalid") from exc
    with transaction.atomic():
        preference, _ = RetentionPreference.objects.update_or_create(
            learner=learner, course=course, defaults={"desired_retention": float(value)}
        )
    return preference


def retention_preference_clear(*, learner: User, course: Course) -> None:
    """Back to the course's retention."""
    RetentionPreference.objects.filter(learner=learner, course=course).delete()
