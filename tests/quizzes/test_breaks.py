"""Time away: reviews due in a break move out of it, within their fuzz range and under the
daily limit; the week page sets and clears a break and refuses a bad one with a 400."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from accounts.local_day import learning_date
from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.forecast import week_forecast
from quizzes.services.breaks import BreakError, break_set, fuzz_range
from tests.factories import QuizItemFactory, RecallScheduleFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)  # a Monday


def _due_on(learner: User, lesson: object, *, day: date, interval: int) -> RecallSchedule:
    due = datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=10)
    return RecallScheduleFactory(
        learner=learner,
        item=QuizItemFactory(lesson=lesson),
        state=RecallSchedule.State.REVIEW,
        stability=float(interval),
        difficulty=5.0,
        last_review=due - timedelta(days=interval),
        due=due,
        reps=3,
    )


def _day(learner: User, schedule: RecallSchedule) -> date:
    schedule.refresh_from_db()
    return learning_date(
        moment=schedule.due, time_zone="UTC", day_start_hour=learner.day_start_hour
    )


def test_the_fuzz_range_is_fsrss() -> None:
    assert fuzz_range(2) == (2, 2)
    assert fuzz_range(3) == (2, 4)
    assert fuzz_range(20) == (17, 23)


def test_reviews_in_a_break_move_out_within_their_range_and_the_limit(learner: User) -> None:
    """Twelve reviews with 20-day intervals due mid-break (range ±3 days) and a limit of five a
    day: every one moves out of the break, none beyond its range, no day over five."""
    c = course_with_items(learner=learner, daily_review_limit=5)
    start, end = date(2026, 6, 10), date(2026, 6, 12)
    moved = [_due_on(learner, c.lesson, day=date(2026, 6, 11), interval=20) for _ in range(12)]
    result = break_set(learner=learner, start=start, end=end, now=NOW)
    days = [_day(learner, s) for s in moved]
    assert all(not start <= d <= end for d in days)
    assert all(date(2026, 6, 8) <= d <= date(2026, 6, 14) for d in days)
    assert max(days.count(d) for d in days) <= 5
    assert result.moved_before + result.moved_after == 12 and result.moved_before >= 5
    learner.refresh_from_db()
    assert (learner.break_from, learner.break_to) == (start, end)


def test_a_short_interval_moves_to_the_day_before(learner: User) -> None:
    c = course_with_items(learner=learner)
    schedule = _due_on(learner, c.lesson, day=date(2026, 6, 5), interval=2)
    break_set(learner=learner, start=date(2026, 6, 4), end=date(2026, 6, 6), now=NOW)
    assert _day(learner, schedule) == date(2026, 6, 3)


def test_reviews_outside_the_break_stay(learner: User) -> None:
    c = course_with_items(learner=learner)
    schedule = _due_on(learner, c.lesson, day=date(2026, 6, 20), interval=10)
    before = schedule.due
    break_set(learner=learner, start=date(2026, 6, 4), end=date(2026, 6, 6), now=NOW)
    schedule.refresh_from_db()
    assert schedule.due == before


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (date(2026, 6, 5), date(2026, 6, 4)),
        (date(2026, 5, 30), date(2026, 6, 4)),
        (date(2026, 6, 5), date(2026, 9, 30)),
        (date(9999, 12, 30), date(9999, 12, 31)),
    ],
)
def test_a_bad_break_is_refused(learner: User, start: date, end: date) -> None:
    with pytest.raises(BreakError):
        break_set(learner=learner, start=start, end=end, now=NOW)


@time_machine.travel(NOW, tick=False)
def test_the_week_page_sets_and_clears_a_break(client: Client, learner: User) -> None:
    client.force_login(learner)
    page = client.get(reverse("quizzes:week"))
    assert page.status_code == 200
    assert b"Nothing falls due in the next 30 days" in page.content
    bad = client.post(reverse("quizzes:week_break"), {"break_from": "2026-06-09", "break_to": "x"})
    assert bad.status_code == 400 and b"Last day away" in bad.content
    backwards = client.post(
        reverse("quizzes:week_break"), {"break_from": "2026-06-09", "break_to": "2026-06-02"}
    )
    assert backwards.status_code == 400 and b"before the first" in backwards.content
    far = client.post(
        reverse("quizzes:week_break"), {"break_from": "9999-12-30", "break_to": "9999-12-31"}
    )
    assert far.status_code == 400 and b"within 366 days" in far.content
    ok = client.post(
        reverse("quizzes:week_break"), {"break_from": "2026-06-09", "break_to": "2026-06-12"}
    )
    assert ok.status_code == 302
    learner.refresh_from_db()
    assert learner.break_from == date(2026, 6, 9)
    page = client.get(reverse("quizzes:week"))
    assert b"Normal, away" in page.content
    client.post(reverse("quizzes:week_break"), {"action": "clear"})
    learner.refresh_from_db()
    assert learner.break_from is None and learner.break_to is None


@time_machine.travel(NOW, tick=False)
def test_the_forecast_marks_easy_days_and_counts_with_and_without(
    client: Client, learner: User
) -> None:
    learner.easy_days = "nnnnnnm"
    learner.save()
    c = course_with_items(learner=learner)
    for offset in range(5):
        _due_on(learner, c.lesson, day=date(2026, 6, 3) + timedelta(days=offset), interval=20)
    client.force_login(learner)
    page = client.get(reverse("quizzes:week"))
    text = page.content.decode()
    assert "Sun 07 Jun (minimum)" in text
    assert "Minimum" in text
    days = week_forecast(learner=learner, now=NOW)
    assert len(days) == 30
    assert sum(d.balanced for d in days) == sum(d.unbalanced for d in days) == 5
