"""The learner's day (accounts.local_day): one definition of "today" for the queue, stats and reminders."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, date, datetime, timedelta

import pytest

from accounts.local_day import day_bounds_at, learning_date, learning_day_bounds


@pytest.mark.parametrize(
    ("moment", "zone", "hour", "expected"),
    [
        # 02:00 Tuesday in Berlin (CEST) with a 04:00 start is still Monday.
        (datetime(2026, 6, 9, 0, 0, tzinfo=UTC), "Europe/Berlin", 4, date(2026, 6, 8)),
        # 04:00 exactly starts Tuesday.
        (datetime(2026, 6, 9, 2, 0, tzinfo=UTC), "Europe/Berlin", 4, date(2026, 6, 9)),
        # Midnight start: the plain local date, behind UTC in New York.
        (datetime(2026, 6, 10, 3, 0, tzinfo=UTC), "America/New_York", 0, date(2026, 6, 9)),
        # Ahead of UTC by 14 hours.
        (datetime(2026, 6, 9, 16, 0, tzinfo=UTC), "Pacific/Kiritimati", 4, date(2026, 6, 10)),
    ],
)
def test_learning_date(moment, zone, hour, expected):
    """The date is the wall-clock date in the learner's zone, moved back by the start hour."""
    assert learning_date(moment=moment, time_zone=zone, day_start_hour=hour) == expected
    # A ZoneInfo works as well as its name.
    tz = zoneinfo.ZoneInfo(zone)
    assert learning_date(moment=moment, time_zone=tz, day_start_hour=hour) == expected


def test_naive_moment_is_refused():
    """A naive datetime has no place on anyone's clock: it is an error, not a guess."""
    with pytest.raises(ValueError, match="aware"):
        learning_date(moment=datetime(2026, 6, 9, 12, 0), time_zone="UTC", day_start_hour=4)


def test_bounds_on_daylight_saving_day_are_23_hours():
    """Berlin springs forward at 02:00 on 29 March 2026: with a 04:00 start, the learning day of
    28 March holds the lost hour and is 23 hours long; the next starts at 04:00 CEST."""
    start, end = learning_day_bounds(
        day=date(2026, 3, 28), time_zone="Europe/Berlin", day_start_hour=4
    )
    assert start == datetime(2026, 3, 28, 3, 0, tzinfo=UTC)  # 04:00 CET
    assert end == datetime(2026, 3, 29, 2, 0, tzinfo=UTC)  # 04:00 CEST
    assert end.astimezone(UTC) - start.astimezone(UTC) == timedelta(hours=23)


@pytest.mark.parametrize("hour", [0, 4, 23])
def test_day_bounds_contain_now_and_agree_with_learning_date(hour):
    """Every moment lies inside the bounds of its own learning day, across a whole year."""
    moment = datetime(2026, 1, 1, 0, 30, tzinfo=UTC)
    for _ in range(0, 365 * 24, 7):
        moment += timedelta(hours=7)
        start, end = day_bounds_at(now=moment, time_zone="Europe/Berlin", day_start_hour=hour)
        assert start <= moment < end
        assert start.date() == learning_date(
            moment=moment, time_zone="Europe/Berlin", day_start_hour=hour
        )
