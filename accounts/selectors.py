"""Reads for accounts: what a learner's preferences mean today."""

from __future__ import annotations

from datetime import date, datetime

from accounts.local_day import learning_date
from accounts.models import User


def reminders_paused_through(*, user: User, now: datetime) -> date | None:
    """The last learning day without a digest while a pause lasts; None when none is running.

    The reminder scan skips a learner whose pause date is on or after the local day's date, so a
    pause that ended yesterday is over even though the column still holds its date.
    """
    until = user.reminders_paused_until
    if until is None:
        return None
    today = learning_date(moment=now, time_zone=user.time_zone, day_start_hour=user.day_start_hour)
    return until if until >= today else None
