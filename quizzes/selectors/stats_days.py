"""The learner's statistics read a row per local day: due days (the forecast and the due
counts) and review days (the streak, the mature reviews, the weekly pass rate). Each is one
prepared statement of aggregates in the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db.models import (
    Case,
    Count,
    DateField,
    DateTimeField,
    ExpressionWrapper,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from accounts.local_day import local_date_expression
from accounts.models import User
from quizzes.models import LearnerDayRollup, RecallSchedule, ReviewLog, ReviewRollupWatermark
from quizzes.selectors.prepared import PreparedQuery
from quizzes.selectors.queue import local_day_bounds

MATURE_DAYS = 21
FORECAST_DAYS = 30
HISTORY_WEEKS = 12


def kept_logs() -> QuerySet[ReviewLog]:
    """Review logs that still count: undone grades are excluded from every statistic."""
    return ReviewLog.objects.filter(undo__isnull=True)


@dataclass(frozen=True)
class DayCount:
    day: date
    count: int


@dataclass(frozen=True)
class WeekRate:
    week_start: date
    reviews: int
    passed: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.reviews if self.reviews else None


def learner_today(learner: User, now: datetime) -> tuple[datetime, datetime, date]:
    start, end = local_day_bounds(learner=learner, now=now)
    return start, end, start.date()


def _schedule_days_queryset(
    *, learner_id: int, start: datetime, end: datetime, now: datetime, horizon: datetime,
    today: date, time_zone: str, day_start_hour: int,
) -> QuerySet[Any]:  # fmt: skip
    """Per local due day before `horizon` (overdue under today): the schedules, those due now
    and those due before the day's end."""
    local = local_date_expression("due", time_zone=time_zone, day_start_hour=day_start_hour)
    return (
        RecallSchedule.objects.filter(learner_id=learner_id, due__lt=horizon)
        .annotate(
            day=Case(
                When(due__lt=start, then=Value(today)), default=local, output_field=DateField()
            )
        )
        .values("day")
        .annotate(
            n=Count("id"),
            due_now=Count("id", filter=Q(due__lte=now)),
            due_today=Count("id", filter=Q(due__lt=end)),
        )
        .order_by()
        .values_list("day", "n", "due_now", "due_today")
    )


_SCHEDULE_DAYS = PreparedQuery(_schedule_days_queryset, fixed=("time_zone", "day_start_hour"))


def forecast_and_due_for(
    *, learner: User, now: datetime, days: int = FORECAST_DAYS
) -> tuple[list[DayCount], int, int]:
    """The forecast, and the cards due now and today (every one of them falls in the forecast's
    first day or before it): one query."""
    start, end, today = learner_today(learner, now)
    rows = _SCHEDULE_DAYS.rows(
        learner_id=learner.pk, start=start, end=end, now=now,
        horizon=start + timedelta(days=days), today=today,
        time_zone=learner.time_zone, day_start_hour=learner.day_start_hour,
    )  # fmt: skip
    counts = {day: n for day, n, _, _ in rows}
    forecast = [
        DayCount(day, counts.get(day, 0))
        for day in (today + timedelta(days=offset) for offset in range(days))
    ]
    return forecast, sum(row[2] for row in rows), sum(row[3] for row in rows)


def history_start(learner: User, now: datetime, weeks: int) -> tuple[date, datetime]:
    """The Monday of the first week shown, and the moment the history counts reviews from."""
    day_start, _ = local_day_bounds(learner=learner, now=now)
    today = day_start.date()
    first = today - timedelta(days=today.weekday()) - timedelta(weeks=weeks - 1)
    return first, day_start - timedelta(days=(today - first).days)


_EPOCH = datetime(1900, 1, 1, tzinfo=UTC)


def _review_days_queryset(*, learner_id: int, time_zone: str, day_start_hour: int) -> QuerySet[Any]:
    """Per local review day: the kept reviews, those of cards in Review state and how many
    passed, and the mature ones (interval >= 21 days) and how many passed. The learner's rows of
    the review rollup (services/rollup.py) and, beside them, the logs since its watermark (their
    (learner, reviewed_at) index range), so a learner of 50,000 reviews reads a row per day."""
    in_review = Q(state_before__state=RecallSchedule.State.REVIEW)
    passed = Q(rating__gt=ReviewLog.Rating.AGAIN)
    mature = Q(scheduled_days__gte=MATURE_DAYS) & in_review
    # Wrapped: the database gives a date already, and TruncDate's converter on each row's date
    # was half of this function's time in Python.
    local = ExpressionWrapper(
        local_date_expression("reviewed_at", time_zone=time_zone, day_start_hour=day_start_hour),
        output_field=DateField(),
    )
    mark = Coalesce(
        Subquery(ReviewRollupWatermark.objects.filter(pk=1).values("rolled_up_to")[:1]),
        Value(_EPOCH),
        output_field=DateTimeField(),
    )
    tail = (
        kept_logs()
        .filter(learner_id=learner_id, reviewed_at__gte=mark)
        .annotate(day=local)
        .order_by()
        .values("day")
        .annotate(
            n=Count("id"),
            rs=Count("id", filter=in_review),
            rs_passed=Count("id", filter=in_review & passed),
            mature=Count("id", filter=mature),
            mature_passed=Count("id", filter=mature & passed),
        )
        .values_list("day", "n", "rs", "rs_passed", "mature", "mature_passed")
    )
    rolled = LearnerDayRollup.objects.filter(learner_id=learner_id).values_list(
        "day", "reviews", "review_state_reviews", "review_state_passed", "mature_reviews",
        "mature_passed",
    )  # fmt: skip
    return rolled.union(tail, all=True)


_REVIEW_DAYS = PreparedQuery(_review_days_queryset, fixed=("time_zone", "day_start_hour"))


@dataclass(frozen=True)
class ReviewDays:
    days: set[date]  # the learner's local days with a review (undone grades left out)
    mature_reviews: int
    mature_passed: int
    history: list[WeekRate]


def review_days_for(*, learner: User, now: datetime, weeks: int = HISTORY_WEEKS) -> ReviewDays:
    """The review days (for the streak), the mature reviews and the weekly pass rate of reviews
    of cards in Review state, from one query of a row per review day. The weeks are the
    learner's local weeks, as `retention_history_for` counts them."""
    first, _since = history_start(learner, now, weeks)
    rows = _REVIEW_DAYS.rows(
        learner_id=learner.pk, time_zone=learner.time_zone, day_start_hour=learner.day_start_hour
    )
    by_week: dict[date, tuple[int, int]] = {}
    days: set[date] = set()
    mature_reviews = mature_passed = 0
    for day, n, in_review, in_review_passed, mature, mature_ok in rows:
        if n:
            days.add(day)
        mature_reviews += mature
        mature_passed += mature_ok
        if in_review and day >= first:
            monday = day - timedelta(days=day.weekday())
            before = by_week.get(monday, (0, 0))
            by_week[monday] = (before[0] + in_review, before[1] + in_review_passed)
    return ReviewDays(
        days=days,
        mature_reviews=mature_reviews,
        mature_passed=mature_passed,
        history=week_rates(first, weeks, by_week),
    )


def week_rates(first: date, weeks: int, by_week: dict[date, tuple[int, int]]) -> list[WeekRate]:
    out = []
    for i in range(weeks):
        week_start = first + timedelta(weeks=i)
        n, passed = by_week.get(week_start, (0, 0))
        out.append(WeekRate(week_start=week_start, reviews=n, passed=passed))
    return out
