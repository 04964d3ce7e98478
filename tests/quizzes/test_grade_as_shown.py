"""A grade gives the card what its button showed, once, and only while the card is as shown."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from accounts.models import User
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services import fsrs_adapter
from quizzes.services.review import schedule_start
from quizzes.services.undo import review_undo
from tests.quizzes.factories import CourseWithItems, course_with_items
from tests.quizzes.test_fsrs_adapter import STURDY, parameter_set

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(days=3)
HTMX = {"HTTP_HX_REQUEST": "true"}


def _learnt(learner: User) -> tuple[CourseWithItems, RecallSchedule]:
    c = course_with_items(learner=learner, daily_new_limit=0, learning_steps_minutes=[])
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    return c, RecallSchedule.objects.get(learner=learner, item=c.recall)


def _reveal(client: Client, schedule: RecallSchedule) -> dict[int, str]:
    """The interval each of the reveal's grade buttons shows."""
    html = client.get(
        reverse("quizzes:session"),
        {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
        **HTMX,
    ).content.decode()
    buttons = re.findall(r'data-testid="grade-(\d)".*?class="grade-interval">([^<]+)<', html, re.S)
    assert buttons, html
    return {int(rating): interval.strip() for rating, interval in buttons}


def _grade(client: Client, schedule: RecallSchedule, rating: int = 3) -> str:
    response = client.post(
        reverse("quizzes:grade"),
        {"rating": rating, "schedule_id": schedule.pk, "card_token": str(schedule.card_token)},
        **HTMX,
    )
    assert response.status_code == 200, response.content.decode()[:500]
    return response.content.decode()


def _after(schedule: RecallSchedule) -> tuple[object, ...]:
    schedule.refresh_from_db()
    return (schedule.state, schedule.step, schedule.stability, schedule.difficulty,
            schedule.due, schedule.last_review, schedule.reps, schedule.lapses)  # fmt: skip


@pytest.mark.parametrize("trained", [False, True])
def test_the_grade_gives_the_interval_its_button_showed(
    client: Client, learner: User, trained: bool
) -> None:
    """Under FSRS-6's defaults or a parameter set trained for the course, the Good button's
    interval is the one the grade schedules, and the log names the set that scheduled it."""
    c, schedule = _learnt(learner)
    parameters = parameter_set(c.course, STURDY) if trained else None
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        buttons = _reveal(client, schedule)
        _grade(client, schedule)
    log = ReviewLog.objects.latest("id")
    assert log.parameters_id == (parameters.pk if parameters else None)
    schedule.refresh_from_db()
    assert fsrs_adapter.interval_label(schedule.due - LATER) == buttons[3]


def test_a_double_submit_grades_once(client: Client, learner: User) -> None:
    _, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        _reveal(client, schedule)
        _grade(client, schedule)
        html = _grade(client, schedule)
    assert ReviewLog.objects.filter(schedule=schedule).count() == 2  # the first grade and this
    assert "already graded" not in html  # a replay of its own grade, not a stale card
    schedule.refresh_from_db()
    assert schedule.reps == 2


def test_a_card_shown_before_an_undo_is_stale(client: Client, learner: User) -> None:
    """Graded, shown again in a second tab, then the grade undone in the first: the second
    tab's form names a token the undo rotated, so its grade writes nothing and says so."""
    _, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        _reveal(client, schedule)
        _grade(client, schedule)
        schedule.refresh_from_db()
        _reveal(client, schedule)  # the second tab
        shown = RecallSchedule(pk=schedule.pk, card_token=schedule.card_token)
        review_undo(learner=learner, now=LATER)
        undone = _after(schedule)
        html = _grade(client, shown, 1)
    assert "already graded elsewhere" in html
    assert _after(schedule) == undone and undone[6] == 1
