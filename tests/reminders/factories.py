"""Factories for the reminder tests: learners with items due, in a chosen zone and hour."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from accounts.models import User
from quizzes.models import RecallSchedule
from tests.factories import QuizItemFactory, RecallScheduleFactory, UserFactory


def learner_due(
    *,
    due: datetime,
    items: int = 1,
    time_zone: str = "UTC",
    reminder_hour: int = 8,
    day_start_hour: int = 4,
    state: int = RecallSchedule.State.REVIEW,
    last_review: datetime | None = None,
    **extra: Any,
) -> User:
    """A learner with `items` recall schedules, all due at `due` (review cards unless `state`
    says otherwise: a card in an intraday learning step does not trigger a digest)."""
    user = UserFactory(
        time_zone=time_zone,
        reminder_hour=reminder_hour,
        day_start_hour=day_start_hour,
        **extra,
    )
    for _ in range(items):
        review = state == RecallSchedule.State.REVIEW
        RecallScheduleFactory(
            learner=user,
            item=QuizItemFactory(),
            due=due,
            state=state,
            # A review card has a memory state and a last review (three days before it fell due).
            stability=3.0 if review else None,
            difficulty=5.0 if review else None,
            reps=3 if review else 1,
            last_review=last_review or (due - timedelta(days=3) if review else None),
        )
    return user


def schedules_for(user: User) -> list[RecallSchedule]:
    return list(RecallSchedule.objects.filter(learner=user).order_by("due", "id"))
