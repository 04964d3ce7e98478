"""The review session in a real browser: three cards reviewed with the keyboard alone."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services.review import schedule_start
from tests.conftest import login_in_browser
from tests.factories import QuizItemFactory
from tests.quizzes.factories import course_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _three_due_cards(learner):  # type: ignore[no-untyped-def]
    c = course_with_items(learner=learner, daily_new_limit=0)
    QuizItemFactory(lesson=c.lesson, prompt="A fourth prompt, never answered?")
    past = timezone.now() - timedelta(days=20)
    for item in (c.mc, c.numeric, c.recall):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=3, now=past)
    return c


def test_three_cards_with_the_keyboard_alone(page, learner) -> None:  # type: ignore[no-untyped-def]
    """Space reveals, digits grade; the due count falls 3 → 2 → 1 → 0 and the empty state shows."""
    _three_due_cards(learner)
    login_in_browser(page, learner.email)
    page.goto("/review/")
    count = page.get_by_test_id("due-count")
    assert count.inner_text() == "3"
    for expected_left, key in ((2, "1"), (1, "3"), (0, "4")):
        prompt = page.locator("#card-prompt").inner_text()
        page.keyboard.press("Space")
        page.get_by_test_id(f"grade-{key}").wait_for()
        # Focus lands on the answer, with the grade buttons right after it.
        expect(page.locator("#review-answer")).to_be_focused()
        # The button shows the next interval before choosing.
        assert page.get_by_test_id(f"grade-{key}").locator(".grade-interval").inner_text()
        page.keyboard.press(key)
        expect(count).to_have_text(str(expected_left))
        if expected_left:
            assert page.locator("#card-prompt").inner_text() != prompt
            expect(page.locator("#card")).to_be_focused()
            # Focusing the card reads the new count with it.
            expect(page.locator("#card")).to_have_accessible_description(
                re.compile(rf"\b{expected_left} left today")
            )
    assert page.get_by_test_id("review-empty").is_visible()
    assert "go to a lesson" in page.get_by_test_id("review-empty").inner_text().lower()
    ratings = list(
        ReviewLog.objects.filter(source="review").order_by("id").values_list("rating", flat=True)
    )
    assert ratings == [1, 3, 4]
    assert not page.console_errors, page.console_errors


def test_enter_reveals_and_undo_brings_the_card_back(page, learner) -> None:  # type: ignore[no-untyped-def]
    """Enter also reveals; Undo last grade restores the card and the count."""
    _three_due_cards(learner)
    login_in_browser(page, learner.email)
    page.goto("/review/")
    page.keyboard.press("Enter")
    page.get_by_test_id("grade-3").wait_for()
    page.keyboard.press("3")
    expect(page.get_by_test_id("due-count")).to_have_text("2")
    page.get_by_test_id("undo").click()
    expect(page.get_by_test_id("due-count")).to_have_text("3")
    assert RecallSchedule.objects.filter(due__lte=timezone.now()).count() == 3
    assert not page.console_errors, page.console_errors


def test_shortcuts_off_leaves_plain_buttons(page, learner) -> None:  # type: ignore[no-untyped-def]
    """With shortcuts off in preferences, keys do nothing but the buttons still work by Tab/click."""
    learner.review_shortcuts_enabled = False
    learner.save()
    _three_due_cards(learner)
    login_in_browser(page, learner.email)
    page.goto("/review/")
    page.keyboard.press("Space")
    page.wait_for_timeout(300)
    assert page.get_by_test_id("reveal").is_visible()
    page.get_by_test_id("reveal").focus()
    page.keyboard.press("Enter")
    page.get_by_test_id("grade-3").wait_for()
    page.keyboard.press("3")
    page.wait_for_timeout(300)
    assert page.get_by_test_id("due-count").inner_text() == "3"
    page.get_by_test_id("grade-3").click()
    expect(page.get_by_test_id("due-count")).to_have_text("2")


@pytest.mark.parametrize("width", [1280, 375])
def test_empty_state_says_under_a_minute_and_shows_the_card_when_due(page, learner, width) -> None:  # type: ignore[no-untyped-def]
    """Seconds before the next card can be shown the empty state says "in under a minute" (not
    "0 minutes"), and without a reload the card appears when it falls due."""
    from quizzes.selectors.queue import LEARN_AHEAD

    c = course_with_items(learner=learner, daily_new_limit=0, learning_steps_minutes=[10])
    schedule_start(
        learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=1, now=timezone.now()
    )
    login_in_browser(page, learner.email)
    page.set_viewport_size({"width": width, "height": 800})
    RecallSchedule.objects.update(due=timezone.now() + LEARN_AHEAD + timedelta(seconds=4))
    page.goto("/review/")
    empty = page.get_by_test_id("review-empty")
    expect(empty).to_contain_text("Your next card is due in under a minute")
    assert "0 minutes" not in empty.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    expect(page.get_by_test_id("review-card")).to_be_visible(timeout=15_000)
    expect(page.get_by_test_id("due-count")).to_have_text("1")
    assert not page.console_errors, page.console_errors
