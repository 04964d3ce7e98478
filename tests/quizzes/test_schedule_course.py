"""A recall schedule carries its item's course (the due queue counts per course from it): moved
when staff move the item, its lesson or its module to another course in the admin, and filled
in for every schedule written before the column existed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from courses.services.lessons import lesson_save, module_save
from quizzes.models import QuizItem, RecallSchedule
from quizzes.selectors.queue import due_queue_for
from quizzes.services.schedule_courses import quiz_item_save
from tests.factories import (
    EnrollmentFactory,
    LessonFactory,
    ModuleFactory,
    QuizItemFactory,
    UserFactory,
)

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


def _due_review(learner: User, item: QuizItem) -> RecallSchedule:
    """A learnt card due an hour ago."""
    return RecallSchedule.objects.create(
        learner=learner, item=item, course_id=item.lesson.module.course_id,
        state=RecallSchedule.State.REVIEW, reps=2, stability=3.0, difficulty=5.0,
        last_review=NOW - timedelta(days=4), due=NOW - timedelta(hours=1),
    )  # fmt: skip


@pytest.fixture
def staff(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="staff@example.com", password="x"))
    return client


def _courses_of(*schedules: RecallSchedule) -> list[int]:
    return [RecallSchedule.objects.get(pk=s.pk).course_id for s in schedules]


@pytest.mark.django_db
def test_an_item_moved_in_the_admin_takes_its_reviews_to_the_new_course(staff: Client) -> None:
    """The learner studies only course B. Their card of an item of course A is not in their
    queue; once staff move the item into a lesson of B, it is."""
    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    item = QuizItemFactory(kind=QuizItem.Kind.NUMERIC, expected_value=7.0, unit="GB")
    target = LessonFactory()
    EnrollmentFactory(user=learner, course=target.module.course)
    schedule = _due_review(learner, item)
    assert due_queue_for(learner=learner, now=NOW).due_count == 0

    response = staff.post(
        reverse("admin:quizzes_quizitem_change", args=[item.pk]),
        {
            "lesson": target.pk, "key": item.key, "kind": item.kind, "position": 0,
            "prompt": item.prompt, "explanation": "", "expected_value": "7", "unit": "GB",
            "tolerance": "0", "model_answer": "",
            "choices-TOTAL_FORMS": "0", "choices-INITIAL_FORMS": "0",
            "choices-MIN_NUM_FORMS": "0", "choices-MAX_NUM_FORMS": "1000",
        },
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]

    assert _courses_of(schedule) == [target.module.course_id]
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.due_count == 1
    assert queue.card is not None and queue.card.schedule == schedule


@pytest.mark.django_db
def test_a_lesson_or_module_moved_in_the_admin_takes_every_schedule_under_it(
    staff: Client,
) -> None:
    lesson = LessonFactory()
    items = [QuizItemFactory(lesson=lesson), QuizItemFactory(lesson=lesson)]
    learners = [UserFactory(), UserFactory()]
    schedules = [_due_review(learner, item) for learner in learners for item in items]
    elsewhere = QuizItemFactory()
    untouched = _due_review(learners[0], elsewhere)

    other_module = ModuleFactory()
    response = staff.post(
        reverse("admin:courses_lesson_change", args=[lesson.pk]),
        {"module": other_module.pk, "position": 0, "title": lesson.title, "slug": lesson.slug,
         "objective": "o", "decision": "", "estimated_minutes": 10, "body_markdown": "b"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _courses_of(*schedules) == [other_module.course_id] * 4

    target = elsewhere.lesson.module.course
    response = staff.post(
        reverse("admin:courses_module_change", args=[other_module.pk]),
        {"course": target.pk, "slug": other_module.slug, "title": other_module.title,
         "position": 0, "lessons-TOTAL_FORMS": "0", "lessons-INITIAL_FORMS": "0",
         "lessons-MIN_NUM_FORMS": "0", "lessons-MAX_NUM_FORMS": "1000"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _courses_of(*schedules) == [target.pk] * 4
    assert _courses_of(untouched) == [target.pk]


@pytest.mark.django_db
def test_a_move_within_the_course_or_an_edit_writes_no_schedule() -> None:
    """Items edited, lessons moved between a course's modules: no schedule is rewritten (one
    row per learner and item)."""
    lesson = LessonFactory()
    item = QuizItemFactory(lesson=lesson)
    schedule = _due_review(UserFactory(), item)
    sibling = ModuleFactory(course=lesson.module.course)
    with CaptureQueriesContext(connection) as queries:
        item.prompt = "Edited?"
        quiz_item_save(item=item)
        item.lesson = LessonFactory(module=sibling)
        quiz_item_save(item=item)
        lesson.module = sibling
        lesson_save(lesson=lesson)
        lesson.title = "Renamed"
        lesson_save(lesson=lesson)
        module_save(module=sibling)
    assert not [q for q in queries if "UPDATE" in q["sql"] and "recallschedule" in q["sql"]]
    assert _courses_of(schedule) == [lesson.module.course_id]


@pytest.mark.django_db(transaction=True)
def test_schedules_written_before_the_column_get_their_items_course() -> None:
    executor = MigrationExecutor(connection)
    before = [("quizzes", "0008_reviewlog_drop_covered_fk_indexes")]
    executor.migrate(before)
    old = MigrationExecutor(connection).loader.project_state(before).apps
    user = old.get_model("accounts", "User").objects.create(email="old@example.com", password="!")
    Course, Module = old.get_model("courses", "Course"), old.get_model("courses", "Module")
    Lesson, Item = old.get_model("courses", "Lesson"), old.get_model("quizzes", "QuizItem")
    expected = {}
    for n in range(2):
        course = Course.objects.create(slug=f"c{n}", title=f"C{n}")
        module = Module.objects.create(course=course, slug="m", title="M")
        lesson = Lesson.objects.create(
            module=module, slug="l", title="L", objective="o", body_markdown="b"
        )
        item = Item.objects.create(lesson=lesson, key="k", kind="free_recall", prompt="p")
        schedule = old.get_model("quizzes", "RecallSchedule").objects.create(
            learner=user, item=item, due=NOW
        )
        expected[schedule.pk] = course.pk

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert dict(RecallSchedule.objects.values_list("pk", "course_id")) == expected
