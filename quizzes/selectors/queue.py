"""Reads for quizzes and recall schedules."""

from __future__ import annotations

from datetime import datetime

from accounts.models import User
from quizzes.models import RecallSchedule


def due_count_for(*, learner: User, now: datetime) -> int:
    # Served by the (learner, due) index.
    return RecallSchedule.objects.filter(learner=learner, due__lte=now).count()
