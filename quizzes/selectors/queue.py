"""Reads for the review session: the learner's local day, the due queue, the next card.

Every read here is a fixed number of queries served by indexes: the due part by
RecallSchedule (learner, due), the daily counts by ReviewLog (learner, reviewed_at). The queue's
counts are one statement; nothing loads a learner's schedules into Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery, Value

from accounts.local_day import day_bounds_at
from accounts.models import User
from courses.models import Enrollment
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.backlog import at_risk_first, in_backlog
from quizzes.selectors.cards import (
    LEARN_AHEAD,
    LEARNING_STATES,
    QueueCard,
    due_card_for,
    first_new_card_for,
)

# Where they lived before the card loading moved to `cards`: other modules import them here.
from quizzes.selectors.cards import card_for as card_for
from quizzes.selectors.prepared import PreparedQuery


# Learning steps due this soon are shown now rather than saying "all caught up" (Anki's default).
def local_day_bounds(*, learner: User, now: datetime) -> tuple[datetime, datetime]:
    """Start and end (aware, in the learner's zone) of their current day, which begins at
    day_start_hour. The one definition lives in accounts.local_day."""
    return day_bounds_at(now=now, time_zone=learner.tz, day_start_hour=learner.day_start_hour)


def local_day_of(*, learner: User, moment: datetime) -> datetime:
    """The learner-day a moment belongs to, as that day's start (for grouping)."""
    return local_day_bounds(learner=learner, now=moment)[0]


def due_count_for(*, learner: User, now: datetime) -> int:
    # Served by the (learner, due) index.
    return RecallSchedule.objects.filter(learner=learner, due__lte=now).count()


@dataclass(frozen=True)
class CourseCounts:
    """One enrolled course's part of today's queue (one row of the counts statement)."""

    course_id: int
    review_limit: int
    new_limit: int
    reviews_today: int  # grades today of cards that were in review (they count against the limit)
    new_today: int  # grades today that introduced a new item
    learning_today: int  # grades today of cards in (re)learning: intraday steps, no limit
    review_due: int  # review cards due today (from the start of their local due day)
    learning_due: int  # (re)learning cards due now or within the learn-ahead window
    new_available: int  # items of the course the learner has never answered

    @property
    def reviews_left(self) -> int:
        return max(self.review_limit - self.reviews_today, 0)

    @property
    def new_left(self) -> int:
        # None while more reviews are due than the daily limit (a backlog: selectors/backlog.py).
        return 0 if in_backlog(self) else max(self.new_limit - self.new_today, 0)


@dataclass(frozen=True)
class QueueCounts:
    courses: tuple[CourseCounts, ...]

    @property
    def due_count(self) -> int:
        """Cards to review now: every learning step due, and each course's due reviews up to
        what is left of its own daily review limit."""
        return sum(c.learning_due + min(c.review_due, c.reviews_left) for c in self.courses)

    @property
    def new_count(self) -> int:
        return sum(min(c.new_available, c.new_left) for c in self.courses)

    @property
    def reviews_today(self) -> int:
        return sum(c.reviews_today for c in self.courses)

    @property
    def new_today(self) -> int:
        return sum(c.new_today for c in self.courses)

    @property
    def graded_today(self) -> int:
        return sum(c.reviews_today + c.new_today + c.learning_today for c in self.courses)

    @property
    def enrolled_course_ids(self) -> list[int]:
        return [c.course_id for c in self.courses]

    @property
    def review_course_ids(self) -> list[int]:
        """Courses whose due reviews may still be shown today."""
        return [c.course_id for c in self.courses if c.reviews_left and c.review_due]

    @property
    def new_course_ids(self) -> list[int]:
        return [c.course_id for c in self.courses if c.new_left and c.new_available]


@dataclass(frozen=True)
class DueQueue:
    counts: QueueCounts
    card: QueueCard | None

    @property
    def due_count(self) -> int:
        return self.counts.due_count

    @property
    def new_count(self) -> int:
        return self.counts.new_count

    @property
    def reviews_today(self) -> int:
        return self.counts.reviews_today

    @property
    def new_today(self) -> int:
        return self.counts.new_today

    @property
    def graded_today(self) -> int:
        return self.counts.graded_today

    @property
    def remaining(self) -> int:
        return self.due_count + self.new_count


# The counts statement: three grouped reads (enrolments with their limits and items, the
# learner's schedules, today's grades) glued by UNION ALL, each row tagged with its part and
# padded to the same six columns. One pass over the learner's schedules and grades per request,
# where a correlated subquery per count and course planned and ran six joins per enrolled course.
_LIMITS, _SCHEDULES, _GRADES = 0, 1, 2


def _grouped(queryset: QuerySet[Any], course: str, part: int, **counts: Any) -> QuerySet[Any]:
    """`queryset` grouped by course: (course id, part, up to four counts, zeros after)."""
    names = list(counts)
    padding = {f"pad{n}": Value(0) for n in range(len(names), 4)}
    return (
        queryset.order_by()
        .values(course_key=F(course))
        .annotate(part=Value(part), **counts, **padding)
        .values_list("course_key", "part", *names, *padding)
    )


def _counts_queryset(
    *, learner_id: int, day_start: datetime, day_end: datetime, learn_ahead_until: datetime
) -> QuerySet[Any]:
    """Rows of (course id, part, four values): each enrolled course's limits and items, the
    learner's due reviews, due learning steps and answered items in each course, and today's
    grades by kind."""
    learner = User(pk=learner_id)
    # Counted per enrolled course down the lesson index: a grouped join of every item with its
    # lesson and module hashed all three tables on each request (0.2–0.3 ms of 1).
    items = (
        QuizItem.objects.filter(lesson__module__course_id=OuterRef("course_id"))
        .values("lesson__module__course_id")
        .annotate(n=Count("*"))  # not the ids: the lesson index alone answers COUNT(*)
        .values("n")
    )
    limits = (
        Enrollment.objects.filter(user=learner, role=Enrollment.Role.LEARNER)
        .order_by()
        .annotate(
            part=Value(_LIMITS),
            review_limit=F("course__daily_review_limit"),
            new_limit=F("course__daily_new_limit"),
            items=Subquery(items),
            pad3=Value(0),
        )
        .values_list("course_id", "part", "review_limit", "new_limit", "items", "pad3")
    )
    active = Q(suspended=False)
    schedules = _grouped(
        RecallSchedule.objects.filter(learner=learner, reps__gt=0),
        "course_id",  # the schedule's own copy: no join per schedule
        _SCHEDULES,
        # A review card is due from the start of its due day in the learner's local day.
        review_due=Count(
            "pk", filter=active & Q(state=RecallSchedule.State.REVIEW, due__lt=day_end)
        ),
        learning_due=Count(
            "pk", filter=active & Q(state__in=LEARNING_STATES, due__lte=learn_ahead_until)
        ),
        answered=Count("pk"),  # suspended or not, an answered item is not new
    )
    # Lesson answers are learning, not the session's: they count against no limit.
    new = Q(state_before__reps=0)
    review = Q(state_before__state=RecallSchedule.State.REVIEW) & ~new
    grades = _grouped(
        ReviewLog.objects.filter(
            learner=learner, reviewed_at__gte=day_start, undo__isnull=True
        ).exclude(source=ReviewLog.Source.LESSON),
        "schedule__course_id",  # one join: the schedule carries its course
        _GRADES,
        reviews_today=Count("pk", filter=review),
        new_today=Count("pk", filter=new),
        learning_today=Count("pk", filter=~new & ~review),
    )
    return limits.union(schedules, grades, all=True).order_by()


_COUNTS = PreparedQuery(_counts_queryset)


def _course_counts(rows: list[tuple[Any, ...]]) -> tuple[CourseCounts, ...]:
    """The counts statement's rows gathered per enrolled course, in course order. A course's
    new items are its items less those the learner has answered (one schedule per item)."""
    parts: dict[tuple[int, int], tuple[int, ...]] = {(r[0], r[1]): tuple(r[2:]) for r in rows}
    counts = []
    for (course_id, part), (review_limit, new_limit, items, _) in sorted(parts.items()):
        if part != _LIMITS:
            continue
        review_due, learning_due, answered, _ = parts.get((course_id, _SCHEDULES), (0, 0, 0, 0))
        reviews, new, learning, _ = parts.get((course_id, _GRADES), (0, 0, 0, 0))
        row = (review_limit, new_limit, reviews, new, learning, review_due, learning_due)
        counts.append(CourseCounts(course_id, *row, (items or 0) - answered))  # None: no items
    return tuple(counts)


def queue_counts_for(*, learner: User, now: datetime) -> QueueCounts:
    """Each enrolled course's limits, today's grades and due cards, in one statement."""
    day_start, day_end = local_day_bounds(learner=learner, now=now)
    rows = _COUNTS.rows(
        learner_id=learner.pk,
        day_start=day_start,
        day_end=day_end,
        learn_ahead_until=now + LEARN_AHEAD,
    )
    return QueueCounts(courses=_course_counts(rows))


# A card is loaded as one row of plain values (one prepared statement, no select_related
# machinery) and turned into model instances: the schedule, its item, lesson, module and course.
def next_card_for(*, learner: User, now: datetime, counts: QueueCounts) -> QueueCard | None:
    """The oldest due card (learning steps within the learn-ahead window, reviews of courses
    with reviews left today), else the first new item of a course with new items left (one
    query, and one more for a multiple-choice card's choices); a backlog's reviews at risk first."""
    card: QueueCard | None = None
    if counts.due_count:
        _, day_end = local_day_bounds(learner=learner, now=now)
        card = due_card_for(
            learner=learner,
            learn_ahead_until=now + LEARN_AHEAD,
            day_end=day_end,
            enrolled=counts.enrolled_course_ids,
            reviewing=counts.review_course_ids,
        )
    if card is not None:  # a course over its daily limit: its review most at risk first
        card = at_risk_first(learner=learner, now=now, courses=counts.courses, card=card)
    if card is None and counts.new_count:
        card = first_new_card_for(learner=learner, courses=counts.new_course_ids)
    return card


def due_queue_for(*, learner: User, now: datetime, with_card: bool = True) -> DueQueue:
    """Due cards oldest first, then new items, within each course's daily limits.

    One query for the counts, and with the card one or two more, whatever the number of
    schedules.
    """
    counts = queue_counts_for(learner=learner, now=now)
    card = next_card_for(learner=learner, now=now, counts=counts) if with_card else None
    return DueQueue(counts=counts, card=card)


def next_card_at(*, learner: User, now: datetime) -> datetime | None:
    """When the learner's next card can be shown, limits aside (None: nothing scheduled yet):
    a review card from the start of its local due day, a learning step within the learn-ahead
    window of its due time. One query on (learner, due)."""
    first = RecallSchedule.objects.filter(learner=learner, reps__gt=0, suspended=False).aggregate(
        review=Min("due", filter=Q(state=RecallSchedule.State.REVIEW)),
        learning=Min("due", filter=Q(state__in=LEARNING_STATES)),
    )
    moments: list[datetime] = []
    if first["review"] is not None:
        moments.append(local_day_of(learner=learner, moment=first["review"]))
    if first["learning"] is not None:
        moments.append(first["learning"] - LEARN_AHEAD)
    return min(moments) if moments else None
