"""Answering a lesson's check-yourself items: check the answer, start the recall schedule."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from accounts.models import User
from quizzes.calculated import Problem
from quizzes.models import QuizItem, ReviewLog
from quizzes.services.review import StaleCard, schedule_start


@dataclass(frozen=True)
class ItemResponse:
    """What the learner answered: choice keys, a number, or (free recall) their own grade."""

    choice_keys: frozenset[str] = field(default_factory=frozenset)
    value: float | None = None
    self_rating: int | None = None


@dataclass(frozen=True)
class AnswerResult:
    item: QuizItem
    correct: bool | None  # None for free recall: the learner judged themselves
    rating: int
    log: ReviewLog
    # False when the item already had a schedule: the answer was checked but did not move it.
    scheduled_now: bool
    chosen: frozenset[str]
    problem: Problem | None = None  # a calculated item's problem, as drawn for the learner


def answer_is_correct(
    *, item: QuizItem, response: ItemResponse, problem: Problem | None = None
) -> bool | None:
    """Multiple choice: exactly the correct set. Numeric: within tolerance. Calculated: within
    the relative tolerance of the answer of `problem`, the one drawn for the learner. Free
    recall: None."""
    if item.kind == QuizItem.Kind.MULTIPLE_CHOICE:
        correct = {c.key for c in item.choices.all() if c.is_correct}
        return set(response.choice_keys) == correct
    if item.kind == QuizItem.Kind.NUMERIC:
        if response.value is None or item.expected_value is None:
            return False
        return abs(response.value - item.expected_value) <= item.tolerance + 1e-9
    if item.kind == QuizItem.Kind.CALCULATED:
        if response.value is None or problem is None:
            return False
        return problem.is_correct(response.value)
    return None


def item_answer(
    *,
    learner: User,
    item: QuizItem,
    response: ItemResponse,
    now: datetime,
    card_token: uuid.UUID | str | None = None,
    duration_ms: int | None = None,
    problem: Problem | None = None,
) -> AnswerResult:
    """Check the learner's answer; the first answer creates the item's recall schedule.

    A wrong answer counts as Again and a right one as Good; free recall takes the learner's
    own grade. Answering an item that is already scheduled shows the feedback and leaves the
    schedule to the review session, so practising in the lesson cannot inflate intervals.
    A calculated item is checked against `problem`, drawn on the server for this learner at
    the schedule's current review; the first grade's log keeps the number and the answer.
    """
    correct = answer_is_correct(item=item, response=response, problem=problem)
    if correct is None:
        if response.self_rating is None:
            raise ValueError("a free-recall answer needs the learner's own grade")
        rating = int(response.self_rating)
    else:
        rating = ReviewLog.Rating.GOOD if correct else ReviewLog.Rating.AGAIN
    try:
        first = schedule_start(
            learner=learner,
            item=item,
            card_token=card_token or uuid.uuid4(),
            rating=rating,
            now=now,
            duration_ms=duration_ms,
            source=ReviewLog.Source.LESSON,
            answer_value=response.value if problem is not None else None,
            expected_value=problem.solution.answer if problem is not None else None,
        )
    except StaleCard:
        # Already scheduled (another tab, an earlier visit): feedback only.
        log = ReviewLog.objects.filter(learner=learner, item=item).order_by("reviewed_at", "id")[0]
        return AnswerResult(item, correct, rating, log, False, response.choice_keys, problem)
    return AnswerResult(
        item, correct, rating, first.log, first.created, response.choice_keys, problem
    )
