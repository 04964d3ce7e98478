"""Statistics for a course's instructors: again rate, mean time and leeches per item, retention
per module (reviews of cards in Review state)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q
from django.http import Http404

from accounts.models import User
from courses.models import Course, Module
from courses.selectors import courses_taught_only
from quizzes.models import QuizItem
from quizzes.selectors.rollups import (
    LEECH_LAPSES as LEECH_LAPSES,  # where the review service and the page read it
)
from quizzes.selectors.rollups import (
    ItemTotals,
    item_totals,
    rolled_up_to,
    schedule_counts,
    weekly_review_rates,
)
from quizzes.selectors.stats_days import HISTORY_WEEKS, WeekRate, week_rates


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


def course_taught_only(*, slug: str, user: User) -> Course:
    """A course the user teaches, without the learner and lesson counts (`course_taught_by`
    counts every enrolment: these pages show neither); another's course is a 404."""
    course = courses_taught_only(user=user).filter(slug=slug).first()
    if course is None:
        raise Http404("No such course among those you teach.")
    return course


def course_history(
    *, items: Q, mark: datetime | None, now: datetime, weeks: int = HISTORY_WEEKS
) -> list[WeekRate]:
    """Pass rate per UTC week of reviews of cards in Review state (the first review of each
    interval), from the rollup and its tail: one query."""
    this_monday = now.date() - timedelta(days=now.weekday())
    first = this_monday - timedelta(weeks=weeks - 1)
    return week_rates(first, weeks, weekly_review_rates(items=items, mark=mark, first=first))


def course_stats(*, course: Course, now: datetime) -> CourseStats:
    """Per item again-rate, mean time and leeches; per module retention (review-state reviews);
    the weekly pass rate. Six queries, each reading the rollup's rows per item and day and the
    logs since its watermark (services/rollup.py), never every log of the course."""
    items = list(
        QuizItem.objects.filter(lesson__module__course=course)
        .select_related("lesson__module")
        .order_by("lesson__module__position", "lesson__position", "position")
    )
    mark = rolled_up_to()
    of_course = Q(item__lesson__module__course=course)
    totals = item_totals(items=of_course, mark=mark)
    counts = schedule_counts(items=of_course, mark=mark)
    empty = ItemTotals()
    item_stats = []
    by_module: dict[int, ItemTotals] = {}
    for item in items:
        total = totals.get(item.pk, empty)
        learners, leeches = counts.get(item.pk, (0, 0))
        item_stats.append(
            ItemStats(
                item=item,
                reviews=total.reviews,
                again=total.again,
                mean_ms=total.mean_ms,
                learners=learners,
                leech_learners=leeches,
            )
        )
        module_id = item.lesson.module_id
        by_module[module_id] = by_module.get(module_id, empty) + total
    modules = [
        ModuleRetention(
            module=m,
            reviews=by_module.get(m.pk, empty).review_state_reviews,
            passed=by_module.get(m.pk, empty).review_state_passed,
        )
        for m in course.modules.order_by("position")
    ]
    return CourseStats(
        course=course,
        items=item_stats,
        modules=modules,
        history=course_history(items=of_course, mark=mark, now=now),
    )
