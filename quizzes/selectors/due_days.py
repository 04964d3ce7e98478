"""How many reviews a learner has due on each of their coming learning days, across all courses
(what the load balancer weighs and the forecast shows)."""

from __future__ import annotations

from datetime import date, datetime

from django.db.models import Count

from accounts.local_day import learning_date, learning_day_bounds, local_date_expression
from accounts.models import User
from quizzes.models import RecallSchedule


def due_per_day(*, learner: User, today: date, first: int, last: int) -> dict[int, int]:
    """{days after `today`: reviews due that learning day} for days `first`..`last` (inclusive),
    suspended items and items undone back to new left out. One grouped query."""
    start, _end = learning_day_bounds(
        day=date.fromordinal(today.toordinal() + first),
        time_zone=learner.time_zone,
        day_start_hour=learner.day_start_hour,
    )
    _start, end = learning_day_bounds(
        day=date.fromordinal(today.toordinal() + last),
        time_zone=learner.time_zone,
        day_start_hour=learner.day_start_hour,
    )
    rows = (
        RecallSchedule.objects.filter(
            learner=learner, suspended=False, reps__gt=0, due__gte=start, due__lt=end
        )
        .annotate(
            day=local_date_expression(
                "due", time_zone=learner.time_zone, day_start_hour=learner.day_start_hour
            )
        )
        .values("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    return {day.toordinal() - today.toordinal(): n for day, n in rows}


def learner_today(*, learner: User, now: datetime) -> date:
    return learning_date(
        moment=now, time_zone=learner.time_zone, day_start_hour=learner.day_start_hour
    )
