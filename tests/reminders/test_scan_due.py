"""The scan finds learners through their due recall schedules: what a digest counts and shows
first, which cards make a learner owed one, ranges of learners, and the queries a scan makes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection

from quizzes.models import RecallSchedule
from reminders import scan as scan_module
from reminders.models import ReminderDigest
from reminders.scan import digests_scan
from tests.factories import QuizItemFactory, RecallScheduleFactory
from tests.reminders.factories import learner_due

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def add_schedule(learner, *, due: datetime, **fields) -> RecallSchedule:  # type: ignore[no-untyped-def]
    """A review card of `learner`, due at `due`, last reviewed three days before."""
    return RecallScheduleFactory(
        learner=learner,
        item=QuizItemFactory(),
        due=due,
        state=fields.pop("state", RecallSchedule.State.REVIEW),
        stability=3.0,
        difficulty=5.0,
        reps=fields.pop("reps", 3),
        last_review=fields.pop("last_review", due - timedelta(days=3)),
        **fields,
    )


def scan(django_capture_on_commit_callbacks, now: datetime = NOW) -> list[int]:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=False):
        return digests_scan(now=now).enqueued_ids


def test_digest_counts_due_recall_and_shows_the_earliest_first(
    django_capture_on_commit_callbacks,
):
    """The count is of the items due now; the first item is the earliest due, the lower id on a
    tie; a suspended leech or an item undone to new counts for nothing, even when earlier."""
    user = learner_due(due=NOW - timedelta(hours=5))
    tie_a = add_schedule(user, due=NOW - timedelta(days=2))
    add_schedule(user, due=NOW - timedelta(days=2))
    add_schedule(user, due=NOW - timedelta(days=9), suspended=True)
    add_schedule(user, due=NOW - timedelta(days=9), reps=0)
    add_schedule(user, due=NOW + timedelta(minutes=1))
    scan(django_capture_on_commit_callbacks)
    digest = ReminderDigest.objects.get(learner=user)
    assert digest.local_date == date(2026, 6, 1)
    assert digest.due_count == 3
    assert digest.first_item_id == tie_a.item_id


def test_a_learning_step_card_counts_once_another_card_makes_the_digest_owed(
    django_capture_on_commit_callbacks,
):
    """A card in an intraday learning step does not make a digest owed, but when a review card
    does, the step card is due too and is counted (and shown first if it is the earliest)."""
    user = learner_due(due=NOW - timedelta(minutes=30), state=RecallSchedule.State.LEARNING)
    step = RecallSchedule.objects.get(learner=user)
    alone = learner_due(due=NOW - timedelta(minutes=30), state=RecallSchedule.State.LEARNING)
    add_schedule(user, due=NOW - timedelta(minutes=10))
    scan(django_capture_on_commit_callbacks)
    digest = ReminderDigest.objects.get(learner=user)
    assert digest.due_count == 2
    assert digest.first_item_id == step.item_id
    assert not ReminderDigest.objects.filter(learner=alone).exists()


def test_only_suspended_or_new_cards_due_means_no_digest(django_capture_on_commit_callbacks):
    """A learner whose only due cards are a suspended leech and an item undone to new is owed
    nothing, even with a recall card due later today."""
    user = learner_due(due=NOW + timedelta(hours=3))
    add_schedule(user, due=NOW - timedelta(days=1), suspended=True)
    add_schedule(user, due=NOW - timedelta(days=1), reps=0)
    assert scan(django_capture_on_commit_callbacks) == []
    assert not ReminderDigest.objects.filter(learner=user).exists()


def test_every_range_of_learners_gets_one_digest_each(
    django_capture_on_commit_callbacks, monkeypatch
):
    """With ranges of two learners, each due learner in every range gets exactly one digest, the
    learners not due none, and a second scan adds nothing."""
    monkeypatch.setattr(scan_module, "SCAN_RANGE", 2)
    learners = [
        learner_due(due=NOW - timedelta(hours=1) if i % 3 else NOW + timedelta(hours=1), items=2)
        for i in range(7)
    ]
    due = {user.pk for i, user in enumerate(learners) if i % 3}
    ids = scan(django_capture_on_commit_callbacks)
    assert len(ids) == len(due)
    digests = list(ReminderDigest.objects.values_list("learner_id", "due_count"))
    assert sorted(digests) == sorted((pk, 2) for pk in due)
    assert scan(django_capture_on_commit_callbacks, NOW + timedelta(minutes=5)) == []
    assert ReminderDigest.objects.count() == len(due)


def test_scan_queries_do_not_grow_with_learners(
    django_capture_on_commit_callbacks, django_assert_num_queries
):
    """The same queries however many learners are due, in however many zones: the slots, the id
    range, one INSERT for the range (after switching JIT off on PostgreSQL), the two requeue
    reads, and the savepoints of the range's transaction and the requeue's (a test runs inside a
    transaction)."""
    for _ in range(12):
        learner_due(due=NOW - timedelta(hours=1), items=2)
    for zone in ("Asia/Tokyo", "America/New_York"):
        learner_due(due=NOW - timedelta(hours=1), time_zone=zone, day_start_hour=0, reminder_hour=0)
    with django_assert_num_queries(10 if connection.vendor == "postgresql" else 9):
        assert len(scan(django_capture_on_commit_callbacks)) == 14
