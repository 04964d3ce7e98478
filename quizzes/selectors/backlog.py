"""Backlog recovery: when a course has more reviews due than its daily limit, the review that
is most at risk comes first (lowest retrievability), as FSRS's own advice for a backlog is."""

from __future__ import annotations

from datetime import datetime

from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.cards import QueueCard, card_for

# The candidates read to pick from: a backlog beyond this is worked through this many at a time.
BACKLOG_WINDOW = 2_000


def lowest_recall_card_for(
    *, learner: User, now: datetime, day_end: datetime, courses: list[int]
) -> QueueCard | None:
    """The due review of `courses` with the lowest retrievability now. FSRS's retrievability
    falls as elapsed time ÷ stability grows (R = (1 + factor·t/S)^−decay, for every decay), so
    the largest t/S is the lowest recall. Two queries (the candidates, the card)."""
    rows = RecallSchedule.objects.filter(
        learner=learner,
        course_id__in=courses,
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
    *, learner: User, now: datetime, day_end: datetime, backlog: list[int], card: QueueCard | None
) -> QueueCard | None:
    """`card`, or, when it is a review of a course in `backlog`, that course's review with the
    lowest retrievability (the queue and the carried counts choose the same way)."""
    schedule = card.schedule if card is not None else None
    if schedule is None or schedule.course_id not in backlog:
        return card
    if schedule.state != RecallSchedule.State.REVIEW:
        return card
    found = lowest_recall_card_for(
        learner=learner, now=now, day_end=day_end, courses=[schedule.course_id]
    )
    return found or card
