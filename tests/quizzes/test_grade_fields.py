"""Whatever a client posts to the grade, the answer is the next card or a 400 that names the
first bad field in the form's order; a refused grade writes nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import User
from quizzes.forms import GradeForm
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services.review import schedule_start
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FIELDS = list(GradeForm.base_fields)
TEXT = st.one_of(
    st.sampled_from(["", " ", "0", "1", "4", "5", "-1", "3.0", " 7 ", "1e3", "x", "\x00"]),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.uuids().map(str),
    st.text(max_size=30),
    st.integers(min_value=1990, max_value=4100).map(lambda n: "a" * n),
)


def _post(client: Client, data: dict[str, object]) -> tuple[int, str]:
    response = client.post(reverse("quizzes:grade"), data, **HTMX)
    return response.status_code, response.content.decode()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(posted=st.dictionaries(st.sampled_from(FIELDS), TEXT))
def test_a_bad_post_is_refused_naming_its_field_and_writes_nothing(
    client: Client, learner: User, posted: dict[str, str]
) -> None:
    client.force_login(learner)
    logs = ReviewLog.objects.count()
    status, body = _post(client, posted)
    assert status in (200, 400, 404), body[:300]
    if status == 400:
        whole = ("Choose a grade from 1 to 4.", "No card given.")
        assert body in whole or body.split(":")[0] in FIELDS, body
    assert ReviewLog.objects.count() == logs or status == 200


def test_the_first_bad_field_in_the_forms_order_is_named(client: Client, learner: User) -> None:
    client.force_login(learner)
    status, body = _post(client, {"rating": "3", "card_token": "not-a-token", "shown_at": "-4"})
    assert (status, body) == (400, "card_token: Enter a valid UUID.")
    status, body = _post(client, {"rating": "9", "card_token": str(uuid.uuid4())})
    assert (status, body) == (400, "Choose a grade from 1 to 4.")


def test_a_valid_grade_schedules_the_card(client: Client, learner: User) -> None:
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=1, now=T0)
    schedule = RecallSchedule.objects.get(learner=learner, item=c.recall)
    client.force_login(learner)
    status, _ = _post(
        client,
        {"rating": "3", "card_token": str(schedule.card_token), "schedule_id": str(schedule.pk),
         "shown_at": "5"},
    )  # fmt: skip
    assert status == 200
    schedule.refresh_from_db()
    assert schedule.reps == 2 and ReviewLog.objects.filter(schedule=schedule).count() == 2
