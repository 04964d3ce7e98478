"""Check-yourself items on a lesson page in a real browser, then the statistics page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from quizzes.models import RecallSchedule, ReviewLog
from tests.conftest import login_in_browser
from tests.quizzes.factories import course_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_answer_the_lessons_items_then_see_statistics(page, learner) -> None:  # type: ignore[no-untyped-def]
    """Wrong multiple choice shows every choice's reason; numeric and free recall are answered in
    place; each first answer creates a schedule; the statistics page draws its charts."""
    c = course_with_items(learner=learner)
    login_in_browser(page, learner.email)
    page.goto(c.lesson.get_absolute_url())

    mc = page.locator(f"#item-{c.mc.pk}")
    # Keyboard only: submitting with nothing chosen moves focus to the error, which names it.
    mc.get_by_role("button", name="Check answer").focus()
    page.keyboard.press("Enter")
    error = page.locator(f"#item-{c.mc.pk} .error")
    expect(error).to_have_text("Choose at least one answer.")
    expect(error).to_be_focused()
    mc.get_by_label("HBM").check()
    mc.get_by_role("button", name="Check answer").click()
    feedback = page.locator(f"#item-{c.mc.pk} [data-testid=cy-feedback]")
    expect(feedback).to_contain_text("Not quite")
    expect(feedback).to_be_focused()
    expect(feedback).to_contain_text("A rate, not memory.")
    expect(feedback).to_contain_text(c.mc.explanation)

    numeric = page.locator(f"#item-{c.numeric.pk}")
    numeric.get_by_label("Your answer (users)").fill("11")
    numeric.get_by_role("button", name="Check answer").click()
    expect(page.locator(f"#item-{c.numeric.pk} [data-testid=cy-feedback]")).to_contain_text(
        "Correct."
    )

    recall = page.locator(f"#item-{c.recall.pk}")
    recall.get_by_label("Answer from memory").fill("Something I remember")
    recall.get_by_role("button", name="Show the model answer").click()
    page.locator(f"#item-{c.recall.pk}").get_by_role("button", name="Good").click()
    expect(page.locator(f"#item-{c.recall.pk} [data-testid=cy-feedback]")).to_contain_text(
        "You graded your recall: Good"
    )

    assert RecallSchedule.objects.filter(learner=learner).count() == 3
    ratings = dict(ReviewLog.objects.values_list("item_id", "rating"))
    assert ratings == {c.mc.pk: 1, c.numeric.pk: 3, c.recall.pk: 3}

    page.goto("/review/stats/")
    expect(page.get_by_role("heading", name="Your statistics")).to_be_visible()
    assert page.locator("svg.chart").count() == 2
    expect(page.get_by_test_id("stat-streak")).to_have_text("1")
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("width", [1280, 375])
def test_free_recall_answer_stays_beside_the_model_answer(page, learner, width) -> None:  # type: ignore[no-untyped-def]
    """After "Show the model answer" the learner's own answer is still on screen next to it,
    and a wrong answer's return time never reads "0 minutes"."""
    c = course_with_items(learner=learner, learning_steps_minutes=[1, 10])
    login_in_browser(page, learner.email)
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(c.lesson.get_absolute_url())
    recall = page.locator(f"#item-{c.recall.pk}")
    recall.get_by_label("Answer from memory").fill("Decode is bound by HBM bandwidth")
    recall.get_by_role("button", name="Show the model answer").click()
    item = page.locator(f"#item-{c.recall.pk}")
    expect(item.get_by_test_id("own-answer")).to_contain_text("Decode is bound by HBM bandwidth")
    expect(item).to_contain_text(c.recall.model_answer)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    item.get_by_role("button", name="Again").click()
    feedback = page.locator(f"#item-{c.recall.pk} [data-testid=cy-feedback]")
    expect(feedback).to_contain_text("Decode is bound by HBM bandwidth")
    expect(feedback).to_contain_text("it comes back in")
    assert "0 minutes" not in feedback.inner_text()
    assert not page.console_errors, page.console_errors
