"""Today's counts ride with the card from the panel, through the reveal, to the grade, which
applies its own change to them instead of counting the queue again: after every grade they are
what a fresh count gives, and whenever they cannot be trusted the queue is counted afresh."""

from __future__ import annotations

import html as html_lib
import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from quizzes.models import QuizItem, RecallSchedule
from quizzes.selectors.carried_counts import (
    MAX_AGE,
    counted_now,
    counts_dumps,
    counts_loads,
)
from quizzes.selectors.course_stats import LEECH_LAPSES
from quizzes.selectors.queue import QueueCounts, due_queue_for, queue_counts_for
from quizzes.services.review import review_grade, schedule_start
from tests.factories import EnrollmentFactory, QuizItemFactory, UserFactory
from tests.quizzes.factories import CourseWithItems, course_with_items

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(days=20)
HTMX = {"HTTP_HX_REQUEST": "true"}


def _hidden(html: str, form_class: str) -> dict[str, str]:
    """The hidden inputs of the form with this class ({} when the page has none)."""
    form = re.search(rf'<form[^>]*class="{form_class}"[^>]*>(.*?)</form>', html, re.S)
    if form is None:
        return {}
    pairs = re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.group(1))
    return {name: html_lib.unescape(value) for name, value in pairs}


def _left_today(html: str) -> int:
    match = re.search(r'data-testid="due-count">(\d+)<', html)
    assert match, html
    return int(match.group(1))


def _reveal_and_grade(client: Client, panel: str, rating: int) -> str:
    """Reveal the panel's card through htmx, grade it, and return the next panel."""
    reveal = _hidden(panel, "reveal-form")
    assert reveal, panel
    revealed = client.get(reverse("quizzes:session"), reveal, **HTMX).content.decode()
    form = _hidden(revealed, "grade-form")
    assert form.get("counts") == reveal["counts"]  # passed on as the panel signed them
    response = client.post(reverse("quizzes:grade"), {**form, "rating": rating}, **HTMX)
    assert response.status_code == 200, response.content.decode()[:300]
    return response.content.decode()


def _shown_card(panel: str) -> tuple[str, str] | None:
    form = _hidden(panel, "reveal-form")
    if not form:
        return None
    kind = "schedule" if "schedule" in form else "item"
    return (kind, form[kind])


def _fresh_card(learner: User, now: datetime) -> tuple[str, str] | None:
    card = due_queue_for(learner=learner, now=now).card
    if card is None:
        return None
    return ("schedule", str(card.schedule.pk)) if card.schedule else ("item", str(card.item.pk))


def _carried(panel: str, learner: User, now: datetime) -> QueueCounts:
    carried = counts_loads(_hidden(panel, "reveal-form")["counts"], learner=learner, now=now)
    assert carried is not None
    return carried.counts


def _course_with_a_queue(learner: User, **limits: int) -> CourseWithItems:
    """Reviews due at LATER (the first two a lapse away from a leech), learning steps, new items."""
    c = course_with_items(
        learner=learner, learning_steps_minutes=[1, 10], relearning_steps_minutes=[10], **limits
    )
    items = [c.mc, c.numeric, c.recall] + [QuizItemFactory(lesson=c.lesson) for _ in range(9)]
    for item in items[:6]:  # Easy: into review, due within LATER's day
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=4, now=T0)
    leeches = RecallSchedule.objects.filter(learner=learner, item__in=items[:2])
    leeches.update(lapses=LEECH_LAPSES - 1)
    for item in items[6:8]:  # Again: a learning step, due by LATER
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=T0)
    return c


def _reviews_due_later(client: Client, learner: User, *names: str) -> CourseWithItems:
    """A course whose items `names` are reviews due at LATER, its learner signed in."""
    c = course_with_items(learner=learner, learning_steps_minutes=[], daily_new_limit=0)
    for name in names:
        item = getattr(c, name)
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=4, now=T0)
    client.force_login(learner)
    return c


