"""Calculated items in a real browser, at desktop and phone width: answered in the lesson's panel
and in the review session with the keyboard, the worked solution shown with the learner's
numbers, then graded; undo brings back the same problem."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from accounts.models import User
from courses.models import Course
from home.services.content_import import course_import
from quizzes.models import QuizItem, ReviewLog
from tests.conftest import ARTIFACTS, login_in_browser
from tests.factories import EnrollmentFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COURSE = Path(__file__).resolve().parents[1] / "quizzes" / "calculated_course"


def enrolled(learner: User) -> Course:
    course = course_import(folder=COURSE).course
    EnrollmentFactory(course=course, user=learner)
    return course


def free_memory_by_hand(prompt: str) -> float:
    """GPU memory − weights − overhead, from the numbers the prompt shows."""
    memory, weights, overhead = (float(n) for n in re.findall(r"\d+(?:\.\d+)?", prompt))
    return memory - weights - overhead


@pytest.mark.parametrize("width", [1280, 375])
def test_answer_a_calculated_item_in_the_lesson(page, learner, width) -> None:  # type: ignore[no-untyped-def]
    """The prompt shows drawn numbers that a reload keeps; a number typed and sent with Enter
    gets the verdict, the worked solution with those numbers and the input that mattered most."""
    enrolled(learner)
    item = QuizItem.objects.get(key="free-memory")
    login_in_browser(page, learner.email)
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(item.lesson.get_absolute_url())
    block = page.locator(f"#item-{item.pk}")
    prompt = block.get_by_test_id("cy-prompt").inner_text()
    assert "{" not in prompt
    page.reload()
    assert block.get_by_test_id("cy-prompt").inner_text() == prompt

    answer = free_memory_by_hand(prompt)
    block.get_by_label("Your answer (GB)").focus()
    page.keyboard.type(f"{answer:g}")
    page.keyboard.press("Enter")
    feedback = page.locator(f"#item-{item.pk} [data-testid=cy-feedback]")
    expect(feedback).to_contain_text("Within tolerance.")
    solution = feedback.get_by_test_id("worked-solution")
    expect(solution).to_contain_text(f"= {answer:g}.0 GB")
    expect(solution.get_by_test_id("most-sensitive")).to_contain_text("mattered most")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"calculated_lesson_{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    log = ReviewLog.objects.get()
    assert log.rating == ReviewLog.Rating.GOOD and log.answer_value == pytest.approx(answer)
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("width", [1280, 375])
def test_answer_a_calculated_card_in_the_review_session(page, learner, width) -> None:  # type: ignore[no-untyped-def]
    """A new calculated card: type the number, Enter checks it and shows the worked solution,
    the grade buttons preview their intervals, 3 grades Good; undo brings back the same draw."""
    enrolled(learner)
    item = QuizItem.objects.get(key="free-memory")
    login_in_browser(page, learner.email)
    page.set_viewport_size({"width": width, "height": 800})
    page.goto("/review/")
    prompt = page.locator("#card-prompt").inner_text()
    assert "GB GPU holds" in prompt and "{" not in prompt
    answer = free_memory_by_hand(prompt)
    page.get_by_test_id("calculated-value").focus()
    page.keyboard.type(f"{answer * 2:g}")  # a wrong number: outside the tolerance
    page.keyboard.press("Enter")
    expect(page.locator("#review-answer")).to_be_focused()
    expect(page.get_by_test_id("calculated-verdict")).to_contain_text("Outside the tolerance.")
    expect(page.get_by_test_id("calculated-answer")).to_have_text(f"{answer:g} GB")
    expect(page.get_by_test_id("worked-solution")).to_contain_text("Available for cache")
    assert page.get_by_test_id("grade-3").locator(".grade-interval").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"calculated_session_{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.keyboard.press("3")
    # The grade is taken (the next card may be this one again, drawn afresh, and a small range
    # can draw the same numbers: the unit tests hold the draws themselves).
    expect(page.get_by_test_id("undo")).to_be_visible()
    log = ReviewLog.objects.get(item=item)
    assert log.rating == ReviewLog.Rating.GOOD
    assert log.answer_value == pytest.approx(answer * 2)
    assert log.expected_value == pytest.approx(answer)

    page.get_by_test_id("undo").click()
    expect(page.locator("#card-prompt")).to_have_text(prompt)
    # The notice names the problem as graded, with its numbers.
    expect(page.get_by_role("alert")).to_contain_text(" ".join(prompt.split()[:8]))
    assert not page.console_errors, page.console_errors
