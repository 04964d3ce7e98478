"""Synthetic review histories for parameter tests: learners whose memory follows known FSRS-6
weights, reviewing a course's items with `fsrs` at (roughly) their due times. Seeded, so every
run writes the same reviews."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import fsrs

from accounts.models import User
from courses.models import Course
from quizzes.fsrs_optimizer import DEFAULT_WEIGHTS, Review
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from tests.factories import LessonFactory, ModuleFactory, QuizItemFactory, UserFactory

# A learner who forgets faster than FSRS-6's defaults assume: defaults are over-confident.
FORGETFUL = (0.08, 0.3, 0.7, 2.0, *DEFAULT_WEIGHTS[4:8], 1.3, *DEFAULT_WEIGHTS[9:])


def simulate_history(
    *,
    weights: Sequence[float],
    start: datetime,
    end: datetime,
    rng: random.Random,
    steps: tuple[float, ...] = (1, 10),
) -> list[tuple[Review, int]]:
    """One card's reviews from `start` until `end`: (review, scheduled days before it)."""
    scheduler = fsrs.Scheduler(
        parameters=tuple(weights),
        learning_steps=tuple(timedelta(minutes=m) for m in steps),
        relearning_steps=(timedelta(minutes=10),),
        enable_fuzzing=False,
    )
    card = fsrs.Card(due=start)
    now = start
    out: list[tuple[Review, int]] = []
    while now < end:
        if card.last_review is None:
            rating = rng.choices((1, 2, 3, 4), weights=(3, 1, 5, 1))[0]
        else:
            recall = scheduler.get_card_retrievability(card, current_datetime=now)
            rating = rng.choices((2, 3, 4), weights=(1, 8, 1))[0] if rng.random() < recall else 1
        scheduled = (
            (card.due - card.last_review).days
            if card.state == fsrs.State.Review and card.last_review
            else 0
        )
        card, _ = scheduler.review_card(card, fsrs.Rating(rating), review_datetime=now)
        out.append((Review(at=now, rating=rating), scheduled))
        # Learners come back around the due time, some late by up to a few days.
        late = timedelta(hours=rng.uniform(0, 30) if card.state == fsrs.State.Review else 0)
        now = max(card.due + late, now + timedelta(minutes=1))
    return out


def course_with_reviews(
    *,
    course: Course,
    learners: int,
    items: int,
    days: int,
    weights: Sequence[float] = FORGETFUL,
    seed: int = 7,
    end: datetime | None = None,
) -> list[User]:
    """`learners` learners each reviewing `items` items of `course` (introduced a few a day) for
    `days` days up to `end`, written as recall schedules and review logs."""
    rng = random.Random(seed)
    end = end or datetime.now(UTC)
    begin = end - timedelta(days=days)
    lesson = LessonFactory(module=ModuleFactory(course=course))
    quiz_items: list[QuizItem] = [QuizItemFactory(lesson=lesson) for _ in range(items)]
    people: list[User] = []
    for _ in range(learners):
        learner = UserFactory()
        people.append(learner)
        logs: list[ReviewLog] = []
        for index, item in enumerate(quiz_items):
            start = begin + timedelta(days=index // 5, minutes=rng.uniform(0, 600))
            history = simulate_history(weights=weights, start=start, end=end, rng=rng)
            last = history[-1][0]
            schedule = RecallSchedule.objects.create(
                learner=learner,
                item=item,
                course_id=item.lesson.module.course_id,
                state=RecallSchedule.State.REVIEW,
                due=last.at + timedelta(days=1),
                last_review=last.at,
                reps=len(history),
                stability=1.0,
                difficulty=5.0,
            )
            logs.extend(
                ReviewLog(
                    schedule=schedule,
                    learner=learner,
                    item=item,
                    rating=review.rating,
                    reviewed_at=review.at,
                    scheduled_days=scheduled,
                    idempotency_key=uuid.uuid4(),
                    state_before={},
                    state_after={},
                )
                for review, scheduled in history
            )
        ReviewLog.objects.bulk_create(logs, batch_size=2000)
    return people
