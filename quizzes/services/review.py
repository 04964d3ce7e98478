"""Grading recall schedules: the first answer that creates one and every later grade (undo.py
undoes them).

Every grade carries the card token the learner saw and writes the schedule only where its row
still holds the token read with it (rotating it), so a double click, a second tab or a retried
request advances the schedule exactly once; the losers find the winner's log or a stale card.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import NotRequired, TypedDict, Unpack

from django.db import IntegrityError, transaction

from accounts.models import User
from courses.models import Course
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.cards import schedule_for_grade, schedule_locked_for
from quizzes.selectors.course_stats import LEECH_LAPSES
from quizzes.services import fsrs_adapter
from quizzes.services.easy_days import learner_week
from quizzes.services.rows import row_swap


class StaleCard(Exception):
    """The card token is not the schedule's current one: the card was graded since it was shown."""


# A grade's duration is the time from showing the card to grading it, at most an hour (a card
# left open over lunch says nothing about recall).
MAX_DURATION_MS = 3_600_000


def grade_duration_ms(*, shown_at_ms: int | None, now: datetime) -> int | None:
    """Milliseconds from `shown_at_ms` (epoch ms, as the page that showed the card carried it)
    to `now`, within 0 and an hour; None when the page did not say when it showed the card.

    Every page that grades passes this to the grade: the review session, the lesson's items and
    the email prompt page."""
    if shown_at_ms is None:
        return None
    return min(max(int(now.timestamp() * 1000) - shown_at_ms, 0), MAX_DURATION_MS)


def _validate_rating(rating: int) -> int:
    if int(rating) not in ReviewLog.Rating.values:
        raise ValueError(f"rating must be 1–4, not {rating!r}")
    return int(rating)


def _scheduled_days(schedule: RecallSchedule) -> int:
    if schedule.state != RecallSchedule.State.REVIEW or schedule.last_review is None:
        return 0
    return max((schedule.due - schedule.last_review).days, 0)


def _grade_as_read(
    *,
    schedule: RecallSchedule,
    course: Course,
    card_token: uuid.UUID,
    rating: int,
    now: datetime,
    duration_ms: int | None,
    source: str,
    scheduling: fsrs_adapter.Scheduling | None = None,
    answer_value: float | None = None,
    expected_value: float | None = None,
    choice_keys: list[str] | None = None,
    learner: User | None = None,
) -> ReviewLog | None:
    """Advance a schedule of `course` as read (with `scheduling` when it was read beside it);
    write the log; rotate the token. Both writes happen only if the row still holds the token
    it was read with: None when another request wrote it since.

    The day within a fuzz range is the load balancer's pick over the learner's week (the grade's
    preview makes the same pick: same seed, same counts)."""
    if scheduling is None:
        scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=schedule.learner_id)
    seed = fsrs_adapter.fuzz_seed(
        learner_id=schedule.learner_id, item_id=schedule.item_id, reps=schedule.reps
    )
    week = learner_week(learner=learner or schedule.learner_id, now=now)
    scheduler = fsrs_adapter.scheduler_for(course, scheduling, seed=seed, week=week)
    card_before = fsrs_adapter.card_from_schedule(schedule)
    card_after = fsrs_adapter.review(
        scheduler=scheduler, card=card_before, rating=rating, now=now, duration_ms=duration_ms
    )
    reps_before, lapses_before = schedule.reps, schedule.lapses
    lapsed = rating == ReviewLog.Rating.AGAIN and schedule.state == RecallSchedule.State.REVIEW
    log = ReviewLog(
        schedule=schedule,
        learner_id=schedule.learner_id,
        item_id=schedule.item_id,
        rating=rating,
        source=source,
        reviewed_at=fsrs_adapter.to_utc(now),
        duration_ms=duration_ms,
        scheduled_days=_scheduled_days(schedule),
        idempotency_key=card_token,
        state_before=fsrs_adapter.card_state_json(
            card_before, reps=reps_before, lapses=lapses_before
        ),
        state_after=fsrs_adapter.card_state_json(
            card_after, reps=reps_before + 1, lapses=lapses_before + int(lapsed)
        ),
        parameters_id=scheduling.parameters_id,
        desired_retention=scheduling.desired_retention,
        answer_value=answer_value,
        expected_value=expected_value,
        choice_keys=choice_keys,
    )
    read_token = schedule.card_token
    fsrs_adapter.card_to_schedule(card_after, schedule)
    schedule.reps = reps_before + 1
    schedule.lapses = lapses_before + int(lapsed)
    if lapsed and schedule.lapses >= LEECH_LAPSES:
        schedule.suspended = True  # a leech: out of the queue until the learner brings it back
    schedule.card_token = uuid.uuid4()
    if not row_swap(schedule, _GRADED, held={"card_token": read_token}, log=log):
        return None
    return log


