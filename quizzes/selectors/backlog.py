"""Backlog recovery: when a course has more reviews due than its daily limit, the review most at
risk comes first (lowest retrievability) and its new items wait (`CourseCounts.new_left`); the
review page says how many days catching up takes."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from accounts.local_day import day_bounds_at
from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.cards import QueueCard, card_for

# The candidates read to pick from: a backlog beyond this is worked through this many at a time.
BACKLOG_WINDOW = 2_000


class CourseDue(Protocol):
    """What a course's part of the queue says (queue.CourseCounts)."""

    @property
    def course_id(self) -> int: ...
    @property
    def review_due(self) -> int: ...
    @property
    def review_limit(self) -> int: ...
    @property
    def reviews_today(self) -> int: ...


def in_backlog(course: CourseDue) -> bool:
    return course.review_due > max(course.review_limit, 1)


@dataclass(frozen=True)
class Backlog:
    reviews: int
    days: int  # at each course's daily limit, the slowest course's


def backlog_of(courses: Iterable[CourseDue]) -> Backlog:
    late = [c for c in courses if in_backlog(c)]
    return Backlog(
        reviews=sum(c.review_due for c in late),
        days=max((math.ceil(c.review_due / max(c.review_limit, 1)) for c in late), default=0),
    )


def lowest_recall_card_for(
    *, learner: User, now: datetime, day_end: datetime, course_id: int
) -> QueueCard | None:
    """The course's due review with the lowest retrievability now. FSRS's retrievability falls
    as elapsed time ÷ stability grows (R = (1 + factor·t/S)^−decay, for every decay), so the
    largest t/S is the lowest recall. Two queries (the candidates, the card)."""
    rows = RecallSchedule.objects.filter(
        learner=learner,
        course_id=course_id,
        state=RecallSchedule.State.REVIEW,
        reps__gt=0,
        suspended=False,
        due__lt=day_end,
    ).values_list("pk", "last_review", "stability")[:BACKLOG_WINDOW]
    best: tuple[float, int] | None = None
    for pk, last_review, stability in rows:
        elapsed = (now - last_review).total_seconds() / 86_400 if last_review else 0.0
        key = (elapsed / max(stability or 0.0, 0.01), -pk)
        if best is None or key > best:
            best = key
    if best is None:
        return None
    return card_for(learner=learner, schedule_id=-best[1], item_id=None)


def at_risk_first(
    *, learner: User, now: datetime, courses: Iterable[CourseDue], card: QueueCard | None
) -> QueueCard | None:
    """`card`, or, when it is a review of a course in a backlog, that course's review with the
    lowest retrievability (the queue and the carried counts choose the same way). No query
    without a backlog."""
    schedule = card.schedule if card is not None else None
    if schedule is None or schedule.state != RecallSchedule.State.REVIEW:
        return card
    if not any(c.course_id == schedule.course_id and in_backlog(c) for c in courses):
        return card
    _start, day_end = day_bounds_at(
        now=now, time_zone=learner.time_zone, day_start_hour=learner.day_start_hour
    )
    found = lowest_recall_card_for(
        learner=learner, now=now, day_end=day_end, course_id=schedule.course_id
    )
    return found or card
