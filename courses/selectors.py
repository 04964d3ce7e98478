"""Reads for courses."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import User
from courses.models import Enrollment


def enrollments_for_dashboard(*, user: User) -> QuerySet[Enrollment]:
    return (
        Enrollment.objects.filter(user=user)
        .select_related("course", "last_lesson")
        .order_by("-enrolled_at")
    )
