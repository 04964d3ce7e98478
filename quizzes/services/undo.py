"""Undoing the latest grade of today, and bringing a suspended leech back into the reviews."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db import transaction

from accounts.local_day import day_bounds_at
from accounts.models import User
from quizzes.models import RecallSchedule, ReviewLog, ReviewUndo
from quizzes.selectors.cards import schedule_locked_for
from quizzes.services import fsrs_adapter


class NothingToUndo(Exception):
    """The learner has no grade left today that can be undone."""


class UndoRaced(Exception):
    """Another undo (a second tab, a double click) undid this grade first."""


def review_undo(*, learner: User, now: datetime) -> ReviewLog:
    """Undo the learner's latest session grade of today (their local day) not yet undone: the
    schedule returns to its state before it. Undoing an item's first grade returns the item to
    new (its schedule stays, since its logs point to it, with no reps: the queue offers it as new).

    The review log stays as it was written; a ReviewUndo row records the undo. Raises
    NothingToUndo when no grade of today is left, UndoRaced when a concurrent undo took it.
    """
    day_start, _ = day_bounds_at(
        now=now, time_zone=learner.tz, day_start_hour=learner.day_start_hour
    )
    with transaction.atomic():
        # Undo belongs to the review session: a lesson answer is not a session grade.
        log = (
            ReviewLog.objects.filter(learner=learner, undo__isnull=True, reviewed_at__gte=day_start)
            .exclude(source=ReviewLog.Source.LESSON)
            .order_by("-reviewed_at", "-id")
            .first()
        )
        if log is None:
            raise NothingToUndo("no grade of today to undo")
        schedule = schedule_locked_for(learner=learner, pk=log.schedule_id)
        # Read under the schedule's lock: a concurrent undo of this grade has committed by now.
        if ReviewUndo.objects.filter(log=log).exists():
            raise UndoRaced(f"review {log.pk} was undone by another request")
        before = log.state_before
        card = fsrs_adapter.card_from_state_json(before, card_id=schedule.pk)
        fsrs_adapter.card_to_schedule(card, schedule)
        schedule.reps = before["reps"]
        schedule.lapses = before["lapses"]
        schedule.card_token = uuid.uuid4()
        schedule.save()
        ReviewUndo.objects.create(log=log, learner=learner, undone_at=fsrs_adapter.to_utc(now))
        return log


def schedule_unsuspend(*, learner: User, item_id: int) -> RecallSchedule:
    """Bring a suspended leech back into the learner's reviews (raises DoesNotExist for an item
    the learner has no schedule for). Its lapses stay counted."""
    with transaction.atomic():
        schedule = schedule_locked_for(learner=learner, item_id=item_id)
        schedule.suspended = False
        schedule.card_token = uuid.uuid4()
        schedule.save(update_fields=["suspended", "card_token", "updated_at"])
        return schedule
