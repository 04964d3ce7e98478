"""When failed sends are tried again: the backoff after temporary failures (a one-minute outage
costs a digest at most two more minutes), the sweep that re-enqueues a due retry, and a permanent
failure left alone."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.utils import timezone

from config.mail import retry_at, retry_gives_up
from reminders.models import ReminderDigest
from reminders.outbox import digest_mark_failed
from reminders.scan import digests_scan, digests_sweep
from tests.reminders.factories import learner_due

Status = ReminderDigest.Status


@pytest.mark.parametrize("outage_seconds", [10, 30, 60])
def test_a_short_outage_delays_a_send_by_less_than_two_minutes(settings, outage_seconds) -> None:  # type: ignore[no-untyped-def]
    """Production's schedule (20 s doubling, jittered): over 2,000 random runs, the first try
    after the server's return comes within two minutes of it."""
    settings.OUTBOX_RETRY_BASE_SECONDS = 20.0
    settings.OUTBOX_RETRY_MAX_SECONDS = 1800.0
    random.seed(31)
    start = datetime(2026, 12, 4, 7, 0, tzinfo=UTC)
    back = start + timedelta(seconds=outage_seconds)
    worst = timedelta(0)
    for _ in range(2000):
        at, failures = start, 0
        while at < back:
            failures += 1
            at = retry_at(failures=failures, now=at)
        worst = max(worst, at - back)
    assert worst < timedelta(minutes=2)


def test_retries_last_the_window_from_the_first_failure(settings) -> None:  # type: ignore[no-untyped-def]
    settings.OUTBOX_RETRY_WINDOW_SECONDS = 7200.0
    first = datetime(2026, 12, 4, 7, 0, tzinfo=UTC)
    assert not retry_gives_up(failing_since=first, now=first + timedelta(hours=1, minutes=59))
    assert retry_gives_up(failing_since=first, now=first + timedelta(hours=2))
    assert not retry_gives_up(failing_since=None, now=first)


@pytest.mark.django_db
def test_the_sweep_sends_a_due_retry_and_leaves_a_permanent_failure(
    django_capture_on_commit_callbacks,
) -> None:  # type: ignore[no-untyped-def]
    later, never = (
        learner_due(due=timezone.now() - timedelta(hours=1), reminder_hour=0, day_start_hour=0)
        for _ in range(2)
    )
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=False):
        digests_scan(now=now)
    digest_mark_failed(
        digest_id=ReminderDigest.objects.get(learner=later).pk, reason="451 4.3.0", now=now
    )
    digest_mark_failed(
        digest_id=ReminderDigest.objects.get(learner=never).pk,
        reason="550 5.1.1",
        now=now,
        final=True,
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert digests_sweep(now=now).total == 0  # the retry is not due yet
        assert digests_sweep(now=now + timedelta(minutes=2)).failed == 1
    assert [m.to for m in mail.outbox] == [[later.email]]
    assert ReminderDigest.objects.get(learner=later).status == Status.SENT
    assert ReminderDigest.objects.get(learner=never).status == Status.FAILED
