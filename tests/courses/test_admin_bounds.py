"""The course, module and lesson admin read their numbers within the ranges of core.ranges (the
importer's and the instructor's): an out-of-range figure is refused at its field, nothing saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from courses.models import Course, Lesson, Module
from tests.factories import LessonFactory

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = ["1e308", "-5", "NaN", "inf", "2147483648", "1" * 50]
COURSE_FIELDS = {
    "desired_retention": [*OUT_OF_RANGE, "0.5", "0.99"],
    "maximum_interval_days": [*OUT_OF_RANGE, "0", "36501", "2.5"],
    "daily_new_limit": [*OUT_OF_RANGE, "1001"],
    "daily_review_limit": [*OUT_OF_RANGE, "10001"],
}
LESSON_FIELDS = {
    "position": [*OUT_OF_RANGE, "10001"],
    "estimated_minutes": [*OUT_OF_RANGE, "0", "601"],
}


@pytest.fixture
def staff_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    return client


@pytest.fixture
def lesson() -> Lesson:
    return LessonFactory(position=1, estimated_minutes=10)


def _course_post(client: Client, course: Course, **fields: str) -> Any:
    data = {
        "slug": course.slug,
        "title": course.title,
        "summary": "Changed",
        "desired_retention": "0.9",
        "learning_steps_minutes": "[1, 10]",
        "relearning_steps_minutes": "[10]",
        "maximum_interval_days": "36500",
        "daily_new_limit": "20",
        "daily_review_limit": "200",
        "capstone_due_at_0": "",
        "capstone_due_at_1": "",
        "is_published": "on",
        "modules-TOTAL_FORMS": "0",
        "modules-INITIAL_FORMS": "0",
        "modules-MIN_NUM_FORMS": "0",
        "modules-MAX_NUM_FORMS": "1000",
        **fields,
    }
    return client.post(reverse("admin:courses_course_change", args=[course.pk]), data)


def _course_state(course: Course) -> tuple[Any, ...]:
    course.refresh_from_db()
    return (
        course.summary,
        course.desired_retention,
        course.maximum_interval_days,
        course.daily_new_limit,
        course.daily_review_limit,
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [(field, value) for field, values in COURSE_FIELDS.items() for value in values],
)
def test_course_setting_out_of_range_is_refused(
    staff_client: Client, lesson: Lesson, field: str, value: str
) -> None:
    course = lesson.module.course
    before = _course_state(course)
    response = _course_post(staff_client, course, **{field: value})
    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors) == [field]
    assert f'id="id_{field}_error"' in response.content.decode()
    assert _course_state(course) == before


def test_course_settings_in_range_are_saved(staff_client: Client, lesson: Lesson) -> None:
    course = lesson.module.course
    response = _course_post(
        staff_client,
        course,
        desired_retention="0.97",
        maximum_interval_days="1",
        daily_new_limit="0",
        daily_review_limit="10000",
    )
    assert response.status_code == 302
    assert _course_state(course) == ("Changed", 0.97, 1, 0, 10000)


def _lesson_post(client: Client, lesson: Lesson, **fields: str) -> Any:
    data = {
        "module": str(lesson.module_id),
        "position": "1",
        "title": "Changed",
        "slug": lesson.slug,
        "objective": lesson.objective,
        "decision": "",
        "estimated_minutes": "10",
        "body_markdown": lesson.body_markdown,
        **fields,
    }
    return client.post(reverse("admin:courses_lesson_change", args=[lesson.pk]), data)


@pytest.mark.parametrize(
    ("field", "value"),
    [(field, value) for field, values in LESSON_FIELDS.items() for value in values],
)
def test_lesson_number_out_of_range_is_refused(
    staff_client: Client, lesson: Lesson, field: str, value: str
) -> None:
    response = _lesson_post(staff_client, lesson, **{field: value})
    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors) == [field]
    assert f'id="id_{field}_error"' in response.content.decode()
    lesson.refresh_from_db()
    assert (lesson.title, lesson.position, lesson.estimated_minutes) == (lesson.title, 1, 10)
    assert lesson.title != "Changed"


def test_lesson_numbers_in_range_are_saved(staff_client: Client, lesson: Lesson) -> None:
    response = _lesson_post(staff_client, lesson, position="10000", estimated_minutes="600")
    assert response.status_code == 302
    lesson.refresh_from_db()
    assert (lesson.title, lesson.position, lesson.estimated_minutes) == ("Changed", 10000, 600)


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_positions_edited_in_the_lists_are_bounded(
    staff_client: Client, lesson: Lesson, value: str
) -> None:
    """The module and lesson lists edit positions in place: the same bound, nothing saved."""
    for model, obj in [("module", lesson.module), ("lesson", lesson)]:
        before = obj.position
        response = staff_client.post(
            reverse(f"admin:courses_{model}_changelist"),
            {
                "form-TOTAL_FORMS": "1",
                "form-INITIAL_FORMS": "1",
                "form-MIN_NUM_FORMS": "0",
                "form-MAX_NUM_FORMS": "1000",
                "form-0-id": str(obj.pk),
                "form-0-position": value,
                "_save": "Save",
            },
        )
        assert response.status_code == 200
        assert list(response.context["cl"].formset.forms[0].errors) == ["position"]
        obj.refresh_from_db()
        assert obj.position == before
    assert Module.objects.get(pk=lesson.module_id).position == lesson.module.position
