"""Statistics for learners: due, forecast, true retention, streak, strength by module (the
instructors' course statistics are in course_stats, built on the same pieces)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import (
    Case,
    Count,
    DateField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import TruncDate, TruncWeek

from accounts.local_day import local_date_expression
from accounts.models import User
from courses.models import Course
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.selectors.queue import local_day_bounds
from quizzes.selectors.strength import ModuleStrength, module_strength_for

MATURE_DAYS = 21
FORECAST_DAYS = 30
HISTORY_WEEKS = 12


def kept_logs() -> QuerySet[ReviewLog]:
    """Review logs that still count: undone grades are excluded from every statistic."""
    return ReviewLog.objects.filter(undo__isnull=True)


def _local_date(field_name: str, learner: User) -> TruncDate:
    return local_date_expression(
        field_name, time_zone=learner.tz, day_start_hour=learner.day_start_hour
    )


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


@dataclass
class LearnerStats:
    due_now: int
    due_today: int
    forecast: list[DayCount]
    mature_reviews: int
    mature_passed: int
    history: list[WeekRate]
    streak_days: int
    reviewed_today: bool
    modules: list[ModuleStrength] = field(default_factory=list)

    @property
    def true_retention(self) -> float | None:
        return self.mature_passed / self.mature_reviews if self.mature_reviews else None


def _today(learner: User, now: datetime) -> tuple[datetime, datetime, date]:
    start, end = local_day_bounds(learner=learner, now=now)
    return start, end, start.date()


def forecast_for(*, learner: User, now: datetime, days: int = FORECAST_DAYS) -> list[DayCount]:
    """Reviews falling due on each of the learner's next `days` local days (overdue → today).

    One query: overdue schedules are grouped under today's date in the database.
    """
    start, _, today = _today(learner, now)
    horizon = start + timedelta(days=days)
    rows = (
        RecallSchedule.objects.filter(learner=learner, due__lt=horizon)
        .annotate(
            day=Case(
                When(due__lt=start, then=Value(today)),
                default=_local_date("due", learner),
                output_field=DateField(),
            )
        )
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts = {row["day"]: row["n"] for row in rows}
    return [
        DayCount(day, counts.get(day, 0))
        for day in (today + timedelta(days=offset) for offset in range(days))
    ]


def _streak(days: set[date], today: date) -> tuple[int, bool]:
    reviewed_today = today in days
    day = today if reviewed_today else today - timedelta(days=1)
    streak = 0
    while day in days:
        streak += 1
        day -= timedelta(days=1)
    return streak, reviewed_today


def streak_for(*, learner: User, now: datetime) -> tuple[int, bool]:
    """Consecutive local days with at least one review, ending today (or yesterday)."""
    _, _, today = _today(learner, now)
    since = now - timedelta(days=400)
    days = set(
        kept_logs()
        .filter(learner=learner, reviewed_at__gte=since)
        .annotate(day=_local_date("reviewed_at", learner))
        # No ordering: the model's (reviewed_at, id) would join the DISTINCT and return every
        # log instead of one row per day.
        .order_by()
        .values_list("day", flat=True)
        .distinct()
    )
    return _streak(days, today)


def _days_and_mature_reviews(*, learner: User) -> tuple[set[date], int, int]:
    """The learner's local review days, and their mature reviews (first review of a card in
    Review state after >= 21 days) with how many passed: one query, a row per review day."""
    mature = Q(state_before__state=RecallSchedule.State.REVIEW, scheduled_days__gte=MATURE_DAYS)
    rows = (
        kept_logs()
        .filter(learner=learner)
        .annotate(day=_local_date("reviewed_at", learner))
        .order_by()
        .values("day")
        .annotate(
            n=Count("id", filter=mature),
            passed=Count("id", filter=mature & Q(rating__gt=ReviewLog.Rating.AGAIN)),
        )
    )
    days: set[date] = set()
    n = passed = 0
    for row in rows:
        days.add(row["day"])
        n += row["n"]
        passed += row["passed"]
    return days, n, passed


def _as_date(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def retention_history_for(
    *,
    learner: User | None = None,
    course: Course | None = None,
    now: datetime,
    weeks: int = HISTORY_WEEKS,
) -> list[WeekRate]:
    """Pass rate per week of reviews of cards in Review state (the first review of each interval).

    A learner's weeks are of their local learning days (Monday's starts at their day-start hour
    in their zone); a course's, of UTC days."""
    week: Any
    if learner is not None:
        day_start, _ = local_day_bounds(learner=learner, now=now)
        today = day_start.date()
        this_monday = today - timedelta(days=today.weekday())
        first = this_monday - timedelta(weeks=weeks - 1)
        since = day_start - timedelta(days=(today - first).days)
        logs = kept_logs().filter(learner=learner, reviewed_at__gte=since)
        week = TruncWeek(_local_date("reviewed_at", learner), output_field=DateField())
    else:
        this_monday = now.date() - timedelta(days=now.weekday())
        first = this_monday - timedelta(weeks=weeks - 1)
        logs = kept_logs().filter(reviewed_at__date__gte=first)
        week = TruncWeek("reviewed_at")
    logs = logs.filter(state_before__state=RecallSchedule.State.REVIEW)
    if course is not None:
        logs = logs.filter(item__lesson__module__course=course)
    rows = (
        logs.annotate(week=week)
        .order_by()
        .values("week")
        .annotate(n=Count("id"), passed=Count("id", filter=Q(rating__gt=ReviewLog.Rating.AGAIN)))
    )
    by_week = {_as_date(row["week"]): (row["n"], row["passed"]) for row in rows}
    out = []
    for i in range(weeks):
        week_start = first + timedelta(weeks=i)
        n, passed = by_week.get(week_start, (0, 0))
        out.append(WeekRate(week_start=week_start, reviews=n, passed=passed))
    return out


def learner_stats(*, learner: User, now: datetime) -> LearnerStats:
    _start, end, today = _today(learner, now)
    due = RecallSchedule.objects.filter(learner=learner, due__lt=end).aggregate(
        now=Count("id", filter=Q(due__lte=now)), today=Count("id")
    )
    days, mature_reviews, mature_passed = _days_and_mature_reviews(learner=learner)
    streak, reviewed_today = _streak(days, today)
    return LearnerStats(
        due_now=due["now"],
        due_today=due["today"],
        forecast=forecast_for(learner=learner, now=now),
        mature_reviews=mature_reviews,
        mature_passed=mature_passed,
        history=retention_history_for(learner=learner, now=now),
        streak_days=streak,
        reviewed_today=reviewed_today,
        modules=module_strength_for(learner=learner, now=now),
    )
