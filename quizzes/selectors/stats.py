"""Statistics for learners (due, forecast, true retention, streak, strength) and instructors."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import (
    Avg,
    Count,
    Q,
    QuerySet,
)
from django.db.models.functions import TruncDate, TruncWeek

from accounts.local_day import local_date_expression
from accounts.models import User
from courses.models import Course, Enrollment, Module
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.queue import local_day_bounds
from quizzes.services import fsrs_adapter

MATURE_DAYS = 21
FORECAST_DAYS = 30
HISTORY_WEEKS = 12
# Lapses after which a learner's schedule of an item counts as a leech (Anki uses 8 on long decks;
# this course is short, so 4 already says the item, not the learner, may be the problem).
LEECH_LAPSES = 4


def _kept_logs() -> QuerySet[ReviewLog]:
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
    """Reviews falling due on each of the learner's next `days` local days (overdue → today)."""
    start, _, today = _today(learner, now)
    horizon = start + timedelta(days=days)
    schedules = RecallSchedule.objects.filter(learner=learner)
    overdue = schedules.filter(due__lt=start).count()
    rows = (
        schedules.filter(due__gte=start, due__lt=horizon)
        .annotate(day=_local_date("due", learner))
        .values("day")
        .annotate(n=Count("id"))
    )
    counts = {row["day"]: row["n"] for row in rows}
    out = []
    for offset in range(days):
        day = today + timedelta(days=offset)
        out.append(DayCount(day, counts.get(day, 0) + (overdue if offset == 0 else 0)))
    return out


def streak_for(*, learner: User, now: datetime) -> tuple[int, bool]:
    """Consecutive local days with at least one review, ending today (or yesterday)."""
    _, _, today = _today(learner, now)
    since = now - timedelta(days=400)
    days = set(
        _kept_logs()
        .filter(learner=learner, reviewed_at__gte=since)
        .annotate(day=_local_date("reviewed_at", learner))
        .values_list("day", flat=True)
        .distinct()
    )
    reviewed_today = today in days
    day = today if reviewed_today else today - timedelta(days=1)
    streak = 0
    while day in days:
        streak += 1
        day -= timedelta(days=1)
    return streak, reviewed_today


def retention_history_for(
    *,
    learner: User | None = None,
    course: Course | None = None,
    now: datetime,
    weeks: int = HISTORY_WEEKS,
) -> list[WeekRate]:
    """Pass rate per week of reviews of cards in Review state (the first review of each interval)."""
    this_monday = now.date() - timedelta(days=now.weekday())
    first = this_monday - timedelta(weeks=weeks - 1)
    logs = _kept_logs().filter(
        reviewed_at__date__gte=first, state_before__state=RecallSchedule.State.REVIEW
    )
    if learner is not None:
        logs = logs.filter(learner=learner)
    if course is not None:
        logs = logs.filter(item__lesson__module__course=course)
    rows = (
        logs.annotate(week=TruncWeek("reviewed_at"))
        .values("week")
        .annotate(n=Count("id"), passed=Count("id", filter=Q(rating__gt=ReviewLog.Rating.AGAIN)))
    )
    by_week = {row["week"].date(): (row["n"], row["passed"]) for row in rows}
    out = []
    for i in range(weeks):
        start = first + timedelta(weeks=i)
        n, passed = by_week.get(start, (0, 0))
        out.append(WeekRate(week_start=start, reviews=n, passed=passed))
    return out


def module_strength_for(*, learner: User, now: datetime) -> list[ModuleStrength]:
    """Per module of the learner's courses: items, how many are scheduled, mean recall now."""
    course_ids = Enrollment.objects.filter(user=learner).values("course_id")
    modules = list(
        Module.objects.filter(course_id__in=course_ids)
        .select_related("course")
        .annotate(items=Count("lessons__quiz_items"))
        .order_by("course__title", "position")
    )
    schedules = RecallSchedule.objects.filter(
        learner=learner, item__lesson__module__in=[m.pk for m in modules]
    ).select_related("item__lesson__module")
    by_module: dict[int, list[float]] = defaultdict(list)
    schedulers = {m.course_id: fsrs_adapter.scheduler_for(m.course) for m in modules}
    for schedule in schedules.only(
        "state",
        "step",
        "stability",
        "difficulty",
        "due",
        "last_review",
        "item__lesson__module__id",
        "item__lesson__module__course_id",
    ):
        module = schedule.item.lesson.module
        by_module[module.pk].append(
            fsrs_adapter.retrievability(
                scheduler=schedulers[module.course_id],
                card=fsrs_adapter.card_from_schedule(schedule),
                now=now,
            )
        )
    return [
        ModuleStrength(
            module=m,
            items=m.items,  # type: ignore[attr-defined]
            scheduled=len(by_module[m.pk]),
            mean_recall=(sum(by_module[m.pk]) / len(by_module[m.pk])) if by_module[m.pk] else None,
        )
        for m in modules
    ]


