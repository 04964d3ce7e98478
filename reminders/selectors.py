"""Reads for recall reminders: who is owed a digest now, what goes in it, and the day's counts.

Each learner's reminder hour is in their own local day, which starts at their `day_start_hour`
(DESIGN: "today" and the reminder hour are in that local day; `accounts.local_day` is the one place
that says which day a moment belongs to). Wall-clock arithmetic per zone keeps daylight-saving
changes right: the local time is computed once per time zone, in Python.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection
from django.db.models import (
    Count,
    F,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Window,
    prefetch_related_objects,
)

from accounts.local_day import learning_date
from accounts.models import User
from courses.models import Enrollment
from courses.selectors import courses_taught_by
from quizzes.models import QuizItem, RecallSchedule
from reminders.models import ReminderDigest


@dataclass(frozen=True)
class DigestSlot:
    """Learners who share a time zone, day start and reminder hour share a local date."""

    time_zone: str
    day_start_hour: int
    reminder_hour: int
    local_date: date
    day_start: datetime  # the local day's start, in UTC
    moment: datetime  # the reminder moment, in UTC


@dataclass(frozen=True)
class DigestContent:
    due_count: int
    first_schedule: RecallSchedule | None
    # (course title, items due) by title, when the items due are of more than one course.
    courses: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class DigestCounts:
    sent: int
    failed: int
    pending: int
    sending: int
    skipped: int
    possibly_delivered: int = 0

    @property
    def total(self) -> int:
        return (
            self.sent
            + self.failed
            + self.pending
            + self.sending
            + self.skipped
            + self.possibly_delivered
        )


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


def digest_slots(*, now: datetime) -> list[DigestSlot]:
    """Each (time zone, day start, reminder hour) that some learner with reminders on has, whose
    reminder moment has come at `now`, with the local date it is for. One query; the local time
    is computed once per slot, by `digest_local_date`."""
    combos = (
        User.objects.filter(reminders_enabled=True, is_active=True)
        .order_by()
        .values_list("time_zone", "day_start_hour", "reminder_hour")
        .distinct()
    )
    slots = []
    for zone, day_start, hour in combos:
        try:
            tz = zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            continue  # A zone the form would never store; skip rather than stop everyone's digest.
        day = digest_local_date(
            now=now, time_zone=zone, day_start_hour=day_start, reminder_hour=hour
        )
        if day is None:
            continue
        moment = reminder_moment(day=day, day_start_hour=day_start, reminder_hour=hour)
        slots.append(
            DigestSlot(
                time_zone=zone,
                day_start_hour=day_start,
                reminder_hour=hour,
                local_date=day,
                day_start=datetime.combine(day, time(hour=day_start), tzinfo=tz).astimezone(UTC),
                moment=moment.replace(tzinfo=tz).astimezone(UTC),
            )
        )
    return slots


def digests_content_for(*, learner_ids: list[int], now: datetime) -> dict[int, DigestContent]:
    """What each learner's digest shows at send time: the count due (per course, when more than
    one has items due) and the earliest-due recall schedule with its item and choices. For a
    whole chunk of learners: two queries on PostgreSQL (each learner's first schedule with the
    count beside it, then the choices; a third when some learner has items due in two courses),
    three elsewhere."""
    due = RecallSchedule.objects.filter(
        learner_id__in=learner_ids, due__lte=now, suspended=False, reps__gt=0
    )
    per_course: dict[int, list[tuple[str, int]]] = {}
    if connection.vendor == "postgresql":
        # The windows count a learner's due rows, and tell whether they span courses, before
        # DISTINCT ON keeps the first of them.
        learner = [F("learner_id")]
        first_rows = (
            due.annotate(
                due_total=Window(Count("id"), partition_by=learner),
                first_course=Window(Min("course_id"), partition_by=learner),
                last_course=Window(Max("course_id"), partition_by=learner),
            )
            .order_by("learner_id", "due", "id")
            .distinct("learner_id")
        )
        firsts = {s.learner_id: s for s in _with_items(first_rows)}
        counts = {lid: s.due_total for lid, s in firsts.items()}  # type: ignore[attr-defined]
        several = [
            lid
            for lid, s in firsts.items()
            if s.first_course != s.last_course  # type: ignore[attr-defined]
        ]
        if several:
            rows = due.filter(learner_id__in=several).order_by()
            for lid, title, n in rows.values_list("learner_id", "course__title").annotate(
                n=Count("id")
            ):
                per_course.setdefault(lid, []).append((title, n))
    else:
        counts = {}
        for lid, title, n in (
            due.order_by().values_list("learner_id", "course__title").annotate(n=Count("id"))
        ):
            counts[lid] = counts.get(lid, 0) + n
            per_course.setdefault(lid, []).append((title, n))
        earliest = due.filter(learner=OuterRef("pk")).order_by("due", "id")
        first_ids = (
            User.objects.filter(id__in=list(counts))
            .annotate(first=Subquery(earliest.values("id")[:1]))
            .values("first")
        )
        firsts = {
            s.learner_id: s for s in _with_items(RecallSchedule.objects.filter(id__in=first_ids))
        }
    return {
        learner_id: DigestContent(
            due_count=counts[learner_id] if learner_id in firsts else 0,
            first_schedule=firsts.get(learner_id),
            courses=tuple(sorted(per_course.get(learner_id, [])))
            if len(per_course.get(learner_id, [])) > 1
            else (),
        )
        for learner_id in learner_ids
    }


def _with_items(schedules: QuerySet[RecallSchedule]) -> list[RecallSchedule]:
    """The schedules with their items, learners asked the same item sharing one object, whose
    choices are read once."""
    rows = list(schedules.select_related("item"))
    items: dict[int, QuizItem] = {}
    for schedule in rows:
        schedule.item = items.setdefault(schedule.item_id, schedule.item)
    prefetch_related_objects(list(items.values()), "choices")
    return rows


def digests_stale(
    *, now: datetime, pending_before: datetime, sending_before: datetime
) -> QuerySet[ReminderDigest]:
    """Rows whose send was lost: pending but never sent (a lost enqueue, or one the broker
    refused, or a retry of a chunk cut short that nobody ran), or left `sending` by a worker that
    died mid-send (their task's time limit is long past)."""
    recent = (now - timedelta(days=2)).date()
    pending = ReminderDigest.Status.PENDING
    return ReminderDigest.objects.filter(local_date__gte=recent).filter(
        Q(status=pending, next_attempt_at__isnull=True, updated_at__lt=pending_before)
        | Q(status=pending, next_attempt_at__lt=now - timedelta(seconds=30))
        | Q(status=ReminderDigest.Status.SENDING, updated_at__lt=sending_before)
    )


def digests_failed_due(
    *, now: datetime, due_before: datetime, reopen: bool = False
) -> QuerySet[ReminderDigest]:
    """Failed rows of the last day or two whose retry is due (and, with `reopen`, those failed
    for good)."""
    recent = (now - timedelta(days=1)).date()
    due = Q(next_attempt_at__lte=due_before)
    if reopen:
        due |= Q(next_attempt_at__isnull=True) | Q(next_attempt_at__gt=due_before)
    return ReminderDigest.objects.filter(
        due, status=ReminderDigest.Status.FAILED, local_date__gte=recent
    )


def digests_visible_to(*, user: User) -> QuerySet[ReminderDigest]:
    """Staff see every digest; an instructor sees those of learners in the courses they teach."""
    if user.is_staff:
        return ReminderDigest.objects.all()
    taught = courses_taught_by(user=user).values("pk")
    learners = Enrollment.objects.filter(course_id__in=taught).values("user_id")
    return ReminderDigest.objects.filter(learner_id__in=learners)


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
        possibly_delivered=rows.get(s.AMBIGUOUS, 0),
    )


def utc_day_bounds(*, now: datetime) -> tuple[datetime, datetime]:
    """Today in UTC, the day the observability counts use (learners' local dates differ)."""
    utc = zoneinfo.ZoneInfo("UTC")
    start = datetime.combine(now.astimezone(utc).date(), time(), tzinfo=utc)
    return start, start + timedelta(days=1)
