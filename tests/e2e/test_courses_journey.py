"""A learner's path through the course in a real browser: enrol, read, complete, come back."""

from __future__ import annotations

import re

import pytest

from courses.services.progress import enrollment_create
from home.services.content_import import course_import
from tests.conftest import login_in_browser
from tests.courses.conftest import SHIPPED

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_enrol_read_complete_and_resume_at_lesson_two(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    """Enrol, read lesson 1, mark it complete (no reload), see progress move, log out and in,
    and resume at lesson 2."""
    course_import(folder=SHIPPED)
    login_in_browser(page, learner.email)

    page.get_by_role("link", name="Courses").click()
    page.get_by_role("button", name="Enroll in GPUs, TPUs, and AI Hardware").click()

    page.wait_for_url("**/courses/gpus-tpus-ai-hardware/workload-types/")
    assert page.get_by_role("heading", level=1).inner_text() == (
        "Training, batch inference and interactive serving"
    )
    assert page.get_by_text(
        "Separate training, batch inference, and interactive serving."
    ).is_visible()
    page.get_by_role("heading", name="One card per workload").scroll_into_view_if_needed()
    progress = page.get_by_test_id("course-progress-text")
    assert progress.inner_text() == "0 of 8 lessons complete"

    # A marker on window survives an htmx swap but not a page load.
    page.evaluate("window.__stillHere = true")
    page.get_by_role("button", name="Mark lesson complete").click()
    page.get_by_text("You have completed this lesson.").wait_for()
    assert progress.inner_text() == "1 of 8 lessons complete"
    assert page.get_by_role("progressbar").first.get_attribute("value") == "1"
    assert page.evaluate("window.__stillHere") is True
    assert page.get_by_role("button", name="Mark lesson complete").count() == 0

    page.get_by_role("link", name="GPUs, TPUs, and AI Hardware").first.click()
    page.wait_for_url("**/courses/gpus-tpus-ai-hardware/")
    assert page.get_by_test_id("course-progress-text").inner_text() == "1 of 8 lessons complete"
    assert page.get_by_text("1 of 1 complete").is_visible()

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(lambda url: "/dashboard/" not in url and "/courses/" not in url)
    login_in_browser(page, learner.email)
    page.goto("/courses/gpus-tpus-ai-hardware/")
    page.get_by_role("link", name="Resume where you left off").click()

    page.wait_for_url("**/courses/gpus-tpus-ai-hardware/memory-consumers/")
    assert page.get_by_role("heading", level=1).inner_text() == "What fills accelerator memory"
    assert re.search(r"Lesson 2 of 8", page.content())
    assert not page.console_errors, page.console_errors


def test_outline_and_lesson_fit_a_phone_screen(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    """At 375 px nothing but the comparison tables' own scroll boxes is wider than the screen."""
    course = course_import(folder=SHIPPED).course
    enrollment_create(course=course, user=learner)
    page.set_viewport_size({"width": 375, "height": 800})
    login_in_browser(page, learner.email)
    for path in [
        "/courses/",
        "/courses/gpus-tpus-ai-hardware/",
        "/courses/gpus-tpus-ai-hardware/practical-estimate/",
        "/courses/gpus-tpus-ai-hardware/speed-from-the-spec-sheet/",
        "/courses/gpus-tpus-ai-hardware/cost-per-useful-result/",
        "/courses/gpus-tpus-ai-hardware/three-cards-sized/",
        "/courses/gpus-tpus-ai-hardware/recall-capstone/",
        "/courses/gpus-tpus-ai-hardware/hardware-paths/",
    ]:
        page.goto(path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, (path, width)
    wrapper = page.locator(".lesson-body .table-wrap").first
    assert wrapper.evaluate("el => el.scrollWidth > el.clientWidth")  # the table scrolls inside it
    # A keyboard user reaches the table's box with Tab and scrolls it with the arrow keys.
    wrapper.focus()
    assert page.evaluate("document.activeElement.classList.contains('table-wrap')")
    for _ in range(20):  # smooth scrolling takes a few frames (CSP forbids wait_for_function)
        page.keyboard.press("ArrowRight")
        if wrapper.evaluate("el => el.scrollLeft") > 0:
            break
        page.wait_for_timeout(50)
    assert wrapper.evaluate("el => el.scrollLeft") > 0
    assert wrapper.get_attribute("role") == "region" and wrapper.get_attribute("aria-label")

    page.goto("/courses/gpus-tpus-ai-hardware/practical-estimate/")
    code = page.locator(".lesson-body pre.highlight")
    assert code.evaluate("el => el.scrollWidth > el.clientWidth")  # long lines scroll in the box
    assert code.get_attribute("tabindex") == "0"
    link = page.get_by_role("link", name="Open this estimate in the calculator")
    box = link.bounding_box()
    assert box is not None and box["height"] >= 44  # a button-sized call to action
    background = link.evaluate("el => getComputedStyle(el).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    link.click()
    page.wait_for_url(re.compile(r"/planner/\?estimate=serving&gpu_memory_gb=24"))


def test_mark_complete_by_keyboard_moves_focus_to_the_next_lesson(
    page, live_server, learner
) -> None:  # type: ignore[no-untyped-def]
    """Enter on "Mark lesson complete" completes the lesson without a reload, and focus lands on
    the next lesson's link rather than falling back to the top of the page."""
    course = course_import(folder=SHIPPED).course
    enrollment_create(course=course, user=learner)
    login_in_browser(page, learner.email)
    page.goto("/courses/gpus-tpus-ai-hardware/workload-types/")

    page.get_by_role("button", name="Mark lesson complete").focus()
    page.keyboard.press("Enter")

    page.get_by_text("You have completed this lesson.").wait_for()
    focused = page.locator(":focus")
    focused.wait_for()
    assert focused.get_attribute("rel") == "next"
    assert "Next lesson: What fills accelerator memory" in focused.inner_text()
    assert not page.console_errors, page.console_errors
