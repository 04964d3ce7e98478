"""Numeric fuzzing of an instructor's scheduling settings: every value is refused with a message
(nothing written) or saved; after each save a learner still reviews: the session, a reveal, an
"Again" grade and the email prompt all answer (issue 12: `learning_steps_minutes=1e12` was saved
and every review of the course was then a 500; huge intervals and limits were a DataError)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ranges import (
    DAILY_NEW_LIMIT,
    DAILY_REVIEW_LIMIT,
    DESIRED_RETENTION,
    MAXIMUM_INTERVAL_DAYS,
    STEP_MINUTES,
)
from quizzes.models import RecallSchedule
from tests.security.conftest import World
from tests.security.fuzz import Tally, answered_in_bound_without_writes, field_values
from tests.security.test_fuzz_forms import FUZZ, SAVED

pytestmark = pytest.mark.django_db

BOUNDS = {
    "desired_retention": DESIRED_RETENTION,
    "learning_steps_minutes": STEP_MINUTES,
    "relearning_steps_minutes": STEP_MINUTES,
    "maximum_interval_days": MAXIMUM_INTERVAL_DAYS,
    "daily_new_limit": DAILY_NEW_LIMIT,
    "daily_review_limit": DAILY_REVIEW_LIMIT,
}
BASE = {
    "desired_retention": "0.9",
    "learning_steps_minutes": "1, 10",
    "relearning_steps_minutes": "10",
    "maximum_interval_days": "365",
    "daily_new_limit": "20",
    "daily_review_limit": "200",
}
STEPS = ("learning_steps_minutes", "relearning_steps_minutes")


def _learner_reviews(world: World, client: Client) -> None:
    """The learner's pages that read the course's settings all answer."""
    schedule = RecallSchedule.objects.get(pk=world.schedule.pk)
    pages = [
        client.get(reverse("quizzes:session")),
        client.get(reverse("quizzes:answer_reveal", args=[world.item.pk])),
        client.get(reverse("reminders:prompt", args=[world.prompt_token])),
        client.post(
            reverse("quizzes:grade"),
            {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": "1"},
        ),
    ]
    assert [p.status_code for p in pages] == [200, 200, 200, 302], [
        p.content[:300] for p in pages if p.status_code >= 400
    ]


def test_every_scheduling_setting_is_refused_or_keeps_reviews_working(world: World) -> None:
    instructor = Client(raise_request_exception=False)
    instructor.force_login(world.instructor)
    learner = Client(raise_request_exception=False)
    learner.force_login(world.learner)
    url = reverse("quizzes:course_settings", args=[world.course.slug])
    tally = Tally()

    @settings(FUZZ, max_examples=150)
    @given(values=field_values(BOUNDS), second_step=st.booleans())
    def post(values: dict[str, str | None], second_step: bool) -> None:
        tally.add(values)
        data = {**BASE, **{k: v for k, v in values.items() if v is not None}}
        for name in STEPS:  # a list of steps: the value alone, or after a first step of 1
            if second_step and values.get(name) is not None:
                data[name] = f"1, {data[name]}"
        status = 0
        with answered_in_bound_without_writes(writes_allowed=lambda: status in SAVED):
            response = instructor.post(url, data)
            status = response.status_code
        assert status in {200, 302}, (data, status)
        if status == 302:
            _learner_reviews(world, learner)

    post()
    tally.assert_each_field_met(sorted(BOUNDS), 90)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("learning_steps_minutes", "1e12"),
        ("relearning_steps_minutes", "1e12"),
        ("learning_steps_minutes", "nan"),
        ("learning_steps_minutes", "inf"),
        ("maximum_interval_days", "99999999999"),
        ("daily_new_limit", "99999999999"),
        ("daily_review_limit", "99999999999"),
        ("desired_retention", "nan"),
    ],
)
def test_the_issues_settings_are_refused_naming_the_field(
    world: World, field: str, value: str
) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(world.instructor)
    before = {f: getattr(world.course, f) for f in BASE}

    response = client.post(
        reverse("quizzes:course_settings", args=[world.course.slug]), {**BASE, field: value}
    )

    assert response.status_code == 200  # the form again, with the error at the field
    assert (
        'aria-invalid="true"' in response.content.decode()
        or "errorlist" in response.content.decode()
    )
    world.course.refresh_from_db()
    assert {f: getattr(world.course, f) for f in BASE} == before
    learner = Client(raise_request_exception=False)
    learner.force_login(world.learner)
    _learner_reviews(world, learner)
