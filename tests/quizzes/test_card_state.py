"""The grade form carries the card as the reveal showed it, signed: the grade schedules from it
without reading the schedule again, exactly as the buttons previewed, and ignores it whenever
it is not this learner's current card."""

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
from quizzes.services.card_state import card_state_dumps, card_state_loads
from quizzes.services.review import schedule_start
from quizzes.services.undo import review_undo
from tests.factories import UserFactory
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


def _reveal(client: Client, schedule: RecallSchedule) -> tuple[str, dict[int, str]]:
    """The card state in the reveal's grade form, and the interval each button shows."""
    html = client.get(
        reverse("quizzes:session"),
        {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
        **HTMX,
    ).content.decode()
    state = re.search(r'name="card_state" value="([^"]+)"', html)
    assert state is not None, html
    buttons = re.findall(r'data-testid="grade-(\d)".*?class="grade-interval">([^<]+)<', html, re.S)
    return state.group(1), {int(rating): interval.strip() for rating, interval in buttons}


def _grade(client: Client, schedule: RecallSchedule, state: str, rating: int = 3) -> str:
    response = client.post(
        reverse("quizzes:grade"),
        {"rating": rating, "schedule_id": schedule.pk, "card_token": str(schedule.card_token),
         "card_state": state},
        **HTMX,
    )  # fmt: skip
    assert response.status_code == 200, response.content.decode()[:500]
    return response.content.decode()


def _after(schedule: RecallSchedule) -> tuple[object, ...]:
    schedule.refresh_from_db()
    return (schedule.state, schedule.step, schedule.stability, schedule.difficulty,
            schedule.due, schedule.last_review, schedule.reps, schedule.lapses)  # fmt: skip


def test_a_grade_from_the_card_state_writes_what_a_grade_from_the_database_writes(
    client: Client, learner: User
) -> None:
    _, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        state, _ = _reveal(client, schedule)
        _grade(client, schedule, state)
        from_state = _after(schedule)
        log = ReviewLog.objects.latest("id")
        # The same grade again, this time with no card state: the schedule is read.
        review_undo(learner=learner, now=LATER)
        schedule.refresh_from_db()
        _grade(client, schedule, "")
    assert _after(schedule) == from_state
    again = ReviewLog.objects.latest("id")
    assert (again.state_before, again.state_after, again.scheduled_days) == (
        log.state_before, log.state_after, log.scheduled_days,
    )  # fmt: skip
    assert from_state[6] == 2 and schedule.due > LATER


def test_the_grade_schedules_with_the_parameters_its_buttons_showed(
    client: Client, learner: User
) -> None:
    """A parameter set trained between showing the answer and grading it applies from the next
    card: this one gets the interval its Good button said, under the set it was shown with."""
    c, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        state, buttons = _reveal(client, schedule)
        trained = parameter_set(c.course, STURDY)
        _grade(client, schedule, state)
    log = ReviewLog.objects.latest("id")
    assert log.parameters_id is None  # FSRS-6's defaults, as shown
    schedule.refresh_from_db()
    assert fsrs_adapter.interval_label(schedule.due - LATER) == buttons[3]
    with time_machine.travel(schedule.due, tick=False):
        state, _ = _reveal(client, schedule)
        _grade(client, schedule, state)
    assert ReviewLog.objects.latest("id").parameters_id == trained.pk


def test_a_double_submit_with_the_same_state_grades_once(client: Client, learner: User) -> None:
    _, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        state, _ = _reveal(client, schedule)
        _grade(client, schedule, state)
        html = _grade(client, schedule, state)
    assert ReviewLog.objects.filter(schedule=schedule).count() == 2  # the first grade and this
    assert "already graded" not in html  # a replay of its own grade, not a stale card
    schedule.refresh_from_db()
    assert schedule.reps == 2


def test_a_state_from_before_an_undo_is_stale(client: Client, learner: User) -> None:
    """Graded, shown again in a second tab, then the grade undone in the first: the second
    tab's state names a token the undo rotated, so its grade writes nothing and says so."""
    _, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        state, _ = _reveal(client, schedule)
        _grade(client, schedule, state)
        schedule.refresh_from_db()
        second_tab, _ = _reveal(client, schedule)
        shown = RecallSchedule(pk=schedule.pk, card_token=schedule.card_token)
        review_undo(learner=learner, now=LATER)
        undone = _after(schedule)
        html = _grade(client, shown, second_tab, 1)
    assert "already graded elsewhere" in html
    assert _after(schedule) == undone and undone[6] == 1


@pytest.mark.parametrize("change", ["tampered", "another learner", "expired"])
def test_a_state_that_is_not_this_cards_is_ignored(
    client: Client, learner: User, change: str
) -> None:
    """The grade reads the schedule instead: a tampered state, one made for someone else's
    card, or one shown more than a day ago changes nothing it writes."""
    c, schedule = _learnt(learner)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        state, _ = _reveal(client, schedule)
    if change == "tampered":
        forged = RecallSchedule.objects.get(pk=schedule.pk)
        forged.stability = 9000.0
        course = c.course
        scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=learner.pk)
        real = card_state_dumps(schedule=forged, course=course, scheduling=scheduling)
        payload, signature = real.rsplit(":", 1)
        state = f"{payload}:{signature[::-1]}"
    elif change == "another learner":
        other = UserFactory()
        _, theirs = _learnt(other)
        other_client = Client()
        other_client.force_login(other)
        with time_machine.travel(LATER, tick=False):
            state, _ = _reveal(other_client, theirs)
    moment = LATER + (timedelta(days=1, minutes=1) if change == "expired" else timedelta(0))
    with time_machine.travel(moment, tick=False):
        if change == "expired":
            expected = {"learner_id": learner.pk, "schedule_id": schedule.pk}
            assert card_state_loads(state, card_token=schedule.card_token, **expected) is None
        _grade(client, schedule, state)
    schedule.refresh_from_db()
    assert schedule.reps == 2 and schedule.stability < 1000
    log = ReviewLog.objects.latest("id")
    assert log.learner_id == learner.pk and log.schedule_id == schedule.pk


def test_an_overlong_state_is_refused_with_the_field_named(client: Client, learner: User) -> None:
    _, schedule = _learnt(learner)
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:grade"),
        {"rating": 3, "schedule_id": schedule.pk, "card_token": str(schedule.card_token),
         "card_state": "x" * 5000},
        **HTMX,
    )  # fmt: skip
    assert response.status_code == 400
    assert response.content.decode().startswith("card_state: ")
    schedule.refresh_from_db()
    assert schedule.reps == 1
