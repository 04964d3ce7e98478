"""Releasing a grade with a criterion still without a level: the error comes back beside that
criterion, in view (not under the sticky total bar) and focused, on a desktop and on a phone."""

from __future__ import annotations

import re

import pytest

from planner.models import Grade
from tests.conftest import login_in_browser
from tests.factories import UserFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = "We measured this on the staging node with the lesson corpus and a replayed day of traffic. "

# Whether the focused element is inside the viewport and is what a user sees at its centre (not
# covered by the sticky bar or anything else).
FOCUSED_AND_UNCOVERED = """() => {
  const el = document.activeElement;
  const r = el.getBoundingClientRect();
  const inView = r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {text: el.innerText, inView, uncovered: el === top || el.contains(top),
          group: el.closest("fieldset")?.querySelector("legend")?.innerText};
}"""


@pytest.mark.parametrize("width", [1280, 375])
def test_incomplete_release_error_is_focused_beside_its_criterion(
    page, instructor, width: int
) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs and TPUs")
    learner = UserFactory(display_name="Lee Learner", email="lee@example.com")
    submission = submission_for(
        learner, course, memory_estimate=LONG * 6, mechanism=LONG * 6, failure_case=LONG * 6
    )
    page.set_viewport_size({"width": width, "height": 740})
    login_in_browser(page, instructor.email)
    page.goto(f"/capstone/grading/{submission.pk}/")
    page.get_by_test_id("claim-box").get_by_role("button", name="Claim to grade").click()
    page.get_by_text("Claimed: it is yours to grade").wait_for()

    memory = page.get_by_role("group", name="Memory and KV estimate")
    memory.get_by_label(re.compile("^Strong")).check()
    page.get_by_role("button", name="Release grade").click()
    page.wait_for_load_state()

    focused = page.evaluate(FOCUSED_AND_UNCOVERED)
    assert focused["group"] == "Operability"
    assert "Choose a level to release the grade" in focused["text"]
    assert focused["inView"], focused
    assert focused["uncovered"], focused
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert not Grade.objects.filter(status=Grade.Status.RELEASED).exists()

    # From the error, the keyboard reaches the criterion's levels next; choosing one releases.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('fieldset').dataset.criterion") == (
        "operability"
    )
    page.keyboard.press("Space")
    page.get_by_role("button", name="Release grade").click()
    page.wait_for_url("**/capstone/grading/")
    assert Grade.objects.get(submission=submission).status == Grade.Status.RELEASED
    # The refused release is a 400 page (the browser logs its status); nothing else may fail.
    assert [e for e in page.console_errors if "status of 400" not in e] == []
