"""What each grade button would do: the next interval for Again, Hard, Good and Easy."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from accounts.models import User
from quizzes.models import ReviewLog
from quizzes.selectors.queue import QueueCard
from quizzes.services import fsrs_adapter
from quizzes.services.easy_days import learner_week


@dataclass(frozen=True)
class GradePreview:
    rating: int
    label: str
    interval: str


def scheduling_for_card(*, card: QueueCard, learner_id: int | None) -> fsrs_adapter.Scheduling:
    """What schedules this card: its schedule's owner's parameters and retention in its course
    (for a new card, `learner_id`'s). One query."""
    owner = card.schedule.learner_id if card.schedule is not None else learner_id
    return fsrs_adapter.scheduling_for(course=card.item.lesson.module.course, learner_id=owner)


def grade_previews(
    *,
    card: QueueCard,
    now: datetime,
    learner_id: int | None = None,
    scheduling: fsrs_adapter.Scheduling | None = None,
    learner: User | None = None,
) -> list[GradePreview]:
    """The same scheduler the grade will use (the learner's parameters and retention), run once
    per rating. One query (the scheduling) unless `scheduling` is given; `learner_id` is needed
    only for a new card. The load balancer reads the owner's week only for a fuzz range: its due
    counts (one grouped query) and, unless `learner` is the owner, the owner (one query)."""
    course = card.item.lesson.module.course
    owner = card.schedule.learner_id if card.schedule is not None else learner_id
    if scheduling is None:
        scheduling = scheduling_for_card(card=card, learner_id=learner_id)
    reps = card.schedule.reps if card.schedule is not None else 0
    seed = fsrs_adapter.fuzz_seed(learner_id=owner, item_id=card.item.pk, reps=reps)
    # The grade's load balancer, over the same learner's week (read only for a fuzz range).
    known = learner if learner is not None and learner.pk == owner else None
    week = learner_week(learner=known or owner, now=now) if owner is not None else None
    scheduler = fsrs_adapter.scheduler_for(course, scheduling, seed=seed, week=week)
    if card.schedule is not None:
        fsrs_card = fsrs_adapter.card_from_schedule(card.schedule)
    else:
        fsrs_card = fsrs_adapter.new_card(card_id=uuid.uuid4().int % 2**31, now=now)
    intervals = fsrs_adapter.next_intervals(scheduler=scheduler, card=fsrs_card, now=now)
    return [
        GradePreview(
            rating=rating,
            label=str(ReviewLog.Rating(rating).label),
            interval=fsrs_adapter.interval_label(intervals[rating]),
        )
        for rating in ReviewLog.Rating.values
    ]
