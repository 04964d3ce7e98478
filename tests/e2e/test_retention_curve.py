"""A learner picks their retention from the workload curve in a real browser, and the next
intervals change: on the retention page and on the review session's grade buttons."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from quizzes.services.review import schedule_start
from tests.conftest import login_in_browser
from tests.quizzes.factories import course_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def good_button_interval(page) -> str:  # type: ignore[no-untyped-def]
    page.goto("/review/")
    page.keyboard.press("Space")
    button = page.get_by_test_id("grade-3")
    button.wait_for()
    return str(button.locator(".grade-interval").inner_text())


def choose(page, percent: int) -> None:  # type: ignore[no-untyped-def]
    # From the keyboard: focus the curve's choice, select it, submit.
    page.get_by_label(re.compile(rf"^\s*{percent}% —")).focus()
    page.keyboard.press("Space")
    page.get_by_role("button", name="Use this retention").press("Enter")
    expect(page.get_by_test_id("retention-now")).to_contain_text(f"0.{percent}")


def test_a_learner_picks_a_retention_from_the_curve_and_intervals_change(page, learner) -> None:  # type: ignore[no-untyped-def]
    c = course_with_items(learner=learner, daily_new_limit=0, learning_steps_minutes=[])
    schedule_start(
        learner=learner,
        item=c.recall,
        card_token=uuid.uuid4(),
        rating=3,
        now=timezone.now() - timedelta(days=30),
    )
    login_in_browser(page, learner.email)
    at_course = good_button_interval(page)

    page.goto(f"/review/retention/{c.course.slug}/")
    curve = page.get_by_test_id("retention-curve")
    expect(curve.locator("svg")).to_be_visible()
    assert curve.get_by_test_id("curve-table").locator("tbody tr").count() == 10
    intervals = page.get_by_test_id("next-intervals")
    before = intervals.inner_text()

    choose(page, 80)
    expect(intervals).not_to_have_text(before)
    lower = intervals.inner_text()
    choose(page, 97)
    expect(intervals).not_to_have_text(lower)
    # Higher retention, shorter intervals: the first of the streak is no longer than at 80 %.
    assert intervals.inner_text() != before
    at_97 = good_button_interval(page)
    assert at_97 != at_course

    page.goto(f"/review/retention/{c.course.slug}/")
    choose(page, 80)
    assert good_button_interval(page) not in (at_course, at_97)
    assert not page.console_errors, page.console_errors


def test_the_curve_page_fits_a_phone(page, learner) -> None:  # type: ignore[no-untyped-def]
    c = course_with_items(learner=learner)
    page.set_viewport_size({"width": 375, "height": 800})
    login_in_browser(page, learner.email)
    page.goto(f"/review/retention/{c.course.slug}/")
    page.get_by_test_id("retention-curve").wait_for()
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
