"""The one bridge between our models and `fsrs`: UTC conversion, RecallSchedule ↔ Card, the Scheduler.

`fsrs` accepts only `datetime.timezone.utc` datetimes; every conversion happens here.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import fsrs
from fsrs.scheduler import DEFAULT_PARAMETERS, FUZZ_RANGES

from core.bounds import BoundError
from core.ranges import MAXIMUM_INTERVAL_DAYS
from core.steps import bounded_steps
from courses.models import Course
from quizzes.models import RecallSchedule
from quizzes.selectors.scheduling import SchedulingRow, scheduling_row
from quizzes.services.load_balancer import LearnerWeek

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


@dataclass(frozen=True)
class Scheduling:
    """What schedules one learner's reviews in one course: the weights, the parameter set they
    come from (None: FSRS-6's defaults) and the desired retention."""

    weights: tuple[float, ...]
    parameters_id: int | None
    desired_retention: float


DEFAULT_WEIGHTS: tuple[float, ...] = tuple(DEFAULT_PARAMETERS)


def scheduling_for(*, course: Course, learner_id: int | None) -> Scheduling:
    """Resolve personal parameters → the course's pooled ones → FSRS-6's defaults, and the
    learner's own retention (kept within the course's bounds) → the course's. One query."""
    return scheduling_from(
        course=course, row=scheduling_row(course_id=course.pk, learner_id=learner_id)
    )


def scheduling_from(*, course: Course, row: SchedulingRow) -> Scheduling:
    """The Scheduling a `scheduling_row` describes (read alone or beside a schedule)."""
    parameters_id, weights, own = row
    return Scheduling(
        weights=tuple(float(w) for w in weights) if weights is not None else DEFAULT_WEIGHTS,
        parameters_id=parameters_id,
        desired_retention=own if own is not None else course.desired_retention,
    )


def fuzz_seed(*, learner_id: int | None, item_id: int, reps: int) -> int:
    """The seed of one review's fuzz, as Anki seeds it from the card and its reps: the interval
    a grade button shows is the interval that grade gives, and a test can reproduce it.

    The first review (reps 0) is seeded by the item alone: the preview of a new card is drawn
    before it has a schedule, and may not know whose it is."""
    owner = learner_id if reps > 0 else 0
    digest = hashlib.blake2b(f"{owner}:{item_id}:{reps}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class SeededScheduler(fsrs.Scheduler):
    """`fsrs.Scheduler` whose fuzz draws from a seeded generator instead of the global one.

    The fuzz range is fsrs's own (its FUZZ_RANGES, the same arithmetic as its
    `_get_fuzzed_interval`); only the source of the random number differs. With a learner's
    `week`, the day within the range is the load balancer's pick (load_balancer.py)."""

    def __init__(
        self, *args: Any, seed: int, week: LearnerWeek | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.seed = seed
        self.week = week

    def _get_fuzzed_interval(self, *, interval: timedelta) -> timedelta:
        interval_days = interval.days
        if interval_days < 2.5:
            return interval
        delta = 1.0
        for fuzz_range in FUZZ_RANGES:
            delta += fuzz_range["factor"] * max(
                min(float(interval_days), fuzz_range["end"]) - fuzz_range["start"], 0.0
            )
        max_ivl = min(round(interval_days + delta), self.maximum_interval)
        min_ivl = min(max(2, round(interval_days - delta)), max_ivl)
        if self.week is not None:
            chosen = self.week.choose(
                interval=interval_days, minimum=min_ivl, maximum=max_ivl, seed=self.seed
            )
            if chosen is not None:
                return timedelta(days=chosen)
        # A fresh generator per call: every rating of one preview draws the same number.
        drawn = random.Random(self.seed).random() * (max_ivl - min_ivl + 1) + min_ivl
        return timedelta(days=min(round(drawn), self.maximum_interval))


def _steps(minutes: object) -> tuple[timedelta, ...]:
    """The course's steps as timedeltas. The settings, the importer and the model refuse a bad
    step; one stored before they did is skipped here rather than break every learner's page."""
    steps: list[int | float] = []
    for value in minutes if isinstance(minutes, list) else ():
        try:
            steps.extend(bounded_steps([value], field="steps"))
        except BoundError:
            continue
    return tuple(timedelta(minutes=m) for m in steps)


def scheduler_for(
    course: Course,
    scheduling: Scheduling | None = None,
    *,
    seed: int | None = None,
    week: LearnerWeek | None = None,
) -> fsrs.Scheduler:
    """The course's FSRS-6 scheduler with `scheduling`'s weights and retention (default: FSRS-6's
    defaults and the course's retention). Fuzz is on, seeded, when `seed` is given (a grade and
    its preview); without one there is no fuzz, so statistics are reproducible.

    The step lists are taken literally: an empty list means no (re)learning steps. With `week`
    (and a seed), the load balancer picks the day within the fuzz range.
    """
    kwargs: dict[str, Any] = {
        "parameters": scheduling.weights if scheduling else DEFAULT_WEIGHTS,
        "desired_retention": (
            scheduling.desired_retention if scheduling else course.desired_retention
        ),
        "learning_steps": _steps(course.learning_steps_minutes),
        "relearning_steps": _steps(course.relearning_steps_minutes),
        "maximum_interval": min(
            max(course.maximum_interval_days, int(MAXIMUM_INTERVAL_DAYS.minimum)),
            int(MAXIMUM_INTERVAL_DAYS.maximum),
        ),
    }
    if seed is None:
        return fsrs.Scheduler(enable_fuzzing=False, **kwargs)
    return SeededScheduler(enable_fuzzing=True, seed=seed, week=week, **kwargs)


def weights_valid(weights: Sequence[float]) -> bool:
    """Whether `fsrs.Scheduler` accepts these 21 weights (it checks each against its bounds)."""
    try:
        fsrs.Scheduler(parameters=tuple(weights))
    except ValueError:
        return False
    return True


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