@pytest.mark.parametrize(
    "ratings",
    [
        [1, 1, 3, 3, 2, 4, 1, 3, 3, 3, 4, 2, 3, 3, 3, 3, 3, 3, 3, 3],
        [3] * 20,
        [1] * 20,
        [4, 2, 1, 3] * 5,
    ],
)
def test_after_every_grade_the_carried_counts_are_a_fresh_count(
    client: Client, learner: User, ratings: list[int]
) -> None:
    # Two courses, one with tight daily limits: the limits are per course.
    _course_with_a_queue(learner, daily_review_limit=3, daily_new_limit=2)
    _course_with_a_queue(learner, daily_review_limit=50, daily_new_limit=5)
    client.force_login(learner)
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        graded = 0
        for rating in ratings:
            if not _hidden(panel, "reveal-form"):
                break  # the queue is done for today
            panel = _reveal_and_grade(client, panel, rating)
            graded += 1
            fresh = queue_counts_for(learner=learner, now=LATER)
            assert _left_today(panel) == fresh.due_count + fresh.new_count
            if _hidden(panel, "reveal-form"):
                assert _carried(panel, learner, LATER) == fresh
            # The card shown is the one a fresh queue shows.
            assert _shown_card(panel) == _fresh_card(learner, LATER)
    assert graded >= 10
    if ratings == [1] * 20:  # the lapse of a leech took it out of the queue
        assert RecallSchedule.objects.filter(learner=learner, suspended=True).exists()


def test_a_learning_step_that_falls_due_after_the_count_is_counted_when_shown(
    client: Client, learner: User
) -> None:
    c = course_with_items(learner=learner, learning_steps_minutes=[25], daily_new_limit=0)
    schedule_start(learner=learner, item=c.mc, card_token=uuid.uuid4(), rating=4, now=T0)
    client.force_login(learner)
    # A learning step due in 25 minutes: beyond the 20-minute learn-ahead, so not counted.
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=1, now=LATER)
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        assert _left_today(panel) == 1
    soon = LATER + timedelta(minutes=9)  # the counts are carried (younger than MAX_AGE)
    with time_machine.travel(soon, tick=False):
        panel = _reveal_and_grade(client, panel, 3)
        # The review is done; the step, now within the learn-ahead, is shown and counted.
        assert _left_today(panel) == 1
        assert _hidden(panel, "reveal-form")["schedule"] == str(
            RecallSchedule.objects.get(item=c.recall).pk
        )
        assert _carried(panel, learner, soon) == queue_counts_for(learner=learner, now=soon)
        panel = _reveal_and_grade(client, panel, 3)
    assert _left_today(panel) == 0 and 'data-testid="review-empty"' in panel


def test_the_end_of_the_queue_is_counted_afresh(client: Client, learner: User) -> None:
    """A grade from elsewhere is not in the carried counts; the empty state counts anyway."""
    _reviews_due_later(client, learner, "mc", "numeric")
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        assert _left_today(panel) == 2
        shown = int(_hidden(panel, "reveal-form")["schedule"])
        other = RecallSchedule.objects.exclude(pk=shown).get(learner=learner)
        review_grade(
            learner=learner, schedule_id=other.pk, card_token=other.card_token, rating=3, now=LATER
        )
        panel = _reveal_and_grade(client, panel, 3)
    assert _left_today(panel) == 0 and "All caught up" in panel


def test_counts_that_cannot_be_trusted_are_not_read(learner: User) -> None:
    c = course_with_items(learner=learner)
    with time_machine.travel(T0, tick=False):
        counts = queue_counts_for(learner=learner, now=T0)
        signed = counts_dumps(
            counted_now(learner=learner, counts=counts, now=T0), learner_id=learner.pk
        )
        assert counts_loads(signed, learner=learner, now=T0) is not None
        assert counts_loads(signed[:-2] + "xx", learner=learner, now=T0) is None  # tampered
        assert counts_loads(signed, learner=UserFactory(), now=T0) is None  # another learner's
        assert counts_loads("", learner=learner, now=T0) is None
        assert counts_loads("x" * 5000, learner=learner, now=T0) is None
    with time_machine.travel(T0 + MAX_AGE + timedelta(seconds=1), tick=False):
        assert counts_loads(signed, learner=learner, now=T0 + MAX_AGE) is None  # too old
    # A new local day (the learner's day starts at 04:00 UTC here) is counted afresh.
    later = T0 + timedelta(hours=19, minutes=5)
    with time_machine.travel(T0 + timedelta(minutes=5), tick=False):
        assert counts_loads(signed, learner=learner, now=later) is None
    assert c.course.pk in counts.enrolled_course_ids


