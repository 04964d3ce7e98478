"""Statistics for learners: due, forecast, true retention, streak, strength by module (the
instructors' course statistics are in course_stats, built on the same pieces)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, DateField, Q, QuerySet
from django.db.models.functions import TruncDate, TruncWeek

from accounts.local_day import local_date_expression
from accounts.models import User
from courses.models import Course
from courses.selectors import courses_taught_only
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.selectors.prepared import PreparedQuery
from quizzes.selectors.stats_days import (
    FORECAST_DAYS,
    HISTORY_WEEKS,
    DayCount,
    forecast_and_due_for,
    history_start,
    learner_today,
    review_days_for,
    week_rates,
)

# Where they lived before the per-day reads moved to `stats_days`: other modules import them here.
from quizzes.selectors.stats_days import MATURE_DAYS as MATURE_DAYS
from quizzes.selectors.stats_days import WeekRate as WeekRate
from quizzes.selectors.stats_days import kept_logs as kept_logs
from quizzes.selectors.strength import ModuleStrength, module_strength_for


def _local_date(field_name: str, learner: User) -> TruncDate:
    return local_date_expression(
        field_name, time_zone=learner.tz, day_start_hour=learner.day_start_hour
    )


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


def forecast_for(*, learner: User, now: datetime, days: int = FORECAST_DAYS) -> list[DayCount]:
    """Reviews falling due on each of the learner's next `days` local days (overdue → today).

    One query: overdue schedules are grouped under today's date in the database.
    """
    return forecast_and_due_for(learner=learner, now=now, days=days)[0]


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
    _, _, today = learner_today(learner, now)
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
        first, since = history_start(learner, now, weeks)
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
    return week_rates(first, weeks, by_week)


def learner_stats(*, learner: User, now: datetime) -> LearnerStats:
    """Everything on the learner's statistics page but the item lists: three queries (due days,
    review days, modules with their strength)."""
    _start, _end, today = learner_today(learner, now)
    forecast, due_now, due_today = forecast_and_due_for(learner=learner, now=now)
    reviews = review_days_for(learner=learner, now=now)
    streak, reviewed_today = _streak(reviews.days, today)
    return LearnerStats(
        due_now=due_now,
        due_today=due_today,
        forecast=forecast,
        mature_reviews=reviews.mature_reviews,
        mature_passed=reviews.mature_passed,
        history=reviews.history,
        streak_days=streak,
        reviewed_today=reviewed_today,
        modules=module_strength_for(learner=learner, now=now),
    )


def _taught_queryset(*, user_id: int, is_staff: bool) -> QuerySet[Any]:
    user = User(pk=user_id, is_staff=is_staff)
    return courses_taught_only(user=user).values_list("id", "slug", "title")


_TAUGHT = PreparedQuery(_taught_queryset, fixed=("is_staff",))


def taught_courses_for(*, user: User) -> list[Course]:
    """The courses the user teaches (`courses_taught_only`), their slug and title only: one
    prepared query."""
    db = connection.alias
    rows = _TAUGHT.rows(user_id=user.pk, is_staff=user.is_staff)
    return [Course.from_db(db, ("id", "slug", "title"), row) for row in rows]
