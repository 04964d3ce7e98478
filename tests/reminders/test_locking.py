"""The outbox's row lock on PostgreSQL: a digest another worker holds is skipped, not waited for,
and of many concurrent claims of one row exactly one wins."""

from __future__ import annotations

import threading
from datetime import timedelta

import psycopg
import pytest
from django.db import connection, connections
from django.utils import timezone

from reminders.models import ReminderDigest
from reminders.outbox import digest_claim
from tests.reminders.factories import learner_due
from tests.reminders.worker import worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def pending_digest() -> ReminderDigest:
    user = learner_due(due=timezone.now() - timedelta(hours=1))
    return ReminderDigest.objects.create(learner=user, local_date=timezone.now().date())


def test_a_row_locked_by_another_worker_is_skipped_not_waited_for() -> None:
    """While another connection holds the row lock, a claim returns None at once; after it lets
    go, the claim takes the row."""
    digest = pending_digest()
    with psycopg.connect(worker_database_url()) as other:
        other.execute("SELECT id FROM quizzes_reminderdigest WHERE id = %s FOR UPDATE", [digest.pk])
        assert digest_claim(digest_id=digest.pk, now=timezone.now()) is None
        other.rollback()
    claimed = digest_claim(digest_id=digest.pk, now=timezone.now())
    assert claimed is not None
    assert claimed.status == ReminderDigest.Status.SENDING
    assert claimed.attempts == 1


def test_concurrent_claims_of_one_row_have_one_winner() -> None:
    """Eight threads claim the same digest at once: one gets it, seven get None."""
    digest = pending_digest()
    barrier = threading.Barrier(8)
    results: list[bool] = []
    lock = threading.Lock()

    def claim() -> None:
        try:
            barrier.wait(timeout=10)
            won = digest_claim(digest_id=digest.pk, now=timezone.now()) is not None
            with lock:
                results.append(won)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(results) == [False] * 7 + [True]
    digest.refresh_from_db()
    assert digest.attempts == 1
    assert connection.vendor == "postgresql"


def test_racing_scans_write_one_digest_and_send_one_email_per_learner() -> None:
    """Four scans at the same moment (a doubled beat, a manual scan): the unique key keeps one
    row per learner and the claim lets one send through, so each learner gets one email."""
    from collections import Counter

    from django.core import mail

    from reminders.scan import digests_scan

    learners = [
        learner_due(due=timezone.now() - timedelta(hours=1), reminder_hour=0, day_start_hour=0)
        for _ in range(6)
    ]
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def scan() -> None:
        try:
            barrier.wait(timeout=10)
            digests_scan(now=timezone.now())  # sends run eagerly on commit, in this thread
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=scan) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert ReminderDigest.objects.count() == len(learners)
    assert Counter(to for m in mail.outbox for to in m.to) == {u.email: 1 for u in learners}
