"""The reminder scan and the learner's week: no digest on a minimum easy day (in the learner's
own time zone) nor during their break; a reduced day still gets one."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from reminders.models import ReminderDigest
from reminders.scan import digests_scan
from tests.reminders.factories import learner_due

pytestmark = pytest.mark.django_db


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def digest_dates(user) -> list[date]:  # type: ignore[no-untyped-def]
    return list(
        ReminderDigest.objects.filter(learner=user)
        .order_by("local_date")
        .values_list("local_date", flat=True)
    )


def scan(now: datetime, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=False):
        digests_scan(now=now)


def test_no_digest_on_a_minimum_sunday_in_auckland(django_capture_on_commit_callbacks):
    """19:00 UTC on Saturday 7 March is 08:00 on Sunday in Auckland: with Sunday at minimum the
    Auckland learner gets nothing that morning and Monday's digest as usual; a UTC learner with
    the same setting still gets Saturday's."""
    auckland = learner_due(due=utc(2026, 3, 1), time_zone="Pacific/Auckland", easy_days="nnnnnnm")
    london = learner_due(due=utc(2026, 3, 1), time_zone="UTC", easy_days="nnnnnnm")
    reduced = learner_due(due=utc(2026, 3, 1), time_zone="Pacific/Auckland", easy_days="nnnnnnr")
    scan(utc(2026, 3, 7, 8, 0), django_capture_on_commit_callbacks)
    scan(utc(2026, 3, 7, 19, 0), django_capture_on_commit_callbacks)
    assert digest_dates(london) == [date(2026, 3, 7)]
    assert digest_dates(auckland) == [date(2026, 3, 7)]  # Saturday's, and no Sunday's
    assert digest_dates(reduced) == [date(2026, 3, 7), date(2026, 3, 8)]
    scan(utc(2026, 3, 8, 19, 0), django_capture_on_commit_callbacks)
    assert digest_dates(auckland) == [date(2026, 3, 7), date(2026, 3, 9)]


def test_no_digest_during_a_break(django_capture_on_commit_callbacks):
    away = learner_due(due=utc(2026, 5, 20), break_from=date(2026, 6, 1), break_to=date(2026, 6, 3))
    for day in range(1, 6):
        scan(utc(2026, 6, day, 8, 0), django_capture_on_commit_callbacks)
    assert digest_dates(away) == [date(2026, 6, 4), date(2026, 6, 5)]
