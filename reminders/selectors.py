"""Reads for recall reminders: who is owed a digest now, what goes in it, and the day's counts.

Each learner's reminder hour is in their own local day, which starts at their `day_start_hour`
(DESIGN: "today" and the reminder hour are in that local day; `accounts.local_day` is the one place
that says which day a moment belongs to). Wall-clock arithmetic per zone keeps daylight-saving
changes right: the local time is computed once per time zone, in Python.
"""

from __future__ import annotations

import zoneinfo
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from accounts.local_day import learning_date
from accounts.models import User
from quizzes.models import RecallSchedule
from reminders.models import ReminderDigest


@dataclass(frozen=True)
class DigestCandidate:
    learner_id: int
    local_date: date


@dataclass(frozen=True)
class DigestContent:
    due_count: int
    first_schedule: RecallSchedule | None


@dataclass(frozen=True)
class DigestCounts:
    sent: int
    failed: int
    pending: int
    sending: int
    skipped: int

    @property
    def total(self) -> int:
        return self.sent + self.failed + self.pending + self.sending + self.skipped


def reminder_moment(*, day: date, day_start_hour: int, reminder_hour: int) -> datetime:
    """The naive wall-clock time at which the reminder of local `day` falls due.

    An hour before the day's start belongs to the end of that day (the calendar day after).
    """
    calendar_day = day if reminder_hour >= day_start_hour else day + timedelta(days=1)
    return datetime.combine(calendar_day, time(hour=reminder_hour))


def digest_local_date(
    *, now: datetime, time_zone: str, day_start_hour: int, reminder_hour: int
) -> date | None:
    """The local date a digest would be for at `now`, or None before the reminder hour."""
    tz = zoneinfo.ZoneInfo(time_zone)
    day = learning_date(moment=now, time_zone=tz, day_start_hour=day_start_hour)
    moment = reminder_moment(day=day, day_start_hour=day_start_hour, reminder_hour=reminder_hour)
    return day if now.astimezone(tz).replace(tzinfo=None) >= moment else None


def digest_candidate_rows(*, now: datetime) -> QuerySet[User, tuple[Any, ...]]:
    """The scan's one query: learners with an item due, reminders on, not paused for every
    possible local date, with the date of their latest digest.

    It starts from the due schedules through the (due, learner) index, so its cost follows the
    learners (and items) due, not the size of the schedule table; the latest digest date comes
    from the unique (learner, local_date) index, read backwards.
    """
    due_learners = RecallSchedule.objects.filter(due__lte=now).values("learner_id")
    latest_digest = (
        ReminderDigest.objects.filter(learner=OuterRef("pk"))
        .order_by("-local_date")
        .values("local_date")[:1]
    )
    # No local date is later than UTC's date + 1 (UTC+14), so a pause ending on or after it
    # covers everyone; nearer pauses are checked per learner below.
    return (
        User.objects.filter(id__in=due_learners, reminders_enabled=True, is_active=True)
        .filter(
            Q(reminders_paused_until__isnull=True)
            | Q(reminders_paused_until__lte=now.astimezone(zoneinfo.ZoneInfo("UTC")).date())
        )
        .annotate(latest_digest=Subquery(latest_digest))
        .order_by()
        .values_list(
            "id",
            "time_zone",
            "day_start_hour",
            "reminder_hour",
            "reminders_paused_until",
            "latest_digest",
        )
    )


def digest_candidates(*, now: datetime) -> list[DigestCandidate]:
    """Learners owed a digest at `now`: items due, reminders on and not paused, the reminder hour
    of their local day reached, and no digest yet for that local date. The local time is
    computed once per time zone."""
    rows = digest_candidate_rows(now=now)
    by_zone: dict[str, list[tuple[int, int, int, date | None, date | None]]] = defaultdict(list)
    for learner_id, zone, day_start, hour, paused_until, latest in rows:
        by_zone[zone].append((learner_id, day_start, hour, paused_until, latest))

    candidates: list[DigestCandidate] = []
    for zone, learners in by_zone.items():
        try:
            tz = zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            continue  # A zone the form would never store; skip rather than stop everyone's digest.
        local = now.astimezone(tz)  # once per zone: learning_date finds it already in `tz`
        wall = local.replace(tzinfo=None)
        for learner_id, day_start, hour, paused_until, latest in learners:
            day = learning_date(moment=local, time_zone=tz, day_start_hour=day_start)
            if wall < reminder_moment(day=day, day_start_hour=day_start, reminder_hour=hour):
                continue
            if paused_until is not None and day <= paused_until:
                continue
            if latest is not None and latest >= day:
                continue
            candidates.append(DigestCandidate(learner_id=learner_id, local_date=day))
    return candidates


