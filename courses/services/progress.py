"""Writes for a learner's path through a course: enrolling, visiting and completing lessons."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from courses.models import Course, Enrollment, Lesson, LessonProgress


@transaction.atomic
def enrollment_create(*, course: Course, user: User) -> Enrollment:
    """Enrol the user as a learner; enrolling twice (or as the instructor) changes nothing."""
    enrollment, _ = Enrollment.objects.get_or_create(
        course=course, user=user, defaults={"role": Enrollment.Role.LEARNER}
    )
    return enrollment


def lesson_visit(*, enrollment: Enrollment, lesson: Lesson, started: bool) -> None:
    """Remember the lesson for "resume", and start its progress row the first time.

    `started` says whether the caller already knows a progress row exists (the lesson page has
    read them all), so a repeat visit costs one UPDATE at most and no extra SELECT.
    """
    if enrollment.last_lesson_id != lesson.pk:
        Enrollment.objects.filter(pk=enrollment.pk).update(last_lesson=lesson)
        enrollment.last_lesson = lesson
    if not started:
        LessonProgress.objects.get_or_create(lesson=lesson, learner=enrollment.user)


@transaction.atomic
def lesson_complete(*, learner: User, lesson: Lesson) -> LessonProgress:
    """Mark the lesson complete for the learner. Idempotent: the first completion time stays."""
    progress, _ = LessonProgress.objects.select_for_update().get_or_create(
        lesson=lesson, learner=learner
    )
    if progress.completed_at is None:
        progress.completed_at = timezone.now()
        progress.save(update_fields=["completed_at"])
    return progress
