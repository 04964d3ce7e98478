"""Writes for accounts: roles and the demo users."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import Group, Permission
from django.db import transaction

from accounts.local_day import learning_date
from accounts.models import User

INSTRUCTORS_GROUP = "Instructors"

# Instructors manage teaching material and grading; which courses they act on is scoped by their
# instructor enrolment, not by these model permissions.
INSTRUCTOR_PERMISSIONS = {
    "courses": ["course", "module", "lesson", "enrollment", "lessonprogress"],
    "quizzes": ["quizitem", "choice"],
    "planner": ["rubric", "criterion", "level", "workloadcard"],
}


def instructor_group_ensure() -> Group:
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    wanted = Permission.objects.filter(
        content_type__app_label__in=list(INSTRUCTOR_PERMISSIONS),
    )
    allowed = [
        p
        for p in wanted.select_related("content_type")
        if p.content_type.model in INSTRUCTOR_PERMISSIONS.get(p.content_type.app_label, [])
        and not (p.codename.startswith("delete_") and p.content_type.model == "enrollment")
    ]
    group.permissions.set(allowed)
    return group


@transaction.atomic
def user_make_instructor(*, user: User) -> User:
    user.groups.add(instructor_group_ensure())
    return user


@transaction.atomic
def user_create_verified(
    *, email: str, password: str, display_name: str = "", instructor: bool = False
) -> User:
    """Create (or reset) an account whose email is already verified: demo users, tests, admin."""
    from allauth.account.models import EmailAddress

    user = User.objects.filter(email__iexact=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password=password, display_name=display_name)
    else:
        user.set_password(password)
        user.display_name = display_name or user.display_name
        user.save()
    EmailAddress.objects.update_or_create(
        user=user, email=user.email, defaults={"verified": True, "primary": True}
    )
    if instructor:
        user_make_instructor(user=user)
    return user


def user_preferences_update(
    *, user: User, data: dict[str, object], pause_days: int | None, now: datetime
) -> User:
    """Apply the preferences form. A pause of N days covers today's learning day (which starts at
    the learner's day_start_hour, as the reminder scan counts it) and the N-1 days after it."""
    for field, value in data.items():
        setattr(user, field, value)
    if pause_days is not None:
        today = learning_date(
            moment=now, time_zone=user.time_zone, day_start_hour=user.day_start_hour
        )
        user.reminders_paused_until = today + timedelta(days=pause_days - 1) if pause_days else None
    user.full_clean()
    user.save()
    return user