def test_another_learners_counts_in_the_form_are_ignored(client: Client, learner: User) -> None:
    _reviews_due_later(client, learner, "mc", "numeric")
    other = UserFactory()
    EnrollmentFactory(course=course_with_items().course, user=other)
    with time_machine.travel(LATER, tick=False):
        theirs = counts_dumps(
            counted_now(
                learner=other, counts=queue_counts_for(learner=other, now=LATER), now=LATER
            ),
            learner_id=other.pk,
        )
        panel = client.get(reverse("quizzes:session")).content.decode()
        revealed = client.get(
            reverse("quizzes:session"), _hidden(panel, "reveal-form"), **HTMX
        ).content.decode()
        form = {**_hidden(revealed, "grade-form"), "counts": theirs, "rating": 3}
        panel = client.post(reverse("quizzes:grade"), form, **HTMX).content.decode()
        assert _left_today(panel) == 1
        assert _carried(panel, learner, LATER) == queue_counts_for(learner=learner, now=LATER)


def test_overlong_counts_are_dropped_by_the_reveal_and_refused_by_the_grade(
    client: Client, learner: User
) -> None:
    c = _reviews_due_later(client, learner, "mc")
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        reveal = {**_hidden(panel, "reveal-form"), "counts": "x" * 3000}
        revealed = client.get(reverse("quizzes:session"), reveal, **HTMX).content.decode()
        form = _hidden(revealed, "grade-form")
        assert "counts" not in form
        response = client.post(
            reverse("quizzes:grade"), {**form, "counts": "x" * 3000, "rating": 3}, **HTMX
        )
    assert response.status_code == 400
    assert response.content.decode().startswith("counts: ")
    assert RecallSchedule.objects.get(item=c.mc).reps == 1  # nothing graded


@pytest.mark.postgres  # the write is one statement on PostgreSQL, two elsewhere
def test_a_grade_with_carried_counts_does_not_count_the_queue(
    client: Client, learner: User
) -> None:
    _reviews_due_later(client, learner, "numeric", "recall")
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        revealed = client.get(
            reverse("quizzes:session"), _hidden(panel, "reveal-form"), **HTMX
        ).content.decode()
        with CaptureQueriesContext(connection) as grade:
            response = client.post(
                reverse("quizzes:grade"), {**_hidden(revealed, "grade-form"), "rating": 3}, **HTMX
            )
    assert response.status_code == 200 and _left_today(response.content.decode()) == 1
    # Session, user, the schedule, the update and its log in one statement, the next card (no
    # choices), the load balancer's one grouped count of reviews due per day: no count of the
    # queue.
    assert len(grade) <= 6, [q["sql"][:60] for q in grade.captured_queries]


def test_a_card_graded_again_comes_back_before_a_later_learning_step(
    client: Client, learner: User
) -> None:
    """Again puts a review into a relearning step due before a learning step that was waiting:
    the graded card is shown again, first."""
    c = _reviews_due_later(client, learner, "numeric")
    type(c.course).objects.filter(pk=c.course.pk).update(
        learning_steps_minutes=[10], relearning_steps_minutes=[10]
    )
    # A learning step due at LATER + 15 minutes: within the learn-ahead, after the relearning
    # step that Again gives the review below (LATER + 10 minutes).
    recall = QuizItem.objects.get(pk=c.recall.pk)  # with the course's new steps
    step = LATER + timedelta(minutes=5)
    schedule_start(learner=learner, item=recall, card_token=uuid.uuid4(), rating=1, now=step)
    assert RecallSchedule.objects.get(item=recall).due == LATER + timedelta(minutes=15)
    schedule = RecallSchedule.objects.get(learner=learner, item=c.numeric)
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        assert _hidden(panel, "reveal-form")["schedule"] == str(schedule.pk)
        panel = _reveal_and_grade(client, panel, 1)
        assert _shown_card(panel) == _fresh_card(learner, LATER)
    schedule.refresh_from_db()
    assert schedule.state == RecallSchedule.State.RELEARNING
    assert _hidden(panel, "reveal-form")["schedule"] == str(schedule.pk)
    assert _hidden(panel, "reveal-form")["token"] == str(schedule.card_token)


def test_a_grade_that_reaches_the_daily_review_limit_shows_no_more_reviews(
    client: Client, learner: User
) -> None:
    """Once a grade uses up the day's reviews of its course, no other review of it is shown,
    though more are due."""
    c = _reviews_due_later(client, learner, "mc", "numeric", "recall")
    type(c.course).objects.filter(pk=c.course.pk).update(daily_review_limit=1)
    with time_machine.travel(LATER, tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        assert _left_today(panel) == 1
        panel = _reveal_and_grade(client, panel, 3)
    assert 'data-testid="review-empty"' in panel and "Today's limit reached" in panel
    assert _left_today(panel) == 0
