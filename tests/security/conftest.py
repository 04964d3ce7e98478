"""A small world for the hostile tests: one course with everything a URL can name, its
instructor, a learner who has used every feature, another learner, and a staff account."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from courses.models import Course, Enrollment, Lesson
from planner.models import CapstoneSubmission, Criterion, WorkloadCard
from quizzes.models import QuizItem, RecallSchedule
from tests.factories import (
    EnrollmentFactory,
    InstructorFactory,
    LessonFactory,
    QuizItemFactory,
    RecallScheduleFactory,
    UserFactory,
)
from tests.planner.factories import WorkloadCardFactory, course_taught_by, submission_for

WRITES = ("INSERT", "UPDATE", "DELETE")
# A session (and what it carries: messages, the CSRF token) is the visitor's, not the site's data.
SESSION_TABLE = "django_session"


@dataclass
class World:
    course: Course
    lesson: Lesson
    item: QuizItem
    schedule: RecallSchedule
    instructor: User
    learner: User
    other: User
    staff: User
    submission: CapstoneSubmission
    criterion: Criterion
    card: WorkloadCard
    unsubscribe_token: str
    prompt_token: str
    resubmission: CapstoneSubmission | None = None


@pytest.fixture
def world(db: None) -> World:
    # Lazily imported: the signed links moved from quizzes to the reminders app.
    from reminders.links import prompt_token_make, unsubscribe_token_make
    from reminders.models import ReminderDigest

    instructor = InstructorFactory(email="teacher@example.com")
    course = course_taught_by(instructor, title="GPUs, TPUs")
    lesson = LessonFactory(module__course=course, slug="hbm")
    item = QuizItemFactory(lesson=lesson, prompt="Why does HBM matter?")
    learner = UserFactory(email="learner@example.com")
    EnrollmentFactory(course=course, user=learner, role=Enrollment.Role.LEARNER)
    other = UserFactory(email="mallory@example.com")
    EnrollmentFactory(course=course, user=other, role=Enrollment.Role.LEARNER)
    schedule = RecallScheduleFactory(learner=learner, item=item, due=timezone.now())
    digest = ReminderDigest.objects.create(
        learner=learner, local_date=timezone.now().date(), status="sent"
    )
    return World(
        course=course,
        lesson=lesson,
        item=item,
        schedule=schedule,
        instructor=instructor,
        learner=learner,
        other=other,
        staff=UserFactory(email="staff@example.com", is_staff=True, is_superuser=True),
        submission=submission_for(learner, course),
        criterion=course.rubric.criteria.order_by("position").first(),  # type: ignore[arg-type]
        card=WorkloadCardFactory(owner=learner),
        unsubscribe_token=unsubscribe_token_make(learner=learner),
        prompt_token=prompt_token_make(digest_id=digest.pk, schedule_id=schedule.pk),
    )


def written_tables(queries: CaptureQueriesContext) -> list[str]:
    """The statements that wrote a row of the site's data (sessions aside)."""
    return [
        q["sql"][:160]
        for q in queries.captured_queries
        if q["sql"].lstrip().upper().startswith(WRITES) and SESSION_TABLE not in q["sql"]
    ]
