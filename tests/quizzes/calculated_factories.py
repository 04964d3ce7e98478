"""The calculated-items fixture course, imported, and learners with its items due."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from accounts.models import User
from home.services.content_import import course_import
from quizzes.models import QuizItem, RecallSchedule
from tests.factories import EnrollmentFactory
from tests.reminders.factories import learner_due

CALCULATED_COURSE = Path(__file__).resolve().parent / "calculated_course"


def calculated_due(key: str = "kv-bytes") -> tuple[User, RecallSchedule]:
    """A learner (reminders at any hour) whose one due review card is the calculated item `key`
    of the fixture course, imported here."""
    course = course_import(folder=CALCULATED_COURSE).course
    user = learner_due(due=timezone.now() - timedelta(hours=1), reminder_hour=0, day_start_hour=0)
    EnrollmentFactory(course=course, user=user)
    schedule = user.recall_schedules.get()
    schedule.item = QuizItem.objects.get(key=key)
    schedule.course = course
    schedule.save()
    return user, schedule
