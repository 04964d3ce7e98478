"""The reminder scan: who gets a digest, for which local date, and when — across time zones,
daylight-saving changes, a day that starts at 04:00, pauses and repeated scans."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from quizzes.models import RecallSchedule
from reminders.models import ReminderDigest
from reminders.scan import digests_scan
from reminders.selectors import digest_local_date
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


def scan(now: datetime, django_capture_on_commit_callbacks) -> list[int]:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=False):
        return digests_scan(now=now).enqueued_ids


class TestTimeZones:
    def test_new_york_spring_forward_keeps_eight_local(self, django_capture_on_commit_callbacks):
        """America/New_York: 08:00 local is 13:00 UTC the day before the switch and 12:00 UTC on
        the switch day (2026-03-08); the digest follows the wall clock, not a fixed UTC offset."""
        user = learner_due(due=utc(2026, 3, 1), time_zone="America/New_York", reminder_hour=8)
        scan(utc(2026, 3, 7, 12, 59), django_capture_on_commit_callbacks)
        assert digest_dates(user) == []
        scan(utc(2026, 3, 7, 13, 0), django_capture_on_commit_callbacks)
        assert digest_dates(user) == [date(2026, 3, 7)]
        scan(utc(2026, 3, 8, 11, 59), django_capture_on_commit_callbacks)
        assert digest_dates(user) == [date(2026, 3, 7)]
        scan(utc(2026, 3, 8, 12, 0), django_capture_on_commit_callbacks)
        assert digest_dates(user) == [date(2026, 3, 7), date(2026, 3, 8)]

    def test_new_york_reminder_hour_that_does_not_exist(self):
        """On 2026-03-08 New York skips 02:00–03:00: a 02:00 reminder goes at 03:00 EDT."""
        kwargs = {"time_zone": "America/New_York", "day_start_hour": 0, "reminder_hour": 2}
        assert digest_local_date(now=utc(2026, 3, 8, 6, 59), **kwargs) is None  # 01:59 EST
        assert digest_local_date(now=utc(2026, 3, 8, 7, 0), **kwargs) == date(
            2026, 3, 8
        )  # 03:00 EDT

    def test_berlin_fall_back_sends_once_through_the_repeated_hour(
        self, django_capture_on_commit_callbacks
    ):
        """Europe/Berlin repeats 02:00–03:00 on 2026-10-25: a 02:00 reminder goes at the first
        02:00 (00:00 UTC) and the second 02:00 (01:00 UTC) finds the digest already written."""
        user = learner_due(
            due=utc(2026, 10, 1), time_zone="Europe/Berlin", day_start_hour=0, reminder_hour=2
        )
        scan(utc(2026, 10, 24, 23, 59), django_capture_on_commit_callbacks)  # 01:59 CEST
        assert digest_dates(user) == []
        assert scan(utc(2026, 10, 25, 0, 0), django_capture_on_commit_callbacks)
        assert scan(utc(2026, 10, 25, 1, 0), django_capture_on_commit_callbacks) == []
        assert digest_dates(user) == [date(2026, 10, 25)]

    def test_berlin_spring_forward_keeps_eight_local(self, django_capture_on_commit_callbacks):
        """Europe/Berlin moves to CEST on 2026-03-29: 08:00 local is 07:00 UTC before and 06:00
        UTC after."""
        user = learner_due(due=utc(2026, 3, 1), time_zone="Europe/Berlin", reminder_hour=8)
        scan(utc(2026, 3, 28, 6, 59), django_capture_on_commit_callbacks)
        scan(utc(2026, 3, 29, 5, 59), django_capture_on_commit_callbacks)
        assert digest_dates(user) == []
        scan(utc(2026, 3, 29, 6, 0), django_capture_on_commit_callbacks)
        assert digest_dates(user) == [date(2026, 3, 29)]

    @pytest.mark.parametrize(
        ("zone", "before", "at", "local"),
        [
            # East of UTC: the local date is already tomorrow's UTC date.
            ("Asia/Tokyo", utc(2026, 6, 1, 22, 59), utc(2026, 6, 1, 23, 0), date(2026, 6, 2)),
            ("Pacific/Auckland", utc(2026, 6, 1, 19, 59), utc(2026, 6, 1, 20, 0), date(2026, 6, 2)),
            # Auckland in its summer time (NZDT, UTC+13).
            (
                "Pacific/Auckland",
                utc(2026, 12, 1, 18, 59),
                utc(2026, 12, 1, 19, 0),
                date(2026, 12, 2),
            ),
            # West of UTC.
            (
                "America/Los_Angeles",
                utc(2026, 6, 1, 14, 59),
                utc(2026, 6, 1, 15, 0),
                date(2026, 6, 1),
            ),
            ("UTC", utc(2026, 6, 1, 7, 59), utc(2026, 6, 1, 8, 0), date(2026, 6, 1)),
        ],
    )
    def test_eight_local_east_and_west_of_utc(
        self, zone, before, at, local, django_capture_on_commit_callbacks
    ):
        """The digest goes at 08:00 local time and carries the learner's local date."""
        user = learner_due(due=utc(2026, 5, 1), time_zone=zone, reminder_hour=8)
        scan(before, django_capture_on_commit_callbacks)
        assert digest_dates(user) == []
        scan(at, django_capture_on_commit_callbacks)
        assert digest_dates(user) == [local]

    def test_one_scan_serves_every_zone_at_once(self, django_capture_on_commit_callbacks):
        """At 23:00 UTC it is 08:00 in Tokyo (digest) and 16:00 in Los Angeles (digest, since
        08:00 has passed there) but 11:00 in Auckland the next day, before that learner's noon."""
        now = utc(2026, 6, 1, 23, 0)
        tokyo = learner_due(due=utc(2026, 5, 1), time_zone="Asia/Tokyo")
        la = learner_due(due=utc(2026, 5, 1), time_zone="America/Los_Angeles")
        auckland = learner_due(due=utc(2026, 5, 1), time_zone="Pacific/Auckland", reminder_hour=12)
        scan(now, django_capture_on_commit_callbacks)
        assert digest_dates(tokyo) == [date(2026, 6, 2)]
        assert digest_dates(la) == [date(2026, 6, 1)]
        assert digest_dates(auckland) == []


