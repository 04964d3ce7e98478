"""Which calculated problem a learner is shown: the draw for their current review of an item."""

from __future__ import annotations

from accounts.models import User
from quizzes.calculated import Problem, answer_parse, problem_for
from quizzes.models import QuizItem, RecallSchedule
from quizzes.selectors.cards import QueueCard, enrolled_item_for


class AnswerInvalid(ValueError):
    """The typed answer is not a bounded number."""


def review_number(*, learner: User, item: QuizItem) -> int:
    """The learner's reviews of the item so far (its schedule's reps; 0 before any). One query."""
    reps = (
        RecallSchedule.objects.filter(learner=learner, item=item)
        .values_list("reps", flat=True)
        .first()
    )
    return reps or 0


def item_problem(*, learner_id: int, item: QuizItem, review: int) -> Problem | None:
    """The item's problem for this learner at this review; None unless it is calculated."""
    if item.kind != QuizItem.Kind.CALCULATED:
        return None
    return problem_for(item, learner_id=learner_id, review=review)


def card_problem(*, card: QueueCard, learner_id: int) -> Problem | None:
    """A review card's problem: a scheduled card's at its reps, a new item's first (no query)."""
    review = card.schedule.reps if card.schedule is not None else 0
    return item_problem(learner_id=learner_id, item=card.item, review=review)


def graded_answer(
    *, learner: User, text: str, schedule_id: int | None = None, item_id: int | None = None
) -> tuple[float | None, float | None]:
    """The typed number and the answer of the problem the learner was shown, drawn again on the
    server (never read from the form), for the grade's log; (None, None) when no number was
    typed or the card is not calculated. One or two queries; raises AnswerInvalid,
    RecallSchedule.DoesNotExist or QuizItem.DoesNotExist."""
    if not text.strip():
        return None, None
    value = answer_parse(text)
    if value is None:
        raise AnswerInvalid("enter a number, e.g. 11.5")
    if schedule_id is not None:
        schedule = RecallSchedule.objects.select_related("item").get(
            pk=schedule_id, learner=learner
        )
        item, review = schedule.item, schedule.reps
    elif item_id is not None:
        item = enrolled_item_for(learner=learner, item_id=item_id)
        review = review_number(learner=learner, item=item)
    else:
        return None, None
    problem = item_problem(learner_id=learner.pk, item=item, review=review)
    if problem is None:
        return None, None
    return value, problem.solution.answer
