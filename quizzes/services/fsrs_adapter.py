"""The one bridge between our models and `fsrs`: UTC conversion, RecallSchedule ↔ Card, the Scheduler.

`fsrs` accepts only `datetime.timezone.utc` datetimes; every conversion happens here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import fsrs

from courses.models import Course
from quizzes.models import RecallSchedule

RATINGS: tuple[fsrs.Rating, ...] = (
    fsrs.Rating.Again,
    fsrs.Rating.Hard,
    fsrs.Rating.Good,
    fsrs.Rating.Easy,
)


def to_utc(value: datetime) -> datetime:
    """An aware datetime in `datetime.timezone.utc`, the only zone `fsrs` accepts."""
    if value.tzinfo is None:
        raise ValueError("naive datetime: every datetime in this project is aware")
    return value.astimezone(UTC)


def scheduler_for(course: Course) -> fsrs.Scheduler:
    """The course's FSRS-6 scheduler. No fuzzing, so intervals are reproducible and comparable.

    The step lists are taken literally: an empty list means no (re)learning steps.
    """
    return fsrs.Scheduler(
        desired_retention=course.desired_retention,
        learning_steps=tuple(timedelta(minutes=m) for m in course.learning_steps_minutes or ()),
        relearning_steps=tuple(timedelta(minutes=m) for m in course.relearning_steps_minutes or ()),
        maximum_interval=course.maximum_interval_days,
        enable_fuzzing=False,
    )


def new_card(*, card_id: int, now: datetime) -> fsrs.Card:
    """A card never reviewed, due now (what a learner's first answer starts from)."""
    return fsrs.Card(card_id=card_id, due=to_utc(now))


def card_from_schedule(schedule: RecallSchedule) -> fsrs.Card:
    return fsrs.Card(
        card_id=schedule.pk,
        state=fsrs.State(schedule.state),
        step=schedule.step,
        stability=schedule.stability,
        difficulty=schedule.difficulty,
        due=to_utc(schedule.due),
        last_review=to_utc(schedule.last_review) if schedule.last_review else None,
    )


def card_to_schedule(card: fsrs.Card, schedule: RecallSchedule) -> None:
    """Copy the card's FSRS state onto the schedule (not saved)."""
    schedule.state = int(card.state)
    schedule.step = card.step
    schedule.stability = card.stability
    schedule.difficulty = card.difficulty
    schedule.due = card.due
    schedule.last_review = card.last_review


def card_state_json(card: fsrs.Card, *, reps: int, lapses: int) -> dict[str, Any]:
    """The JSON kept in ReviewLog.state_before/state_after: the card plus our counters."""
    data: dict[str, Any] = dict(card.to_dict())
    data.pop("card_id", None)
    data["reps"] = reps
    data["lapses"] = lapses
    return data


def card_from_state_json(data: dict[str, Any], *, card_id: int) -> fsrs.Card:
    return fsrs.Card.from_dict(
        {
            "card_id": card_id,
            "state": data["state"],
            "step": data["step"],
            "stability": data["stability"],
            "difficulty": data["difficulty"],
            "due": data["due"],
            "last_review": data["last_review"],
        }
    )


def review(
    *,
    scheduler: fsrs.Scheduler,
    card: fsrs.Card,
    rating: int,
    now: datetime,
    duration_ms: int | None = None,
) -> fsrs.Card:
    card_after, _log = scheduler.review_card(
        card, fsrs.Rating(rating), review_datetime=to_utc(now), review_duration=duration_ms
    )
    return card_after


def next_intervals(
    *, scheduler: fsrs.Scheduler, card: fsrs.Card, now: datetime
) -> dict[int, timedelta]:
    """For each rating 1–4, how long until the card would be due again if graded now."""
    when = to_utc(now)
    return {
        int(rating): scheduler.review_card(card, rating, review_datetime=when)[0].due - when
        for rating in RATINGS
    }


def retrievability(*, scheduler: fsrs.Scheduler, card: fsrs.Card, now: datetime) -> float:
    return float(scheduler.get_card_retrievability(card, current_datetime=to_utc(now)))


def interval_label(delta: timedelta) -> str:
    """Short human interval for grade buttons: "1 min", "10 min", "3 h", "4 d", "2 mo", "1.2 y"."""
    seconds = max(delta.total_seconds(), 0)
    minutes = seconds / 60
    if minutes < 60:
        return f"{max(round(minutes), 1)} min"
    hours = minutes / 60
    if hours < 24:
        return f"{round(hours)} h"
    days = hours / 24
    if days < 31:
        return f"{round(days)} d"
    if days < 365:
        return f"{round(days / 30.4)} mo"
    return f"{days / 365:.1f} y"