class TestDayStart:
    def test_before_four_it_is_still_yesterday(self, django_capture_on_commit_callbacks):
        """A learner whose day starts at 04:00 and who had nothing due on Monday gets Monday's
        digest when items fall due at 00:30 Tuesday (still Monday for them); Tuesday's digest
        follows at 08:00 Tuesday. A learner whose day starts at midnight waits for 08:00."""
        owl = learner_due(due=utc(2026, 6, 1, 22, 30), time_zone="Europe/Berlin", day_start_hour=4)
        lark = learner_due(due=utc(2026, 6, 1, 22, 30), time_zone="Europe/Berlin", day_start_hour=0)
        scan(utc(2026, 6, 1, 21, 0), django_capture_on_commit_callbacks)  # 23:00 Mon: not due
        assert digest_dates(owl) == digest_dates(lark) == []
        scan(utc(2026, 6, 1, 23, 0), django_capture_on_commit_callbacks)  # 01:00 Tue
        assert digest_dates(owl) == [date(2026, 6, 1)]
        assert digest_dates(lark) == []
        scan(utc(2026, 6, 2, 1, 59), django_capture_on_commit_callbacks)  # 03:59 Tue
        assert digest_dates(owl) == [date(2026, 6, 1)]
        scan(utc(2026, 6, 2, 6, 0), django_capture_on_commit_callbacks)  # 08:00 Tue
        assert digest_dates(owl) == [date(2026, 6, 1), date(2026, 6, 2)]
        assert digest_dates(lark) == [date(2026, 6, 2)]

    def test_reminder_hour_before_day_start_belongs_to_the_end_of_the_day(self):
        """Day from 04:00, reminder at 02:00: the 02:00 on Wednesday ends Tuesday's day."""
        kwargs = {"time_zone": "Asia/Tokyo", "day_start_hour": 4, "reminder_hour": 2}
        assert digest_local_date(now=utc(2026, 6, 2, 16, 59), **kwargs) is None  # Wed 01:59
        assert digest_local_date(now=utc(2026, 6, 2, 17, 0), **kwargs) == date(2026, 6, 2)
        assert digest_local_date(now=utc(2026, 6, 2, 19, 0), **kwargs) is None  # Wed 04:00


