"""The learner's day: it starts at `day_start_hour` in their time zone (DESIGN: "today").

This is the one place that turns a moment into a learner's local day. Everything that needs
"today" for a learner (the due queue's daily limits, statistics, the reminder scan) calls
these functions; the SQL form (`local_date_expression`) groups rows by the same day in the
database.

02:00 on Tuesday with a 04:00 day start is still Monday's learning day.
"""

from __future__ import annotations

import zoneinfo
from datetime import date, datetime, time, timedelta, tzinfo

from django.db.models import DateTimeField, ExpressionWrapper, F, Value
from django.db.models.functions import TruncDate


def _zone(time_zone: tzinfo | str) -> tzinfo:
    return zoneinfo.ZoneInfo(time_zone) if isinstance(time_zone, str) else time_zone


def learning_date(*, moment: datetime, time_zone: tzinfo | str, day_start_hour: int) -> date:
    """The local date of the learning day `moment` (aware) falls in.

    The wall-clock time in `time_zone`, moved back by `day_start_hour` hours: before that hour
    it is still the previous day. Wall-clock arithmetic keeps daylight-saving days right.
    """
    if moment.tzinfo is None:
        raise ValueError("learning_date needs an aware datetime")
    local = moment.astimezone(_zone(time_zone)).replace(tzinfo=None)
    return (local - timedelta(hours=day_start_hour)).date()


def learning_day_bounds(
    *, day: date, time_zone: tzinfo | str, day_start_hour: int
) -> tuple[datetime, datetime]:
    """Start and end (aware, in `time_zone`) of the learning day dated `day`."""
    tz = _zone(time_zone)
    start = datetime.combine(day, time(day_start_hour), tzinfo=tz)
    end = datetime.combine(day + timedelta(days=1), time(day_start_hour), tzinfo=tz)
    return start, end


def day_bounds_at(
    *, now: datetime, time_zone: tzinfo | str, day_start_hour: int
) -> tuple[datetime, datetime]:
    """Start and end (aware) of the learning day that `now` falls in."""
    tz = _zone(time_zone)
    day = learning_date(moment=now, time_zone=tz, day_start_hour=day_start_hour)
    return learning_day_bounds(day=day, time_zone=tz, day_start_hour=day_start_hour)


def local_date_expression(
    field_name: str, *, time_zone: tzinfo | str, day_start_hour: int
) -> TruncDate:
    """SQL: the learning-day date of a datetime column (shift back by the start hour, then take
    the local date), to group rows by the learner's day in the database."""
    shifted = ExpressionWrapper(
        F(field_name) - Value(timedelta(hours=day_start_hour)),
        output_field=DateTimeField(),
    )
    return TruncDate(shifted, tzinfo=_zone(time_zone))
