"""What a chunk's digests show, read in one go at send time: each learner's count of items due
and the earliest-due one (ties by id), leaving out suspended and never-reviewed cards."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from quizzes.models import RecallSchedule
from reminders.selectors import digests_content_for
from tests.factories import ChoiceFactory, RecallScheduleFactory
from tests.reminders.factories import learner_due

pytestmark = pytest.mark.django_db


def expected(learner_id: int) -> tuple[int, int | None]:
    now = timezone.now()
    due = [
        s
        for s in RecallSchedule.objects.filter(learner_id=learner_id).order_by("due", "id")
        if s.due <= now and not s.suspended and s.reps > 0
    ]
    return len(due), due[0].pk if due else None


def test_counts_and_first_schedules_for_a_chunk(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    """Learners with several due items, a tie on `due`, a suspended earliest card, a new card,
    and nothing due: the count and first schedule of each, with items and choices read in two
    queries on PostgreSQL (three elsewhere) however many learners."""
    now = timezone.now()
    several = learner_due(due=now - timedelta(hours=3), items=3)
    tie = learner_due(due=now - timedelta(hours=1), items=2)
    suspended = learner_due(due=now - timedelta(hours=1), items=1)
    RecallScheduleFactory(learner=suspended, due=now - timedelta(days=2), suspended=True, reps=2)
    new_card = learner_due(due=now - timedelta(hours=1), items=1)
    RecallScheduleFactory(learner=new_card, due=now - timedelta(days=2), reps=0)
    nothing = learner_due(due=now + timedelta(days=1), items=2)
    ChoiceFactory(item=several.recall_schedules.order_by("due", "id").first().item)
    learners = [several, tie, suspended, new_card, nothing]

    with django_assert_num_queries(2 if connection.vendor == "postgresql" else 3):
        contents = digests_content_for(learner_ids=[u.pk for u in learners], now=timezone.now())
        for content in contents.values():
            if content.first_schedule is not None:
                list(content.first_schedule.item.choices.all())

    for learner in learners:
        count, first = expected(learner.pk)
        content = contents[learner.pk]
        assert content.due_count == count
        assert (content.first_schedule.pk if content.first_schedule else None) == first
    assert contents[nothing.pk].due_count == 0
    assert contents[several.pk].due_count == 3
