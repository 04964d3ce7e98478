"""An instructor logs in and lands on their home, on a desktop and on a phone: the waiting plan is
the first thing to act on, reachable from the keyboard, and nothing overflows sideways."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.conftest import login_in_browser
from tests.factories import UserFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1100, 375])
def test_instructor_lands_on_plans_waiting_to_be_graded(page, instructor, width: int) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs and TPUs")
    learner = UserFactory(display_name="Wendy Waiting", email="wendy@example.com")
    submission = submission_for(learner, course, now=timezone.now() - timedelta(days=2))
    page.set_viewport_size({"width": width, "height": 800})

    login_in_browser(page, instructor.email)

    waiting = page.get_by_role("region", name="Plans waiting to be graded")
    assert waiting.is_visible()
    assert "wendy@example.com" in waiting.inner_text()
    assert "waiting 2\xa0days" in waiting.inner_text()
    assert page.get_by_text("Nothing is due").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    link = waiting.get_by_role("link", name="Wendy Waiting, version 1")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/capstone/grading/{submission.pk}/")


@pytest.mark.parametrize("width", [1280, 375])
def test_grading_queue_tells_two_learners_of_the_same_name_apart(
    page, instructor, width: int
) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs and TPUs")
    for email in ("sam.lee@example.com", "sam.lee@university.example"):
        submission_for(UserFactory(display_name="Sam Lee", email=email), course)
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, instructor.email)
    page.goto("/capstone/grading/")

    rows = page.get_by_test_id("grading-queue").get_by_role("row").filter(has_text="Sam Lee")
    assert rows.count() == 2
    emails = {rows.nth(i).get_by_test_id("learner-email").inner_text() for i in range(2)}
    assert emails == {"sam.lee@example.com", "sam.lee@university.example"}
    assert all(rows.nth(i).get_by_text("@").first.is_visible() for i in range(2))
    assert page.evaluate("document.documentElement.scrollWidth") <= width
