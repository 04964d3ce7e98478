"""The retention/workload curve for a course (its pooled parameters) or a learner in it (their
own): simulated reviews and minutes per day at each retention, from fsrs-rs-python."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import fsrs
from django.core.cache import cache

from courses.models import Course
from quizzes import fsrs_optimizer as opt
from quizzes.models import QuizItem
from quizzes.services import fsrs_adapter

CURVE_CACHE_SECONDS = 24 * 3600
# "If you answer Good every time": how many intervals the page lists.
GOOD_STREAK = 4
START = datetime(2025, 1, 6, 9, tzinfo=UTC)


@dataclass(frozen=True)
class RetentionCurve:
    curve: opt.WorkloadCurve
    scheduling: fsrs_adapter.Scheduling
    items: int


def retention_curve_for(*, course: Course, learner_id: int | None) -> RetentionCurve:
    """The curve for the scope's parameters and the course's items and limits. Three queries;
    the simulation (about 0.1 s) is cached by its inputs."""
    scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=learner_id)
    items = QuizItem.objects.filter(lesson__module__course=course).count()
    inputs = {
        "w": [round(w, 6) for w in scheduling.weights],
        "items": items,
        "new": course.daily_new_limit,
        "reviews": course.daily_review_limit,
        "max": course.maximum_interval_days,
    }
    key = "retention-curve:" + hashlib.sha256(json.dumps(inputs).encode()).hexdigest()
    curve = cache.get(key)
    if curve is None:
        curve = opt.workload_curve(
            scheduling.weights,
            items=items,
            daily_new_limit=course.daily_new_limit,
            daily_review_limit=course.daily_review_limit,
            maximum_interval_days=course.maximum_interval_days,
        )
        cache.set(key, curve, CURVE_CACHE_SECONDS)
    return RetentionCurve(curve=curve, scheduling=scheduling, items=items)


def good_streak_intervals(
    *, course: Course, scheduling: fsrs_adapter.Scheduling, streak: int = GOOD_STREAK
) -> list[timedelta]:
    """The intervals a new item gets when answered Good every time, on time, after its
    learning steps, under `scheduling` (no fuzz): what a retention means in days."""
    scheduler = fsrs_adapter.scheduler_for(course, scheduling)
    now = START
    card = fsrs_adapter.new_card(card_id=1, now=now)
    intervals: list[timedelta] = []
    for _ in range(streak + 10):
        card = fsrs_adapter.review(scheduler=scheduler, card=card, rating=3, now=now)
        if card.state == fsrs.State.Review:
            intervals.append(card.due - now)
            if len(intervals) == streak:
                break
        now = card.due
    return intervals
