"""Physical ranges shared by more than one app: one source, imported where a number is read."""

from __future__ import annotations

from decimal import Decimal

from core.bounds import Bound

# A course's schedule settings (the importer, the instructor's settings form, the model).
DESIRED_RETENTION = Bound(minimum=Decimal("0.7"), maximum=Decimal("0.97"))
# A learning step of a day or more is a review interval, which FSRS schedules itself.
STEP_MINUTES = Bound(minimum=Decimal("0.1"), maximum=Decimal(1439))
STEP_TOO_LONG = "a step of a day or more is a review interval, which FSRS schedules itself"
MAX_STEPS = 10
MAXIMUM_INTERVAL_DAYS = Bound(minimum=Decimal(1), maximum=Decimal(36500), integer=True)
DAILY_NEW_LIMIT = Bound(maximum=Decimal(1000), allow_zero=True, integer=True)
DAILY_REVIEW_LIMIT = Bound(maximum=Decimal(10000), allow_zero=True, integer=True)
# A review grade: Again, Hard, Good, Easy.
RATING = Bound(minimum=Decimal(1), maximum=Decimal(4), integer=True)
# Any other figure in course content (an expected answer, a tolerance, points, minutes).
CONTENT_FIGURE = Bound(maximum=Decimal(10**15), allow_zero=True)
# A rubric level's points (the content importer allows the same) and any display position: a
# grade's total is a sum of points, and must fit its column however many criteria there are.
RUBRIC_POINTS = Bound(maximum=Decimal(1000), allow_zero=True, integer=True)
POSITION = Bound(maximum=Decimal(10000), allow_zero=True, integer=True)
# A lesson's estimated minutes (the content importer's range, and the admin's).
ESTIMATED_MINUTES = Bound(minimum=Decimal(1), maximum=Decimal(600), integer=True)
