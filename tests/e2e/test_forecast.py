"""The learner's week in a real browser, on a desktop and a phone: the 30-day forecast with and
without the load balancer (charts and their table, easy days marked), and a break set from the
keyboard. axe-core and the HTML checker run on every page (tests/conftest.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.local_day import learning_date
from accounts.models import User
from quizzes.models import RecallSchedule
from tests.conftest import login_in_browser
from tests.factories import QuizItemFactory, RecallScheduleFactory
from tests.quizzes.factories import course_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1280, 375]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_forecast_and_a_break(page, learner: User, width: int) -> None:  # type: ignore[no-untyped-def]
    learner.easy_days = "nnnnnrm"
    learner.save()
    c = course_with_items(learner=learner)
    now = timezone.now()
    for offset in range(2, 12):
        RecallScheduleFactory(
            learner=learner,
            item=QuizItemFactory(lesson=c.lesson),
            state=RecallSchedule.State.REVIEW,
            stability=20.0,
            difficulty=5.0,
            last_review=now + timedelta(days=offset - 20),
            due=now + timedelta(days=offset),
            reps=3,
        )
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learner.email)
    page.goto("/review/week/")
    page.get_by_role("heading", name="Forecast").wait_for()
    assert page.locator("svg.chart").count() == 2
    table = page.get_by_test_id("forecast-table")
    assert table.locator("tbody tr").count() == 30
    assert table.get_by_text("Minimum").count() >= 4
    assert table.get_by_text("Reduced").count() >= 4
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    today = learning_date(moment=now, time_zone="UTC", day_start_hour=learner.day_start_hour)
    first, last = today + timedelta(days=4), today + timedelta(days=6)
    page.get_by_label("First day away").fill(first.isoformat())
    page.get_by_label("Last day away").fill(last.isoformat())
    page.get_by_role("button", name="Save my break").focus()
    page.keyboard.press("Enter")
    page.get_by_text("Break saved").wait_for()
    assert table.get_by_text("away").count() == 3
    learner.refresh_from_db()
    assert (learner.break_from, learner.break_to) == (first, last)
    assert not page.console_errors, page.console_errors