def learner_stats(*, learner: User, now: datetime) -> LearnerStats:
    _start, end, _ = _today(learner, now)
    schedules = RecallSchedule.objects.filter(learner=learner)
    mature = _kept_logs().filter(
        learner=learner,
        state_before__state=RecallSchedule.State.REVIEW,
        scheduled_days__gte=MATURE_DAYS,
    )
    mature_counts = mature.aggregate(
        n=Count("id"), passed=Count("id", filter=Q(rating__gt=ReviewLog.Rating.AGAIN))
    )
    streak, reviewed_today = streak_for(learner=learner, now=now)
    return LearnerStats(
        due_now=schedules.filter(due__lte=now).count(),
        due_today=schedules.filter(due__lt=end).count(),
        forecast=forecast_for(learner=learner, now=now),
        mature_reviews=mature_counts["n"],
        mature_passed=mature_counts["passed"],
        history=retention_history_for(learner=learner, now=now),
        streak_days=streak,
        reviewed_today=reviewed_today,
        modules=module_strength_for(learner=learner, now=now),
    )


# --- Instructors -------------------------------------------------------------------------


def courses_taught_by(*, user: User) -> QuerySet[Course]:
    if user.is_staff:
        return Course.objects.all()
    return Course.objects.filter(
        enrollments__user=user, enrollments__role=Enrollment.Role.INSTRUCTOR
    )


@dataclass(frozen=True)
class ItemStats:
    item: QuizItem
    reviews: int
    again: int
    mean_ms: float | None
    learners: int
    leech_learners: int

    @property
    def mean_seconds(self) -> float | None:
        return self.mean_ms / 1000 if self.mean_ms is not None else None

    @property
    def again_rate(self) -> float | None:
        return self.again / self.reviews if self.reviews else None


@dataclass(frozen=True)
class ModuleRetention:
    module: Module
    reviews: int
    passed: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.reviews if self.reviews else None


@dataclass
class CourseStats:
    course: Course
    items: list[ItemStats]
    modules: list[ModuleRetention]
    history: list[WeekRate]

    @property
    def total_reviews(self) -> int:
        return sum(i.reviews for i in self.items)

    @property
    def leeches(self) -> list[ItemStats]:
        return sorted(
            (i for i in self.items if i.leech_learners),
            key=lambda i: (-i.leech_learners, -(i.again_rate or 0)),
        )


def course_stats(*, course: Course, now: datetime) -> CourseStats:
    """Per item again-rate, mean time and leeches; per module retention (review-state reviews)."""
    items = list(
        QuizItem.objects.filter(lesson__module__course=course)
        .select_related("lesson__module")
        .order_by("lesson__module__position", "lesson__position", "position")
    )
    logs = _kept_logs().filter(item__lesson__module__course=course)
    log_rows: dict[int, Any] = {
        row["item_id"]: row
        for row in logs.values("item_id").annotate(
            n=Count("id"),
            again=Count("id", filter=Q(rating=ReviewLog.Rating.AGAIN)),
            mean_ms=Avg("duration_ms"),
        )
    }
    schedule_rows: dict[int, Any] = {
        row["item_id"]: row
        for row in RecallSchedule.objects.filter(item__lesson__module__course=course)
        .values("item_id")
        .annotate(
            learners=Count("id"),
            leeches=Count("id", filter=Q(lapses__gte=LEECH_LAPSES)),
        )
    }
    item_stats = [
        ItemStats(
            item=item,
            reviews=log_rows.get(item.pk, {}).get("n", 0),
            again=log_rows.get(item.pk, {}).get("again", 0),
            mean_ms=log_rows.get(item.pk, {}).get("mean_ms"),
            learners=schedule_rows.get(item.pk, {}).get("learners", 0),
            leech_learners=schedule_rows.get(item.pk, {}).get("leeches", 0),
        )
        for item in items
    ]
    module_rows: dict[int, Any] = {
        row["item__lesson__module_id"]: row
        for row in logs.filter(state_before__state=RecallSchedule.State.REVIEW)
        .values("item__lesson__module_id")
        .annotate(n=Count("id"), passed=Count("id", filter=Q(rating__gt=ReviewLog.Rating.AGAIN)))
    }
    modules = [
        ModuleRetention(
            module=m,
            reviews=module_rows.get(m.pk, {}).get("n", 0),
            passed=module_rows.get(m.pk, {}).get("passed", 0),
        )
        for m in course.modules.order_by("position")
    ]
    return CourseStats(
        course=course,
        items=item_stats,
        modules=modules,
        history=retention_history_for(course=course, now=now),
    )