def digest_due_summary(*, learner_ids: list[int], now: datetime) -> dict[int, tuple[int, int]]:
    """For each learner: (items due, the earliest-due item's id). Per learner index lookups on
    (learner, due), so the cost follows the learners asked about."""
    due = RecallSchedule.objects.filter(learner=OuterRef("pk"), due__lte=now)
    count = due.order_by().values("learner").annotate(n=Count("*")).values("n")
    first_item = due.order_by("due", "id").values("item_id")[:1]
    rows = (
        User.objects.filter(id__in=learner_ids)
        .annotate(
            due_count=Coalesce(Subquery(count, output_field=IntegerField()), 0),
            first_item_id=Subquery(first_item),
        )
        .values_list("id", "due_count", "first_item_id")
    )
    return {learner_id: (n, item_id) for learner_id, n, item_id in rows}


def digest_content_for(*, learner: User, now: datetime) -> DigestContent:
    """What the digest shows at send time: the count due and the earliest-due recall schedule."""
    due = RecallSchedule.objects.filter(learner=learner, due__lte=now)
    first = (
        due.select_related("item", "item__lesson")
        .prefetch_related("item__choices")
        .order_by("due", "id")
        .first()
    )
    return DigestContent(due_count=due.count() if first else 0, first_schedule=first)


def digests_stale(
    *, now: datetime, pending_before: datetime, sending_before: datetime
) -> QuerySet[ReminderDigest]:
    """Rows whose send was lost: pending but never sent (a lost enqueue), or left `sending` by a
    worker that died mid-send (their task's time limit is long past)."""
    recent = (now - timedelta(days=2)).date()
    return ReminderDigest.objects.filter(local_date__gte=recent).filter(
        Q(status=ReminderDigest.Status.PENDING, updated_at__lt=pending_before)
        | Q(status=ReminderDigest.Status.SENDING, updated_at__lt=sending_before)
    )


def digests_failed_retryable(
    *, now: datetime, failed_before: datetime, max_attempts: int
) -> QuerySet[ReminderDigest]:
    """Failed rows of the last day or two that still have attempts left."""
    recent = (now - timedelta(days=1)).date()
    return ReminderDigest.objects.filter(
        status=ReminderDigest.Status.FAILED,
        local_date__gte=recent,
        updated_at__lt=failed_before,
        attempts__lt=max_attempts,
    )


def digests_visible_to(*, user: User) -> QuerySet[ReminderDigest]:
    """Staff see every digest; an instructor sees those of learners in the courses they teach."""
    qs = ReminderDigest.objects.all()
    if user.is_staff:
        return qs
    from courses.models import Enrollment

    taught = Enrollment.objects.filter(user=user, role=Enrollment.Role.INSTRUCTOR).values(
        "course_id"
    )
    learners = Enrollment.objects.filter(course_id__in=taught).values("user_id")
    return qs.filter(learner_id__in=learners)


def digest_counts(
    *, start: datetime, end: datetime, digests: QuerySet[ReminderDigest] | None = None
) -> DigestCounts:
    """Counts by status of the digests created in [start, end)."""
    qs = ReminderDigest.objects.all() if digests is None else digests
    rows = dict(
        qs.filter(created_at__gte=start, created_at__lt=end)
        .order_by()
        .values_list("status")
        .annotate(n=Count("*"))
        .values_list("status", "n")
    )
    s = ReminderDigest.Status
    return DigestCounts(
        sent=rows.get(s.SENT, 0),
        failed=rows.get(s.FAILED, 0),
        pending=rows.get(s.PENDING, 0),
        sending=rows.get(s.SENDING, 0),
        skipped=rows.get(s.SKIPPED, 0),
    )


def utc_day_bounds(*, now: datetime) -> tuple[datetime, datetime]:
    """Today in UTC, the day the observability counts use (learners' local dates differ)."""
    utc = zoneinfo.ZoneInfo("UTC")
    start = datetime.combine(now.astimezone(utc).date(), time(), tzinfo=utc)
    return start, start + timedelta(days=1)
