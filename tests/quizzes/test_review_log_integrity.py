"""A review log's learner and item are copies of its schedule's, held by the schedule's own
constraints rather than checked again on every grade: they always match, deleting a learner or an
item takes their logs, and the database still refuses to delete a learner out from under them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.models import User
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services.review import review_grade, schedule_start
from tests.factories import UserFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)


def _graded(learner: User) -> None:
    c = course_with_items(learner=learner)
    for item in (c.mc, c.numeric, c.recall):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=T0)
    for schedule in RecallSchedule.objects.filter(learner=learner):
        review_grade(
            learner=learner, schedule_id=schedule.pk, card_token=schedule.card_token, rating=3,
            now=T0 + timedelta(minutes=5),
        )  # fmt: skip


def test_every_log_names_its_schedules_learner_and_item(learner: User) -> None:
    _graded(learner)
    _graded(UserFactory())
    logs = ReviewLog.objects.select_related("schedule")
    assert logs.count() == 12
    assert all(
        (log.learner_id, log.item_id) == (log.schedule.learner_id, log.schedule.item_id)
        for log in logs
    )


def test_deleting_a_learner_or_an_item_takes_their_logs(learner: User) -> None:
    _graded(learner)
    other = UserFactory()
    _graded(other)
    learner.delete()
    assert not ReviewLog.objects.filter(learner_id=learner.pk).exists()
    item = RecallSchedule.objects.filter(learner=other).first().item  # type: ignore[union-attr]
    item.delete()
    assert not ReviewLog.objects.filter(item_id=item.pk).exists()
    assert ReviewLog.objects.filter(learner=other).count() == 4


@pytest.mark.postgres
def test_the_database_refuses_to_delete_a_learner_with_logs(learner: User) -> None:
    _graded(learner)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("DELETE FROM accounts_user WHERE id = %s", [learner.pk])
    assert ReviewLog.objects.filter(learner=learner).count() == 6
