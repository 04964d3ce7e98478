"""Statistics for learners: due, forecast, true retention, streak, strength by module (the
instructors' course statistics are in course_stats, built on the same pieces)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import fsrs
from django.db.models import (
    Avg,
    Case,
    Count,
    DateField,
    DateTimeField,
    DurationField,
    Expression,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Greatest, Power, TruncDate, TruncWeek

from accounts.local_day import local_date_expression
from accounts.models import User
from courses.models import Course, Enrollment, Module
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.selectors.queue import local_day_bounds
from quizzes.services import fsrs_adapter

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


@dataclass(frozen=True)
class ModuleStrength:
    module: Module
    items: int
    scheduled: int
    mean_recall: float | None  # mean probability of recall now, over scheduled items


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


def _recall_now(*, now: datetime, schedulers: dict[int, fsrs.Scheduler]) -> Expression:
    """SQL for fsrs's retrievability of a schedule at `now` (Scheduler.get_card_retrievability):
    (1 + factor × elapsed whole days / stability) ^ decay, and 0 for a card never reviewed.

    decay = −w20 and factor = 0.9^(1/decay) − 1 from each course's parameters (FSRS-6), chosen by
    the schedule's course when courses differ.
    """
    curves = {
        course_id: (-scheduler.parameters[20], 0.9 ** (1 / -scheduler.parameters[20]) - 1)
        for course_id, scheduler in schedulers.items()
    }

    def by_course(index: int) -> Expression:
        values = {curve[index] for curve in curves.values()}
        if len(values) <= 1:
            return Value(values.pop() if values else 0.0, output_field=FloatField())
        return Case(
            *(
                When(item__lesson__module__course_id=course_id, then=Value(curve[index]))
                for course_id, curve in curves.items()
            ),
            output_field=FloatField(),
        )

    elapsed = Greatest(
        _WholeDays(
            ExpressionWrapper(
                Value(now, output_field=DateTimeField()) - F("last_review"),
                output_field=DurationField(),
            )
        ),
        Value(0.0),
    )
    return Case(
        When(Q(last_review__isnull=True) | Q(stability__isnull=True), then=Value(0.0)),
        default=Power(Value(1.0) + by_course(1) * elapsed / F("stability"), by_course(0)),
        output_field=FloatField(),
    )


class _WholeDays(Func):
    """Whole days in a duration, as timedelta.days counts them (only its non-negative values
    are used: the caller clamps at 0, where truncation and floor agree)."""

    output_field = FloatField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="FLOOR(EXTRACT(EPOCH FROM %(expressions)s) / 86400)"
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # Django's SQLite backend subtracts datetimes into whole microseconds.
        return self.as_sql(compiler, connection, template="(%(expressions)s / 86400000000)")


def module_strength_for(*, learner: User, now: datetime) -> list[ModuleStrength]:
    """Per module of the learner's courses: items, how many are scheduled, mean recall now.

    Two queries; the mean recall is computed in the database, one row per module.
    """
    course_ids = Enrollment.objects.filter(user=learner).values("course_id")
    modules = list(
        Module.objects.filter(course_id__in=course_ids)
        .select_related("course")
        .annotate(items=Count("lessons__quiz_items"))
        .order_by("course__title", "position")
    )
    schedulers = {m.course_id: fsrs_adapter.scheduler_for(m.course) for m in modules}
    rows = (
        RecallSchedule.objects.filter(
            learner=learner, item__lesson__module__in=[m.pk for m in modules]
        )
        .values("item__lesson__module_id")
        .annotate(n=Count("id"), mean=Avg(_recall_now(now=now, schedulers=schedulers)))
        .order_by()
    )
    by_module = {row["item__lesson__module_id"]: (row["n"], row["mean"]) for row in rows}
    return [
        ModuleStrength(
            module=m,
            items=m.items,  # type: ignore[attr-defined]
            scheduled=by_module.get(m.pk, (0, None))[0],
            mean_recall=by_module.get(m.pk, (0, None))[1],
        )
        for m in modules
    ]


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
