"""Today's counts, signed into the card's forms and carried to its grade, which applies its change.
Kept by issue 31's rule: without it the grade missed 0.33 of the bare view (benchmarks.md)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core import signing

from accounts.models import User
from core.moments import epoch_micros, from_epoch_micros
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.selectors.backlog import at_risk_first
from quizzes.selectors.cards import LEARN_AHEAD, LEARNING_STATES, due_card_for, first_new_card_for
from quizzes.selectors.queue import CourseCounts, DueQueue, QueueCounts, local_day_bounds

_SALT = "quizzes.queue-counts"
MAX_AGE = timedelta(minutes=10)
# The form fields' bound: about 60 characters per enrolled course.
MAX_LENGTH = 2000
_VERSION = 1  # bump when the payload changes shape: older counts then read as bad ones
_FIELDS = tuple(f.name for f in dataclasses.fields(CourseCounts))


@dataclass(frozen=True)
class CarriedCounts:
    counts: QueueCounts
    counted_at: datetime  # learning steps due by counted_at + LEARN_AHEAD are in the counts
    day_start: datetime  # the learner's local day they belong to, its start and end
    day_end: datetime

    def adjusted(self, course_id: int, **change: int) -> CarriedCounts:
        """The counts with `change` added to one course's figures (never below zero)."""
        courses = tuple(
            dataclasses.replace(
                c, **{name: max(getattr(c, name) + by, 0) for name, by in change.items()}
            )
            if c.course_id == course_id
            else c
            for c in self.counts.courses
        )
        return dataclasses.replace(self, counts=QueueCounts(courses=courses))


def counted_now(*, learner: User, counts: QueueCounts, now: datetime) -> CarriedCounts:
    """Counts just counted, to be carried from `now`."""
    day_start, day_end = local_day_bounds(learner=learner, now=now)
    return CarriedCounts(counts=counts, counted_at=now, day_start=day_start, day_end=day_end)


def counts_dumps(carried: CarriedCounts, *, learner_id: int) -> str:
    """The signed counts for the card's reveal and grade forms."""
    payload = [
        _VERSION,
        learner_id,
        epoch_micros(carried.counted_at),
        epoch_micros(carried.day_start),
        [[getattr(c, name) for name in _FIELDS] for c in carried.counts.courses],
    ]
    return signing.dumps(payload, salt=_SALT)


def counts_loads(value: str, *, learner: User, now: datetime) -> CarriedCounts | None:
    """The carried counts, or None unless `value` is this learner's, signed within MAX_AGE, of
    their current local day.

    What can drift, and how far: a learning step falling due after the count is counted when
    shown (due_queue_carried); grades from another tab, a lesson or an email, and changed limits
    or enrolments, for at most MAX_AGE; a new local day, or counted cards that are gone, are
    counted afresh, as is the end of the queue, so the empty state's figures are always fresh."""
    if not value or len(value) > MAX_LENGTH:
        return None
    try:
        version, learner_id, counted_at, day_start, rows = signing.loads(
            value, salt=_SALT, max_age=MAX_AGE
        )
        if version != _VERSION or learner_id != learner.pk:
            return None
        courses = tuple(CourseCounts(**dict(zip(_FIELDS, row, strict=True))) for row in rows)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    start, end = local_day_bounds(learner=learner, now=now)
    if from_epoch_micros(day_start) != start:
        return None
    carried = CarriedCounts(
        counts=QueueCounts(courses=courses),
        counted_at=from_epoch_micros(counted_at),
        day_start=start,
        day_end=end,
    )
    return carried if carried.counted_at <= now else None


def counts_after_grade(carried: CarriedCounts, *, log: ReviewLog) -> CarriedCounts:
    """The counts after the graded card, which the panel showed and so counted, moved from
    where it was to where the grade put it, by the counts statement's own definitions."""
    schedule: RecallSchedule = log.schedule  # as graded (a replay's is read again)
    before: dict[str, Any] = log.state_before
    change: dict[str, int] = {}

    def add(name: str, by: int) -> None:
        change[name] = change.get(name, 0) + by

    if not before.get("reps"):
        add("new_today", 1)
        add("new_available", -1)
    elif before.get("state") == RecallSchedule.State.REVIEW:
        add("reviews_today", 1)
        add("review_due", -1)
    else:
        add("learning_today", 1)
        add("learning_due", -1)
    if not schedule.suspended:  # a leech leaves the queue
        if schedule.state == RecallSchedule.State.REVIEW and schedule.due < carried.day_end:
            add("review_due", 1)
        elif schedule.state in LEARNING_STATES and schedule.due <= carried.counted_at + LEARN_AHEAD:
            add("learning_due", 1)
    return carried.adjusted(schedule.course_id, **change)


def due_queue_carried(
    *, learner: User, now: datetime, carried: CarriedCounts
) -> tuple[DueQueue, CarriedCounts] | None:
    """The next card as `due_queue_for` chooses it, with the carried counts; None when the
    queue must be counted afresh (no card left, or counted cards gone)."""
    counts = carried.counts
    card = None
    if counts.enrolled_course_ids:
        # Not only when the counts say so: a learning step may have fallen due since.
        card = due_card_for(
            learner=learner,
            learn_ahead_until=now + LEARN_AHEAD,
            day_end=carried.day_end,
            enrolled=counts.enrolled_course_ids,
            reviewing=counts.review_course_ids,
        )
        card = at_risk_first(learner=learner, now=now, courses=counts.courses, card=card)
    if card is None:
        if counts.due_count or not counts.new_count:
            return None
        card = first_new_card_for(learner=learner, courses=counts.new_course_ids)
        if card is None:
            return None
    elif card.schedule is not None and card.schedule.state in LEARNING_STATES:
        if card.schedule.due > carried.counted_at + LEARN_AHEAD:
            carried = carried.adjusted(card.schedule.course_id, learning_due=1)
    return DueQueue(counts=carried.counts, card=card), carried