# What a grade changes on its schedule (written with a statement built once per process).
_GRADED = ("state", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses",
           "suspended", "card_token", "updated_at")  # fmt: skip


def _replay_or_stale(schedule: RecallSchedule, card_token: uuid.UUID) -> ReviewLog:
    existing = ReviewLog.objects.filter(schedule=schedule, idempotency_key=card_token).first()
    if existing is None:
        raise StaleCard(f"card token {card_token} is not current for schedule {schedule.pk}")
    return existing


class Grade(TypedDict):
    """What the learner did with a shown card: the token they saw, their rating, when, how long,
    and where (review session, lesson, reminder email)."""

    card_token: uuid.UUID | str
    rating: int
    now: datetime
    duration_ms: NotRequired[int | None]
    source: NotRequired[str]
    # A calculated item's typed number and the answer of the problem drawn for the learner.
    answer_value: NotRequired[float | None]
    expected_value: NotRequired[float | None]
    # A choice item's answer: the keys the learner picked (the item analysis's choice shares).
    choice_keys: NotRequired[list[str] | None]


def _grade_as_read_with(
    schedule: RecallSchedule,
    course: Course,
    token: uuid.UUID,
    grade: Grade,
    *,
    default_source: str,
    scheduling: fsrs_adapter.Scheduling | None = None,
    learner: User | None = None,
) -> ReviewLog | None:
    return _grade_as_read(
        learner=learner,
        schedule=schedule,
        course=course,
        card_token=token,
        rating=_validate_rating(grade["rating"]),
        now=grade["now"],
        duration_ms=grade.get("duration_ms"),
        source=grade.get("source", default_source),
        scheduling=scheduling,
        answer_value=grade.get("answer_value"),
        expected_value=grade.get("expected_value"),
        choice_keys=grade.get("choice_keys"),
    )


def review_grade(*, learner: User, schedule_id: int, **grade: Unpack[Grade]) -> ReviewLog:
    """Grade the card the learner was shown; idempotent on `card_token`.

    `grade` is `card_token`, `rating`, `now`, optional `duration_ms` and `source` (default: the
    review session). Raises RecallSchedule.DoesNotExist for another learner's schedule and
    StaleCard when the token is neither current nor one it was graded with.
    """
    token = uuid.UUID(str(grade["card_token"]))
    _validate_rating(grade["rating"])
    # No transaction: the read takes no lock, and the write is one statement that applies only
    # if the token is still the one read (a concurrent grade or undo rotates it).
    schedule, course, row = schedule_for_grade(learner=learner, schedule_id=schedule_id)
    if schedule.card_token != token:
        return _replay_or_stale(schedule, token)
    scheduling = fsrs_adapter.scheduling_from(course=course, row=row)
    log = _grade_as_read_with(
        schedule, course, token, grade, default_source=ReviewLog.Source.REVIEW,
        scheduling=scheduling, learner=learner,
    )  # fmt: skip
    # Written since it was read: by this same grade (a replay finds its log) or another.
    return log if log is not None else _replay_or_stale(schedule, token)


@dataclass(frozen=True)
class FirstGrade:
    log: ReviewLog
    created: bool  # False when the learner already had a schedule for the item


def schedule_start(*, learner: User, item: QuizItem, **grade: Unpack[Grade]) -> FirstGrade:
    """The learner's first grade of an item: create its recall schedule and review it once.

    Safe to race: the (learner, item) unique constraint lets one request create the schedule;
    a replay with the same token returns that first log. If the item was already scheduled under
    another token, raises StaleCard. `grade` as for review_grade; `source` defaults to the lesson.
    """
    token = uuid.UUID(str(grade["card_token"]))
    _validate_rating(grade["rating"])
    with transaction.atomic():
        try:
            with transaction.atomic():
                schedule = RecallSchedule.objects.create(
                    learner=learner,
                    item=item,
                    course_id=item.lesson.module.course_id,
                    due=fsrs_adapter.to_utc(grade["now"]),
                    card_token=token,
                )
        except IntegrityError:
            schedule = schedule_locked_for(learner=learner, item=item)
            replayed = ReviewLog.objects.filter(schedule=schedule, idempotency_key=token).first()
            if replayed is not None or schedule.reps:
                return FirstGrade(log=replayed or _replay_or_stale(schedule, token), created=False)
            # Its first grade was undone: the item is new again, and this is its first grade.
        schedule.item = item
        # The row is created or locked in this transaction: nothing else can have written it.
        course = item.lesson.module.course
        log = _grade_as_read_with(
            schedule,
            course,
            token,
            grade,
            default_source=ReviewLog.Source.LESSON,
            learner=learner,
        )
        if log is None:
            raise StaleCard(f"schedule {schedule.pk} changed under its lock")
        return FirstGrade(log=log, created=True)
