"""Instructor scheduling settings can never break a learner's page (issue 12): every setting is
read through core.bounds, held by the model and the database, and each boundary value saved still
lets a learner review."""

from __future__ import annotations

import uuid

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from courses.models import Course
from quizzes.models import RecallSchedule
from quizzes.services.course_settings import course_scheduling_update
from quizzes.services.review import review_grade, schedule_start
from tests.factories import EnrollmentFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

VALID = {
    "desired_retention": 0.9,
    "learning_steps_minutes": [1, 10],
    "relearning_steps_minutes": [10],
    "maximum_interval_days": 365,
    "daily_new_limit": 20,
    "daily_review_limit": 200,
}
BOUNDARIES = [
    ("desired_retention", 0.7),
    ("desired_retention", 0.97),
    ("learning_steps_minutes", [0.1]),
    ("learning_steps_minutes", [1439]),
    ("learning_steps_minutes", []),
    ("learning_steps_minutes", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ("relearning_steps_minutes", [0.1]),
    ("relearning_steps_minutes", [1439]),
    ("relearning_steps_minutes", []),
    ("maximum_interval_days", 1),
    ("maximum_interval_days", 36500),
    ("daily_new_limit", 0),
    ("daily_new_limit", 1000),
    ("daily_review_limit", 0),
    ("daily_review_limit", 10000),
]


def walk_through_a_review(client, learner, course_items) -> None:  # type: ignore[no-untyped-def]
    """First answer, reveal with interval previews, grade Again, reveal and grade Good: every
    page a 200, the schedule moved each time."""
    now = timezone.now()
    first = schedule_start(
        learner=learner, item=course_items.mc, card_token=uuid.uuid4(), rating=3, now=now
    )
    schedule = RecallSchedule.objects.get(pk=first.log.schedule_id)
    client.force_login(learner)
    for rating in (1, 3):
        reveal = client.get(
            reverse("quizzes:session"),
            {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
        )
        assert reveal.status_code == 200
        assert "Again" in reveal.content.decode()
        review_grade(
            learner=learner,
            schedule_id=schedule.pk,
            card_token=schedule.card_token,
            rating=rating,
            now=max(schedule.due, now),
        )
        reps = schedule.reps
        schedule.refresh_from_db()
        assert schedule.reps == reps + 1
    assert client.get(reverse("quizzes:session")).status_code == 200


@pytest.mark.parametrize(("field", "value"), BOUNDARIES)
def test_each_boundary_value_is_saved_and_a_learner_still_reviews(
    client, learner, field, value
) -> None:  # type: ignore[no-untyped-def]
    items = course_with_items(learner=learner)
    course_scheduling_update(course=items.course, **{**VALID, field: value})
    items.course.refresh_from_db()
    assert getattr(items.course, field) == value
    walk_through_a_review(client, learner, items)


BAD = [
    ("learning_steps_minutes", "1e12", "a step of a day or more is a review interval"),
    ("learning_steps_minutes", "1440", "a step of a day or more is a review interval"),
    ("learning_steps_minutes", "nan", "must be a number from 0.1"),
    ("learning_steps_minutes", "inf", "must be a number from 0.1"),
    ("learning_steps_minutes", "0", "must be greater than zero"),
    ("learning_steps_minutes", "1 2 3 4 5 6 7 8 9 10 11", "at most 10 steps"),
    ("relearning_steps_minutes", "-inf", "must be a number from 0.1"),
    ("relearning_steps_minutes", "2880", "a step of a day or more is a review interval"),
    ("maximum_interval_days", "99999999999", "must be a whole number from 1 to 36,500"),
    ("maximum_interval_days", "36501", "must be a whole number from 1 to 36,500"),
    ("daily_new_limit", "99999999999", "must be a whole number from 0 to 1,000"),
    ("daily_review_limit", "10001", "must be a whole number from 0 to 10,000"),
    ("desired_retention", "nan", "Enter a number"),
]


@pytest.mark.parametrize(("field", "value", "message"), BAD)
def test_a_breaking_setting_is_refused_on_its_field_and_nothing_is_saved(
    client, instructor, learner, field, value, message
) -> None:  # type: ignore[no-untyped-def]
    items = course_with_items(learner=learner)
    EnrollmentFactory(course=items.course, user=instructor, role="instructor")
    client.force_login(instructor)
    post = {
        "desired_retention": "0.9",
        "learning_steps_minutes": "1, 10",
        "relearning_steps_minutes": "10",
        "maximum_interval_days": "365",
        "daily_new_limit": "20",
        "daily_review_limit": "200",
        field: value,
    }
    response = client.post(reverse("quizzes:course_settings", args=[items.course.slug]), post)
    html = response.content.decode()
    assert response.status_code == 200
    assert f'id="id_{field}_error"' in html
    assert message in html
    after = Course.objects.get(pk=items.course.pk)
    assert (after.learning_steps_minutes, after.maximum_interval_days, after.daily_new_limit) == (
        items.course.learning_steps_minutes,
        items.course.maximum_interval_days,
        items.course.daily_new_limit,
    )
    walk_through_a_review(client, learner, items)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("maximum_interval_days", 99999999),
        ("maximum_interval_days", 0),
        ("daily_new_limit", 1001),
        ("daily_review_limit", 10001),
        ("desired_retention", 0.99),
    ],
)
def test_the_database_refuses_what_the_settings_refuse(field, value) -> None:  # type: ignore[no-untyped-def]
    course = course_with_items().course
    with pytest.raises(IntegrityError), transaction.atomic():
        Course.objects.filter(pk=course.pk).update(**{field: value})


def test_the_model_refuses_a_step_of_a_day_with_the_reason() -> None:
    course = course_with_items().course
    course.learning_steps_minutes = [1, 1440]
    with pytest.raises(ValidationError) as exc:
        course.full_clean()
    assert "a step of a day or more is a review interval" in str(
        exc.value.message_dict["learning_steps_minutes"]
    )


def test_model_defaults_for_steps_match_the_importer_s() -> None:
    course = Course(slug="new", title="New")
    assert (course.learning_steps_minutes, course.relearning_steps_minutes) == ([1, 10], [10])


def test_a_bad_step_stored_before_validation_does_not_break_reviews(client, learner) -> None:  # type: ignore[no-untyped-def]
    items = course_with_items(learner=learner)
    Course.objects.filter(pk=items.course.pk).update(
        learning_steps_minutes=[1e12, 1], relearning_steps_minutes=["nan"]
    )
    items.course.refresh_from_db()
    walk_through_a_review(client, learner, items)
