"""The capstone worksheet's sticky save bar stays small: on a 740 px high screen, desktop or phone,
it leaves the form most of the screen, and its buttons and save status stay visible."""

from __future__ import annotations

import pytest

from tests.conftest import login_in_browser
from tests.planner.factories import course_taught_by, worksheet_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_sticky_save_bar_takes_little_of_the_screen(page, learner, width: int) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(title="GPUs and TPUs")
    worksheet_for(learner, course, concurrency=20)  # a calculator summary and a misfit warning
    page.set_viewport_size({"width": width, "height": 740})
    login_in_browser(page, learner.email)
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")

    bar = page.locator(".actions.sticky")
    box = bar.bounding_box()
    assert box is not None
    share = box["height"] / 740
    assert share <= 0.14, f"the save bar takes {share:.0%} of the screen"
    assert box["y"] + box["height"] <= 740 + 1  # stuck to the bottom, in view
    assert page.get_by_role("button", name="Save draft").is_visible()
    assert page.get_by_role("button", name="Submit plan").is_visible()
    assert page.get_by_test_id("calculator-misfit").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width", [1280, 375])
def test_a_field_tabbed_to_is_never_hidden_under_the_save_bar(page, learner, width: int) -> None:  # type: ignore[no-untyped-def]
    """WCAG 2.4.11: each field the keyboard reaches shows above the sticky bar."""
    course = course_taught_by(title="GPUs and TPUs")
    worksheet_for(learner, course, concurrency=20)
    page.set_viewport_size({"width": width, "height": 740})
    login_in_browser(page, learner.email)
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")
    bar_top = page.locator(".actions.sticky").bounding_box()["y"]
    page.locator("main form").first.locator(
        "textarea, input:not([type=hidden]), select"
    ).first.focus()
    hidden = []
    for _ in range(40):
        box = page.evaluate(
            "() => { const e = document.activeElement;"
            " if (!e || !e.closest('main form') || e.closest('.actions.sticky')) return null;"
            " const r = e.getBoundingClientRect(); return {name: e.name || e.id, top: r.top}; }"
        )
        if box is not None and box["top"] >= bar_top:
            hidden.append(box["name"])
        page.keyboard.press("Tab")
    assert hidden == [], f"under the save bar when focused: {hidden}"
