"""Answering a lesson's check-yourself items: check the answer, start the recall schedule."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from accounts.models import User
from quizzes.calculated import Problem, draw_seed, draw_values, problem_for
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
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
    # True when the number was not checked: the problem was the next review's draw, whose
    # answer only that review may show.
    withheld: bool = False


# Review numbers below zero seed the lesson's practice draws: no review ever uses them. Each
# review number has this many tries at numbers other than the review's.
PRACTICE_DRAWS = 8


def _draw(item: QuizItem, *, learner_id: int, review: int) -> dict[str, object]:
    """The values drawn for a review, without working the problem."""
    seed = draw_seed(learner_id=learner_id, item_id=item.pk, review=review)
    return draw_values(item.calculation["variables"], seed)


def lesson_problem(*, learner_id: int, item: QuizItem, reps: int | None) -> Problem | None:
    """The calculated problem a lesson's check-yourself block shows and checks; None for other
    kinds. Before the first answer (`reps` None: no schedule) it is the first review's draw, and
    answering it starts the schedule. Once scheduled, the lesson practises on a draw of its own,
    never the numbers of the next review (reps), whose answer that review will ask for; also None
    when the item's variables allow no other draw."""
    if item.kind != QuizItem.Kind.CALCULATED:
        return None
    if reps is None:
        return problem_for(item, learner_id=learner_id, review=0)
    upcoming = _draw(item, learner_id=learner_id, review=reps)
    for attempt in range(PRACTICE_DRAWS):
        practice = -1 - reps * PRACTICE_DRAWS - attempt
        if _draw(item, learner_id=learner_id, review=practice) != upcoming:
            return problem_for(item, learner_id=learner_id, review=practice)
    return None


def _schedule_reps(*, learner: User, item: QuizItem) -> int | None:
    """The reviews of the learner's schedule of the item; None before the first answer."""
    return (
        RecallSchedule.objects.filter(learner=learner, item=item)
        .values_list("reps", flat=True)
        .first()
    )


def lesson_problem_for(*, learner: User, item: QuizItem) -> Problem | None:
    """lesson_problem at the learner's schedule of the item (one query for a calculated item)."""
    if item.kind != QuizItem.Kind.CALCULATED:
        return None
    reps = _schedule_reps(learner=learner, item=item)
    return lesson_problem(learner_id=learner.pk, item=item, reps=reps)


def _is_next_review_draw(*, learner: User, item: QuizItem, problem: Problem) -> bool:
    reps = _schedule_reps(learner=learner, item=item)
    return reps is not None and problem.values == _draw(item, learner_id=learner.pk, review=reps)


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
    schedule to the review session, so practising in the lesson cannot inflate intervals; it
    never checks or shows the next review's draw (lesson_problem gives the lesson another).
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
            choice_keys=sorted(response.choice_keys)
            if item.kind == QuizItem.Kind.MULTIPLE_CHOICE
            else None,
        )
    except StaleCard:
        # Already scheduled (another tab, an earlier visit): feedback only, and none at all for
        # the next review's numbers (a lesson page drawn before the schedule moved).
        log = ReviewLog.objects.filter(learner=learner, item=item).order_by("reviewed_at", "id")[0]
        if problem is not None and _is_next_review_draw(
            learner=learner, item=item, problem=problem
        ):
            return AnswerResult(item, None, 0, log, False, response.choice_keys, withheld=True)
        return AnswerResult(item, correct, rating, log, False, response.choice_keys, problem)
    return AnswerResult(
        item, correct, rating, first.log, first.created, response.choice_keys, problem
    )
