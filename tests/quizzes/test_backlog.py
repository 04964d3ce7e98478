"""Backlog recovery: more reviews due than the daily limit puts the least-remembered first,
holds new items back, and the review page says how many days catching up takes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.backlog import Backlog, backlog_of
from quizzes.selectors.queue import due_queue_for
from tests.factories import QuizItemFactory, RecallScheduleFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db


def _overdue(learner: User, lesson: object, *, elapsed: int, stability: float) -> RecallSchedule:
    now = timezone.now()
    return RecallScheduleFactory(
        learner=learner,
        item=QuizItemFactory(lesson=lesson),
        state=RecallSchedule.State.REVIEW,
        stability=stability,
        difficulty=5.0,
        last_review=now - timedelta(days=elapsed),
        due=now - timedelta(days=2),
        reps=3,
    )


def test_a_backlog_shows_the_least_remembered_first_and_holds_new_items(learner: User) -> None:
    c = course_with_items(learner=learner, daily_review_limit=4, daily_new_limit=5)
    for _ in range(8):
        _overdue(learner, c.lesson, elapsed=12, stability=10.0)
    weakest = _overdue(learner, c.lesson, elapsed=12, stability=2.0)  # t/S = 6: lowest recall
    queue = due_queue_for(learner=learner, now=timezone.now())
    assert queue.card is not None and queue.card.schedule is not None
    assert queue.card.schedule.pk == weakest.pk
    assert queue.new_count == 0
    assert backlog_of(queue.counts.courses) == Backlog(reviews=9, days=3)  # 9 at 4 a day


def test_under_the_limit_it_is_the_usual_queue(learner: User) -> None:
    c = course_with_items(learner=learner, daily_review_limit=20, daily_new_limit=5)
    for _ in range(3):
        _overdue(learner, c.lesson, elapsed=12, stability=10.0)
    queue = due_queue_for(learner=learner, now=timezone.now())
    assert backlog_of(queue.counts.courses).days == 0
    assert queue.new_count > 0


def test_the_review_page_says_how_long_catching_up_takes(client: Client, learner: User) -> None:
    c = course_with_items(learner=learner, daily_review_limit=4)
    for _ in range(9):
        _overdue(learner, c.lesson, elapsed=12, stability=10.0)
    client.force_login(learner)
    page = client.get(reverse("quizzes:session"))
    assert "You have 9 reviews waiting" in page.content.decode()
    assert "about 3 days" in page.content.decode()
