"""Statistics for a course's instructors: again rate, mean time and leeches per item, retention
per module (reviews of cards in Review state)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Avg, Count, Q

from courses.models import Course, Module
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.stats import WeekRate, kept_logs, retention_history_for

# Lapses after which a learner's schedule of an item counts as a leech (Anki uses 8 on long decks;
# this course is short, so 4 already says the item, not the learner, may be the problem).
LEECH_LAPSES = 8  # lapses that make a card a leech, as in Anki


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
    logs = kept_logs().filter(item__lesson__module__course=course)
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