class TestWhoGetsOne:
    NOW = utc(2026, 6, 1, 12, 0)

    def test_only_learners_with_items_due(self, django_capture_on_commit_callbacks):
        """Items due later than now do not count; one digest per learner however many are due."""
        due = learner_due(due=self.NOW - timedelta(hours=1), items=3)
        later = learner_due(due=self.NOW + timedelta(minutes=1))
        scan(self.NOW, django_capture_on_commit_callbacks)
        assert digest_dates(due) == [date(2026, 6, 1)]
        assert digest_dates(later) == []
        digest = ReminderDigest.objects.get(learner=due)
        assert digest.due_count == 3
        assert digest.status == ReminderDigest.Status.PENDING
        assert digest.first_item_id is not None
        assert digest.history[0]["status"] == "pending"

    def test_disabled_paused_and_inactive_learners_get_none(
        self, django_capture_on_commit_callbacks
    ):
        """Reminders off, a pause that covers the local date, or an inactive account: no digest.
        A pause that ended yesterday no longer applies."""
        due = self.NOW - timedelta(days=1)
        off = learner_due(due=due, reminders_enabled=False)
        paused_today = learner_due(due=due, reminders_paused_until=date(2026, 6, 1))
        paused_long = learner_due(due=due, reminders_paused_until=date(2026, 7, 1))
        pause_over = learner_due(due=due, reminders_paused_until=date(2026, 5, 31))
        # On Kiritimati (UTC+14) it is already 02:00 on 2 June: a pause until 1 June is over.
        pause_over_east = learner_due(
            due=due,
            time_zone="Pacific/Kiritimati",
            day_start_hour=0,
            reminder_hour=1,
            reminders_paused_until=date(2026, 6, 1),
        )
        inactive = learner_due(due=due, is_active=False)
        scan(self.NOW, django_capture_on_commit_callbacks)
        assert digest_dates(off) == []
        assert digest_dates(paused_today) == []
        assert digest_dates(paused_long) == []
        assert digest_dates(inactive) == []
        assert digest_dates(pause_over) == [date(2026, 6, 1)]
        assert digest_dates(pause_over_east) == [date(2026, 6, 2)]

    def test_second_scan_is_a_no_op(self, django_capture_on_commit_callbacks):
        """A second scan (or a second beat) inserts nothing and enqueues nothing."""
        learners = [learner_due(due=self.NOW - timedelta(hours=2)) for _ in range(3)]
        with django_capture_on_commit_callbacks(execute=False) as first:
            result = digests_scan(now=self.NOW)
        assert result.created == 3
        assert len(first) == 1  # one on-commit callback enqueues the whole batch
        with django_capture_on_commit_callbacks(execute=False) as second:
            again = digests_scan(now=self.NOW + timedelta(minutes=5))
        assert again.created == 0
        assert again.enqueued_ids == []
        assert second == []
        assert ReminderDigest.objects.filter(learner__in=learners).count() == 3

    def test_a_digest_already_written_for_the_local_date_is_kept(
        self, django_capture_on_commit_callbacks
    ):
        """The scan writes nothing over a digest the learner already has for that local date."""
        user = learner_due(due=self.NOW - timedelta(hours=1))
        ReminderDigest.objects.create(learner=user, local_date=date(2026, 6, 1), due_count=7)
        assert scan(self.NOW, django_capture_on_commit_callbacks) == []
        assert list(ReminderDigest.objects.values_list("learner", "due_count")) == [(user.pk, 7)]

    def test_items_in_an_intraday_learning_step_do_not_trigger_a_digest(
        self, django_capture_on_commit_callbacks
    ):
        """A digest is for what is due from the learner's morning on: a card in a 10-minute
        learning step, due since the day began, waits for the review session; one that has been
        due since before today's start is owed a digest."""
        stepping = learner_due(due=self.NOW - timedelta(minutes=5), state=1)
        overdue_step = learner_due(due=self.NOW - timedelta(days=1), state=1)
        scan(self.NOW, django_capture_on_commit_callbacks)
        assert digest_dates(stepping) == []
        assert digest_dates(overdue_step) == [date(2026, 6, 1)]

    def test_suspended_leeches_and_items_undone_to_new_are_owed_no_digest(
        self, django_capture_on_commit_callbacks
    ):
        """A leech suspended after its eighth lapse, or an item whose only grade was undone
        (back to new, no reps), is not recall that is due."""
        due = self.NOW - timedelta(days=1)
        leech = learner_due(due=due)
        RecallSchedule.objects.filter(learner=leech).update(suspended=True)
        undone = learner_due(due=due)
        RecallSchedule.objects.filter(learner=undone).update(reps=0)
        scan(self.NOW, django_capture_on_commit_callbacks)
        assert digest_dates(leech) == []
        assert digest_dates(undone) == []

    def test_the_first_digest_waits_for_the_next_reminder_hour(
        self, django_capture_on_commit_callbacks
    ):
        """A new learner answering their first items in the evening, after today's 08:00, gets no
        digest that evening (even for an item already due), and one the next morning."""
        evening = utc(2026, 6, 1, 19, 0)
        user = learner_due(
            due=evening - timedelta(minutes=1), last_review=evening - timedelta(hours=1)
        )
        scan(evening, django_capture_on_commit_callbacks)
        assert digest_dates(user) == []
        scan(utc(2026, 6, 2, 8, 0), django_capture_on_commit_callbacks)
        assert digest_dates(user) == [date(2026, 6, 2)]
